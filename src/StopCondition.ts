/**
 * Stop conditions: composable Effect predicates over a read-only snapshot of
 * the run. A condition is built once per run (inside the run's scope, so it
 * can hold resources such as a signal handler or a start time) and then
 * checked before every iteration.
 *
 * @example
 * ```ts
 * import { StopCondition } from "effect-gepa"
 *
 * // whichever comes first: 30 minutes, a perfect validation score, or `touch gepa.stop`
 * const stop = StopCondition.any(
 *   StopCondition.timeout("30 minutes"),
 *   StopCondition.perfectScore(),
 *   StopCondition.stopFile("gepa.stop")
 * )
 *
 * // a condition of your own: at least 10 candidates and a best score of 0.9
 * const goodEnough = StopCondition.fromPredicate(
 *   "goodEnough",
 *   (s) => s.state.candidates.length >= 10 && s.bestScore >= 0.9,
 *   (s) => `found ${s.state.candidates.length} candidates, the best at ${s.bestScore}`
 * )
 *
 * // passed as `stop: [stop, goodEnough]`, the run stops when either holds
 * ```
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, Option, Ref, type Scope } from "effect"
import * as Disk from "./internal/runDir/disk.js"
import { formatScore } from "./Result.js"
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
 * A condition that fired: its name (`maxMetricCalls(400)`) and what it says
 * in words ("used the budget of 400 metric calls"), which is the run's stop
 * reason.
 *
 * @since 0.2.0
 * @category models
 */
export interface Fired {
  readonly condition: string
  readonly reason: string
}

/**
 * A check that says which condition fired, if one did (see `explain`).
 *
 * @since 0.2.0
 * @category models
 */
export type Explain = (snapshot: Snapshot) => Effect.Effect<Option.Option<Fired>>

/**
 * A stop condition: a name, how to build its check for a run, what it says
 * in words when it stops a run (the stop reason), and, for budget
 * conditions, the metric-call budget the engine enforces strictly.
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
  /**
   * The stop reason in words when this condition stops a run, e.g. "used the
   * budget of 400 metric calls"; default "stop condition NAME met".
   */
  readonly describe?: ((snapshot: Snapshot) => string) | undefined
  /**
   * For combinators: a check that names which of the conditions fired.
   * Default: this condition's own check with its own words.
   */
  readonly explain?: Effect.Effect<Explain, never, Scope.Scope> | undefined
}

/**
 * The words of `condition` for `snapshot` (its `describe`, else "stop
 * condition NAME met").
 *
 * @since 0.2.0
 * @category getters
 */
export const describe = (condition: StopCondition, snapshot: Snapshot): string => condition.describe?.(snapshot) ?? `stop condition ${condition.name} met`

/**
 * Builds the check of `condition` for a run, naming the condition that
 * fired (for `any`, the first of its conditions that holds) and its words.
 * The engine uses it to report why a run stopped.
 *
 * @since 0.2.0
 * @category running
 */
export const explain = (condition: StopCondition): Effect.Effect<Explain, never, Scope.Scope> =>
  condition.explain ??
    Effect.map(
      condition.make,
      (check): Explain => (s) =>
        Effect.map(check(s), (fired) => fired ? Option.some({ condition: condition.name, reason: describe(condition, s) }) : Option.none())
    )

// the one score format of summaries, show and the report
const fmt = formatScore

