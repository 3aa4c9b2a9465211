/**
 * The GEPA loop, as a pipeline of proposals. This is the only place that
 * assigns the run's state:
 *
 *   start or resume
 *   until a stop condition holds or nothing more fits in the budget:
 *     plan (sequential, all random draws, budget reserved)
 *     -> propose (reflective or merge) -> evaluate -> judge -> validate
 *        (concurrently with the other proposals in flight)
 *     -> fold (in plan order) -> save
 *
 * Up to `parallelProposals` proposals are in flight. Whenever one is folded,
 * the next is planned from the freshest state. With `foldOrder: "plan"` a
 * proposal is folded only after every proposal planned before it, and the
 * k-th proposal is always planned right after the (k - depth)-th fold, so
 * the sequence of states does not depend on timing: same seed, same result.
 *
 * With `buildOnChild` (the one-component default) the next step is also
 * planned as soon as a step picks the one child it validates, on that child,
 * from the state before the fold: it runs while the child is validated.
 *
 * When a stop condition holds, no new proposal starts and the proposals in
 * flight finish and are folded: their budget is already reserved and their
 * work is paid for. A stop file, and a deadline (`StopCondition.timeout`),
 * end the run at once instead: the proposals in flight are interrupted and
 * stay planned in the saved state, so the resumed run re-launches them and
 * continues exactly as if it had never stopped.
 *
 * @internal
 */
import { Duration, Effect, Either, Option, type Scope } from "effect"
import type { AdapterService } from "../../Adapter.js"
import type { Config } from "../../Config.js"
import { AllEvaluationsFailed, type OptimizeError, ProposalsFailed } from "../../Errors.js"
import { GepaEvent } from "../../Event.js"
import type { ReflectionModel } from "../../LanguageModel.js"
import * as Result from "../../Result.js"
import type { OptimizeResult } from "../../Result.js"
import type { RunStore } from "../../RunStore.js"
import * as State from "../../State.js"
import * as StopCondition from "../../StopCondition.js"
import * as Ledger from "./ledger.js"
import * as Accept from "./accept.js"
import * as Pipeline from "./pipeline.js"
import * as Plan from "./plan.js"
import * as Propose from "./propose.js"
import { resolve } from "./resolve.js"
import type { Resolved } from "./resolved.js"
import { adoptSaved } from "./resume.js"
import * as Session from "./session.js"
import * as Step from "./step.js"
import { type Run, start } from "./start.js"

/**
 * The loop's own record of where the run is. Only this module assigns it:
 * the steps below receive it and return what changed.
 */
interface Progress {
  state: State.GepaState
  /** planned or folded since the last save */
  dirty: boolean
  /** why no new proposal starts (a stop condition, a monitor, a pause) */
  stop: { readonly reason: string; readonly by: Result.StoppedBy } | undefined
  /** why the last plan found nothing to do */
  exhausted: { readonly reason: string; readonly learned: boolean } | undefined
  /**
   * the consecutive failures that end the run once the step being folded is
   * complete, with their count when they reached the limit (a later member
   * of the same step may have reset the state's count since)
   */
  failure: { readonly error: string; readonly allEvaluationsFailed: boolean; readonly iterations: number } | undefined
}

/**
 * One run. `store` is the run's persistence, chosen by the caller;
 * `extraEmit` receives events in addition to the config's `onEvent`.
 *
 * @internal
 */
