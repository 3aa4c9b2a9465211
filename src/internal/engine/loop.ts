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
 * When a stop condition holds, no new proposal starts and the proposals in
 * flight finish and are folded: their budget is already reserved and their
 * work is paid for. A stop file, and a deadline (`StopCondition.timeout`),
 * end the run at once instead: the proposals in flight are interrupted and
 * stay planned in the saved state, so the resumed run re-launches them and
 * continues exactly as if it had never stopped.
 *
 * @internal
 */
import { Duration, Effect, Either, Exit, Fiber, Option, Queue, type Scope } from "effect"
import type { AdapterService } from "../../Adapter.js"
import { AllEvaluationsFailed, ProposalsFailed } from "../../Errors.js"
import { GepaEvent } from "../../Event.js"
import type { ProposalResult } from "../../Proposal.js"
import type { Config, OptimizeError, OptimizeResult } from "../../Gepa.js"
import type { ReflectionModel } from "../../LanguageModel.js"
import * as Result from "../../Result.js"
import type { RunStore } from "../../RunStore.js"
import * as State from "../../State.js"
import * as StopCondition from "../../StopCondition.js"
import * as Accept from "./accept.js"
import * as Ledger from "../ledger.js"
import * as Plan from "./plan.js"
import * as Propose from "./propose.js"
import * as Rebase from "./rebase.js"
import type { Proposed } from "./reflect.js"
import { adoptSaved, checkResume, type Resolved, resolve } from "./resolve.js"
import * as Session from "./session.js"
import * as Step from "./step.js"

type Message<T, O> =
  | { readonly stage: "proposed"; readonly plan: State.PendingProposal; readonly p: Proposed }
  | { readonly stage: "finished"; readonly f: Propose.Finished<T, O> }
  | { readonly stage: "deadline" }
