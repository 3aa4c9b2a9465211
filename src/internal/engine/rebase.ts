/**
 * Rebasing a stale child. With proposals in flight, a proposal is planned
 * from a state that does not yet hold the results of the proposals before
 * it; when its child is accepted, its parent may have been superseded by a
 * better descendant found meanwhile. Validating the child as it is would add
 * a sibling of that descendant, and the lineage would fan out instead of
 * building up, which is what costs a naive parallel GEPA its quality.
 *
 * When the child changed only components that the descendant's lineage left
 * alone, the child's change is replayed on top of the descendant instead
 * (a merge with the parent as common ancestor): `descendant + change`. That
 * combination is judged on the child's own minibatch against the descendant
 * before any validation is paid for, exactly as a sequential run would have
 * judged the same change proposed on the descendant. When the changes
 * overlap (always, with a single component), the child is dropped: it is a
 * sibling of what was found meanwhile, and validating such siblings made
 * lineages fan out (bench, single component, depth 2: held-out .36 when
 * they were judged against the descendant and validated, .52 dropped).
 *
 * Pure; the decision is made at the proposal's fold turn, so in plan order it
 * depends only on folded state and runs stay reproducible.
 *
 * @internal
 */
import * as Candidate from "../../Candidate.js"
import * as Merge from "../../Merge.js"
import * as State from "../../State.js"
import { at, defined } from "../shared/invariant.js"

/** @internal */
export interface Rebase {
  /** the candidate that superseded the parent: the change is judged against it */
  readonly onto: number
  /** `onto` with the child's change replayed (when `replayed`) */
  readonly candidate: Candidate.Candidate
  /** whether the change was replayed on `onto`; otherwise the changes overlap and the child is dropped */
  readonly replayed: boolean
}

/**
 * The best candidate added since the proposal was planned that descends from
 * `parent` and scores better than it, preferring one whose changes are
 * disjoint from the child's; `undefined` when the parent was not superseded.
 *
 * @internal
 */
export const decide = (
  state: State.GepaState,
  plannedWith: number,
  parent: number,
  child: Candidate.Candidate
): Rebase | undefined => {
  if (state.candidates.length <= plannedWith) return undefined
  const parentTexts = at(state.candidates, parent)
  const changed = Candidate.changedComponents(parentTexts, child)
  const score = State.scoreOf(state)
  let disjoint: number | undefined
  let overlapping: number | undefined
  for (let i = plannedWith; i < state.candidates.length; i++) {
    if (score(i) <= score(parent)) continue
    if (!Merge.ancestors(state.parents, i).has(parent)) continue
    const theirs = at(state.candidates, i)
    if (changed.some((c) => theirs[c] !== parentTexts[c])) {
      if (overlapping === undefined || score(i) > score(overlapping)) overlapping = i
    } else if (disjoint === undefined || score(i) > score(disjoint)) disjoint = i
  }
  if (disjoint !== undefined) {
    const onto = at(state.candidates, disjoint)
    const candidate: Record<string, string> = { ...onto }
    // the components the child changed are its own
    for (const c of changed) candidate[c] = defined(child[c], "a changed component of the child")
    if (!Candidate.equals(candidate, onto)) return { onto: disjoint, candidate, replayed: true }
  }
  return overlapping === undefined ? undefined : { onto: overlapping, candidate: child, replayed: false }
}