export const run = <D, T, O>(
  config: Config<D, T, O>,
  makeStore: (r: Resolved<D, T, O>) => Effect.Effect<RunStore<O>, OptimizeError, Scope.Scope>,
  extraEmit: ((event: GepaEvent) => Effect.Effect<void>) | undefined
): Effect.Effect<OptimizeResult<O>, OptimizeError, AdapterService<D, T, O> | ReflectionModel | Scope.Scope> =>
  Effect.gen(function*() {
    const requested = yield* resolve(config)
    const store = yield* makeStore(requested)
    const loaded = yield* store.load
    // a resumed run keeps the saved pipeline depth unless one is given: the depth changes the schedule
    const r = Option.isSome(loaded) ? adoptSaved(requested, loaded.value) : requested
    const s = yield* Session.make(r, store, extraEmit)
    const ctx: Run<D, T, O> = {
      r,
      s,
      store,
      // the session's: its cache keeps only outputs that could still join them
      best: s.best,
      emitAll: s.deliver,
      save: (state) =>
        Effect.zipRight(
          // a store may keep the state it saves: its arrays are copied on their next append
          Effect.sync(() => s.sealSaved()),
          store.durable
            ? Effect.zipRight(store.save(state), s.emit("StateSaved", () => GepaEvent.StateSaved({ iteration: state.iteration, path: store.location })))
            : store.save(state)
        ),
      unaccounted: store.unaccounted,
      known: (candidate, ids, sees) => s.known(candidate, ids, sees + 1, sees)
    }
    const progress: Progress = {
      state: yield* start(ctx, loaded),
      dirty: false,
      stop: undefined,
      exhausted: undefined,
      failure: undefined
    }
    const pipeline = yield* Pipeline.make(r, s, progress)
    // proposals an interrupted run had in flight start again as planned
    for (const plan of progress.state.pending) yield* pipeline.launch(plan)
    yield* pipeline.armDeadline
    yield* drive(ctx, pipeline, progress)
    return yield* finish(ctx, progress)
  })

/**
 * The pipeline, until a stop or until nothing is left in flight:
 * between steps, check the stops and plan while the window has room; then
 * fold the next result, waiting for one when none is ready.
 *
 * (A loop of effects rather than a generator: it turns once per folded
 * proposal, and a generator's steps allocate on every turn.)
 */
const drive = <D, T, O>(ctx: Run<D, T, O>, pipeline: Pipeline.Pipeline<T, O>, progress: Progress): Effect.Effect<void, OptimizeError> => {
  // the rest of a step being folded is ready: it folds before anything else
  const turn: Effect.Effect<void, OptimizeError> = Effect.suspend(() =>
    Step.midStep(progress.state) ? foldNext : Effect.flatMap(between, (goOn) => (goOn ? foldNext : Effect.void))
  )
  // stop conditions are checked, and steps planned, between steps only: the
  // members of a step fold together. Whether the run goes on.
  const between: Effect.Effect<boolean, OptimizeError> = Effect.gen(function*() {
    if (progress.failure !== undefined) {
      const failure = progress.failure
      yield* ctx.save(progress.state)
      return yield* failure.allEvaluationsFailed
        ? new AllEvaluationsFailed({ iterations: failure.iterations, lastError: failure.error })
        : new ProposalsFailed({ iterations: failure.iterations, lastError: failure.error })
    }
    if (yield* pauseRequested(ctx, pipeline, progress)) return false
    if (progress.stop === undefined) yield* checkStops(ctx, progress)
    yield* planWhileRoom(ctx, pipeline, progress)
    return true
  })
  // the next result to fold: the one ready, or the one waited for
  const waited = waitForResult(ctx, pipeline, progress)
  const foldThenTurn = (next: Propose.Finished<T, O>) => Effect.zipRight(fold(ctx, pipeline, progress, next), turn)
  const onReady = (ready: Propose.Finished<T, O> | undefined) =>
    ready !== undefined ? foldThenTurn(ready) : Effect.flatMap(waited, (next) =>
      next === undefined
        ? turn // the deadline passed: the loop's top ends the run
        : foldThenTurn(next))
  const foldNext: Effect.Effect<void, OptimizeError> = Effect.suspend(() =>
    progress.state.pending.length === 0 ? Effect.void : Effect.flatMap(pipeline.nextToFold, onReady)
  )
  return turn
}

/**
 * A pause (the deadline, or a stop file) ends the run at once: what is in
 * flight is interrupted, stays planned in the saved state and is re-launched
 * on resume, so nothing is half-applied and nothing lost.
 */
