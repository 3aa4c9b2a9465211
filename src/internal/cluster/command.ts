/**
 * The `gepa runner` command, for the CLI to register as a subcommand. Only
 * the flags are defined here; the cluster modules load when the command
 * runs, so other commands never load them.
 *
 * Flags override the environment (`Config`): GEPA_CLUSTER_STORAGE,
 * GEPA_CLUSTER_SHARDS, GEPA_CLUSTER_FAILOVER, GEPA_RUNNER_HOST,
 * GEPA_RUNNER_PORT, GEPA_RUNNER_LISTEN_HOST, GEPA_RUNNER_CONCURRENCY.
 *
 * @internal
 */
import { Command, Options } from "@effect/cli"
import { Cause, Duration, Effect, Logger, Option } from "effect"
import { ConfigError } from "../../Errors.js"
import { at } from "../shared/invariant.js"

const text = (name: string, description: string) => Options.text(name).pipe(Options.withDescription(description), Options.optional)

/** @internal */
export const runnerOptions = {
  module: Options.text("module").pipe(
    Options.withDescription("module exporting ClusterEvaluation.define(...) (default export, `evaluation`, or its only definition)")
  ),
  storage: text("storage", "SQLite file or postgres:// URL shared by the cluster (env GEPA_CLUSTER_STORAGE)"),
  host: text("host", "address other processes reach this runner at (env GEPA_RUNNER_HOST, default localhost)"),
  port: text("port", "port of this runner (env GEPA_RUNNER_PORT, default 34431)"),
  listenHost: text("listen-host", "interface to listen on, e.g. 0.0.0.0 (env GEPA_RUNNER_LISTEN_HOST)"),
  concurrency: text("concurrency", "evaluations at once on this runner (env GEPA_RUNNER_CONCURRENCY, default 4)"),
  shards: text("shards", "shards of the cluster, the same everywhere (env GEPA_CLUSTER_SHARDS, default 300)"),
  statusEvery: text("status-every", "a status line this often, e.g. \"30s\"; 0 for none (env GEPA_RUNNER_STATUS_EVERY, default 10s)"),
  logFormat: text("log-format", "text (default) or json: one JSON object per line (Effect's Logger.json format)"),
  failover: text("failover", `how long a dead runner's shards stay locked (env GEPA_CLUSTER_FAILOVER, default 3s; at least 3s)`)
}

/** @internal */
export type RunnerFlags = Command.Command.ParseConfig<typeof runnerOptions>

const positiveInt = (flag: string, value: string): number | ConfigError => {
  const n = Number(value)
  return Number.isInteger(n) && n > 0 ? n : new ConfigError({ field: `--${flag}`, detail: `expected a positive integer, got "${value}"` })
}

const duration = (flag: string, value: string): Duration.Duration | ConfigError => {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/.exec(value.trim())
  if (m !== null) {
    const n = Number(m[1])
    const unit = at(m, 2)
    return unit === "ms" ? Duration.millis(n) : unit === "s" ? Duration.seconds(n) : unit === "m" ? Duration.minutes(n) : Duration.hours(n)
  }
  const decoded = Duration.decodeUnknown(value.trim())
  return Option.isSome(decoded)
    ? decoded.value
    : new ConfigError({ field: `--${flag}`, detail: `expected a duration such as "35s" or "2 minutes", got "${value}"` })
}

/**
 * The runner's options from the flags: every flag is checked before the
 * runner starts.
 *
 * @internal
 */
export const fromFlags = (flags: RunnerFlags) =>
  Effect.gen(function*() {
    const get = <A>(o: Option.Option<string>, parse: (v: string) => A | ConfigError) =>
      Option.isNone(o) ? Effect.succeed(undefined) : (() => {
        const r = parse(o.value)
        return r instanceof ConfigError ? Effect.fail(r) : Effect.succeed(r)
      })()
    const port = yield* get(flags.port, (v) => {
      const n = positiveInt("port", v)
      return typeof n === "number" && n > 65535 ? new ConfigError({ field: "--port", detail: `${n} is not a port` }) : n
    })
    const concurrency = yield* get(flags.concurrency, (v) => positiveInt("concurrency", v))
    const shards = yield* get(flags.shards, (v) => positiveInt("shards", v))
    const failover = yield* get(flags.failover, (v) => duration("failover", v))
    const statusEvery = yield* get(flags.statusEvery, (v) => (v.trim() === "0" ? Duration.zero : duration("status-every", v)))
    const logFormat = yield* get(flags.logFormat, (v): "text" | "json" | ConfigError =>
      v === "text" || v === "json" ? v : new ConfigError({ field: "--log-format", detail: `expected text or json, got "${v}"` }))
    return {
      module: flags.module,
      ...(Option.isSome(flags.storage) ? { storage: flags.storage.value } : {}),
      ...(Option.isSome(flags.host) ? { host: flags.host.value } : {}),
      ...(Option.isSome(flags.listenHost) ? { listenHost: flags.listenHost.value } : {}),
      ...(port === undefined ? {} : { port }),
      ...(concurrency === undefined ? {} : { concurrency }),
      ...(shards === undefined ? {} : { shards }),
      ...(failover === undefined ? {} : { failover }),
      ...(statusEvery === undefined ? {} : { statusEvery }),
      ...(logFormat === undefined ? {} : { logFormat })
    }
  })

/**
 * `gepa runner --module evaluation.ts [--storage ...] [--port ...]`: runs
 * until interrupted (Ctrl-C or SIGTERM hand the shards over cleanly when the
 * CLI runs under `NodeRuntime.runMain`).
 *
 * @internal
 */
export const runner = Command.make("runner", runnerOptions, (flags) =>
  Effect.gen(function*() {
    const options = yield* fromFlags(flags)
    const ClusterRunner = yield* Effect.promise(() => import("../../ClusterRunner.js"))
    return yield* ClusterRunner.run(options).pipe(
      Effect.mapError((e) =>
        e instanceof ConfigError ? e : new ConfigError({
          field: "runner",
          detail: `the evaluation's adapter failed to start: ${e instanceof Error ? e.message : String(e)}`
        })
      ),
      Effect.provide(logger(options.logFormat ?? "text"))
    )
  })).pipe(Command.withDescription("serve cluster evaluations for optimizers (see docs/scaling-out.md)"))

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim()

/**
 * The runner's log lines, on stderr: "text" is one line each with the cause
 * that came with it (a storage warning names the driver's error: the
 * operator must see why storage failed, not only that it did); "json" is
 * Effect's JSON logger, one object per line, cause included.
 *
 * @internal
 */
export const logger = (format: "text" | "json") =>
  Logger.replace(
    Logger.defaultLogger,
    format === "json"
      ? Logger.withConsoleError(Logger.jsonLogger)
      : Logger.withConsoleError(Logger.make(({ cause, logLevel, message }) => {
        const text = (Array.isArray(message) ? message : [message]).map((m) => (typeof m === "string" ? m : String(m))).join(" ")
        const why = Cause.isEmpty(cause) ? "" : `: ${oneLine(Cause.pretty(cause, { renderErrorCause: true }).split("\n    at ")[0] ?? "")}`
        return `gepa [${logLevel.label.toLowerCase()}] ${oneLine(text)}${why}`
      }))
  )
