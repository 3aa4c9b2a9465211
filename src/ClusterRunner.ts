/**
 * Runner processes of a cluster evaluation: each serves the `Evaluator`
 * entity for the shards it holds, running the definition's adapter with at
 * most `concurrency` evaluations at once.
 *
 * Start as many runners as there are cores or machines to use; they find
 * each other and split the shards through the shared storage. A runner that
 * dies loses its shards after the failover time, and the requests it held
 * run again on the survivors.
 *
 * @since 0.2.0
 */
import type { Sharding } from "@effect/cluster/Sharding"
import { SqlClient } from "@effect/sql/SqlClient"
import { Config, ConfigError as ConfigErrors, Console, Context, Duration, Effect, Either, Layer, Logger, LogLevel, Option } from "effect"
import * as path from "node:path"
import { importUserModule } from "./internal/shared/userModule.js"
import * as Adapters from "./Adapter.js"
import * as ClusterEvaluation from "./ClusterEvaluation.js"
import * as DataLoader from "./DataLoader.js"
import { ConfigError } from "./Errors.js"
import type { EvaluationBatch } from "./EvaluationBatch.js"
import * as codec from "./internal/cluster/codec.js"
import * as config from "./internal/cluster/config.js"
import * as protocol from "./internal/cluster/protocol.js"
import * as itemStore from "./internal/cluster/itemStore.js"
import * as socket from "./internal/cluster/socket.js"

/**
 * Where a runner listens and how much it runs at once.
 *
 * @since 0.2.0
 * @category models
 */
export interface RunnerOptions {
  /** the address other processes reach this runner at (default "localhost") */
  readonly host?: string
  /** its port (default 34431); one per runner on a machine */
  readonly port?: number
  /** the interface to listen on, when it differs from `host` (e.g. "0.0.0.0") */
  readonly listenHost?: string | undefined
  /** evaluations (adapter calls) running at once on this runner (default 4) */
  readonly concurrency?: number
}

/**
 * The runner options from `Config`: `GEPA_RUNNER_HOST`, `GEPA_RUNNER_PORT`,
 * `GEPA_RUNNER_LISTEN_HOST`, `GEPA_RUNNER_CONCURRENCY`, `GEPA_RUNNER_STATUS_EVERY`.
 *
 * @since 0.2.0
 * @category config
 */
export const runnerConfig: Config.Config<
  Required<Omit<RunnerOptions, "listenHost">> & { readonly listenHost: string | undefined; readonly statusEvery: Duration.Duration }
> = Config.all({
  host: Config.string("GEPA_RUNNER_HOST").pipe(Config.withDefault(config.defaults.runnerHost)),
  port: Config.port("GEPA_RUNNER_PORT").pipe(Config.withDefault(config.defaults.runnerPort)),
  listenHost: Config.option(Config.string("GEPA_RUNNER_LISTEN_HOST")).pipe(Config.map(Option.getOrUndefined)),
  concurrency: Config.integer("GEPA_RUNNER_CONCURRENCY").pipe(
    Config.withDefault(config.defaults.concurrency),
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 })
  ),
  statusEvery: Config.string("GEPA_RUNNER_STATUS_EVERY").pipe(
    Config.mapOrFail((v) => {
      if (v.trim() === "0") return Either.right(Duration.zero)
      const d = Duration.decodeUnknown(v.trim())
      return Option.isSome(d)
        ? Either.right(d.value)
        : Either.left(ConfigErrors.InvalidData([], `expected a duration such as "10 seconds", or 0, got "${v}"`))
    }),
    Config.withDefault(Duration.seconds(10))
  )
})

const describe = (e: unknown): string => typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e)

/**
 * What a runner has done since it started, for its status line.
 *
 * @since 0.2.0
 * @category models
 */
export interface RunnerStats {
  /** adapter calls finished (evaluated or failed) */
  evaluated: number
  /** of those, failed */
  failed: number
  /** adapter calls answered from results stored before (a redelivery after a runner died) */
  reused: number
  /** requests received */
  requests: number
  /** adapter calls running or waiting for a slot */
  inFlight: number
}

