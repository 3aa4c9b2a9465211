/**
 * The proposals in flight: each runs as a fiber (propose and judge, then
 * validate), reports to one queue, and waits for its fold turn. In plan
 * order a proposal is folded only after every proposal planned before it,
 * and the members of a step fold together, after the step's selection rule
 * picked the children to validate. The loop (`loop.ts`) folds and plans;
 * this module only moves proposals along.
 *
 * A reflective proposal whose parent is already known to be perfect on its
 * minibatch (late in a run, most of them) ends when it is launched, with
 * the result and the event its proposer would give, and waits for its fold
 * turn like any other: no fiber, no stage, no hand-off.
 *
 * With one proposal at a time (`parallelProposals` 1 and steps of one
 * proposal: `proposalsPerStep` 1, or an adaptive step one proposal wide),
 * no deadline that must interrupt a stage, and a store without writes to
 * overlap, a stage runs in the loop's own fiber when the loop waits for it:
 * the same stages in the same order, without a fiber and a queue hand-off
 * per stage.
 *
 * @internal
 */
import { Deferred, Effect, Exit, FiberId, FiberSet, Queue, type Scope } from "effect"
import type { OptimizeError } from "../../Errors.js"
import type { ProposalResult } from "../../Proposal.js"
import type * as State from "../../State.js"
import type * as Candidate from "../../Candidate.js"
import { merge } from "./merge.js"
import * as Propose from "./propose.js"
import { reflect } from "./reflect.js"
import * as Rebase from "./rebase.js"
import { knownPerfect, reportKnownPerfect, stepEvidence } from "./evidence.js"
import * as OnChild from "./onChild.js"
import type { OnChild as Child } from "./plan.js"
import type { Proposed } from "./proposed.js"
import type { Resolved } from "./resolved.js"
import type { Session } from "./session.js"
import * as Step from "./step.js"

type Message<T, O> =
  | { readonly stage: "proposed"; readonly plan: State.PendingProposal; readonly p: Proposed }
  | { readonly stage: "finished"; readonly f: Propose.Finished<T, O> }
  | { readonly stage: "deadline" }
type Done<T, O> = readonly [iteration: number, exit: Exit.Exit<Message<T, O>, OptimizeError>]

/**
 * `effect`, run at most once: the first fiber to ask runs it, the others
 * wait for its exit, later ones get that exit at once (an interruption
 * included: a pause relaunches the proposals with new memos). What
 * `Effect.cached` does, without its fiber-ref bookkeeping on every read:
 * the evidence is read by every proposal of a round.
 */
const once = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> => {
  let exit: Exit.Exit<A, E> | undefined
  let running: Deferred.Deferred<A, E> | undefined
  // (uninterruptible from the claim to the handler: a claim is always settled)
  const claim = Effect.uninterruptibleMask((restore) =>
    Effect.suspend(() => {
      if (exit !== undefined) return exit
      if (running !== undefined) return restore(Deferred.await(running))
      const done = Deferred.unsafeMake<A, E>(FiberId.none)
      running = done
      return Effect.onExit(restore(effect), (e) =>
        Effect.sync(() => {
          exit = e
          Deferred.unsafeDone(done, e)
        }))
    })
  )
  // once it ran, its exit at once (no mask to enter: nothing is claimed)
  return Effect.suspend(() => exit ?? claim)
}

/** The proposals in flight, and the order their results are folded in. */
/** @internal */
export interface Pipeline<T, O> {
  /** starts a planned proposal (its first stage: propose and judge) */
  readonly launch: (plan: State.PendingProposal) => Effect.Effect<void>
  /** a deadline (StopCondition.timeout) ends the run even while it waits on calls in flight */
  readonly armDeadline: Effect.Effect<void>
  readonly deadlinePassed: () => boolean
  /** the next result to fold, if one is ready: the oldest plan's in plan order, any in completion order */
  readonly nextToFold: Effect.Effect<Propose.Finished<T, O> | undefined>
  /** waits for a stage to finish and files its result; `false` when the deadline passed */
  readonly receive: Effect.Effect<boolean, OptimizeError>
  /** removes a folded result */
  readonly folded: (iteration: number) => void
  /** interrupts everything in flight (a pause) */
  readonly interruptAll: Effect.Effect<void>
  /** the child a step just picked to validate alone, once (`Config.buildOnChild`: the loop plans the next step on it) */
  readonly takePicked: () => Child | undefined
  /** starts the picked child's validation (after the step on it, if any, was launched); the loop calls it before it waits */
  readonly startPicked: Effect.Effect<void>
}

