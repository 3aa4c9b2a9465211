/**
 * The optimizer's side of a cluster evaluation: an `Adapter` whose
 * `evaluate` sends each chunk to the `Evaluator` entity on the runners, so
 * `Gepa.optimize` runs unchanged over a cluster. Reflective datasets and
 * custom proposals run locally, with the definition's adapter.
 *
 * The engine's guarantees carry over: the budget, `maxConcurrency` (now the
 * adapter calls in flight over the whole cluster), timeouts, retries, fault
 * accounting, the cache and resume all act on the calls this adapter makes.
 *
 * @since 0.2.0
 */
import type { AlreadyProcessingMessage, MailboxFull, PersistenceError } from "@effect/cluster/ClusterError"
import type { Sharding } from "@effect/cluster/Sharding"
import { Context, Effect, Either, Layer, Schedule, type Scope } from "effect"
import type { Adapter, AdapterService } from "./Adapter.js"
import * as Adapters from "./Adapter.js"
import * as Candidate from "./Candidate.js"
import * as ClusterEvaluation from "./ClusterEvaluation.js"
import { AdapterError, ConfigError } from "./Errors.js"
import type { EvaluationBatch } from "./EvaluationBatch.js"
import * as codec from "./internal/cluster/codec.js"
import * as config from "./internal/cluster/config.js"
import { at, defined } from "./internal/shared/invariant.js"
import * as protocol from "./internal/cluster/protocol.js"
import { make as makeRouter } from "./internal/cluster/router.js"
import * as batching from "./internal/cluster/batcher.js"
import * as socket from "./internal/cluster/socket.js"

/**
 * Options of a cluster adapter: how requests are spread over entities and
 * batched.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /**
   * entity ids the requests are spread over (default 64). Each new request
   * goes to an id served by the runner with the fewest requests in flight
   * (learned from replies); the ids should outnumber the runners several
   * times over, so that every runner serves some.
   */
  readonly entities?: number
  /**
   * the most examples sent in one request (default: as many as the runner
   * it goes to evaluates at once, learned from its replies). Calls of the
   * same candidate made together go as one request; each keeps its own
   * result, failure and budget charge.
   */
  readonly batchSize?: number
  /**
   * the namespace of request ids (default: fresh for every layer, so two
   * optimizers, or two runs, never share a stored reply). A restarted
   * optimizer does not pick up replies of its previous process: its cache
   * and run directory are what make a resumed run skip finished work.
   */
  readonly session?: string
  /**
   * how sends that failed in transport (storage busy, mailbox full) are
   * retried; a retry reuses the request id, so it never evaluates twice
   * (default: exponential from 100 ms, capped at 2 s, for about a minute)
   */
  readonly sendRetry?: Schedule.Schedule<unknown, TransportError>
}

/**
 * Errors of a send that a retry with the same request id may fix.
 *
 * @since 0.2.0
 * @category errors
 */
export type TransportError = MailboxFull | AlreadyProcessingMessage | PersistenceError

const defaultSendRetry: Schedule.Schedule<unknown, TransportError> = Schedule.exponential("100 millis").pipe(
  Schedule.union(Schedule.spaced("2 seconds")),
  Schedule.compose(Schedule.recurs(40))
)

const randomSession = (): string => crypto.randomUUID()

