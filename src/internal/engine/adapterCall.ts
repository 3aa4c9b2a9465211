/**
 * The adapter's call for one chunk of an evaluation: its failures
 * classified, with the pool's timeout and retries around it.
 *
 * An unrecoverable model failure is neither timed out nor retried: no retry
 * can fix it, and it fails the whole evaluation (and so the run) instead of
 * scoring the fallback. It is a `ModelUnrecoverable`, or an `AdapterError`
 * whose cause is a task-model error no retry can fix (a custom adapter that
 * wrapped an `LlmAuthenticationError`, say).
 *
 * @internal
 */
import { Duration, Effect, Option, type Schedule } from "effect"
import type { Adapter } from "../../Adapter.js"
import type { Candidate } from "../../Candidate.js"
import { type AdapterError, EvaluationTimeout, ModelUnrecoverable } from "../../Errors.js"
import type { EvaluationBatch } from "../../EvaluationBatch.js"
import { unrecoverable } from "../../LanguageModel.js"

/** What an adapter's call may fail with. @internal */
export type CallError = AdapterError | EvaluationTimeout | ModelUnrecoverable

/** What the call needs of the pool. @internal */
export interface CallPolicy<D, T, O> {
  readonly adapter: Adapter<D, T, O>
  readonly timeout: Duration.Duration | undefined
  readonly retry: Schedule.Schedule<unknown, AdapterError | EvaluationTimeout> | undefined
}

/**
 * Whether calls are wrapped (a timeout or retries). A failure is classified
 * once: before the timeout and retries when there are any (a retry must see
 * an unrecoverable failure as one), otherwise where the result is handled
 * (`fatalOf`), one step fewer per call.
 *
 * @internal
 */
export const isWrapped = (policy: Pick<CallPolicy<never, unknown, unknown>, "timeout" | "retry">): boolean =>
  policy.timeout !== undefined || policy.retry !== undefined

const classify = (e: AdapterError | ModelUnrecoverable): Effect.Effect<never, AdapterError | ModelUnrecoverable> => {
  if (e instanceof ModelUnrecoverable) return Effect.fail(e)
  return Option.match(unrecoverable(e.cause, "task"), { onSome: Effect.fail, onNone: () => Effect.fail(e) })
}

/**
 * The call of `batch`, classified, timed out and retried as the policy says
 * (`call` names it in a timeout). Without a timeout or retries the adapter's
 * own call is cheaper: see `isWrapped`.
 *
 * @internal
 */
export const wrapped = <D, T, O>(
  policy: CallPolicy<D, T, O>,
  candidate: Candidate,
  options: { readonly captureTraces: boolean },
  call: string
) =>
(batch: ReadonlyArray<D>): Effect.Effect<EvaluationBatch<T, O>, CallError> => {
  const raw = Effect.suspend(() => policy.adapter.evaluate(batch, candidate, options))
  let effect: Effect.Effect<EvaluationBatch<T, O>, CallError> = Effect.catchAll(raw, classify)
  if (policy.timeout !== undefined) {
    const millis = Duration.toMillis(policy.timeout)
    effect = Effect.timeoutFail(effect, { duration: policy.timeout, onTimeout: () => new EvaluationTimeout({ call, millis }) })
  }
  if (policy.retry !== undefined) {
    effect = Effect.retry(effect, {
      schedule: policy.retry as Schedule.Schedule<unknown, CallError>,
      while: (e) => !(e instanceof ModelUnrecoverable)
    })
  }
  return effect
}

/**
 * The unrecoverable failure in a failed call, if any. `classified`: the
 * call was wrapped (see `isWrapped`), so its failure was classified already;
 * an unwrapped call's failure is the adapter's own and is classified here as
 * `wrapped` would.
 *
 * @internal
 */
export const fatalOf = (e: CallError, classified: boolean): ModelUnrecoverable | undefined =>
  e instanceof ModelUnrecoverable
    ? e
    : !classified
    ? Option.getOrUndefined(unrecoverable((e as AdapterError).cause, "task"))
    : undefined
