/**
 * The evaluator entity's wire protocol: one persisted RPC, `Evaluate`, whose
 * primary key is a request id chosen by the optimizer. The cluster stores
 * every request and its reply under (entity type, entity id, rpc, primary
 * key), so a request sent again with the same id (a client retry, or the
 * redelivery after a runner died) is answered from storage instead of being
 * evaluated again.
 *
 * A request carries several adapter calls (items) of one candidate; each
 * item has its own id, under which a runner stores the item's result as
 * soon as it is done (`itemStore.ts`), so a request redelivered after its
 * runner died runs only the items that had not finished.
 *
 * Outputs, trajectories and examples travel in their encoded (JSON-safe)
 * form; each side decodes them with the user's schemas.
 *
 * @internal
 */
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Entity from "@effect/cluster/Entity"
import * as Rpc from "@effect/rpc/Rpc"
import { Schema } from "effect"
import { createHash } from "node:crypto"

/** @internal */
export const entityType = "effect-gepa/Evaluator"

/** @internal */
export class RemoteEvaluationError extends Schema.TaggedError<RemoteEvaluationError>()("RemoteEvaluationError", {
  /** the runner that ran the evaluation, host:port */
  runner: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `evaluation on runner ${this.runner} failed: ${this.detail}`
  }
}

/**
 * One adapter call of the optimizer inside a request: its own id (the
 * idempotency key of its result on the runners) and its examples.
 *
 * @internal
 */
export const EvaluateItem = Schema.Struct({
  key: Schema.String,
  /** the examples by id, resolved by the runner's data (set when the optimizer sends ids) */
  ids: Schema.optional(Schema.Array(Schema.String)),
  /** the examples themselves, encoded with the example schema (set when no ids are sent) */
  examples: Schema.optional(Schema.Array(Schema.Unknown))
})

/** @internal */
export type EvaluateItem = typeof EvaluateItem.Type

/**
 * A request: several adapter calls of the optimizer for one candidate, run
 * by the runner with its own bounded concurrency.
 *
 * @internal
 */
export const EvaluatePayload = {
  /** idempotency key of the request: the same id is evaluated once and answered from storage after */
  requestId: Schema.String,
  candidate: Schema.Record({ key: Schema.String, value: Schema.String }),
  captureTraces: Schema.Boolean,
  items: Schema.Array(EvaluateItem)
}

/** The outcome of one item: the adapter's batch (encoded), or why it failed. @internal */
export const ItemResult = Schema.Union(
  Schema.TaggedStruct("Evaluated", {
    outputs: Schema.Array(Schema.Unknown),
    scores: Schema.Array(Schema.Number),
    trajectories: Schema.optional(Schema.Array(Schema.Unknown)),
    objectiveScores: Schema.optional(Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Number })))
  }),
  Schema.TaggedStruct("Failed", { detail: Schema.String })
)

/** @internal */
export type ItemResult = typeof ItemResult.Type

/** @internal */
export const EvaluateReply = Schema.Struct({
  /** one result per item, in the request's order */
  items: Schema.Array(ItemResult),
  /** the runner that answered, host:port (for events and tests) */
  runner: Schema.String,
  /** that runner's evaluations at once: the optimizer sizes the requests it sends there by it */
  capacity: Schema.Number,
  /** items answered from results a runner stored before (a redelivery after a runner died) */
  reused: Schema.Number
})

/** @internal */
export type EvaluateReply = typeof EvaluateReply.Type

/** @internal */
export const Evaluate = Rpc.make("Evaluate", {
  payload: EvaluatePayload,
  success: EvaluateReply,
  error: RemoteEvaluationError,
  primaryKey: (payload) => payload.requestId
}).annotate(ClusterSchema.Persisted, true)

/**
 * The entity. No client span per request: the engine traces its own calls,
 * and a span per request is CPU the optimizer spends on every batch.
 *
 * @internal
 */
export const Evaluator = Entity.make(entityType, [Evaluate]).annotate(ClusterSchema.ClientTracingEnabled, false)

/**
 * The id of one adapter call: the session, the candidate, the
 * examples, whether traces are wanted, and the optimizer's attempt number
 * for this exact call (a second call with the same inputs is new work, a
 * resend of the same call is not).
 *
 * @internal
 */
export const requestId = (parts: {
  readonly session: string
  readonly candidateHash: string
  readonly exampleKeys: ReadonlyArray<string>
  readonly captureTraces: boolean
  readonly attempt: number
}): string => {
  const h = createHash("sha256")
  h.update(`${parts.session.length}:${parts.session}|${parts.candidateHash}|${parts.captureTraces ? "T" : "N"}|`)
  for (const key of parts.exampleKeys) h.update(`${key.length}:${key}`)
  h.update(`|${parts.attempt}`)
  return h.digest("hex").slice(0, 40)
}

/** The key of an example without a user id: a hash of its encoded form. @internal */
export const exampleKey = (encoded: unknown): string => createHash("sha256").update(JSON.stringify(encoded) ?? "undefined").digest("hex").slice(0, 24)

/** The name of entity `index` (requests are spread over a bounded set of entities). @internal */
export const entityId = (index: number): string => `evaluator-${index}`

/** The id of a request: its items' ids, in order. @internal */
export const batchId = (itemKeys: ReadonlyArray<string>): string => {
  const [only] = itemKeys
  if (itemKeys.length === 1 && only !== undefined) return only
  const h = createHash("sha256")
  for (const key of itemKeys) h.update(`${key.length}:${key}`)
  return h.digest("hex").slice(0, 40)
}