/**
 * A condition from a name, a check and, optionally, the words it stops a
 * run with.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (name: string, check: Check, describe?: (snapshot: Snapshot) => string): StopCondition => ({
  name,
  make: Effect.succeed(check),
  ...(describe === undefined ? {} : { describe })
})

/**
 * A condition from a plain predicate.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPredicate = (
  name: string,
  predicate: (snapshot: Snapshot) => boolean,
  describe?: (snapshot: Snapshot) => string
): StopCondition => make(name, (s) => Effect.sync(() => predicate(s)), describe)

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
  return { ...fromPredicate(`maxMetricCalls(${n})`, (s) => s.state.metricCalls >= n, () => `used the budget of ${n} metric calls`), budget: n }
}

/**
 * Stop after `n` iterations.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const maxIterations = (n: number): StopCondition => {
  positiveInt("maxIterations", n)
  return {
    ...fromPredicate(`maxIterations(${n})`, (s) => s.state.iteration >= n, () => `ran the maximum of ${n} iterations`),
    maxIterations: n
  }
}

/**
 * Stop once the pool holds `n` candidates (the seed included).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const maxCandidates = (n: number): StopCondition => {
  positiveInt("maxCandidates", n)
  return fromPredicate(`maxCandidates(${n})`, (s) => s.state.candidates.length >= n, () => `reached ${n} candidates`)
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
    make: Effect.map(Clock.currentTimeMillis, (start) => () => Effect.map(Clock.currentTimeMillis, (now) => now - start >= millis)),
    // a wall-clock limit is a deadline: it does not wait for a hung call
    interruptAfter: decoded,
    describe: () => `reached the time limit of ${Duration.format(decoded)}`
  }
}

/**
 * Stop when the best validation score has not improved for `n` iterations.
 * An iteration is one proposal (one reflection), as in the reference's loop;
 * a step plans several when the strategy says so (the default for a
 * candidate of two components plans 6), so `n` iterations are about
 * `n / proposalsPerStep` validations of a new child. Size a patience in
 * proposals, not in steps.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const noImprovement = (n: number): StopCondition => {
  positiveInt("noImprovement", n)
  return fromPredicate(
    `noImprovement(${n})`,
    (s) => s.state.iteration - s.state.lastImprovementIteration >= n,
    (s) =>
      `no better validation score in the last ${n} iterations (best ${fmt(s.bestScore)}, ` +
      `found ${s.state.lastImprovementIteration === 0 ? "by the seed" : `at iteration ${s.state.lastImprovementIteration}`})`
  )
}

/**
 * Stop when the best mean validation score reaches `threshold`.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const scoreThreshold = (threshold: number): StopCondition =>
  fromPredicate(
    `scoreThreshold(${threshold})`,
    (s) => s.bestScore >= threshold,
    (s) => `the best validation score ${fmt(s.bestScore)} reached the threshold ${threshold}`
  )

/**
 * Stop when the best mean validation score is perfect (`perfect`, default
 * 1): nothing is left to improve, so further metric calls would be paid for
 * nothing.
 *
 * @since 0.2.0
 * @category built-ins
 */
export const perfectScore = (perfect = 1): StopCondition =>
  fromPredicate(
    `perfectScore(${perfect})`,
    (s) => s.bestScore >= perfect,
    (s) => `the validation score is perfect (${fmt(s.bestScore)}), nothing left to improve`
  )

