/**
 * The adapter built from a user's evaluator: each example is one evaluator
 * call, run with its own log buffer and its own timeout; what the evaluator
 * returns (a number or `{ score, sideInfo, scores }`) becomes the output, the
 * trace and the objective scores of the example. A failing, dying or
 * timed-out evaluator fails the adapter call through the error channel, so
 * the engine records a failed evaluation (never a cached score) whose message
 * carries the error and the logs written before it.
 *
 * @internal
 */
import { Cause, Duration, Effect, Either, FiberRef, HashMap, HashSet, Logger, Option } from "effect"
import type { Adapter } from "../../Adapter.js"
import * as Candidate from "../../Candidate.js"
import { AdapterError } from "../../Errors.js"
import type { ObjectiveScores } from "../../EvaluationBatch.js"
import { currentProposal, ReadsProposal } from "../engine/currentProposal.js"
import { fit } from "./promptBudget.js"
import { budget, type EvaluationRecord, type EvaluationTrace, type Limits, rawRecord, toJsonLike, truncateString } from "./sideInfo.js"
import * as Secrets from "../../Secrets.js"
import { field, isRecord } from "../shared/fields.js"

/** @internal */
export interface Options {
  /** candidate as the engine holds it -> what the evaluator receives */
  readonly view: (candidate: Candidate.Candidate) => unknown
  /** false in single-task mode: the evaluator gets `undefined` and the record shows no input */
  readonly withExample: boolean
  readonly timeout: Duration.Duration | undefined
  readonly captureLogs: boolean
  readonly limits: Limits
  /** receives the first malformed evaluator result, for a clear contract error */
  readonly onMalformed: (detail: string) => void
  /**
   * characters of rendered evaluations the reflection prompt has room for
   * when revising `component` from `currentText` (the prompt budget less the
   * template, the instructions and the text); absent: no limit
   */
  readonly promptRoom?: ((component: string, currentText: string) => number) | undefined
  /** keeps the full side information behind each reflection (the run directory's `side_info.jsonl`) */
  readonly keep?: ((entry: SideInfoEntry) => Effect.Effect<void>) | undefined
}

/**
 * The full side information behind one reflection, as the run directory
 * keeps it: the prompt shows it whole within the prompt budget, trimmed
 * over it (`promptBudget.ts`).
 *
 * @internal
 */
export interface SideInfoEntry {
  /** the iteration and the parent's index of the proposal the evidence was gathered for */
  readonly iteration?: number | undefined
  readonly parent?: number | undefined
  /** `Candidate.hash` of the candidate reflected on */
  readonly candidate: string
  readonly components: ReadonlyArray<string>
  /** one per evaluation shown, in the prompt's order (Example 1, 2, ...) */
  readonly evaluations: ReadonlyArray<{
    readonly example: unknown
    readonly score: number
    readonly scores?: ObjectiveScores | undefined
    readonly sideInfo: unknown
    readonly componentSideInfo?: Readonly<Record<string, unknown>> | undefined
    readonly logs: ReadonlyArray<string>
  }>
}

/**
 * The iteration and parent of the proposal being made, as the engine tells
 * an adapter that reads them (see `make`: only when evidence is kept).
 */
const proposalOf = Effect.map(FiberRef.get(currentProposal), (proposal) => ({
  iteration: proposal?.iteration,
  parent: proposal?.parent
}))

/** @internal */
export type RawEvaluator = (candidate: unknown, example: unknown) => Effect.Effect<unknown, unknown>

const text = (value: unknown): string => {
  if (typeof value === "string") return value
  const json = toJsonLike(value)
  return typeof json === "string" ? json : JSON.stringify(json)
}

const formatLog = (options: Logger.Logger.Options<unknown>, inherited: HashMap.HashMap<string, unknown>): string => {
  const parts = Array.isArray(options.message) ? options.message.map(text) : [text(options.message)]
  let line = `${options.logLevel.label} ${parts.join(" ")}`
  // the evaluator's own annotations only: those of the run around it (its
  // `run` id) would vary from run to run and mean nothing to the reflection
  const own = Array.from(HashMap.toEntries(options.annotations)).filter(([k, v]) => {
    const outer = HashMap.get(inherited, k)
    return outer._tag === "None" || outer.value !== v
  })
  if (own.length > 0) line += " " + own.map(([k, v]) => `${k}=${text(v)}`).join(" ")
  if (!Cause.isEmpty(options.cause)) line += `\n${Cause.pretty(options.cause)}`
  return line
}

