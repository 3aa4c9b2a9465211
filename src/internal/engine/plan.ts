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
import type * as Candidate from "../../Candidate.js"
import { GepaEvent } from "../../Event.js"
import * as Merge from "../../Merge.js"
import { Rng } from "../../Rng.js"
import * as State from "../../State.js"
import * as AppendOnly from "./appendOnly.js"
import { at, defined } from "../shared/invariant.js"
import { revise } from "./draft.js"
import { planMerge, storedValIds } from "./planMerge.js"
import * as Learned from "./learned.js"
import { rotated } from "./evidence.js"
import * as Ledger from "./ledger.js"
import type { ChildEvidence } from "./proposed.js"
import { type Resolved, reusesMinibatches } from "./resolved.js"
import * as Width from "./width.js"
import type { Wants } from "./session.js"

/** @internal */
export type Planned =
  | {
    readonly _tag: "Planned"
    readonly state: State.GepaState
    /** the step's proposals, in plan order */
    readonly plans: ReadonlyArray<State.PendingProposal>
    readonly events: ReadonlyArray<GepaEvent>
  }
  | {
    readonly _tag: "Exhausted"
    readonly needed: number
    readonly available: number
    readonly reason: string
    /** nothing could be learned any more (see `learned.ts`), rather than too little budget */
    readonly learned?: true
  }

/**
 * The child a step is planned on while it is validated (`Config.buildOnChild`):
 * it joins the pool as the next candidate when its step is folded.
 *
 * @internal
 */
export interface OnChild {
  /** the iteration whose child it is */
  readonly of: number
  readonly candidate: Candidate.Candidate
  /** its mean score on the minibatch it was judged on */
  readonly score: number
  /** its traced evaluation of that minibatch, when the next step reflects on it */
  readonly evidence?: ChildEvidence | undefined
}

/** The validation ids of a plan, which the state stores as absent for "the whole set". @internal */
export const validationIds = <D, T, O>(r: Resolved<D, T, O>, plan: State.PendingProposal): ReadonlyArray<string> => plan.valIds ?? r.valIds

// " of 400 metric calls" when the run has a budget
const budgetOf = (r: { readonly budget: number | undefined }): string => (r.budget === undefined ? "" : ` of ${r.budget} metric calls`)

/** How many children of a step of `size` proposals may be validated. @internal */
export const validationsOf = (selection: Resolved<unknown, unknown, unknown>["proposalSelection"], size: number): number =>
  selection === "all" ? size : selection === "best" || selection === "combine" ? 1 : Math.min(size, selection.topK)

/**
 * The fewest validation examples a child validated on the budget's
 * remainder may have (see `plan`): a quarter of what the evaluation policy
 * asks for (a smaller sample says little about the child), but no more than
 * keeps the unspent rest under 1 % of the budget. The run stops when fewer
 * calls are left than the smallest proposal (`factor` minibatch calls and
 * this sample), so this bounds what is left unspent: at budget 500 with 30
 * validation examples, a sample of 4 instead of 8 (at most 5 calls left
 * instead of 9). The sample's size does not change quality on the bench
 * (bench/RESULTS.md "The budget's last calls").
 *
 * @internal
 */
export const minimumRemainderValidation = (validation: number, budget: number | undefined, factor: number): number => {
  const quarter = Math.max(1, Math.ceil(validation / 4))
  const spendFloor = budget === undefined ? quarter : Math.max(1, Math.floor(budget / 100) - factor + 1)
  return Math.min(validation, quarter, spendFloor)
}

/**
 * The minibatch a proposal from `parent` reflecting on `components` may take
 * again (`reuseMinibatch`): the last folded proposal was a rejected
 * reflective one from the same parent, and none of these components was
 * reflected on with its minibatch yet (see `reusesMinibatches`).
 *
 * @internal
 */
export const reusable = (
  r: Pick<Resolved<unknown, unknown, unknown>, "reuseMinibatch" | "proposalsPerStep" | "parallelProposals">,
  state: State.GepaState,
  parent: number,
  components: ReadonlyArray<string>
): State.MinibatchReuse | undefined => {
  const reuse = state.minibatchReuse
  if (!reusesMinibatches(r) || reuse === undefined) return undefined
  if (reuse.parent !== parent || components.length === 0) return undefined
  return components.every((c) => !reuse.tried.includes(c) && c in reuse.records) ? reuse : undefined
}

