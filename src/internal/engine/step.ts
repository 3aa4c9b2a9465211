/**
 * Steps of several proposals. A step plans `proposalsPerStep` reflective
 * proposals from one state; they run side by side and are judged on their
 * minibatches, then the step's selection rule picks which accepted children
 * are worth a validation. Validation is the expensive part of a proposal
 * (the whole validation set against a minibatch), so validating only the
 * child that improved most spends the budget on the most promising change.
 *
 * The members of a step fold together, in plan order: stop conditions are
 * checked and new steps planned only between steps, and a saved state never
 * holds half a step, so a resumed run makes the same selection.
 *
 * Pure.
 *
 * @internal
 */
import * as Candidate from "../../Candidate.js"
import { ProposalResult } from "../../Proposal.js"
import type * as State from "../../State.js"
import type { Finished } from "./propose.js"
import type { Proposed } from "./proposed.js"
import type { Resolved } from "./resolved.js"

/** The step a plan belongs to (its own iteration when planned alone). @internal */
export const stepOf = (plan: State.PendingProposal): number => plan._tag === "Reflective" && plan.step !== undefined ? plan.step : plan.iteration

/** Steps in flight: the pipeline's occupancy. @internal */
export const inFlight = (state: State.GepaState): number => {
  let n = 0
  let last: number | undefined
  for (const p of state.pending) {
    const step = stepOf(p)
    if (step !== last) n++
    last = step
  }
  return n
}

/** Whether the oldest step in flight is partly folded. @internal */
export const midStep = (state: State.GepaState): boolean => {
  const head = state.pending[0]
  return head !== undefined && stepOf(head) !== head.iteration
}

const sum = (xs: ReadonlyArray<number>) => {
  let t = 0
  for (const x of xs) t += x
  return t
}

/**
 * What `"combine"` does with a step: the child of `into` takes the changes
 * of `parts` (accepted children of the same parent, to components it did
 * not change), and the combination is judged on their minibatches together
 * before it is validated (`propose.ts`, `combine`).
 *
 * @internal
 */
export interface Combination {
  readonly into: number
  readonly parts: ReadonlyArray<Extract<ProposalResult, { readonly _tag: "Accepted" }>>
  /** the iterations of the parts, in the order their changes were taken */
  readonly from: ReadonlyArray<number>
}

/** @internal */
export interface Selection<T, O> {
  /** the result as it folds of each member that is not validated; members absent from it are validated */
  readonly verdicts: Map<number, Finished<T, O>>
  readonly combination: Combination | undefined
}

/** Why a part of a combination is not validated itself. @internal */
export const combinedReason = (into: number, passed: boolean): string =>
  passed
    ? `not validated: its change is part of the child of proposal ${into}, which combines the step's changes`
    : `not selected: proposal ${into} of this step improved its minibatch more, and the combination of their changes did not pass`

/**
 * The selection of a step: for each member that is not validated, its
 * result as it folds (an accepted child that was not selected becomes a
 * rejection that says why), and with `"combine"`, the changes its selected
 * child takes from the others.
 *
 * Children are ranked by how much they improved their minibatch over their
 * parent (ties: the first planned); a child identical to a better-ranked one
 * is not validated twice. `"combine"` selects as `"best"` does, then takes
 * the changes of the other accepted children of the same parent, best
 * first, as long as they touch components nothing taken so far changed.
 *
 * @internal
 */
export const select = <T, O>(
  members: ReadonlyArray<{ readonly plan: State.PendingProposal; readonly p: Proposed }>,
  rule: Resolved<unknown, unknown, unknown>["proposalSelection"]
): Selection<T, O> => {
  const verdicts = new Map<number, Finished<T, O>>()
  const accepted: Array<{
    readonly plan: State.PendingProposal
    readonly p: Proposed
    readonly result: Extract<ProposalResult, { readonly _tag: "Accepted" }>
    readonly gain: number
  }> = []
  for (const { p, plan } of members) {
    const result = p.result
    if (result._tag === "Accepted") accepted.push({ plan, p, result, gain: sum(result.scoresAfter) - sum(result.scoresBefore) })
    // (the proposal's fields last: V8 gives each field added after a leading spread a shape of its own)
    else verdicts.set(plan.iteration, { plan, validation: undefined, ...p })
  }
  // stable: equal gains keep plan order
  accepted.sort((a, b) => b.gain - a.gain)
  const keep = rule === "all" ? accepted.length : rule === "best" || rule === "combine" ? 1 : rule.topK
  const kept: Array<{ readonly plan: State.PendingProposal; readonly child: Candidate.Candidate }> = []
  const first = accepted[0]
  const parts: Array<Extract<ProposalResult, { readonly _tag: "Accepted" }>> = []
  const from: Array<number> = []
  const taken = new Set(first?.result.components)
  for (const a of accepted) {
    const result = a.result
    const same = kept.find((k) => Candidate.equals(k.child, result.candidate))
    let reason: string | undefined
    if (same !== undefined) reason = `not validated: the same candidate as proposal ${same.plan.iteration} of this step`
    else if (
      rule === "combine" && first !== undefined && a !== first && first.plan._tag === "Reflective" && a.plan._tag === "Reflective" &&
      a.plan.parent === first.plan.parent && result.components.every((c) => !taken.has(c))
    ) {
      for (const c of result.components) taken.add(c)
      parts.push(result)
      from.push(a.plan.iteration)
      reason = combinedReason(first.plan.iteration, true)
    } else if (kept.length >= keep) {
      reason = keep === 1
        ? `not selected: proposal ${kept[0]?.plan.iteration} of this step improved its minibatch more`
        : `not selected: ${keep} proposals of this step improved their minibatches more`
    }
    if (reason === undefined) {
      kept.push({ plan: a.plan, child: result.candidate })
      continue
    }
    verdicts.set(a.plan.iteration, {
      ...a.p,
      result: ProposalResult.Rejected(result),
      plan: a.plan,
      validation: undefined,
      unselected: reason
    })
  }
  const combination = first === undefined || parts.length === 0 ? undefined : { into: first.plan.iteration, parts, from }
  return { verdicts, combination }
}