/**
 * Runs `effect` with a logger that appends to a buffer of its own. The
 * buffer lives in this call only, and the logger set is a fiber-local value
 * inherited by the fibers `effect` forks, so logs of concurrent evaluations
 * never mix. The default console logger is left out for the evaluation
 * (captured logs go to the reflection model, not the terminal); loggers the
 * user installed stay.
 *
 * @internal
 */
export const withCapturedLogs = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<Settled<A, E>, never, R> => settle(effect, true)

type Settled<A, E> = readonly [Either.Either<A, Cause.Cause<E>>, ReadonlyArray<string>]

const settle = <A, E, R>(effect: Effect.Effect<A, E, R>, capture: boolean): Effect.Effect<Settled<A, E>, never, R> =>
  Effect.withFiberRuntime((fiber) => {
    const lines: Array<string> = []
    const inherited = fiber.getFiberRef(FiberRef.currentLogAnnotations)
    const capturing = Logger.make((options) => {
      // captured lines go to the reflection model: no registered secret in them
      lines.push(Secrets.scrub(formatLog(options, inherited)))
    })
    const run = capture
      ? Effect.locallyWith(effect, FiberRef.currentLoggers, (loggers) => HashSet.add(HashSet.remove(loggers, Logger.defaultLogger), capturing))
      : effect
    return Effect.flatMap(Effect.exit(run), (exit): Effect.Effect<Settled<A, E>> =>
      exit._tag === "Success"
        ? Effect.succeed([Either.right(exit.value), lines])
        : Cause.isInterruptedOnly(exit.cause)
        // interruption is the run's, not the evaluator's failure: pass it on
        // (an interruption-only cause holds no error of the evaluator's, so no E)
        ? Effect.failCause(exit.cause as Cause.Cause<never>)
        : Effect.succeed([Either.left(exit.cause), lines]))
  })

const describeError = (e: unknown): string => {
  if (e instanceof Error) {
    const own = `${e.name}: ${e.message}`
    // wrappers such as UnknownException (Effect.try) carry the real error as their cause
    return e.cause === undefined || e.cause === e ? own : `${own} (cause: ${describeError(e.cause)})`
  }
  const message = field(e, "message")
  if (typeof message === "string") {
    const tag = field(e, "_tag")
    return typeof tag === "string" ? `${tag}: ${message}` : message
  }
  return text(e)
}

const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return describeError(failure.value)
  return `the evaluator crashed: ${describeError(Cause.squash(cause))}`
}

// every record's objective scores, when every record has them
const allScores = (records: ReadonlyArray<EvaluationRecord>): Array<ObjectiveScores> | undefined => {
  const scores = records.flatMap((r) => (r.scores === undefined ? [] : [r.scores]))
  return scores.length === records.length ? scores : undefined
}

const isScores = (u: unknown): u is ObjectiveScores =>
  u !== null && typeof u === "object" && !Array.isArray(u) &&
  Object.values(u).every((v) => typeof v === "number")

/**
 * The record of an evaluator's result, or why the result is malformed.
 *
 * @internal
 */
export const toRecord = (
  value: unknown,
  logs: ReadonlyArray<string>,
  limits: Limits
): Either.Either<EvaluationRecord, string> => {
  if (typeof value === "number") return Either.right({ score: value, sideInfo: undefined, logs })
  const score = field(value, "score")
  if (typeof score === "number") {
    const scores = field(value, "scores")
    if (scores !== undefined && !isScores(scores)) {
      return Either.left(`scores must be a record of numbers, got ${truncateString(text(scores), 200)}`)
    }
    const perComponent = field(value, "componentSideInfo")
    if (perComponent !== undefined && (perComponent === null || typeof perComponent !== "object" || Array.isArray(perComponent))) {
      return Either.left(`componentSideInfo must be a record keyed by component name, got ${truncateString(text(perComponent), 200)}`)
    }
    const rawSideInfo = field(value, "sideInfo")
    const sideInfo = rawSideInfo === undefined ? undefined : budget(toJsonLike(rawSideInfo), limits)
    // a record stays a record through toJsonLike and budget
    const shrunk = perComponent === undefined ? undefined : budget(toJsonLike(perComponent), limits)
    const componentSideInfo = isRecord(shrunk) ? shrunk : undefined
    return Either.right({ score, sideInfo, scores, logs, ...(componentSideInfo === undefined ? {} : { componentSideInfo }) })
  }
  return Either.left(`expected a number or { score, sideInfo?, scores?, componentSideInfo? }, got ${truncateString(text(value), 200)}`)
}

