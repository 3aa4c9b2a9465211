/**
 * Stop conditions: composable Effect predicates over a read-only snapshot of
 * the run. A condition is built once per run (inside the run's scope, so it
 * can hold resources such as a signal handler or a start time) and then
 * checked before every iteration.
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, Ref, type Scope } from "effect"
import * as fs from "node:fs"
import type { GepaState } from "./State.js"
import * as State from "./State.js"

/**
 * What a stop condition sees before each iteration.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly state: GepaState
  readonly bestIndex: number
  readonly bestScore: number
}

/**
 * The check of a stop condition: `true` means stop.
 *
 * @since 0.1.0
 * @category models
 */
export type Check = (snapshot: Snapshot) => Effect.Effect<boolean>

/**
 * A stop condition: a name (reported as the stop reason), how to build its
 * check for a run, and, for budget conditions, the metric-call budget the
 * engine enforces strictly.
 *
 * @since 0.1.0
 * @category models
 */
export interface StopCondition {
  readonly name: string
  readonly make: Effect.Effect<Check, never, Scope.Scope>
  readonly budget?: number | undefined
  /**
   * For iteration conditions, the iterations (proposals) the run may plan:
   * a step of several proposals is cut to it, so the count is exact.
   */
  readonly maxIterations?: number | undefined
  /**
   * A deadline after the run's start: when it passes, the run ends at once,
   * even while proposals are in flight. Their work is interrupted and kept
   * planned in the saved state (nothing half-applied), so resuming the run
   * continues them. Conditions without it are checked between proposals and
   * let the proposals in flight finish.
   */
  readonly interruptAfter?: Duration.Duration | undefined
}

/**
 * A condition from a name and a check.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (name: string, check: Check): StopCondition => ({ name, make: Effect.succeed(check) })

/**
 * A condition from a plain predicate.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPredicate = (name: string, predicate: (snapshot: Snapshot) => boolean): StopCondition =>
  make(name, (s) => Effect.sync(() => predicate(s)))

const positiveInt = (name: string, n: number) => {
  if (!(Number.isInteger(n) && n >= 0)) throw new RangeError(`StopCondition.${name}: expected a non-negative integer, got ${n}`)
}

/**
 * Stop once `n` metric calls (examples evaluated) are spent. The engine also
 * treats `n` as a strict budget: work that would cross it is never started.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const maxMetricCalls = (n: number): StopCondition => {
  positiveInt("maxMetricCalls", n)
  return { ...fromPredicate(`maxMetricCalls(${n})`, (s) => s.state.metricCalls >= n), budget: n }
}

/**
 * Stop after `n` iterations.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const maxIterations = (n: number): StopCondition => {
  positiveInt("maxIterations", n)
  return { ...fromPredicate(`maxIterations(${n})`, (s) => s.state.iteration >= n), maxIterations: n }
}

/**
 * Stop once the pool holds `n` candidates (the seed included).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const maxCandidates = (n: number): StopCondition => {
  positiveInt("maxCandidates", n)
  return fromPredicate(`maxCandidates(${n})`, (s) => s.state.candidates.length >= n)
}

/**
 * Stop when `duration` has passed since the run started (Effect's Clock, so
 * the TestClock drives it in tests). A deadline: at that moment the run ends
 * even with calls in flight; their proposals stay planned in the saved state
 * and a resumed run continues them (see `interruptAfter`).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const timeout = (duration: Duration.DurationInput): StopCondition => {
  const decoded = Duration.decode(duration)
  const millis = Duration.toMillis(decoded)
  return {
    name: `timeout(${Duration.format(decoded)})`,
    make: Effect.map(Clock.currentTimeMillis, (start) => () =>
      Effect.map(Clock.currentTimeMillis, (now) => now - start >= millis)),
    // a wall-clock limit is a deadline: it does not wait for a hung call
    interruptAfter: decoded
  }
}

/**
 * Stop when the best validation score has not improved for `n` iterations.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const noImprovement = (n: number): StopCondition => {
  positiveInt("noImprovement", n)
  return fromPredicate(`noImprovement(${n})`, (s) => s.state.iteration - s.state.lastImprovementIteration >= n)
}

/**
 * Stop when the best mean validation score reaches `threshold`.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const scoreThreshold = (threshold: number): StopCondition =>
  fromPredicate(`scoreThreshold(${threshold})`, (s) => s.bestScore >= threshold)

/**
 * Stop when the file at `path` exists (checked before every iteration).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const stopFile = (path: string): StopCondition =>
  make(`stopFile(${path})`, () => Effect.sync(() => fs.existsSync(path)))

/**
 * Stop when the reflection model's accumulated cost reaches `max` (needs a
 * model layer with a price table).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const maxReflectionCost = (max: number): StopCondition =>
  fromPredicate(`maxReflectionCost(${max})`, (s) => s.state.reflectionUsage.cost >= max)

/**
 * Stop gracefully at the next safe point after the process receives one of
 * `signals` (default SIGINT and SIGTERM). The handler lives as long as the
 * run; while it is installed the signal does not kill the process.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const onSignal = (signals: ReadonlyArray<NodeJS.Signals> = ["SIGINT", "SIGTERM"]): StopCondition => ({
  name: `signal(${signals.join(", ")})`,
  make: Effect.gen(function*() {
    const received = yield* Ref.make(false)
    const handler = () => Effect.runSync(Ref.set(received, true))
    yield* Effect.acquireRelease(
      Effect.sync(() => signals.forEach((s) => process.on(s, handler))),
      () => Effect.sync(() => signals.forEach((s) => process.off(s, handler)))
    )
    return () => Ref.get(received)
  })
})

/**
 * A condition stopped by hand: `stop` makes it true.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const manual = (name = "manual"): Effect.Effect<{ readonly condition: StopCondition; readonly stop: Effect.Effect<void> }> =>
  Effect.map(Ref.make(false), (flag) => ({
    condition: make(name, () => Ref.get(flag)),
    stop: Ref.set(flag, true)
  }))

/**
 * Stops when any of the conditions does. Its budget is the smallest budget
 * among them, and its deadline the earliest.
 *
 * @since 0.1.0
 * @category combinators
 */