/**
 * Plans the next step within `available` metric calls, or says why none
 * fits: a merge when one is due (as in GEPA, after an accepted reflective
 * proposal), otherwise `proposalsPerStep` reflective proposals drawn one
 * after the other from the same state (`"independent"`: each selects its own
 * parent; `"same_parent"`: one parent, several minibatches;
 * `"same_minibatch"`: one parent, and one minibatch per round of
 * components, whose traced evaluation of the parent only the round's first
 * proposal reserves and pays for). Every proposal
 * of a step gets its own iteration number; they share `step`.
 *
 * The step reserves its worst case: every proposal's minibatches, and the
 * validation of as many children as its selection rule may keep. Near the
 * end of the budget it shrinks to what is left, so that the last calls still
 * go to something that can change the result: fewer proposals, then a
 * smaller minibatch, then a child validated on a random sample of what the
 * evaluation policy asks for (see `minimumRemainderValidation`). Such a child is
 * added only if it beats the best candidate on the same examples (`accept.ts`).
 *
 * @internal
 */
export const plan = <D, T, O>(
  r: Resolved<D, T, O>,
  state: State.GepaState,
  available: number,
  /** the events someone receives: only those are built */
  wants: Wants,
  /** the run's owner of the state's arrays (see internal/engine/appendOnly.ts) */
  owner?: AppendOnly.Owner | undefined,
  /** the cache's training scores, for the stop rule of `learned.ts` */
  known?: Learned.KnownScores | undefined,
  /**
   * the child being validated that a reflective step builds on (a merge due
   * is planned as always): every proposal takes it as parent, and the step
   * is planned whole or not at all, since after the fold the next plan sees
   * the budget the validation did not use
   */
  onChild?: OnChild | undefined
): Planned => {
  const rng = Rng.fromState(state.rng)
  const iteration = state.iteration + 1
  // results of the iterations folded so far: all a proposal may take from the cache
  const first = state.pending[0]
  const sees = first === undefined ? state.iteration : first.iteration - 1
  let current = state
  if (r.merge !== undefined && Merge.isDue(state.merge, r.merge.maxInvocations)) {
    const merged = planMerge(r, r.merge, state, rng, available, iteration, wants, sees)
    if ("plan" in merged) return { _tag: "Planned", state: merged.state, plans: [merged.plan], events: merged.events }
    current = merged
  }
  const pipelined = r.parallelProposals > 1
  const factor = pipelined ? 4 : 2
  if (factor > available) {
    return {
      _tag: "Exhausted",
      needed: factor,
      available,
      reason: `used the budget${budgetOf(r)}: ${available} metric calls left, a proposal needs at least ${factor}`
    }
  }
  const stalled = Learned.learnedAll(r, state, sees, known) ?? Learned.freeSkips(state, Math.ceil(r.trainIds.length / r.minibatchSize))
  if (stalled !== undefined) return { _tag: "Exhausted", needed: 0, available, reason: stalled, learned: true }
  if (r.merge !== undefined) current = revise(current, { merge: { ...current.merge, lastIterFoundNew: false } })

  // an iteration cap (StopCondition.maxIterations) cuts the step: the count stays exact
  const cap = r.stop.maxIterations
  const width = r.stepWidth === "adaptive" ? Width.adaptiveWidth(state.trace, r.proposalsPerStep) : r.proposalsPerStep
  const size = cap === undefined ? width : Math.max(1, Math.min(width, cap - state.iteration))
  const keep = validationsOf(r.proposalSelection, width)
  const plans: Array<State.PendingProposal> = []
  const events: Array<GepaEvent> = []
  let committedRng = rng.snapshot()
  let minibatchCost = 0
  const validationCosts: Array<number> = []
  let exhausted: Planned | undefined
  // (the child takes the next index when its step is folded: nothing is folded before it)
  const sameParent = onChild !== undefined
    ? current.candidates.length
    : r.proposalSampling === "independent"
    ? undefined
    : r.selectCandidate(current, rng)
  const candidateOf = (parent: number) => onChild !== undefined ? onChild.candidate : at(current.candidates, parent)
  // "same_minibatch": the proposals of a step reflect on one minibatch, whose
  // traced evaluation of the parent the first of them pays for, until a
  // component would be rewritten on it more than `rewritesPerMinibatch` times
  let group: {
    readonly leader: State.PendingProposal & { readonly _tag: "Reflective" }
    /** the rewrites of each component planned on the group's minibatch */
    readonly tried: Map<string, number>
  } | undefined
  const rewritesOf = (components: ReadonlyArray<string>) => {
    let most = 0
    for (const c of components) most = Math.max(most, group?.tried.get(c) ?? 0)
    return most
  }
  // the child's results on the minibatch it was judged on, which the step reflects on
  const evidence = onChild?.evidence === undefined || !r.reuseChildMinibatch ? undefined : { of: onChild.of, ...onChild.evidence }
  for (let i = 0; i < size; i++) {
    const it = iteration + i
    const parent = sameParent ?? r.selectCandidate(current, rng)
    const select = (sampler: BatchSampler.SamplerState) =>
      r.selectComponents({ state: revise(current, { sampler }), candidateIdx: parent, candidate: candidateOf(parent), iteration: it, rng })
    let ids: ReadonlyArray<string>
    let sampler: BatchSampler.SamplerState
    let selection: ReturnType<typeof select>
    let leader: (State.PendingProposal & { readonly _tag: "Reflective" }) | undefined
    // the proposals that reflect on the child's minibatch (`reuseChildMinibatch`): the step's
    // first, and the rewrites of its group; later groups and independent proposals draw their own
    let fromChild = false
    if (r.proposalSampling === "same_minibatch" || (evidence !== undefined && i === 0)) {
      // components first: whether they were tried on the group's minibatch decides whether a new one is drawn
      selection = select(current.sampler)
      leader = r.proposalSampling === "same_minibatch" && group !== undefined && rewritesOf(selection.components) < r.rewritesPerMinibatch
        ? group.leader
        : undefined
      fromChild = evidence !== undefined && (leader === undefined ? i === 0 : leader.reuses?.paidBy === evidence.of)
      ;[ids, sampler] = fromChild && evidence !== undefined
        ? [evidence.ids, current.sampler]
        : leader === undefined
        ? BatchSampler.next(current.sampler, r.trainIds, r.minibatchSize, rng)
        : [leader.ids, current.sampler]
    } else {
      ;[ids, sampler] = BatchSampler.next(current.sampler, r.trainIds, r.minibatchSize, rng)
      selection = select(sampler)
    }
    // what each minibatch example costs this proposal: its parent's and its
    // child's evaluation, and their replay on a rebase when pipelined; a
    // proposal sharing its group's minibatch pays no parent evaluation. With
    // "combine", each example of the step's minibatches may also be paid once
    // more, for the combined child's judgment.
    let perExample = (leader === undefined ? factor : factor - 1) + (leader === undefined && r.proposalSelection === "combine" ? 1 : 0)
    let valIds = r.policy(current, r.valIds, rng)
    const cost = (mb: number, val: number) => Ledger.stepCost(minibatchCost + perExample * mb, validationCosts, val, keep)
    let reserved = cost(Ledger.distinct(ids), Ledger.distinct(valIds))
    // the minibatch of a rejected proposal from this parent, again with a
    // component not tried on it: the parent's evaluation of it is paid for,
    // and its records for this component are in the state
    // (not beside the child's minibatch: a candidate of one component never reuses one anyway)
    const reuse = fromChild ? undefined : reusable(r, current, parent, selection.components)
    let reuses: State.ReusedEvaluation | undefined
    if (reuse !== undefined) {
      // only the child's evaluation of the minibatch is left to pay
      const again = Ledger.stepCost(minibatchCost + Ledger.distinct(reuse.ids), validationCosts, Ledger.distinct(valIds), keep)
      if (again <= available) {
        ids = reuse.ids
        // the drawn minibatch stays next in line
        sampler = current.sampler
        reserved = again
        reuses = {
          paidBy: reuse.paidBy,
          scores: reuse.scores,
          // (`reusable` checked that each component has its records)
          records: Object.fromEntries(selection.components.map((c) => [c, defined(reuse.records[c], "the kept records of a component")]))
        }
      }
    }
    // the records are read in another order by each rewrite of the same components
    const rewrite = leader === undefined ? 0 : rewritesOf(selection.components)
    if (fromChild && evidence !== undefined) {
      // the child's evaluation of its minibatch is paid (by its own step): only the children's is left
      perExample = factor - 1
      reserved = cost(Ledger.distinct(ids), Ledger.distinct(valIds))
      reuses = {
        paidBy: evidence.of,
        scores: evidence.scores,
        // in this rewrite's order, as a shared minibatch's rewrites read theirs (`memberView`)
        records: Object.fromEntries(
          selection.components.map((c) => [c, defined(rotated(evidence.records[c], rewrite), "the child's records of a component")])
        )
      }
    }
    let remainder = false
    let shrunk = false
    if (reserved > available) {
      if (onChild !== undefined) {
        return { _tag: "Exhausted", needed: reserved, available, reason: "the step on a child being validated does not fit whole" }
      }
      // only the step's first proposal shrinks: later ones are simply not planned
      if (i > 0) break
      shrunk = true
      // the step ends with this proposal, so no combination is judged: its minibatch is paid by parent and child only
      perExample = factor
      const left = available - minibatchCost
      const fullVal = Ledger.distinct(valIds)
      const minVal = minimumRemainderValidation(fullVal, r.budget, perExample)
      const mb = Math.min(Ledger.distinct(ids), Math.floor((left - Math.min(fullVal, minVal)) / perExample))
      if (mb < 1) {
        const needed = perExample + minVal
        exhausted = {
          _tag: "Exhausted",
          needed,
          available,
          reason: `used the budget${budgetOf(r)}: ${available} metric calls left, a proposal needs at least ${needed} ` +
            `(${perExample} for the smallest minibatches, ${minVal} to validate an accepted child on a sample)`
        }
        break
      }
      if (mb < Ledger.distinct(ids)) ids = [...new Set(ids)].slice(0, mb)
      const val = Math.min(fullVal, left - perExample * mb)
      if (val < fullVal) {
        const chosen = new Set(rng.sample([...new Set(valIds)], val))
        valIds = r.valIds.filter((id) => chosen.has(id))
        remainder = true
      }
      reserved = cost(Ledger.distinct(ids), Ledger.distinct(valIds))
    }
    const pointer = selection.nextPointer
    // in place while the run owns the array (a copy of the whole pool per plan otherwise)
    // (a child being validated has no entry yet: it gets its parent's pointer when it joins)
    const nextComponent = pointer === undefined || onChild !== undefined
      ? current.nextComponent
      : AppendOnly.set(owner, current.nextComponent, parent, pointer)
    const planned: State.PendingProposal = {
      _tag: "Reflective",
      iteration: it,
      parent,
      ids,
      components: selection.components,
      valIds: storedValIds(r, valIds),
      base: current.candidates.length,
      // the step's worst case so far, less what its earlier proposals reserved
      reserved: Ledger.unreservedOf(reserved, plans),
      // (an adaptive step one proposal wide is planned as the GEPA loop plans one)
      ...(width > 1 ? { step: iteration } : {}),
      ...(remainder ? { remainder } : {}),
      ...(reuses === undefined ? {} : { reuses }),
      ...(r.proposalSampling === "same_minibatch" && width > 1 ? { shares: leader?.iteration ?? it } : {}),
      ...(rewrite > 0 ? { rewrite } : {}),
      ...(onChild === undefined ? {} : { onChildOf: onChild.of }),
      sees
    }
    if (planned.shares !== undefined) {
      if (leader === undefined) group = { leader: planned, tried: new Map(selection.components.map((c) => [c, 1])) }
      else for (const c of selection.components) group?.tried.set(c, (group.tried.get(c) ?? 0) + 1)
    }
    minibatchCost += perExample * Ledger.distinct(ids)
    validationCosts.push(Ledger.distinct(valIds))
    current = revise(current, { iteration: it, sampler, nextComponent, pending: [...current.pending, planned] })
    committedRng = rng.snapshot()
    plans.push(planned)
    if (wants("IterationStarted")) events.push(GepaEvent.IterationStarted({ iteration: it, metricCalls: state.metricCalls }))
    if (wants("CandidateSelected")) {
      events.push(
        onChild === undefined
          ? GepaEvent.CandidateSelected({ iteration: it, candidate: parent, score: State.scoreOf(current)(parent) })
          : GepaEvent.CandidateSelected({ iteration: it, candidate: parent, score: onChild.score, validating: true })
      )
    }
    if (wants("MinibatchSampled")) events.push(GepaEvent.MinibatchSampled({ iteration: it, ids }))
    if (wants("ProposalStarted")) events.push(GepaEvent.ProposalStarted({ iteration: it, parent, components: selection.components }))
    if (shrunk) break
  }
  // the first proposal either is planned or says why not
  if (plans.length === 0) return defined(exhausted, "why a step planned nothing")
  return { _tag: "Planned", state: revise(current, { rng: committedRng }), plans, events }
}