const pauseRequested = <D, T, O>(
  { r, store }: Run<D, T, O>,
  pipeline: Pipeline.Pipeline<T, O>,
  progress: Progress
): Effect.Effect<boolean, OptimizeError> =>
  Effect.gen(function*() {
    const paused: { readonly reason: string; readonly by: Result.StoppedBy } | undefined = pipeline.deadlinePassed()
      ? {
        reason: `reached the time limit of ${Duration.format(r.stop.interruptAfter ?? 0)} (proposals in flight paused)`,
        by: { kind: "deadline", condition: null }
      }
      : (yield* store.stopRequested)
      ? { reason: "stopped by request (stop file)", by: { kind: "stopFile", condition: null } }
      : undefined
    if (paused === undefined) return false
    yield* pipeline.interruptAll
    progress.stop = paused
    return true
  })

/** A stop condition that holds, or a monitor's stop (the dashboard's Stop button), stops planning. */
const checkStops = <D, T, O>({ s }: Run<D, T, O>, progress: Progress): Effect.Effect<void> =>
  Effect.gen(function*() {
    const fired = yield* s.stopCheck(StopCondition.snapshot(progress.state))
    if (Option.isSome(fired)) {
      progress.stop = { reason: fired.value.reason, by: { kind: "condition", condition: fired.value.condition } }
      return
    }
    // a monitor's stop takes Ctrl-C's path
    const monitor = yield* s.monitorStop
    if (monitor !== undefined) progress.stop = { reason: `stopped by request (${monitor})`, by: { kind: "monitor", condition: null } }
  })

/** Plans (and launches) steps while the window has room and nothing stops the run. */
const planWhileRoom = <D, T, O>(
  { emitAll, known, r, s, unaccounted }: Run<D, T, O>,
  pipeline: Pipeline.Pipeline<T, O>,
  progress: Progress
): Effect.Effect<void, OptimizeError> =>
  Effect.gen(function*() {
    while (progress.stop === undefined && Step.inFlight(progress.state) < r.parallelProposals) {
      const { owed } = yield* unaccounted
      const planned = Plan.plan(r, progress.state, Ledger.available(Ledger.balance(r.budget, progress.state, owed)), s.wants, s.owner, known)
      if (planned._tag === "Exhausted") {
        progress.exhausted = { reason: planned.reason, learned: planned.learned === true }
        return
      }
      progress.exhausted = undefined
      progress.state = planned.state
      progress.dirty = true
      yield* emitAll(planned.events)
      for (const plan of planned.plans) yield* pipeline.launch(plan)
    }
  })

/**
 * `Config.buildOnChild`: once a step picked the one child it validates, the
 * next step is planned at once on that child, from the state before the
 * step's fold (what a plan draws does not depend on when it is made, so
 * the same seed gives the same run). Only while that step is the only one in
 * flight (a resumed run may have planned on it already), nothing stops the
 * run, and the next step fits the budget whole; otherwise the next step is
 * planned after the fold, as always.
 */
const planOnChild = <D, T, O>(
  ctx: Run<D, T, O>,
  pipeline: Pipeline.Pipeline<T, O>,
  progress: Progress
): Effect.Effect<void, OptimizeError> =>
  Effect.suspend(() => {
    const child = pipeline.takePicked()
    if (child === undefined) return Effect.void
    // (the child's validation starts after the step on it: see `Pipeline.startPicked`)
    if (progress.stop !== undefined || Step.inFlight(progress.state) !== 1) return pipeline.startPicked
    const { emitAll, known, r, s, unaccounted } = ctx
    return Effect.zipRight(
      Effect.gen(function*() {
        yield* checkStops(ctx, progress)
        if (progress.stop !== undefined) return
        const { owed } = yield* unaccounted
        const available = Ledger.available(Ledger.balance(r.budget, progress.state, owed))
        const planned = Plan.plan(r, progress.state, available, s.wants, s.owner, known, child)
        if (planned._tag === "Exhausted") return
        progress.state = planned.state
        progress.dirty = true
        yield* emitAll(planned.events)
        for (const plan of planned.plans) yield* pipeline.launch(plan)
      }),
      pipeline.startPicked
    )
  })