/** How long a stage of a wider step may take for the next step's stages to run one after the other (see `quick`). */
const QUICK_MS = 2

/**
 * Builds the pipeline of a run. `progress.state` is read, never assigned:
 * the loop owns it.
 *
 * @internal
 */
export const make = <D, T, O>(
  r: Resolved<D, T, O>,
  s: Session<D, T, O>,
  progress: { readonly state: State.GepaState }
): Effect.Effect<Pipeline<T, O>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const done = yield* Queue.unbounded<Done<T, O>>()
    /** stage 1 results waiting for their fold turn */
    const proposed = new Map<number, Proposed>()
    /** results ready to fold */
    const finished = new Map<number, Propose.Finished<T, O>>()
    const validating = new Set<number>()
    /** steps whose selection was made (their accepted children are validating or ready) */
    const selected = new Set<number>()
    // interrupted with the run (the set closes with the run's scope), or at once by a pause
    const fibers = yield* FiberSet.make()
    let deadlinePassed = false
    // one step in flight at a time: its stages may run in the loop's fiber
    // (a step of one proposal always, a wider one while stages are fast:
    // `quick`), and forked stages and inline ones never wait together
    const inline = r.parallelProposals === 1 && r.stop.interruptAfter === undefined && s.store?.durable !== true
    // the children the next step builds on while they are validated
    const children = OnChild.make()
    // Whether the last stage to finish took less than `QUICK_MS`: then the
    // proposals of a wider step gain nothing from running side by side (an
    // in-process adapter and model), and they run one after the other in the
    // loop's fiber instead of in fibers of their own, as an evaluation runs
    // its chunks while the adapter is fast. Only timing changes: results
    // fold in plan order, and a proposal sees only what was folded before
    // its step, whichever way its step's proposals ran.
    let quick = false
    const timed = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.suspend(() => {
        const started = performance.now()
        return Effect.tap(effect, () => {
          quick = performance.now() - started < QUICK_MS
        })
      })
    /** stages to run in the loop's fiber (`inline`), in launch order */
    const waiting: Array<Effect.Effect<boolean, OptimizeError>> = []
    /** forked stages that have not reported yet (counted only when stages may also run inline) */
    let forked = 0
    const forkReporting = <A>(plan: State.PendingProposal, effect: Effect.Effect<A, OptimizeError>, wrap: (a: A) => Message<T, O>) => {
      const iteration = plan.iteration
      // (a step on a validated child runs beside its validation: neither may take the loop's fiber while slow)
      const wide = plan._tag === "Reflective" && (plan.step !== undefined || r.buildOnChild)
      if (inline && (!wide || quick)) {
        return Effect.sync(() => {
          // (the stage files its own report when it ends: see `receive`)
          waiting.push(Effect.map(wide ? timed(effect) : effect, (a) => file(iteration, wrap(a))))
        })
      }
      if (inline) forked++
      return Effect.asVoid(FiberSet.run(
        fibers,
        (wide ? timed(effect) : effect).pipe(
          Effect.map(wrap),
          Effect.exit,
          Effect.flatMap((exit) => Queue.offer(done, [iteration, exit] as const))
        )
      ))
    }
    /**
     * the evidence shared by proposals of a `"same_minibatch"` step, by the
     * iteration that pays for it, until the step is judged: evaluated once,
     * by whichever proposal asks first
     */
    const evidence = new Map<number, ReturnType<typeof stepEvidence<D, T, O>>>()
    // (called when a proposal is launched: the memo is made from the state as it is then)
    const evidenceOf = (plan: State.PendingProposal, parent: Candidate.Candidate) => {
      if (plan._tag !== "Reflective" || plan.shares === undefined) return undefined
      const known = evidence.get(plan.shares)
      if (known !== undefined) return known
      const memo = once(stepEvidence(s, plan, parent))
      evidence.set(plan.shares, memo)
      return memo
    }
    const launch = (plan: State.PendingProposal): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (plan._tag !== "Reflective") {
          return forkReporting(plan, merge(s, plan), (p) => ({ stage: "proposed" as const, plan, p }))
        }
        const parent = children.parentOf(plan, progress.state.candidates)
        if (parent === undefined) {
          // (a resumed run's plan on a child whose step is not selected yet)
          children.hold(plan)
          return Effect.void
        }
        // a parent known to be perfect on the minibatch: the proposal ends here,
        // as its proposer would end it, without a stage to run
        const skipped = plan.reuses === undefined ? knownPerfect(s, plan, parent) : undefined
        if (skipped !== undefined) {
          // the members of a round share its evidence: the one that pays for it reports
          const reports = plan.shares === undefined || plan.shares === plan.iteration
          return Effect.zipRight(
            reports ? reportKnownPerfect(s, plan.iteration, plan.parent) : Effect.void,
            Effect.sync(() => {
              proposed.set(plan.iteration, skipped)
            })
          )
        }
        return forkReporting(plan, reflect(s, plan, parent, evidenceOf(plan, parent)), (p) => ({ stage: "proposed" as const, plan, p }))
      })
    /** the validation of the child picked last, started once the loop launched the step on it (see `startPicked`) */
    let pickedValidation: Effect.Effect<void> | undefined
    /**
     * Starts the validation of a step's child; `alone`: the only one of its
     * step, not combined. With `Config.buildOnChild` the next step may build
     * on such a child: it is picked, and its validation waits for the loop
     * to launch that step, so that the step's minibatch takes its permits
     * before the validation's chunks do.
     */
    const validateChild = (plan: State.PendingProposal, p: Proposed, alone: boolean, combination?: Step.Combination) => {
      const start = startValidation(plan, p, combination)
      if (!r.buildOnChild) return start
      if (alone && p.result._tag === "Accepted" && children.pick(plan, p.result, p.childEvidence)) {
        pickedValidation = start
        return settle(plan)
      }
      return Effect.zipRight(start, settle(plan))
    }
    /** Plans held on the child of `plan` (a resume) go on now that its step is selected, or end. */
    const settle = (plan: State.PendingProposal): Effect.Effect<void> => {
      if (!r.buildOnChild) return Effect.void
      const held = children.release(plan.iteration)
      return held.length === 0 ? Effect.void : Effect.forEach(held, (h) =>
        children.parentOf(h, progress.state.candidates) === undefined
          ? Effect.sync(() => {
            proposed.set(h.iteration, OnChild.unbuilt(h))
          })
          : launch(h), { discard: true })
    }
    const startValidation = (plan: State.PendingProposal, p: Proposed, combination?: Step.Combination) => {
      validating.add(plan.iteration)
      // in plan order every earlier step is folded when a step validates: their results are final
      const visibleUpTo = plan.sees === undefined ? undefined : r.foldOrder === "plan" ? Step.stepOf(plan) - 1 : plan.sees
      const validate = (p: Proposed) =>
        Effect.suspend(() => {
          // the rebase is decided on the child as it will be validated (combined or not)
          const state = progress.state
          const decision = plan._tag === "Reflective" && r.parallelProposals > 1
            ? Rebase.decide(state, plan.base, plan.parent, (p.result as Extract<ProposalResult, { _tag: "Accepted" }>).candidate)
            : undefined
          const rebase = decision === undefined ? undefined : { ...decision, ontoCandidate: state.candidates[decision.onto]! }
          return Propose.validate(s, plan, p, rebase, visibleUpTo)
        })
      const stage: Effect.Effect<Propose.Finished<T, O>, OptimizeError> = combination === undefined
        ? validate(p)
        : Effect.flatMap(Propose.combine(s, plan, p, combination.parts, visibleUpTo), ({ passed, ...combined }) =>
          Effect.map(validate(combined), (f) => ({ ...f, combined: { from: combination.from, passed } })))
      return forkReporting(plan, stage, (f) => ({ stage: "finished" as const, f }))
    }
    /**
     * A step of several proposals, once all of them are judged: its selection
     * rule picks the children to validate; the others are ready at once.
     */
    const selectStep = (step: number): Effect.Effect<boolean> => {
      const members = progress.state.pending.filter((p) =>
        p._tag === "Reflective" && p.step === step
      )
      if (members.some((m) => !proposed.has(m.iteration))) return Effect.succeed(false)
      const results = members.map((plan) => ({ plan, p: proposed.get(plan.iteration)! }))
      for (const m of members) proposed.delete(m.iteration)
      // every proposal of the step read its evidence
      for (const m of members) if (m._tag === "Reflective" && m.shares === m.iteration) evidence.delete(m.iteration)
      selected.add(step)
      const { combination, verdicts } = Step.select<T, O>(results, r.proposalSelection)
      // the next step may build on the child the step validates, when it is the only one and is not combined
      const alone = combination === undefined && results.length - verdicts.size === 1
      return Effect.as(
        Effect.forEach(results, ({ plan, p }) => {
          const verdict = verdicts.get(plan.iteration)
          if (verdict === undefined) return validateChild(plan, p, alone, combination?.into === plan.iteration ? combination : undefined)
          finished.set(plan.iteration, verdict)
          return settle(plan)
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
          progress.state.pending.every((p) => p._tag !== "Reflective" || p.step !== step || finished.has(p.iteration))
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
      // (the proposal's fields last: V8 gives each field added after a leading spread a shape of its own)
      if (p.result._tag !== "Accepted") {
        const ready: Propose.Finished<T, O> = { plan, validation: undefined, ...p }
        return r.buildOnChild ? Effect.as(settle(plan), ready) : Effect.succeed(ready)
      }
      return Effect.as(validateChild(plan, p, true), undefined)
    }
    /** Whether a plan waits for an earlier member of its step to fold (members fold in plan order). */
    const waitsForStep = (plan: State.PendingProposal) =>
      plan._tag === "Reflective" && plan.step !== undefined &&
      progress.state.pending.some((p) => p._tag === "Reflective" && p.step === plan.step && p.iteration < plan.iteration)
    const nextToFold = Effect.suspend(() =>
      r.foldOrder === "plan"
        ? turn(progress.state.pending[0]!)
        : Effect.reduce(
          progress.state.pending,
          undefined as Propose.Finished<T, O> | undefined,
          (found, plan) => found !== undefined || waitsForStep(plan) ? Effect.succeed(found) : turn(plan)
        )
    )
    /** Files a stage's report; `false` when it is the deadline's. */
    const file = (iteration: number, message: Message<T, O>): boolean => {
      if (message.stage === "deadline") return false
      if (message.stage === "proposed") proposed.set(iteration, message.p)
      else {
        validating.delete(iteration)
        finished.set(iteration, message.f)
        // the parts of a combination that did not pass were not selected, rather than combined
        const combined = message.f.combined
        if (combined !== undefined && !combined.passed) {
          for (const part of combined.from) {
            const f = finished.get(part)
            if (f !== undefined) finished.set(part, { ...f, unselected: Step.combinedReason(iteration, false) })
          }
        }
      }
      return true
    }
    // a forked stage's report, from the queue (its failure fails the loop)
    const taken = ([iteration, exit]: Done<T, O>) => Exit.isFailure(exit) ? Effect.failCause(exit.cause) : Effect.succeed(file(iteration, exit.value))
    const fromQueue = Effect.flatMap(Queue.take(done), taken)
    const fromForked = Effect.flatMap(Queue.take(done), (report) => {
      forked--
      return taken(report)
    })
    // an inline stage runs here and files its own report (one effect per
    // stage, no exit wrapped and unwrapped); its failure fails the loop alike
    const receive: Effect.Effect<boolean, OptimizeError> = inline
      ? Effect.suspend(() => {
        const stage = waiting.shift()
        if (stage === undefined) {
          // (the loop waits only while a stage it launched has not reported)
          if (forked === 0) return Effect.dieMessage("the pipeline waits for a stage, and none is running")
          return fromForked
        }
        return stage
      })
      : fromQueue
    const interruptAfter = r.stop.interruptAfter
    const armDeadline = interruptAfter === undefined ? Effect.void : Effect.asVoid(Effect.fork(
      Effect.sleep(interruptAfter).pipe(
        Effect.zipRight(Effect.sync(() => {
          deadlinePassed = true
        })),
        Effect.zipRight(Queue.offer(done, [-1, Exit.succeed({ stage: "deadline" as const })] as const))
      )
    ))
    return {
      launch,
      armDeadline,
      deadlinePassed: () => deadlinePassed,
      nextToFold,
      receive,
      folded: (iteration) => {
        finished.delete(iteration)
        children.folded(iteration)
      },
      takePicked: children.take,
      startPicked: Effect.suspend(() => {
        const start = pickedValidation
        pickedValidation = undefined
        return start ?? Effect.void
      }),
      interruptAll: Effect.zipRight(
        Effect.sync(() => {
          waiting.length = 0
          // interrupted stages never report
          forked = 0
          // relaunched plans evaluate their evidence again
          evidence.clear()
          pickedValidation = undefined
        }),
        FiberSet.clear(fibers)
      )
    }
  })