/**
 * Fresh counters.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeStats = (): RunnerStats => ({ evaluated: 0, failed: 0, reused: 0, requests: 0, inFlight: 0 })

/**
 * The entity's handlers for `definition`, registered with the cluster. The
 * adapter layer is built once per runner. A request's adapter calls run at
 * most `concurrency` at once over the whole runner; each call's result is
 * stored as soon as it is done when the cluster's `SqlClient` is in the
 * context (see `ClusterEvaluation`), so that a request redelivered after
 * this runner died runs only its unfinished calls.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = <D, T, O, E>(
  definition: ClusterEvaluation.Definition<D, T, O, E>,
  options: { readonly concurrency: number; readonly address: string; readonly stats?: RunnerStats | undefined }
): Layer.Layer<never, E | ConfigError, Sharding> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      return yield* new ConfigError({ field: "concurrency", detail: `must be a positive integer, got ${options.concurrency}` })
    }
    if (definition.exampleId !== undefined && definition.data === undefined) {
      return yield* new ConfigError({ field: "data", detail: "exampleId is set: runners need the examples (data) to resolve ids" })
    }
    const adapter = Context.get(yield* Layer.build(definition.adapter), Adapters.tag<D, T, O>())
    const exampleId = definition.exampleId
    const loader = definition.data === undefined
      ? undefined
      : Array.isArray(definition.data)
      ? DataLoader.fromArray(definition.data as ReadonlyArray<D>, {
        name: "runner data",
        ...(exampleId ? { idOf: (d: D) => exampleId(d) } : {})
      })
      : definition.data as DataLoader.DataLoader<D>
    const examples = codec.make(definition.example)
    const outputs = codec.make(definition.output)
    const trajectories = codec.make(definition.trajectory)
    const stats = options.stats ?? makeStats()
    const store = yield* Option.match(yield* Effect.serviceOption(SqlClient), {
      onNone: () => Effect.succeed(itemStore.memory()),
      onSome: (sql) => itemStore.sql(sql)
    })
    // the entity's own concurrency is per entity id: the runner-wide cap is this semaphore
    const permits = yield* Effect.makeSemaphore(options.concurrency)
    const failed = (detail: string): protocol.ItemResult => ({ _tag: "Failed", detail })

    type Payload = typeof protocol.Evaluate.payloadSchema.Type
    const evaluateItem = (item: protocol.EvaluateItem, payload: Payload): Effect.Effect<protocol.ItemResult> =>
      Effect.gen(function*() {
        const batch: ReadonlyArray<D> = item.ids !== undefined
          ? loader === undefined
            ? yield* Effect.fail("request names example ids but this runner has no data")
            : yield* Effect.mapError(loader.fetch(item.ids), (e) => e.message)
          : yield* codec.decodeAll(examples, "example", item.examples ?? [])
        const result: EvaluationBatch<T, O> = yield* adapter.evaluate(batch, payload.candidate, {
          captureTraces: payload.captureTraces
        }).pipe(Effect.mapError((e) => e.message))
        if (!Array.isArray(result?.outputs) || !Array.isArray(result?.scores)) {
          return yield* Effect.fail("evaluate returned no outputs or scores")
        }
        const encodedOutputs = yield* codec.encodeAll(outputs, "output", result.outputs)
        const encodedTrajectories = result.trajectories === undefined
          ? undefined
          : yield* codec.encodeAll(trajectories, "trajectory", result.trajectories)
        const evaluated: protocol.ItemResult = {
          _tag: "Evaluated",
          outputs: encodedOutputs,
          scores: result.scores,
          ...(encodedTrajectories === undefined ? {} : { trajectories: encodedTrajectories }),
          ...(result.objectiveScores === undefined ? {} : { objectiveScores: result.objectiveScores })
        }
        return evaluated
      }).pipe(
        Effect.catchAll((detail) => Effect.succeed(failed(detail))),
        // a defect of the adapter is this call's failure, not the runner's
        Effect.catchAllDefect((defect) => Effect.succeed(failed(`defect: ${describe(defect)}`))),
        permits.withPermits(1),
        Effect.tap((r) =>
          Effect.sync(() => {
            stats.evaluated++
            if (r._tag === "Failed") stats.failed++
          })
        ),
        Effect.tap((r) => store.put(item.key, r)),
        Effect.ensuring(Effect.sync(() => stats.inFlight--)),
        (run) => Effect.zipRight(Effect.sync(() => stats.inFlight++), run)
      )

    const evaluate = (payload: Payload) =>
      Effect.gen(function*() {
        stats.requests++
        const done = yield* store.get(payload.items.map((item) => item.key))
        stats.reused += done.size
        const items = yield* Effect.forEach(
          payload.items,
          (item) => {
            const stored = done.get(item.key)
            return stored !== undefined ? Effect.succeed(stored) : evaluateItem(item, payload)
          },
          // the semaphore bounds them
          { concurrency: "unbounded" }
        )
        // the reply the cluster stores now covers the items still waiting to be written
        yield* store.settle(payload.items.map((item) => item.key))
        return { items, runner: options.address, capacity: options.concurrency, reused: done.size }
      })

    return protocol.Evaluator.toLayer(
      protocol.Evaluator.of({ Evaluate: (request) => evaluate(request.payload) }),
      { concurrency: "unbounded" }
    )
  }))

/**
 * Where `run` gets its evaluation: a definition, or a module exporting one
 * (as `default`, as `evaluation`, or as its only definition export).
 *
 * @since 0.2.0
 * @category models
 */
export type Source<D, T, O, E> =
  | { readonly definition: ClusterEvaluation.Definition<D, T, O, E> }
  | { readonly module: string }

/**
 * Loads the definition a module exports.
 *
 * @since 0.2.0
 * @category constructors
 */
