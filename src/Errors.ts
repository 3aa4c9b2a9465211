/**
 * The tagged errors of effect-gepa. Every failure a caller can see is one of
 * these, so it can be matched with `Effect.catchTag`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import type { DataLoaderError } from "./DataLoader.js"

/**
 * A configuration value is missing, out of range or contradictory. `field`
 * names the offending option (a dotted path such as `stop` or
 * `merge.maxInvocations`).
 *
 * @since 0.1.0
 * @category errors
 */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  field: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `Invalid configuration "${this.field}": ${this.detail}`
  }
}

/**
 * The frontier type needs per-example objective scores but the adapter
 * returned none.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingObjectiveScores extends Schema.TaggedError<MissingObjectiveScores>()("MissingObjectiveScores", {
  frontierType: Schema.String,
  call: Schema.String
}) {
  override get message(): string {
    return `frontierType "${this.frontierType}" requires objective scores, but ${this.call} returned none; ` +
      `return objectiveScores from the adapter or use frontierType "instance"`
  }
}

/**
 * The adapter broke its contract (wrong number of scores or outputs, a score
 * that is not a finite number, a reflective dataset missing a component).
 * `call` names the adapter call.
 *
 * @since 0.1.0
 * @category errors
 */
export class AdapterContractError extends Schema.TaggedError<AdapterContractError>()("AdapterContractError", {
  call: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `Adapter contract violated in ${this.call}: ${this.detail}`
  }
}

/**
 * A failure raised by the user's adapter while evaluating. The engine turns it
 * into a fallback score for the affected examples; it reaches the caller only
 * through events and trajectories, or from `makeReflectiveDataset`.
 *
 * @since 0.1.0
 * @category errors
 */
export class AdapterError extends Schema.TaggedError<AdapterError>()("AdapterError", {
  call: Schema.String,
  detail: Schema.String,
  cause: Schema.optional(Schema.Unknown)
}) {
  override get message(): string {
    return `Adapter failed in ${this.call}: ${this.detail}`
  }
}

/**
 * An evaluation call did not finish within its timeout.
 *
 * @since 0.1.0
 * @category errors
 */
export class EvaluationTimeout extends Schema.TaggedError<EvaluationTimeout>()("EvaluationTimeout", {
  call: Schema.String,
  millis: Schema.Number
}) {
  override get message(): string {
    return `${this.call} timed out after ${this.millis} ms`
  }
}

/**
 * Every evaluation failed for too many consecutive iterations: the adapter or
 * the model behind it is broken, and going on would only burn the budget.
 *
 * @since 0.1.0
 * @category errors
 */
export class AllEvaluationsFailed extends Schema.TaggedError<AllEvaluationsFailed>()("AllEvaluationsFailed", {
  iterations: Schema.Number,
  lastError: Schema.String
}) {
  override get message(): string {
    return this.iterations === 0
      ? `Every evaluation of the seed candidate failed (last error: ${this.lastError})`
      : `Every evaluation failed in ${this.iterations} proposals in a row (last error: ${this.lastError})`
  }
}

/**
 * Proposals failed too many times in a row without an evaluation failure to
 * blame: the reflection model (or a custom proposer, or the adapter's
 * reflective dataset) failed on every try. Going on would only burn time and
 * money; the state is saved, so the run can be resumed once the cause is
 * fixed.
 *
 * @since 0.2.0
 * @category errors
 */
export class ProposalsFailed extends Schema.TaggedError<ProposalsFailed>()("ProposalsFailed", {
  iterations: Schema.Number,
  lastError: Schema.String
}) {
  override get message(): string {
    return `${this.iterations} proposals in a row failed (last error: ${this.lastError})`
  }
}

/**
 * The proposer could not produce new texts (for example the reflection model
 * failed after its retries).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProposalError extends Schema.TaggedError<ProposalError>()("ProposalError", {
  component: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `Proposal for component "${this.component}" failed: ${this.detail}`
  }
}

/**
 * Reading or writing the run directory failed. `path` names the file.
 *
 * @since 0.1.0
 * @category errors
 */
export class PersistenceError extends Schema.TaggedError<PersistenceError>()("PersistenceError", {
  path: Schema.String,
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `Could not ${this.operation} "${this.path}": ${this.detail}`
  }
}

/**
 * A run directory holds a run whose configuration differs from the one
 * given: resuming it would silently mix two experiments.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResumeConflict extends Schema.TaggedError<ResumeConflict>()("ResumeConflict", {
  field: Schema.String,
  saved: Schema.String,
  requested: Schema.String
}) {
  override get message(): string {
    return `Cannot resume: "${this.field}" differs from the saved run (saved: ${this.saved}; requested: ${this.requested}). ` +
      `Use a new run directory, or the saved configuration.`
  }
}

/**
 * Which model of a run failed: the task model (called by the adapter) or the
 * reflection model (which proposes new texts).
 *
 * @since 0.2.0
 * @category models
 */