export const any = (...conditions: ReadonlyArray<StopCondition>): StopCondition => {
  const budgets = conditions.flatMap((c) => (c.budget === undefined ? [] : [c.budget]))
  const deadlines = conditions.flatMap((c) => (c.interruptAfter === undefined ? [] : [c.interruptAfter]))
  const caps = conditions.flatMap((c) => (c.maxIterations === undefined ? [] : [c.maxIterations]))
  return {
    name: conditions.length === 1 ? conditions[0]!.name : `any(${conditions.map((c) => c.name).join(", ")})`,
    budget: budgets.length === 0 ? undefined : Math.min(...budgets),
    maxIterations: caps.length === 0 ? undefined : Math.min(...caps),
    interruptAfter: deadlines.length === 0 ? undefined : deadlines.reduce(Duration.min),
    make: Effect.map(Effect.forEach(conditions, (c) => c.make), (checks) => (s: Snapshot) =>
      Effect.reduce(checks, false, (acc, check) => (acc ? Effect.succeed(true) : check(s))))
  }
}

/**
 * Stops when all of the conditions do.
 *
 * @since 0.1.0
 * @category combinators
 */
export const all = (...conditions: ReadonlyArray<StopCondition>): StopCondition => ({
  name: `all(${conditions.map((c) => c.name).join(", ")})`,
  // capped only when every condition is, by the largest cap
  maxIterations: conditions.length > 0 && conditions.every((c) => c.maxIterations !== undefined)
    ? Math.max(...conditions.map((c) => c.maxIterations!))
    : undefined,
  make: Effect.map(Effect.forEach(conditions, (c) => c.make), (checks) => (s: Snapshot) =>
    Effect.reduce(checks, conditions.length > 0, (acc, check) => (acc ? check(s) : Effect.succeed(false))))
})

/**
 * Stops when the condition does not.
 *
 * @since 0.1.0
 * @category combinators
 */
export const not = (condition: StopCondition): StopCondition => ({
  name: `not(${condition.name})`,
  make: Effect.map(condition.make, (check) => (s: Snapshot) => Effect.map(check(s), (b) => !b))
})

/**
 * The snapshot of a state.
 *
 * @since 0.1.0
 * @category utils
 */
export const snapshot = (state: GepaState): Snapshot => {
  const bestIndex = State.bestIndex(state)
  return { state, bestIndex, bestScore: State.scoreOf(state)(bestIndex) }
}