type Done<T, O> = readonly [iteration: number, exit: Exit.Exit<Message<T, O>, OptimizeError>]

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
    const best = new Map<string, { candidate: number; output: O; score: number }>()
    const emitAll = (events: ReadonlyArray<GepaEvent>) =>
      events.length === 0 ? Effect.void : Effect.forEach(events, (e) => s.emit(() => e), { discard: true })
    const save = (state: State.GepaState) =>
      Effect.zipRight(
        // a store may keep the state it saves: its arrays are copied on their next append
        Effect.sync(() => s.sealSaved(state)),
        store.durable
          ? Effect.zipRight(store.save(state), s.emit(() => GepaEvent.StateSaved({ iteration: state.iteration, path: store.location })))
          : store.save(state)
      )

    // ---- start: resume, or score the seed ----
    const started = (resumed: boolean) =>
      s.emit(() => GepaEvent.OptimizationStarted({ resumed, trainSize: r.trainIds.length, valSize: r.valIds.length, budget: r.budget }))
    let state: State.GepaState
    // work a crashed process paid for and the saved state does not count
    const unaccounted = store.unaccounted
    const { lost } = yield* unaccounted
    const chargeLost = lost === 0 ? Effect.void : s.emit(() =>
      GepaEvent.LostWorkCharged({ metricCalls: lost, totalLost: state.lostMetricCalls })
    )
    if (Option.isSome(loaded)) {
      yield* checkResume(loaded.value, r as unknown as Resolved<unknown, unknown, unknown>)
      state = Ledger.chargeLost({ ...loaded.value, fingerprint: r.fingerprint }, lost)
      yield* started(true)
      yield* chargeLost
    } else {
      yield* started(false)
      const seedEval = yield* s.evaluate({
        iteration: 0,
        purpose: "seed-validation",
        candidate: config.seedCandidate,
        ids: r.valIds,
        captureTraces: false,
        call: "evaluate(seed candidate, valset)"
      })
      if (r.trackBestOutputs) Session.recordBest(best, 0, seedEval.outcomes)
      state = yield* State.initial({
        seed: config.seed ?? 0,
        seedCandidate: config.seedCandidate,
        frontierType: config.frontierType ?? "instance",
        valset: Session.valsetOf(seedEval.outcomes),
        metricCalls: seedEval.spent,
        fingerprint: r.fingerprint
      })
      state = Ledger.chargeLost(state, lost)
      yield* chargeLost
      if (seedEval.failures.evaluated > 0 && seedEval.failures.failed === seedEval.failures.evaluated) {
        return yield* new AllEvaluationsFailed({ iterations: 0, lastError: seedEval.failures.lastError ?? "unknown" })
      }
      yield* s.emit(() => GepaEvent.ValsetEvaluated({ iteration: 0, candidate: 0, score: state.valAverages[0]!, coverage: state.valCoverage[0]! }))
      yield* s.emit(() => GepaEvent.BudgetUpdated({ metricCalls: state.metricCalls, budget: r.budget }))
      yield* save(state)
    }

    // ---- the pipeline ----
    const done = yield* Queue.unbounded<Done<T, O>>()
    /** stage 1 results waiting for their fold turn */
    const proposed = new Map<number, Proposed>()
    /** results ready to fold */
    const finished = new Map<number, Propose.Finished<T, O>>()
    const validating = new Set<number>()
    const fibers = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
    // children of the loop's fiber: interrupted with the run, never outliving it
    const forkReporting = <A>(iteration: number, effect: Effect.Effect<A, OptimizeError>, wrap: (a: A) => Message<T, O>) =>
      Effect.flatMap(
        Effect.fork(
          effect.pipe(
            Effect.map(wrap),
            Effect.exit,
            Effect.flatMap((exit) => Queue.offer(done, [iteration, exit] as const))
          )
        ),
        (fiber) =>
          Effect.sync(() => {
            fibers.add(fiber)
            fiber.addObserver(() => fibers.delete(fiber))
          })
      )
    const launch = (plan: State.PendingProposal) =>
      forkReporting(plan.iteration, Propose.propose(s, plan, state.candidates), (p) => ({ stage: "proposed" as const, plan, p }))
    /** steps whose selection was made (their accepted children are validating or ready) */
    const selected = new Set<number>()
    const startValidation = (plan: State.PendingProposal, p: Proposed) => {
      const decision = plan._tag === "Reflective" && r.parallelProposals > 1
        ? Rebase.decide(state, plan.base, plan.parent, (p.result as Extract<ProposalResult, { _tag: "Accepted" }>).candidate)
        : undefined
      const rebase = decision === undefined ? undefined : { ...decision, ontoCandidate: state.candidates[decision.onto]! }
      validating.add(plan.iteration)
      // in plan order every earlier step is folded when a step validates: their results are final
      const visibleUpTo = plan.sees === undefined ? undefined : r.foldOrder === "plan" ? Step.stepOf(plan) - 1 : plan.sees
      return forkReporting(
        plan.iteration,
        Propose.validate(s, plan, p, rebase, visibleUpTo),
        (f) => ({ stage: "finished" as const, f })
      )
    }
    /**
     * A step of several proposals, once all of them are judged: its selection
     * rule picks the children to validate; the others are ready at once.
     */
    const selectStep = (step: number): Effect.Effect<boolean> => {
      const members = state.pending.filter((p) => p._tag === "Reflective" && p.step === step)
      if (members.some((m) => !proposed.has(m.iteration))) return Effect.succeed(false)
      const results = members.map((plan) => ({ plan, p: proposed.get(plan.iteration)! }))
      for (const m of members) proposed.delete(m.iteration)
      selected.add(step)
      const chosen = Step.select<T, O>(results, r.proposalSelection)
      return Effect.as(
        Effect.forEach(results, ({ plan, p }) => {
          const verdict = chosen.get(plan.iteration)
          if (verdict === undefined) return startValidation(plan, p)
          finished.set(plan.iteration, verdict)
          return Effect.void
        }, { discard: true }),
        true
      )
    }

    /**
     * Moves the proposal at its fold turn along: a judged child that was not
     * accepted is ready at once; an accepted one starts its validation (after
     * a rebase decision made on the state as it is now).
     */
    const turn = (plan: State.PendingProposal): Effect.Effect<Propose.Finished<T, O> | undefined> => {
      const step = plan._tag === "Reflective" ? plan.step : undefined
      if (step !== undefined) {
        // the members of a step fold in plan order, after its selection, and
        // only once all of them are ready: a step folds as a whole
        const whole = () =>
          state.pending.every((p) => p._tag !== "Reflective" || p.step !== step || finished.has(p.iteration))
            ? finished.get(plan.iteration)
            : undefined
        if (selected.has(step)) return Effect.succeed(whole())
        return Effect.map(selectStep(step), (done) => (done ? whole() : undefined))
      }
      const ready = finished.get(plan.iteration)
      if (ready !== undefined) return Effect.succeed(ready)
      const p = proposed.get(plan.iteration)
      if (p === undefined || validating.has(plan.iteration)) return Effect.succeed(undefined)
      proposed.delete(plan.iteration)
      if (p.result._tag !== "Accepted") return Effect.succeed({ ...p, plan, validation: undefined })
      return Effect.as(startValidation(plan, p), undefined)
    }
    /** Whether a plan waits for an earlier member of its step to fold (members fold in plan order). */
    const waitsForStep = (plan: State.PendingProposal) =>
      plan._tag === "Reflective" && plan.step !== undefined &&
      state.pending.some((p) => p._tag === "Reflective" && p.step === plan.step && p.iteration < plan.iteration)
    /** The next result to fold: the oldest plan's in plan order, any in completion order. */
    const nextToFold = Effect.suspend(() =>
      r.foldOrder === "plan"
        ? turn(state.pending[0]!)
        : Effect.reduce(state.pending, undefined as Propose.Finished<T, O> | undefined, (found, plan) =>
          found !== undefined || waitsForStep(plan) ? Effect.succeed(found) : turn(plan))
    )
    // proposals an interrupted run had in flight start again as planned
    for (const plan of state.pending) yield* launch(plan)

    // a deadline (StopCondition.timeout) ends the run even while it waits on calls in flight
    let deadlinePassed = false
    if (r.stop.interruptAfter !== undefined) {
      yield* Effect.fork(
        Effect.sleep(r.stop.interruptAfter).pipe(
          Effect.zipRight(Effect.sync(() => {
            deadlinePassed = true
          })),
          Effect.zipRight(Queue.offer(done, [-1, Exit.succeed({ stage: "deadline" as const })] as const))
        )
      )
    }

    let stopReason: string | undefined
    let stoppedBy: Result.StoppedBy | undefined
    let exhausted: string | undefined
    let learned = false
    let dirty = false
    let failure: { readonly error: string; readonly allEvaluationsFailed: boolean } | undefined
    for (;;) {
      // the rest of a step being folded is ready: it folds before anything else
      const between = !Step.midStep(state)
      if (between && failure !== undefined) {
        yield* save(state)
        return yield* failure.allEvaluationsFailed
          ? new AllEvaluationsFailed({ iterations: state.consecutiveFailedIterations, lastError: failure.error })
          : new ProposalsFailed({ iterations: state.consecutiveFailedIterations, lastError: failure.error })
      }
      const paused: { readonly reason: string; readonly by: Result.StoppedBy } | undefined = !between
        ? undefined
        : deadlinePassed
        ? {
          reason: `reached the time limit of ${Duration.format(r.stop.interruptAfter!)} (proposals in flight paused)`,
          by: { kind: "deadline", condition: null }
        }
        : (yield* store.stopRequested)
        ? { reason: "stopped by request (stop file)", by: { kind: "stopFile", condition: null } }
        : undefined
      if (paused !== undefined) {
        // what is in flight stays planned in the saved state and is
        // re-launched on resume: nothing is half-applied, nothing lost
        yield* Fiber.interruptAll(fibers)
        stopReason = paused.reason
        stoppedBy = paused.by
        break
      }
      // stop conditions are checked, and steps planned, between steps only:
      // the members of a step fold together
      if (between && stopReason === undefined) {
        const fired = yield* s.stopCheck(StopCondition.snapshot(state))
        if (Option.isSome(fired)) {
          stopReason = fired.value.reason
          stoppedBy = { kind: "condition", condition: fired.value.condition }
        }
      }
      if (between && stopReason === undefined) {
        // a monitor's stop (the dashboard's Stop button) takes Ctrl-C's path
        const monitor = yield* s.monitorStop
        if (monitor !== undefined) {
          stopReason = `stopped by request (${monitor})`
          stoppedBy = { kind: "monitor", condition: null }
        }
      }
      // plan while the window has room
      while (between && stopReason === undefined && Step.inFlight(state) < r.parallelProposals) {
        const { owed } = yield* unaccounted
        const planned = Plan.plan(r, state, Ledger.available(Ledger.balance(r.budget, state, owed)), s.listening)
        if (planned._tag === "Exhausted") {
          exhausted = planned.reason
          learned = planned.learned === true
          break
        }
        exhausted = undefined
        state = planned.state
        dirty = true
        yield* emitAll(planned.events)
        for (const plan of planned.plans) yield* launch(plan)
      }
      if (state.pending.length === 0) break

      let next = yield* nextToFold
      if (next === undefined) {
        // about to wait: persist what was planned and folded so far
        if (dirty) {
          yield* save(state)
          dirty = false
        }
        while (next === undefined) {
          const [iteration, exit] = yield* Queue.take(done)
          if (Exit.isFailure(exit)) {
            // what was folded and planned so far is kept: a resumed run re-launches the plans
            yield* save(state)
            return yield* Effect.failCause(exit.cause)
          }
          const message = exit.value
          if (message.stage === "deadline") break
          if (message.stage === "proposed") proposed.set(iteration, message.p)
          else {
            validating.delete(iteration)
            finished.set(iteration, message.f)
          }
          next = yield* nextToFold
        }
      }
      if (next === undefined) continue // the deadline passed: the loop's top ends the run
      finished.delete(next.plan.iteration)
      const folded = yield* Either.match(Accept.fold(r, state, next, s.listening, s.owner), {
        onLeft: Effect.fail,
        onRight: Effect.succeed
      })
      state = folded.state
      dirty = true
      if (folded.added !== undefined && r.trackBestOutputs) Session.recordBest(best, folded.added.index, folded.added.outcomes)
      yield* emitAll(folded.events)
      if (folded.failed !== undefined && state.consecutiveFailedIterations >= r.maxFailedIterations) failure ??= folded.failed
    }
    // a pause saves even an unchanged state: it records what was in flight
    if (dirty || state.pending.length > 0) yield* save(state)

    const reason = stopReason ?? exhausted ?? "no proposal could be planned"
    const by: Result.StoppedBy = stoppedBy ??
      (exhausted === undefined
        ? { kind: "noProposal", condition: null }
        : { kind: learned ? "nothingToLearn" : "budget", condition: null })
    // owed results never used were paid for nothing: lost work in the result
    // (the saved state keeps them owed, so that a resume charges them once)
    const final = Ledger.settle(state, (yield* unaccounted).owed)
    yield* store.finish(final, reason, by)
    const result = Result.fromState(final, reason, by)
    yield* s.emit(() => GepaEvent.OptimizationEnded({ result }))
    const outputs: Record<string, { candidate: number; output: O }> = {}
    for (const [id, b] of best) outputs[id] = { candidate: b.candidate, output: b.output }
    return { ...result, state, bestOutputs: outputs }
  })