export const ModelRole = Schema.Literal("task", "reflection")

/**
 * `"task"` or `"reflection"`.
 *
 * @since 0.2.0
 * @category models
 */
export type ModelRole = typeof ModelRole.Type

/**
 * Why a model call can never succeed as configured.
 *
 * @since 0.2.0
 * @category models
 */
export const UnrecoverableReason = Schema.Literal(
  "authentication",
  "permission",
  "model-not-found",
  "bad-request",
  "connection-refused",
  "host-not-found"
)

/**
 * One of the reasons of `UnrecoverableReason`.
 *
 * @since 0.2.0
 * @category models
 */
export type UnrecoverableReason = typeof UnrecoverableReason.Type

const oneLine = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

/**
 * A model failure no retry can fix: the key was rejected (HTTP 401/403), the
 * model does not exist (404), the request is invalid (400/422), or the
 * server cannot be reached at all (connection refused or unknown host, after
 * the retries). The run fails at once with it: going on would only spend the
 * budget on failures. Fix the cause and resume the run.
 *
 * The message is one line naming the model's role, its name, the server's
 * `host:port` and the HTTP status, e.g. `the reflection model "gpt-4.1" at
 * 127.0.0.1:4010 rejected the API key (HTTP 401)`. `detail` holds the
 * server's own words, with secrets scrubbed.
 *
 * @since 0.2.0
 * @category errors
 */
export class ModelUnrecoverable extends Schema.TaggedError<ModelUnrecoverable>()("ModelUnrecoverable", {
  role: ModelRole,
  model: Schema.String,
  reason: UnrecoverableReason,
  endpoint: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Number),
  detail: Schema.String
}) {
  override get message(): string {
    const where = this.endpoint === undefined ? "" : ` at ${this.endpoint}`
    const http = this.status === undefined ? "" : ` (HTTP ${this.status})`
    const subject = `the ${this.role} model "${this.model}"${where}`
    const detail = oneLine(this.detail, 200)
    switch (this.reason) {
      case "authentication":
        return `${subject} rejected the API key${http}`
      case "permission":
        return `${subject} denied access with this API key${http}${detail === "" ? "" : `: ${detail}`}`
      case "model-not-found":
        return `${subject} does not exist${http}; check the model name and the base URL`
      case "bad-request":
        return `${subject} rejected the request as invalid${http}${detail === "" ? "" : `: ${detail}`}`
      case "connection-refused":
        return `${subject} is unreachable: connection refused`
      case "host-not-found":
        return `${subject} is unreachable: host not found`
    }
  }
}

/**
 * The reflection model gave too many unusable answers in a row (see
 * `Reflection.ReflectionConfig.maxUnusableAnswers`, default 5): answers
 * without the fenced code block the prompt asks for (chatter, a refusal,
 * bare text). Going on would only spend the budget; the state is saved, so
 * the run can be resumed once the prompt (a custom template, or
 * `acceptUnfenced`) or the model is fixed.
 *
 * The message is one line naming the model, the component of the last
 * answer, how many answers in a row were unusable and the start of the last
 * one (secrets scrubbed).
 *
 * @since 0.3.0
 * @category errors
 */
export class ReflectionUnusable extends Schema.TaggedError<ReflectionUnusable>()("ReflectionUnusable", {
  model: Schema.String,
  component: Schema.String,
  answers: Schema.Number,
  reason: Schema.String,
  /** the start of the last answer, on one line, secrets scrubbed */
  start: Schema.String
}) {
  override get message(): string {
    return `the reflection model "${this.model}" gave ${this.answers} unusable answers in a row; the last, for component ` +
      `"${this.component}": ${this.reason}; it began: ${JSON.stringify(this.start)}`
  }
}

/**
 * Every way `optimize` can fail. `ModelUnrecoverable` (since 0.2.0): the
 * task or reflection model can never succeed as configured (rejected key,
 * unknown model, invalid request, unreachable server); the run stops at once
 * and, with a run directory, can be resumed after the fix. `ReflectionUnusable`
 * (since 0.3.0): the reflection model gave `reflection.maxUnusableAnswers`
 * unusable answers in a row; resumable the same way.
 *
 * @since 0.1.0
 * @category errors
 */
export type OptimizeError =
  | ConfigError
  | AdapterContractError
  | MissingObjectiveScores
  | AllEvaluationsFailed
  | ProposalsFailed
  | DataLoaderError
  | PersistenceError
  | ResumeConflict
  | ModelUnrecoverable
  | ReflectionUnusable