export const load = (
  module: string
): Effect.Effect<ClusterEvaluation.Definition<unknown, unknown, unknown, unknown>, ConfigError> =>
  Effect.gen(function*() {
    const file = path.resolve(module)
    const exports = yield* Effect.tryPromise({
      // one module graph with the runner when it can: the definition's layers use its Effect
      try: () => importUserModule(file, { sameGraphFirst: true }) as Promise<Record<string, unknown>>,
      catch: (e) => new ConfigError({ field: "module", detail: `${file}: ${describe(e)}` })
    })
    const named = [exports["default"], exports["evaluation"]].find(ClusterEvaluation.isDefinition)
    if (named !== undefined) return named
    const all = Object.values(exports).filter(ClusterEvaluation.isDefinition)
    const [only] = all
    if (all.length === 1 && only !== undefined) return only
    return yield* new ConfigError({
      field: "module",
      detail: `${file}: ${all.length === 0 ? "exports no ClusterEvaluation.define(...)" : "exports several definitions; export one as default"}`
    })
  })

/**
 * Runs a runner until interrupted: settings and runner options not given are
 * read from `Config`. Prints `runner <host:port> ready` once it is
 * registered and serving.
 *
 * @since 0.2.0
 * @category running
 */
export const run = <D, T, O, E>(
  options: Source<D, T, O, E> & RunnerOptions & Partial<ClusterEvaluation.Settings> & StatusOptions
): Effect.Effect<never, E | ConfigError> =>
  Effect.gen(function*() {
    const settings = yield* ClusterEvaluation.resolveSettings(options)
    const fromConfig = yield* Effect.mapError(runnerConfig, (e) => new ConfigError({ field: "runner", detail: String(e) }))
    const host = options.host ?? fromConfig.host
    const port = options.port ?? fromConfig.port
    const listenHost = options.listenHost ?? fromConfig.listenHost
    const concurrency = options.concurrency ?? fromConfig.concurrency
    const statusEvery = options.statusEvery === undefined ? fromConfig.statusEvery : Duration.decode(options.statusEvery)
    const format = options.logFormat ?? "text"
    const definition = "definition" in options
      ? options.definition
      : (yield* load(options.module)) as unknown as ClusterEvaluation.Definition<D, T, O, E>
    const address = `${host}:${port}`
    const cluster = socket.layer({
      storage: settings.storage,
      clientOnly: false,
      shardingConfig: config.sharding(settings, { host, port, listenHost }),
      name: `runner ${address}`
    })
    const stats = makeStats()
    return yield* Effect.scoped(Effect.gen(function*() {
      yield* Layer.build(layer(definition, { concurrency, address, stats }).pipe(Layer.provide(cluster)))
      yield* say(format, `runner ${address} ready`, { runner: address, concurrency })
      if (Duration.toMillis(statusEvery) > 0) {
        yield* Effect.forkScoped(reportStatus(address, stats, statusEvery, format))
      }
      return yield* Effect.never
    }))
  })

/**
 * How a runner reports (see `run`).
 *
 * @since 0.2.0
 * @category models
 */
export interface StatusOptions {
  /** a status line this often (default 10 seconds, `GEPA_RUNNER_STATUS_EVERY`; 0 for none) */
  readonly statusEvery?: Duration.DurationInput | undefined
  /** "text" (default): plain lines; "json": one JSON object per line (Effect's `Logger.json` format) */
  readonly logFormat?: "text" | "json" | undefined
}

// the ready and status lines go to stdout whatever the log level: they are the runner's output, not its logs
const jsonToStdout = Logger.replace(Logger.defaultLogger, Logger.withConsoleLog(Logger.jsonLogger))

const say = (format: "text" | "json", line: string, fields: Record<string, unknown>) =>
  format === "text"
    ? Console.log(line)
    : Effect.logInfo(line).pipe(
      Effect.annotateLogs(fields),
      Effect.provide(jsonToStdout),
      Logger.withMinimumLogLevel(LogLevel.Info)
    )

/** One line every `every`: calls done, failed, reused, in flight, and the rate since the last line. */
const reportStatus = (address: string, stats: RunnerStats, every: Duration.Duration, format: "text" | "json") =>
  Effect.gen(function*() {
    let last = { at: Date.now(), evaluated: stats.evaluated }
    yield* Effect.sleep(every)
    const now = Date.now()
    const perSecond = (stats.evaluated - last.evaluated) / Math.max(0.001, (now - last.at) / 1000)
    last = { at: now, evaluated: stats.evaluated }
    yield* say(
      format,
      `runner ${address}: ${stats.evaluated} evaluated (${stats.failed} failed, ${stats.reused} reused after a failover), ${stats.inFlight} in flight, ${
        perSecond.toFixed(1)
      }/s`,
      { runner: address, ...stats, perSecond: Math.round(perSecond * 10) / 10 }
    )
  }).pipe(Effect.forever)