/**
 * When no result is ready to fold: waits for stages to finish until one is
 * (after saving what was planned and folded so far); `undefined` when the
 * deadline passed meanwhile. A stage that failed fails the run, with what
 * was folded and planned saved: a resumed run re-launches the plans.
 */
const waitForResult = <D, T, O>(
  ctx: Run<D, T, O>,
  pipeline: Pipeline.Pipeline<T, O>,
  progress: Progress
): Effect.Effect<Propose.Finished<T, O> | undefined, OptimizeError> =>
  Effect.gen(function*() {
    let next: Propose.Finished<T, O> | undefined
    while (next === undefined) {
      // a step that just picked its child may start the next one on it
      yield* planOnChild(ctx, pipeline, progress)
      // about to wait: persist what was planned and folded so far
      if (progress.dirty) {
        yield* ctx.save(progress.state)
        progress.dirty = false
      }
      const received = yield* Effect.tapErrorCause(pipeline.receive, () => ctx.save(progress.state))
      if (!received) return undefined
      next = yield* pipeline.nextToFold
    }
    return next
  })

/** Folds one finished proposal into the state; failures in a row past the limit end the run (see `drive`). */
const fold = <D, T, O>(
  { best, emitAll, r, s }: Run<D, T, O>,
  pipeline: Pipeline.Pipeline<T, O>,
  progress: Progress,
  next: Propose.Finished<T, O>
): Effect.Effect<void, OptimizeError> =>
  Effect.suspend(() => {
    pipeline.folded(next.plan.iteration)
    const result = Accept.fold(r, progress.state, next, s.wants, s.owner)
    if (Either.isLeft(result)) return Effect.fail(result.left)
    const folded = result.right
    progress.state = folded.state
    progress.dirty = true
    if (folded.added !== undefined && r.trackBestOutputs) Session.recordBest(best, folded.added.index, folded.added.outcomes)
    // (read only at the loop's top, after the events are delivered)
    if (folded.failed !== undefined && progress.state.consecutiveFailedIterations >= r.maxFailedIterations) {
      progress.failure ??= { ...folded.failed, iterations: progress.state.consecutiveFailedIterations }
    }
    return emitAll(folded.events)
  })

/** Saves, records why the run stopped, and builds the result. */
const finish = <D, T, O>(
  { best, s, save, store, unaccounted }: Run<D, T, O>,
  progress: Progress
): Effect.Effect<OptimizeResult<O>, OptimizeError> =>
  Effect.gen(function*() {
    const state = progress.state
    // a pause saves even an unchanged state: it records what was in flight
    if (progress.dirty || state.pending.length > 0) yield* save(state)
    const reason = progress.stop?.reason ?? progress.exhausted?.reason ?? "no proposal could be planned"
    const by: Result.StoppedBy = progress.stop?.by ??
      (progress.exhausted === undefined
        ? { kind: "noProposal", condition: null }
        : { kind: progress.exhausted.learned ? "nothingToLearn" : "budget", condition: null })
    // owed results never used were paid for nothing: lost work in the result
    // (the saved state keeps them owed, so that a resume charges them once)
    const final = Ledger.settle(state, (yield* unaccounted).owed)
    yield* store.finish(final, reason, by)
    const result = Result.fromState(final, reason, by)
    yield* s.emit("OptimizationEnded", () => GepaEvent.OptimizationEnded({ result, state: final }))
    const outputs: Record<string, { candidate: number; output: O }> = {}
    for (const [id, b] of best) outputs[id] = { candidate: b.candidate, output: b.output }
    return { ...result, state, bestOutputs: outputs }
  })
