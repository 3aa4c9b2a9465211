/**
 * A proposal in flight runs in two stages:
 *
 * 1. the reflective proposer (`reflect.ts`) or the merge proposer
 *    (`merge.ts`), up to the judgment of its child on the minibatch (or
 *    subsample). Runs as soon as it is planned.
 * 2. `validate`: at the proposal's fold turn, once the state holds every
 *    earlier result, an accepted child is validated; or, when its parent was
 *    superseded meanwhile (`rebase.ts`), rebased on the better descendant
 *    and judged again, or dropped when its change overlaps the descendant's.
 *    Its budget was reserved when the proposal was planned.
 *
 * Validation waits for the fold turn because what is worth validating
 * depends on what was found meanwhile; the other proposals keep running.
 *
 * @internal
 */
import { Effect } from "effect"
import type * as Candidate from "../../Candidate.js"
import { ProposalResult } from "../../Proposal.js"
import type * as State from "../../State.js"
import { at, defined } from "../shared/invariant.js"
import * as Ledger from "./ledger.js"
import { validationIds } from "./plan.js"
import type { Rebase } from "./rebase.js"
import type { Proposed } from "./proposed.js"
import { addFailures, type Evaluated, type Session } from "./session.js"

/** A proposal ready to fold. @internal */
export interface Finished<T, O> extends Proposed {
  readonly plan: State.PendingProposal
  /** the child's validation, when it was accepted */
  readonly validation: Evaluated<T, O> | undefined
  /** the candidate an accepted child was rebased on */
  readonly rebasedOnto?: number | undefined
  /** the candidate a stale child was judged against and did not beat */
  readonly supersededBy?: number | undefined
  /** why an accepted child of a step was not validated (see `step.ts`) */
  readonly unselected?: string | undefined
  /** the parts of a combination this child was offered (`"combine"`), and whether it passed */
  readonly combined?: { readonly from: ReadonlyArray<number>; readonly passed: boolean } | undefined
}

/**
 * Stage 2 of a step's selected child under `"combine"` (`step.ts`,
 * `select`), before its validation: the child with the changes of the
 * step's other accepted children of the same parent, judged against the
 * parent on all their minibatches together, just as each child was judged
 * on its own. The combination replaces the child when it passes; otherwise the
 * child goes on alone.
 *
 * @internal
 */
export const combine = <D, T, O>(
  s: Session<D, T, O>,
  plan: State.PendingProposal,
  proposed: Proposed,
  /** the accepted children whose changes it takes, in that order */
  parts: ReadonlyArray<Extract<ProposalResult, { readonly _tag: "Accepted" }>>,
  visibleUpTo: number | undefined
): Effect.Effect<Proposed & { readonly passed: boolean }, Effect.Effect.Error<ReturnType<Session<D, T, O>["evaluate"]>>> =>
  Effect.gen(function*() {
    const best = proposed.result
    if (best._tag !== "Accepted") return { ...proposed, passed: false }
    const candidate: Record<string, string> = { ...best.candidate }
    const changed = new Set<string>()
    // the parent's score on each example of the minibatches, as its children were judged against it
    const before = new Map<string, number>()
    for (const part of [best, ...parts]) {
      for (const c of part.components) {
        candidate[c] = defined(part.candidate[c], "a changed component of a combined child")
        changed.add(c)
      }
      part.subsampleIds.forEach((id, i) => {
        if (!before.has(id)) before.set(id, at(part.scoresBefore, i))
      })
    }
    const ids = [...before.keys()]
    const evaluated = yield* s.evaluate({
      iteration: plan.iteration,
      purpose: "child-minibatch",
      candidate,
      ids,
      captureTraces: false,
      call: `evaluate(combined child of candidate ${best.parents[0]}, minibatches)`,
      visibleUpTo
    })
    const scoresBefore = ids.map((id) => defined(before.get(id), "the parent's score on a combined minibatch"))
    const scoresAfter = evaluated.outcomes.map((o) => o.score)
    const spent = Ledger.sum([proposed.spent, evaluated.spent])
    const failures = addFailures(proposed.failures, evaluated.failures)
    if (!s.r.accept(scoresBefore, scoresAfter)) return { ...proposed, spent, failures, passed: false }
    const result = ProposalResult.Accepted({
      ...best,
      candidate,
      components: Object.keys(candidate).filter((c) => changed.has(c)),
      subsampleIds: ids,
      scoresBefore,
      scoresAfter
    })
    return { ...proposed, result, spent, failures, passed: true }
  })

/**
 * Stage 2, for an accepted child: optionally the rebase judgment, then the
 * validation of whatever is still accepted.
 *
 * @internal
 */
export const validate = <D, T, O>(
  s: Session<D, T, O>,
  plan: State.PendingProposal,
  proposed: Proposed,
  rebase: (Rebase & { readonly ontoCandidate: Candidate.Candidate }) | undefined,
  /** cached results this stage may use: see `CacheKey.visibleUpTo` */
  visibleUpTo: number | undefined
): Effect.Effect<Finished<T, O>, Effect.Effect.Error<ReturnType<Session<D, T, O>["evaluate"]>>> =>
  Effect.gen(function*() {
    const accepted = proposed.result
    if (accepted._tag !== "Accepted") return { ...proposed, plan, validation: undefined }
    let result: ProposalResult = accepted
    let spent = proposed.spent
    let failures = proposed.failures
    if (rebase !== undefined && !rebase.replayed) {
      // a sibling of what superseded its parent, on the same text: measured
      // (bench, single component) to cost more than it brings when validated
      result = ProposalResult.Rejected(accepted)
    } else if (rebase !== undefined) {
      const ids = accepted.subsampleIds
      const [before, after] = yield* Effect.all([
        s.evaluate({
          iteration: plan.iteration,
          purpose: "parent-minibatch",
          candidate: rebase.ontoCandidate,
          ids,
          captureTraces: false,
          call: `evaluate(candidate ${rebase.onto}, minibatch)`,
          visibleUpTo
        }),
        s.evaluate({
          iteration: plan.iteration,
          purpose: "child-minibatch",
          candidate: rebase.candidate,
          ids,
          captureTraces: false,
          call: `evaluate(child rebased on candidate ${rebase.onto}, minibatch)`,
          visibleUpTo
        })
      ], { concurrency: 2 })
      spent = Ledger.sum([spent, before.spent, after.spent])
      failures = addFailures(failures, addFailures(before.failures, after.failures))
      const fields = {
        ...accepted,
        candidate: rebase.candidate,
        parents: [rebase.onto],
        scoresBefore: before.outcomes.map((o) => o.score),
        scoresAfter: after.outcomes.map((o) => o.score)
      }
      result = s.r.accept(fields.scoresBefore, fields.scoresAfter) ? ProposalResult.Accepted(fields) : ProposalResult.Rejected(fields)
    }
    if (result._tag !== "Accepted") {
      return {
        ...proposed,
        result,
        spent,
        failures,
        plan,
        validation: undefined,
        rebasedOnto: rebase?.replayed === true ? rebase.onto : undefined,
        supersededBy: rebase?.replayed === false ? rebase.onto : undefined
      }
    }
    const validation = yield* s.evaluate({
      iteration: plan.iteration,
      purpose: "validation",
      candidate: result.candidate,
      ids: validationIds(s.r, plan),
      captureTraces: false,
      call: plan._tag === "Merge" ? "evaluate(merged candidate, valset)" : "evaluate(new candidate, valset)",
      visibleUpTo
    })
    return { ...proposed, result, spent, failures, plan, validation, rebasedOnto: rebase?.replayed === true ? rebase.onto : undefined }
  })