/**
 * Stop when the file at `path` exists (checked before every iteration),
 * through the context's `FileSystem` (`@effect/platform`), else Node's
 * (`@effect/platform-node`, loaded when the run starts). A file that cannot
 * be checked counts as absent.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const stopFile = (path: string): StopCondition => ({
  name: `stopFile(${path})`,
  make: Effect.map(
    Effect.catchAll(Disk.resolve(path), (e) => Effect.dieMessage(`StopCondition.stopFile(${path}): ${e.detail}`)),
    (disk): Check => () => Disk.exists(disk, path)
  ),
  describe: () => `stopped by request (the file ${path} exists)`
})

/**
 * Stop when the reflection model's accumulated cost reaches `max` (needs a
 * model layer with a price table). Checked before each step is planned: a
 * step already planned reflects for each of its proposals, so the cost may
 * pass `max` by one step's reflections (up to `proposalsPerStep` calls).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const maxReflectionCost = (max: number): StopCondition =>
  fromPredicate(
    `maxReflectionCost(${max})`,
    (s) => s.state.reflectionUsage.cost >= max,
    (s) => `the reflection model cost ${s.state.reflectionUsage.cost} reached the limit of ${max}`
  )

/**
 * Stop gracefully at the next safe point after the process receives one of
 * `signals` (default SIGINT and SIGTERM). The handler lives as long as the
 * run; while it is installed the signal does not kill the process.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const onSignal = (signals: ReadonlyArray<NodeJS.Signals> = ["SIGINT", "SIGTERM"]): StopCondition => {
  const name = `signal(${signals.join(", ")})`
  const listen = Effect.gen(function*() {
    const received = yield* Ref.make<NodeJS.Signals | undefined>(undefined)
    // `process.emit(name)` calls the handler without the signal's name
    const handler = (signal?: NodeJS.Signals) => Effect.runSync(Ref.update(received, (first) => first ?? signal ?? signals[0]))
    yield* Effect.acquireRelease(
      Effect.sync(() => signals.forEach((s) => process.on(s, handler))),
      () => Effect.sync(() => signals.forEach((s) => process.off(s, handler)))
    )
    return Ref.get(received)
  })
  return {
    name,
    make: Effect.map(listen, (received) => () => Effect.map(received, (s) => s !== undefined)),
    explain: Effect.map(listen, (received): Explain => () =>
      Effect.map(received, (signal) =>
        signal === undefined
          ? Option.none()
          : Option.some({ condition: name, reason: `stopped by hand (${signal === "SIGINT" ? "Ctrl-C" : signal})` })))
  }
}

/**
 * A condition stopped by hand: `stop` makes it true.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const manual = (name = "manual"): Effect.Effect<{ readonly condition: StopCondition; readonly stop: Effect.Effect<void> }> =>
  Effect.map(Ref.make(false), (flag) => ({
    condition: make(name, () => Ref.get(flag), () => `stopped by hand (${name})`),
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
    name: conditions.length === 1 && conditions[0] !== undefined ? conditions[0].name : `any(${conditions.map((c) => c.name).join(", ")})`,
    budget: budgets.length === 0 ? undefined : Math.min(...budgets),
    maxIterations: caps.length === 0 ? undefined : Math.min(...caps),
    interruptAfter: deadlines.length === 0 ? undefined : deadlines.reduce(Duration.min),
    make: Effect.map(
      Effect.forEach(conditions, (c) => c.make),
      (checks) => (s: Snapshot) => Effect.reduce(checks, false, (acc, check) => (acc ? Effect.succeed(true) : check(s)))
    ),
    // the first condition that holds is the one the run stopped for
    explain: Effect.map(
      Effect.forEach(conditions, explain),
      (checks): Explain => (s) => Effect.reduce(checks, Option.none<Fired>(), (found, check) => (Option.isSome(found) ? Effect.succeed(found) : check(s)))
    )
  }
}

// capped only when every condition is, by the largest cap
const largestCap = (conditions: ReadonlyArray<StopCondition>): number | undefined => {
  const caps = conditions.flatMap((c) => (c.maxIterations === undefined ? [] : [c.maxIterations]))
  return caps.length > 0 && caps.length === conditions.length ? Math.max(...caps) : undefined
}

/**
 * Stops when all of the conditions do.
 *
 * @since 0.1.0
 * @category combinators
 */
export const all = (...conditions: ReadonlyArray<StopCondition>): StopCondition => ({
  name: `all(${conditions.map((c) => c.name).join(", ")})`,
  describe: (s) => conditions.map((c) => describe(c, s)).join(", and "),
  maxIterations: largestCap(conditions),
  make: Effect.map(
    Effect.forEach(conditions, (c) => c.make),
    (checks) => (s: Snapshot) => Effect.reduce(checks, conditions.length > 0, (acc, check) => (acc ? check(s) : Effect.succeed(false)))
  )
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
