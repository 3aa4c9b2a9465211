/**
 * The retries of a model call: how an attempt's failure is described, which
 * failures are retried, and the `Schedule` (exponential backoff with jitter,
 * honouring `Retry-After`; a server never reached gets a few short waits).
 *
 * @internal
 */
import { Duration, Effect, Option, Schedule, ScheduleDecision } from "effect"
import { field } from "../shared/fields.js"
import * as Secrets from "../../Secrets.js"
import type { LlmError } from "../../LanguageModel.js"
import { withStats } from "./call.js"

/** An attempt's failure, before retries are decided. */
export interface AttemptFailure {
  readonly error: LlmError
  readonly retryable: boolean
  readonly retryAfterMillis?: number | undefined
  /**
   * the server was never reached by this model (connection refused, unknown
   * host) and has not answered any earlier call: a wrong URL or a server
   * that is down, which waiting minutes will not fix, so the retries are
   * few and short (`unreachedRetries` within about 2 s)
   */
  readonly unreached?: boolean | undefined
}

/** Retries, and the longest wait before each, of a server never reached. */
export const unreachedRetries = { retries: 3, maxDelayMillis: 500 } as const

/** The system error codes of a server that cannot be reached at all. */
export const unreachableCodes: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

/**
 * Tracks whether a model's server has ever answered, and marks connection
 * failures before that as `unreached`.
 */
export const makeReachability = () => {
  let reached = false
  return {
    answered: (): void => {
      reached = true
    },
    mark: (failure: AttemptFailure): AttemptFailure => {
      const code = field(failure.error, "code")
      // an HTTP status means the server answered
      if (field(failure.error, "status") !== undefined) reached = true
      return !reached && failure.error._tag === "LlmTransportError" && typeof code === "string" && unreachableCodes.has(code)
        ? { ...failure, unreached: true }
        : failure
    }
  }
}

/**
 * The wait a response asks for before the next attempt, from the
 * `retry-after-ms` header (milliseconds) or `Retry-After` (seconds or an
 * HTTP date). `None` when absent or unreadable.
 */
export const parseRetryAfter = (
  get: (name: string) => string | null | undefined,
  nowMillis: number
): Option.Option<number> => {
  const ms = get("retry-after-ms")
  if (typeof ms === "string" && ms.trim() !== "") {
    const n = Number(ms)
    if (Number.isFinite(n) && n >= 0) return Option.some(n)
  }
  const value = get("retry-after")?.trim()
  if (value === undefined || value === "") return Option.none()
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return seconds >= 0 ? Option.some(seconds * 1000) : Option.none()
  const date = Date.parse(value)
  return Number.isNaN(date) ? Option.none() : Option.some(Math.max(0, date - nowMillis))
}

/** The retry policy's numbers. */
export interface RetryPolicy {
  readonly maxRetries: number
  readonly retryBaseDelayMillis: number
  readonly maxRetryDelayMillis: number
}

/**
 * The wait before retry number `retry` (0 for the first): the server's
 * `Retry-After` when it gave one, else exponential backoff capped at
 * `maxRetryDelayMillis`, jittered between half and all of it. The jitter
 * draws from `Math.random`, never from the Effect `Random` service, so model
 * calls leave the optimizer's seeded stream untouched.
 */
export const retryDelayMillis = (policy: RetryPolicy, retry: number, failure: AttemptFailure): number => {
  if (failure.retryAfterMillis !== undefined) return failure.retryAfterMillis
  const full = Math.min(policy.maxRetryDelayMillis, policy.retryBaseDelayMillis * 2 ** retry)
  return full / 2 + Math.random() * (full / 2)
}

/** Whether a failure may be retried at all under the policy. */
export const isRetryable = (policy: RetryPolicy, failure: AttemptFailure): boolean =>
  failure.retryable &&
  // a server asking for a longer wait than we accept ends the retries at once
  (failure.retryAfterMillis === undefined || failure.retryAfterMillis <= policy.maxRetryDelayMillis)

// Schedule.tapOutput also runs on the step that ends the schedule, which
// would log a retry that never happens: this one runs only when it goes on.
const tapRetry = <Out, In, R>(
  self: Schedule.Schedule<Out, In, R>,
  f: (out: Out) => Effect.Effect<void>
): Schedule.Schedule<Out, In, R> =>
  Schedule.makeWithState(
    self.initial,
    (now, input, state) => Effect.tap(self.step(now, input, state), ([, out, decision]) => (ScheduleDecision.isContinue(decision) ? f(out) : Effect.void))
  )

/**
 * The retry schedule of a model call: retries transient failures only, at
 * most `maxRetries` times, waiting `retryDelayMillis` before each (a server
 * never reached gets `unreachedRetries`: a few short waits), and logs every
 * retry at warning level as one line naming the model, where it is served
 * (`where`, e.g. the base URL) and the cause. The log is written when the
 * attempt fails, before the wait.
 */
export const retrySchedule = (
  policy: RetryPolicy,
  model: string,
  where?: string
): Schedule.Schedule<readonly [AttemptFailure, number, number], AttemptFailure> =>
  Schedule.identity<AttemptFailure>().pipe(
    Schedule.whileInput((failure: AttemptFailure) => isRetryable(policy, failure)),
    Schedule.intersect(Schedule.recurs(policy.maxRetries)),
    Schedule.whileOutput(([failure, retry]) => failure.unreached !== true || retry < unreachedRetries.retries),
    // the delay is drawn once per step, so the log and the wait agree
    Schedule.map(([failure, retry]) => {
      const delay = retryDelayMillis(policy, retry, failure)
      return [failure, retry, failure.unreached === true ? Math.min(delay, unreachedRetries.maxDelayMillis) : delay] as const
    }),
    Schedule.addDelay(([, , delay]) => Duration.millis(delay)),
    (schedule) =>
      tapRetry(schedule, ([failure, retry, delay]) =>
        withStats((stats) => {
          stats.retries = retry + 1
        }).pipe(
          Effect.zipRight(Effect.logWarning(
            // already scrubbed by the layer; again, with every secret of the process
            Secrets.scrub(
              `retrying model call (${retry + 1} of ${
                failure.unreached === true ? Math.min(policy.maxRetries, unreachedRetries.retries) : policy.maxRetries
              }, ` +
                `in ${(delay / 1000).toFixed(1)} s): ${failure.error.message}${where === undefined ? "" : `; base URL ${where}`}`
            )
          )),
          Effect.annotateLogs({
            model,
            // already scrubbed by the layer; again, with every secret of the process
            error: Secrets.scrub(failure.error.message),
            retry: retry + 1,
            maxRetries: policy.maxRetries,
            delayMillis: Math.round(delay)
          })
        ))
  )