/**
 * The adapter: `evaluate` is remote, the rest is the definition's adapter,
 * built here.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = <D, T, O, E>(
  definition: ClusterEvaluation.Definition<D, T, O, E>,
  options?: Options
): Effect.Effect<Adapter<D, T, O>, E | ConfigError, Sharding | Scope.Scope> =>
  Effect.gen(function*() {
    const entities = options?.entities ?? config.defaults.entities
    if (!Number.isInteger(entities) || entities < 1) {
      return yield* new ConfigError({ field: "entities", detail: `must be a positive integer, got ${entities}` })
    }
    const maxBatch = options?.batchSize
    if (maxBatch !== undefined && (!Number.isInteger(maxBatch) || maxBatch < 1)) {
      return yield* new ConfigError({ field: "batchSize", detail: `must be a positive integer, got ${maxBatch}` })
    }
    const local = Context.get(yield* Layer.build(definition.adapter), Adapters.tag<D, T, O>())
    const client = yield* protocol.Evaluator.client
    const session = options?.session ?? randomSession()
    const sendRetry = options?.sendRetry ?? defaultSendRetry
    const examples = codec.make(definition.example)
    const outputs = codec.make(definition.output)
    const trajectories = codec.make(definition.trajectory)
    // per distinct call (candidate, examples, traces): how many times it was made
    const attempts = new Map<string, number>()

    const fail = (detail: string) => new AdapterError({ call: "evaluate (cluster)", detail })

    const batcher = yield* batching.make<AdapterError>({
      router: makeRouter(entities),
      maxBatch,
      defaultCapacity: config.defaults.concurrency,
      // no timer: the calls the engine makes together are all registered before the batch's flush runs (it
      // yields once to the fibers already scheduled); measured on the toy optimization (budget 240, in process):
      // 2.74 calls per request against 2.81 with a 1 ms linger, which cost about 1 ms of every request's latency
      lingerMillis: 0,
      // the entity is fixed for a request's whole life: resends must reach the same stored request
      send: (entity, calls) =>
        client(protocol.entityId(entity)).Evaluate({
          requestId: protocol.batchId(calls.map((c) => c.key)),
          // the calls of a batch share their candidate and trace setting (grouped by them)
          candidate: { ...at(calls, 0).candidate },
          captureTraces: at(calls, 0).captureTraces,
          items: calls.map((c) => ({ key: c.key, ...(c.ids === undefined ? { examples: defined(c.examples, "a call's inline examples") } : { ids: c.ids }) }))
        }).pipe(
          // the runner's answer (even a failure) is final; only transport errors are retried
          Effect.map((r): Either.Either<protocol.EvaluateReply, protocol.RemoteEvaluationError> => Either.right(r)),
          Effect.catchTag("RemoteEvaluationError", (e) => Effect.succeed(Either.left(e))),
          Effect.retry(sendRetry),
          Effect.mapError((e) => fail(`${e._tag}: ${e.message}`)),
          Effect.flatMap((outcome) => Either.isLeft(outcome) ? Effect.fail(fail(outcome.left.message)) : Effect.succeed(outcome.right))
        )
    })

    const evaluate: Adapter<D, T, O>["evaluate"] = (batch, candidate, { captureTraces }) =>
      Effect.gen(function*() {
        const exampleId = definition.exampleId
        const ids = exampleId === undefined ? undefined : batch.map((d) => exampleId(d))
        const encoded = ids === undefined
          ? yield* Effect.mapError(codec.encodeAll(examples, "example", batch), fail)
          : undefined
        // (examples are encoded exactly when they have no ids)
        const keys = ids ?? defined(encoded, "the encoded examples").map(protocol.exampleKey)
        const candidateHash = Candidate.hash(candidate)
        const call = { session, candidateHash, exampleKeys: keys, captureTraces }
        // keyed by the first attempt's id: a short key however large the chunk
        const base = protocol.requestId({ ...call, attempt: 0 })
        const attempt = attempts.get(base) ?? 0
        attempts.set(base, attempt + 1)
        const key = attempt === 0 ? base : protocol.requestId({ ...call, attempt })
        const answer = yield* batcher.submit(`${candidateHash}|${captureTraces ? "T" : "N"}`, {
          candidate,
          captureTraces,
          key,
          ids,
          examples: encoded,
          size: batch.length
        })
        if (answer.result._tag === "Failed") {
          return yield* fail(new protocol.RemoteEvaluationError({ runner: answer.runner, detail: answer.result.detail }).message)
        }
        const reply = answer.result
        // lengths are checked by the engine's contract check, with the call named
        const decodedOutputs = yield* Effect.mapError(codec.decodeAll(outputs, "output", reply.outputs), fail)
        const decodedTrajectories = reply.trajectories === undefined
          ? undefined
          : yield* Effect.mapError(codec.decodeAll(trajectories, "trajectory", reply.trajectories), fail)
        const result: EvaluationBatch<T, O> = {
          outputs: decodedOutputs,
          scores: reply.scores,
          trajectories: decodedTrajectories,
          objectiveScores: reply.objectiveScores
        }
        return result
      })

    return {
      evaluate,
      makeReflectiveDataset: local.makeReflectiveDataset,
      ...(local.proposeNewTexts ? { proposeNewTexts: local.proposeNewTexts } : {})
    }
  })

/**
 * The adapter as a layer; needs a cluster client (`layerClient`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = <D, T, O, E>(
  definition: ClusterEvaluation.Definition<D, T, O, E>,
  options?: Options
): Layer.Layer<AdapterService<D, T, O>, E | ConfigError, Sharding> => Layer.scoped(Adapters.tag<D, T, O>(), make(definition, options))

/**
 * A client of the cluster (it hosts no entity): the storage from the
 * settings, sockets to the runners. Settings not given are read from
 * `Config` (see `ClusterEvaluation.settings`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClient = (settings?: Partial<ClusterEvaluation.Settings>): Layer.Layer<Sharding, ConfigError> =>
  Layer.unwrapEffect(
    Effect.map(ClusterEvaluation.resolveSettings(settings), (s) =>
      socket.layer({ storage: s.storage, clientOnly: true, shardingConfig: config.sharding(s), name: "cluster" }))
  )

/**
 * `layer` with its own cluster client: the one layer an optimizer needs.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Gepa, type LanguageModel } from "effect-gepa"
 * import * as ClusterAdapter from "effect-gepa/ClusterAdapter"
 * import type * as ClusterEvaluation from "effect-gepa/ClusterEvaluation"
 *
 * // the evaluation module the runners serve (see `ClusterEvaluation.define`)
 * declare const evaluation: ClusterEvaluation.Definition<{ readonly question: string }, unknown, string, never>
 * declare const reflectionModel: LanguageModel.LanguageModel
 *
 * const program = Gepa.optimize({
 *   seedCandidate: { system_prompt: "Answer the question." },
 *   trainset: [{ question: "2 + 2?" }, { question: "3 + 4?" }],
 *   reflectionModel,
 *   maxMetricCalls: 500
 * }).pipe(Effect.provide(ClusterAdapter.layerCluster(evaluation, { storage: "./cluster.db" })))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerCluster = <D, T, O, E>(
  definition: ClusterEvaluation.Definition<D, T, O, E>,
  options?: Options & Partial<ClusterEvaluation.Settings>
): Layer.Layer<AdapterService<D, T, O>, E | ConfigError> => layer(definition, options).pipe(Layer.provide(layerClient(options)))
