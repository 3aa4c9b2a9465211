/**
 * Planning one proposal: every random draw of a step happens here, in the
 * loop's sequential phase, so the concurrent part draws nothing and a run is
 * reproducible whatever the timing. A plan is plain data (it is persisted in
 * `state.pending`), and its worst-case cost is reserved before anything
 * starts.
 *
 * A merge is planned when one is due (after an accepted reflective proposal,
 * as in GEPA); otherwise a reflective proposal: parent selection, the next
 * training minibatch, the components to rewrite, and the validation ids its
 * child would be scored on.
 *
 * Pure: takes the state, returns the next state and the plan.
 *
 * @internal
 */
import * as BatchSampler from "../../BatchSampler.js"
import { GepaEvent } from "../../Event.js"
import * as Merge from "../../Merge.js"
import * as Pareto from "../../Pareto.js"
import { Rng } from "../../Rng.js"
import * as State from "../../State.js"
import * as Budget from "./budget.js"
import type { Resolved } from "./resolve.js"

/** @internal */
export type Planned =
  | {
    readonly _tag: "Planned"
    readonly state: State.GepaState
    readonly plan: State.PendingProposal
    readonly events: ReadonlyArray<GepaEvent>
  }
  | { readonly _tag: "Exhausted"; readonly needed: number; readonly available: number; readonly reason: string }

/** The validation ids of a plan, which the state stores as absent for "the whole set". @internal */
export const validationIds = <D, T, O>(r: Resolved<D, T, O>, plan: State.PendingProposal): ReadonlyArray<string> =>
  plan.valIds ?? r.valIds

const storedValIds = <D, T, O>(r: Resolved<D, T, O>, ids: ReadonlyArray<string>) =>
  ids === r.valIds ? undefined : ids

const planMerge = (
  r: Resolved<unknown, unknown, unknown>,
  state: State.GepaState,
  rng: Rng,
  available: number,
  iteration: number,
  listening: boolean
): Planned | State.GepaState => {
  const m = r.merge!
  const score = State.scoreOf(state)
  const dominators = Pareto.dominators(State.frontSets(state), score)
  const input: Merge.MergeInput = {
    candidates: state.candidates,
    componentNames: state.componentNames,
    parents: state.parents,
    scores: state.candidates.map((_, i) => score(i)),
    merge: state.merge
  }
  const hasOverlap = (i: number, j: number) => {
    let n = 0
    const sj = state.valScores[j]!
    for (const id in state.valScores[i]!) if (id in sj) n++
    return n >= m.overlapFloor
  }
  const attempt = Merge.propose(input, dominators, hasOverlap, rng)
  if (attempt === undefined) return state
  const ids = Merge.subsample(state.valScores[attempt.id1]!, state.valScores[attempt.id2]!, m.subsampleSize, rng)
  // the triple is recorded as tried even when it cannot be afforded, as GEPA does
  const tried: State.GepaState = { ...state, merge: attempt.merge }
  if (ids.length === 0) return tried
  const valIds = r.policy(tried, r.valIds, rng)
  const reserved = Budget.mergeCost(ids, Budget.distinct(valIds))
  if (reserved > available) return tried
  let before1 = 0
  let before2 = 0
  for (const id of ids) {
    before1 += state.valScores[attempt.id1]![id]!
    before2 += state.valScores[attempt.id2]![id]!
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
    reserved
  }
  return {
    _tag: "Planned",
    // the merge is counted against the cap when planned, so proposals planned
    // while it is in flight cannot schedule past the cap
    state: { ...tried, iteration, merge: Merge.recordAttempt(attempt.merge, false), rng: rng.snapshot(), pending: [...state.pending, plan] },
    plan,
    events: listening
      ? [
        GepaEvent.IterationStarted({ iteration, metricCalls: state.metricCalls }),
        GepaEvent.MergeAttempted({ iteration, parents: [attempt.id1, attempt.id2], ancestor: attempt.ancestor })
      ]
      : []
  }
}

// " of 400 metric calls" when the run has a budget
const budgetOf = (r: { readonly budget: number | undefined }): string => (r.budget === undefined ? "" : ` of ${r.budget} metric calls`)

/**
 * Plans the next proposal within `available` metric calls, or says why none
 * fits.
 *
 * @internal
 */
export const plan = <D, T, O>(
  r: Resolved<D, T, O>,
  state: State.GepaState,
  available: number,
  listening: boolean
): Planned => {
  const rr = r as unknown as Resolved<unknown, unknown, unknown>
  const rng = Rng.fromState(state.rng)
  const iteration = state.iteration + 1
  let current = state
  if (r.merge !== undefined && Merge.isDue(state.merge, r.merge.maxInvocations)) {
    const merged = planMerge(rr, state, rng, available, iteration, listening)
    if ("_tag" in merged) return merged
    current = merged
  }
  const pipelined = r.parallelProposals > 1
  // a minibatch holds at most every training example once
  const minimum = Budget.reflectiveCost(Math.min(r.minibatchSize, r.trainIds.length), 0, pipelined)
  if (minimum > available) {
    return {
      _tag: "Exhausted",
      needed: minimum,
      available,
      reason: `used the budget${budgetOf(r)}: ${available} metric calls left, a proposal needs at least ${minimum}`
    }
  }
  if (r.merge !== undefined) current = { ...current, merge: { ...current.merge, lastIterFoundNew: false } }

  const parent = r.selectCandidate(current, rng)
  const [ids, sampler] = BatchSampler.next(current.sampler, r.trainIds, r.minibatchSize, rng)
  const selection = r.selectComponents({
    state: { ...current, sampler },
    candidateIdx: parent,
    candidate: current.candidates[parent]!,
    iteration,
    rng
  })
  const valIds = r.policy(current, r.valIds, rng)
  const reserved = Budget.reflectiveCost(Budget.distinct(ids), Budget.distinct(valIds), pipelined)
  if (reserved > available) {
    // an accepted child could not be validated: its minibatch evaluations would be wasted
    return {
      _tag: "Exhausted",
      needed: reserved,
      available,
      reason: `used the budget${budgetOf(r)}: ${available} metric calls left, a proposal needs up to ${reserved} ` +
        `(${reserved - Budget.distinct(valIds)} for the minibatches, ${Budget.distinct(valIds)} to validate an accepted child)`
    }
  }
  const nextComponent = selection.nextPointer === undefined
    ? current.nextComponent
    : current.nextComponent.map((v, i) => (i === parent ? selection.nextPointer! : v))
  const planned: State.PendingProposal = {
    _tag: "Reflective",
    iteration,
    parent,
    ids,
    components: selection.components,
    valIds: storedValIds(rr, valIds),
    base: current.candidates.length,
    reserved
  }
  return {
    _tag: "Planned",
    state: { ...current, iteration, sampler, nextComponent, rng: rng.snapshot(), pending: [...current.pending, planned] },
    plan: planned,
    events: listening
      ? [
        GepaEvent.IterationStarted({ iteration, metricCalls: state.metricCalls }),
        GepaEvent.CandidateSelected({ iteration, candidate: parent, score: State.scoreOf(current)(parent) }),
        GepaEvent.MinibatchSampled({ iteration, ids }),
        GepaEvent.ProposalStarted({ iteration, parent, components: selection.components })
      ]
      : []
  }
}
