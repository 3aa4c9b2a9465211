/**
 * Planning a merge proposal (see `plan.ts`): the pair of candidates, the
 * validation subsample it is judged on, and its reservation.
 *
 * Pure.
 *
 * @internal
 */
import { GepaEvent } from "../../Event.js"
import * as Merge from "../../Merge.js"
import * as Pareto from "../../Pareto.js"
import type { Rng } from "../../Rng.js"
import * as State from "../../State.js"
import { at, defined } from "../shared/invariant.js"
import { revise } from "./draft.js"
import * as Ledger from "./ledger.js"
import type { Resolved } from "./resolved.js"
import type { Wants } from "./session.js"

/** A plan's validation ids as the state stores them: absent for the whole set. @internal */
export const storedValIds = <D, T, O>(r: Resolved<D, T, O>, ids: ReadonlyArray<string>) => ids === r.valIds ? undefined : ids

/**
 * A merge, when a pair of candidates can be merged and its cost fits in
 * `available`: the plan and the state that records it; otherwise the state,
 * with the pair recorded as tried when one was found (as GEPA records it).
 *
 * @internal
 */
export const planMerge = <D, T, O>(
  r: Resolved<D, T, O>,
  m: NonNullable<Resolved<D, T, O>["merge"]>,
  state: State.GepaState,
  rng: Rng,
  available: number,
  iteration: number,
  wants: Wants,
  sees: number
): { readonly plan: State.PendingProposal; readonly state: State.GepaState; readonly events: ReadonlyArray<GepaEvent> } | State.GepaState => {
  const score = State.scoreOf(state)
  const dominators = Pareto.dominators(State.frontSets(state), score)
  const input: Merge.MergeInput = {
    candidates: state.candidates,
    componentNames: state.componentNames,
    parents: state.parents,
    scores: state.candidates.map((_, i) => score(i)),
    merge: state.merge,
    versions: State.versionsOf(state)
  }
  const hasOverlap = (i: number, j: number) => {
    let n = 0
    const sj = at(state.valScores, j)
    for (const id in at(state.valScores, i)) if (id in sj) n++
    return n >= m.overlapFloor
  }
  const attempt = Merge.propose(input, dominators, hasOverlap, rng)
  if (attempt === undefined) return state
  const scores1 = at(state.valScores, attempt.id1)
  const scores2 = at(state.valScores, attempt.id2)
  const ids = Merge.subsample(scores1, scores2, m.subsampleSize, rng)
  // the triple is recorded as tried even when it cannot be afforded, as GEPA does
  const tried = revise(state, { merge: attempt.merge })
  if (ids.length === 0) return tried
  const valIds = r.policy(tried, r.valIds, rng)
  const reserved = Ledger.mergeCost(ids, Ledger.distinct(valIds))
  if (reserved > available) return tried
  let before1 = 0
  let before2 = 0
  for (const id of ids) {
    // the subsample is drawn from the examples both parents were scored on
    before1 += defined(scores1[id], "a merge parent's score on its subsample")
    before2 += defined(scores2[id], "a merge parent's score on its subsample")
  }
  const plan: State.PendingProposal = {
    _tag: "Merge",
    iteration,
    id1: attempt.id1,
    id2: attempt.id2,
    ancestor: attempt.ancestor,
    candidate: attempt.candidate,
    ids,
    scoresBefore: [before1, before2],
    valIds: storedValIds(r, valIds),
    reserved,
    sees,
    sources: attempt.sources
  }
  return {
    plan,
    // the merge is counted against the cap when planned, so proposals planned
    // while it is in flight cannot schedule past the cap
    state: revise(tried, { iteration, merge: Merge.recordAttempt(attempt.merge, false), rng: rng.snapshot(), pending: [...state.pending, plan] }),
    events: [
      ...(wants("IterationStarted") ? [GepaEvent.IterationStarted({ iteration, metricCalls: state.metricCalls })] : []),
      ...(wants("MergeAttempted") ? [GepaEvent.MergeAttempted({ iteration, parents: [attempt.id1, attempt.id2], ancestor: attempt.ancestor })] : [])
    ]
  }
}
