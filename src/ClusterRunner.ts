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
import { Config, Console, Context, Effect, Layer, Option } from "effect"
import * as path from "node:path"
import { importUserModule } from "./internal/userModule.js"
import * as Adapters from "./Adapter.js"
import * as ClusterEvaluation from "./ClusterEvaluation.js"
import * as DataLoader from "./DataLoader.js"
import { ConfigError } from "./Errors.js"
import type { EvaluationBatch } from "./EvaluationBatch.js"
import * as codec from "./internal/cluster/codec.js"
import * as config from "./internal/cluster/config.js"
import * as protocol from "./internal/cluster/protocol.js"
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
 * `GEPA_RUNNER_LISTEN_HOST`, `GEPA_RUNNER_CONCURRENCY`.
 *
 * @since 0.2.0
 * @category config
 */
export const runnerConfig: Config.Config<Required<Omit<RunnerOptions, "listenHost">> & { readonly listenHost: string | undefined }> =
  Config.all({
    host: Config.string("GEPA_RUNNER_HOST").pipe(Config.withDefault(config.defaults.runnerHost)),
    port: Config.port("GEPA_RUNNER_PORT").pipe(Config.withDefault(config.defaults.runnerPort)),
    listenHost: Config.option(Config.string("GEPA_RUNNER_LISTEN_HOST")).pipe(Config.map(Option.getOrUndefined)),
    concurrency: Config.integer("GEPA_RUNNER_CONCURRENCY").pipe(
      Config.withDefault(config.defaults.concurrency),
      Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 })
    )
  })

const describe = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

/**
 * The entity's handlers for `definition`, registered with the cluster. The
 * adapter layer is built once per runner.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = <D, T, O, E>(
  definition: ClusterEvaluation.Definition<D, T, O, E>,
  options: { readonly concurrency: number; readonly address: string }
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
    // the entity's own concurrency is per entity id: the runner-wide cap is this semaphore
    const permits = yield* Effect.makeSemaphore(options.concurrency)
    const fail = (detail: string) => new protocol.RemoteEvaluationError({ runner: options.address, detail })

    const evaluate = (payload: typeof protocol.Evaluate.payloadSchema.Type) =>
      Effect.gen(function*() {
        const batch: ReadonlyArray<D> = payload.ids !== undefined
          ? loader === undefined
            ? yield* fail("request names example ids but this runner has no data")
            : yield* Effect.mapError(loader.fetch(payload.ids), (e) => fail(e.message))
          : yield* Effect.mapError(codec.decodeAll(examples, "example", payload.examples ?? []), fail)
        const result: EvaluationBatch<T, O> = yield* adapter.evaluate(batch, payload.candidate, {
          captureTraces: payload.captureTraces
        }).pipe(Effect.mapError((e) => fail(e.message)))
        if (!Array.isArray(result?.outputs) || !Array.isArray(result?.scores)) {
          return yield* fail("evaluate returned no outputs or scores")
        }
        const encodedOutputs = yield* Effect.mapError(codec.encodeAll(outputs, "output", result.outputs), fail)
        const encodedTrajectories = result.trajectories === undefined
          ? undefined
          : yield* Effect.mapError(codec.encodeAll(trajectories, "trajectory", result.trajectories), fail)
        return {
          outputs: encodedOutputs,
          scores: result.scores,
          ...(encodedTrajectories === undefined ? {} : { trajectories: encodedTrajectories }),
          ...(result.objectiveScores === undefined ? {} : { objectiveScores: result.objectiveScores }),
          runner: options.address
        }
      }).pipe(
        // a defect of the adapter is this request's failure, not the runner's
        Effect.catchAllDefect((defect) => Effect.fail(fail(`defect: ${describe(defect)}`))),
        permits.withPermits(1)
      )

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
    if (all.length === 1) return all[0]!
    return yield* new ConfigError({
      field: "module",
      detail: `${file}: ${
        all.length === 0 ? "exports no ClusterEvaluation.define(...)" : "exports several definitions; export one as default"
      }`
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
  options: Source<D, T, O, E> & RunnerOptions & Partial<ClusterEvaluation.Settings>
): Effect.Effect<never, E | ConfigError> =>
  Effect.gen(function*() {
    const settings = yield* ClusterEvaluation.resolveSettings(options)
    const fromConfig = yield* Effect.mapError(runnerConfig, (e) => new ConfigError({ field: "runner", detail: String(e) }))
    const host = options.host ?? fromConfig.host
    const port = options.port ?? fromConfig.port
    const listenHost = options.listenHost ?? fromConfig.listenHost
    const concurrency = options.concurrency ?? fromConfig.concurrency
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
    return yield* Effect.scoped(Effect.gen(function*() {
      yield* Layer.build(layer(definition, { concurrency, address }).pipe(Layer.provide(cluster)))
      yield* Console.log(`runner ${address} ready`)
      return yield* Effect.never
    }))
  })