const failureDetail = (message: string, logs: ReadonlyArray<string>, limits: Limits): string =>
  logs.length === 0
    ? message
    : `${message}\nLogs before the failure:\n${truncateString(logs.join("\n"), limits.maxStringLength)}`

/**
 * One evaluator call: the record, or the error (message and captured logs).
 *
 * @internal
 */
export const evaluateOne = (
  evaluator: RawEvaluator,
  candidate: Candidate.Candidate,
  example: unknown,
  options: Options
): Effect.Effect<EvaluationRecord, AdapterError> => {
  let call: Effect.Effect<unknown, unknown> = Effect.suspend(() => evaluator(options.view(candidate), options.withExample ? example : undefined))
  if (options.timeout !== undefined) {
    const millis = Duration.toMillis(options.timeout)
    call = Effect.timeoutFail(call, {
      duration: options.timeout,
      onTimeout: () => new EvaluatorTimeout(millis)
    })
  }
  const run = settle(call, options.captureLogs)
  return Effect.flatMap(run, ([result, logs]): Effect.Effect<EvaluationRecord, AdapterError> => {
    if (Either.isLeft(result)) {
      return Effect.fail(
        new AdapterError({
          call: "evaluator",
          detail: failureDetail(describeFailure(result.left), logs, options.limits),
          cause: Cause.squash(result.left)
        })
      )
    }
    const record = toRecord(result.right, logs, options.limits)
    if (Either.isLeft(record)) {
      options.onMalformed(record.left)
      // a non-finite score makes the engine stop the run with a contract error
      return Effect.succeed({ score: Number.NaN, sideInfo: undefined, logs })
    }
    return Effect.succeed(record.right)
  })
}

/** The timeout of one evaluator call, reported with its limit. */
class EvaluatorTimeout {
  readonly _tag = "EvaluationTimeout"
  readonly message: string
  constructor(readonly millis: number) {
    this.message = `the evaluator did not finish within ${millis} ms`
  }
}

/**
 * The adapter over `evaluator`.
 *
 * @internal
 */
export const make = (
  evaluator: RawEvaluator,
  options: Options
): Adapter<unknown, EvaluationTrace, EvaluationRecord> => ({
  // the kept evidence says which proposal it was gathered for
  ...(options.keep === undefined ? {} : { [ReadsProposal]: true }),
  evaluate: (batch, candidate, { captureTraces }) =>
    Effect.forEach(batch, (example) => evaluateOne(evaluator, candidate, example, options), { concurrency: "unbounded" }).pipe(
      Effect.map((records) => ({
        outputs: records,
        scores: records.map((r) => r.score),
        trajectories: captureTraces ? records.map((record, i): EvaluationTrace => ({ example: batch[i], record })) : undefined,
        objectiveScores: records.length > 0 ? allScores(records) : undefined
      }))
    ),
  makeReflectiveDataset: (candidate, evaluation, components) =>
    Effect.gen(function*() {
      const traces = evaluation.trajectories ?? []
      if (options.keep !== undefined) {
        const { iteration, parent } = yield* proposalOf
        yield* options.keep({
          ...(iteration === undefined ? {} : { iteration }),
          ...(parent === undefined ? {} : { parent }),
          candidate: Candidate.hash(candidate),
          components,
          evaluations: traces.map((t) => ({
            example: options.withExample ? toJsonLike(t.example) : null,
            score: t.record.score,
            ...(t.record.scores === undefined ? {} : { scores: t.record.scores }),
            sideInfo: t.record.sideInfo ?? null,
            ...(t.record.componentSideInfo === undefined ? {} : { componentSideInfo: t.record.componentSideInfo }),
            logs: t.record.logs
          }))
        })
      }
      const scores = traces.map((t) => t.record.score)
      return Object.fromEntries(components.map((component) => {
        const room = options.promptRoom?.(component, candidate[component] ?? "") ?? Infinity
        const records = traces.map((t) => rawRecord(t, { withInput: options.withExample, limits: options.limits, component }))
        return [component, fit(records, scores, room, options.limits)]
      }))
    })
})
