/**
 * The children that a next step builds on while they are validated
 * (`Config.buildOnChild`). When a step picks one accepted child to validate,
 * the pipeline records it here; the loop takes it and plans the next step
 * with it as parent (`Plan.plan`'s `onChild`), and those plans read its
 * texts from here until the fold adds it to the pool.
 *
 * A resumed run launches its saved plans before any step is selected: a
 * plan on a child not picked yet is held until its step's selection. A
 * deterministic model picks the same child again; if the replay picks
 * another, or none, the held plans end as skipped proposals, paying
 * nothing, since what they would build on never joins the pool.
 *
 * @internal
 */
import type * as Candidate from "../../Candidate.js"
import { ProposalResult } from "../../Proposal.js"
import type * as State from "../../State.js"
import type { OnChild } from "./plan.js"
import { type ChildEvidence, ended, type Proposed } from "./proposed.js"
import { noFailures } from "./session.js"

type Reflective = Extract<State.PendingProposal, { readonly _tag: "Reflective" }>
type Accepted = Extract<ProposalResult, { readonly _tag: "Accepted" }>

/** @internal */
export interface Children {
  /** records the one child a step validates: the next step may build on it; `false` when it may not */
  readonly pick: (plan: State.PendingProposal, result: Accepted, evidence?: ChildEvidence) => boolean
  /** the child picked last, once (the loop plans on it) */
  readonly take: () => OnChild | undefined
  /** a plan's parent texts: the pool's, or the picked child's; `undefined` while that child is not picked */
  readonly parentOf: (plan: Reflective, candidates: ReadonlyArray<Candidate.Candidate>) => Candidate.Candidate | undefined
  /** holds a plan until the step of its parent child is selected */
  readonly hold: (plan: Reflective) => void
  /** the plans held on the child of `iteration`, whose step was just selected */
  readonly release: (iteration: number) => ReadonlyArray<Reflective>
  /** the child of `iteration` joined the pool (or was rejected): no plan reads it from here any more */
  readonly folded: (iteration: number) => void
}

const mean = (xs: ReadonlyArray<number>): number => {
  let t = 0
  for (const x of xs) t += x
  return xs.length === 0 ? 0 : t / xs.length
}

/** @internal */
export const make = (): Children => {
  const picked = new Map<number, OnChild>()
  let last: OnChild | undefined
  const held = new Map<number, Array<Reflective>>()
  return {
    pick: (plan, result, evidence) => {
      // a child validated on what was left of the budget may not join the pool
      if (plan._tag !== "Reflective" || plan.remainder === true) return false
      const child: OnChild = { of: plan.iteration, candidate: result.candidate, score: mean(result.scoresAfter), evidence }
      picked.set(plan.iteration, child)
      last = child
      return true
    },
    take: () => {
      const child = last
      last = undefined
      return child
    },
    parentOf: (plan, candidates) =>
      plan.parent < candidates.length ? candidates[plan.parent] : plan.onChildOf === undefined ? undefined : picked.get(plan.onChildOf)?.candidate,
    hold: (plan) => {
      const of = plan.onChildOf!
      const list = held.get(of)
      if (list === undefined) held.set(of, [plan])
      else list.push(plan)
    },
    release: (iteration) => {
      if (held.size === 0) return []
      const list = held.get(iteration) ?? []
      held.delete(iteration)
      return list
    },
    folded: (iteration) => {
      if (picked.size > 0) picked.delete(iteration)
    }
  }
}

/**
 * The result of a held plan whose parent child was not picked again on
 * resume (a model that answered otherwise): skipped, nothing paid.
 *
 * @internal
 */
export const unbuilt = (plan: Reflective): Proposed =>
  ended(
    ProposalResult.Skipped({
      kind: "reflective",
      parents: [plan.parent],
      reason: `its parent, the child of iteration ${plan.onChildOf}, was not validated when the run resumed (the model answered otherwise)`
    }),
    0,
    noFailures
  )
