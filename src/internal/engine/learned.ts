/**
 * When a run has nothing left to learn: the two rules that end a run whose
 * proposals would all be skipped for free (`knownPerfect` in `evidence.ts`:
 * a parent the cache already shows perfect on its minibatch is skipped
 * without a metric call, so without a rule the run would plan such skips
 * forever).
 *
 * - `learnedAll`, exact: every candidate the parent selection can still pick
 *   is known to be perfect on the whole training set. Every later proposal
 *   would be such a skip whatever it draws, nothing would be accepted, and
 *   so no merge would fall due: stopping changes no candidate, no score and
 *   no metric call, only the trace's tail of free skips.
 * - `freeSkips`, the fallback for parent selections whose choices cannot be
 *   told in advance (a function of the user's, epsilon-greedy, top-k): a
 *   whole pass over the training set was skipped so.
 *
 * Both read only what every later proposal would see too (folded state, and
 * the cache as visible to the next proposal), so a run stops at the same
 * point at any concurrency and after a resume.
 *
 * @internal
 */
import * as CandidateSelector from "../../CandidateSelector.js"
import type * as Candidate from "../../Candidate.js"
import * as State from "../../State.js"
import { at } from "../shared/invariant.js"
import * as ParetoIndex from "./paretoIndex.js"
import * as ParetoState from "./paretoState.js"
import type { Resolved } from "./resolved.js"

/**
 * The training scores the cache holds for a candidate, as results folded by
 * iteration `visibleUpTo` see them (`Session.known`); `undefined` when the
 * cache cannot be read so.
 *
 * @internal
 */
export type KnownScores = (
  candidate: Candidate.Candidate,
  ids: ReadonlyArray<string>,
  visibleUpTo: number
) => ReadonlyArray<number | undefined> | undefined

/**
 * The candidates `selector` can pick in `state`; `undefined` when that
 * cannot be told (any candidate, for all we know).
 *
 * @internal
 */
export const selectable = (selector: CandidateSelector.CandidateSelector, state: State.GepaState): ReadonlyArray<number> | undefined => {
  if (selector === CandidateSelector.currentBest) return [State.bestIndex(state)]
  if (selector !== CandidateSelector.pareto) return undefined
  const ix = ParetoState.indexOf(state)
  // no program on a front: the selection falls back to the best candidate
  if (ix.total <= 0) return [State.bestIndex(state)]
  const { programs, weights } = ParetoIndex.weights(ix)
  return programs.filter((_, k) => at(weights, k) > 0)
}

const slice = 64

/**
 * Why the run cannot learn any more, when every candidate the parent
 * selection can pick (every candidate, when that cannot be told) is known
 * to be perfect on every training example, from results visible to a
 * proposal planned after `sees`. Asked only after a skipped reflective
 * proposal (until then a proposal did something, and asking is not free).
 *
 * @internal
 */
export const learnedAll = (
  r: Pick<Resolved<unknown, unknown, unknown>, "skipPerfect" | "perfectScore" | "trainIds" | "selectCandidate">,
  state: State.GepaState,
  sees: number,
  known: KnownScores | undefined
): string | undefined => {
  if (known === undefined || !r.skipPerfect || r.trainIds.length === 0) return undefined
  const last = state.trace[state.trace.length - 1]
  if (last === undefined || last.outcome !== "skipped" || last.kind !== "reflective") return undefined
  const parents = selectable(r.selectCandidate, state) ?? state.candidates.map((_, i) => i)
  if (parents.length === 0) return undefined
  const ids = r.trainIds
  for (const p of parents) {
    const candidate = at(state.candidates, p)
    // in slices: a large training set is not read whole for a parent that
    // fails on its first examples (the usual answer, asked after every skip)
    for (let from = 0; from < ids.length; from += slice) {
      const scores = known(candidate, ids.length <= slice ? ids : ids.slice(from, from + slice), sees)
      if (scores === undefined) return undefined
      for (const x of scores) if (x === undefined || !(x >= r.perfectScore)) return undefined
    }
  }
  const who = parents.length === 1
    ? `the one candidate the parent selection can pick (candidate ${parents[0]}) is`
    : `all ${parents.length} candidates the parent selection can pick are`
  return `nothing left to learn: ${who} known to be perfect on all ${r.trainIds.length} training examples`
}

/**
 * Why the run cannot learn any more, when the last proposals were all
 * skipped for free (their parents were known to be perfect on their
 * minibatches) on `epoch` minibatches in a row: a whole pass over the
 * training set taught nothing, and without a cost the run would go on
 * forever. Minibatches, not proposals, are counted: the proposals of a
 * round of components share one minibatch (`"same_minibatch"`), so
 * `epoch` such proposals may have seen a fraction of the training set.
 * A line saved without its minibatch (before 0.3) counts as one.
 *
 * @internal
 */
export const freeSkips = (state: State.GepaState, epoch: number): string | undefined => {
  const trace = state.trace
  let minibatches = 0
  let previous: ReadonlyArray<string> | undefined
  // (asked before every step: late in a run the trace ends with many skips,
  // so the minibatches are compared in place, not as joined strings)
  for (let i = trace.length - 1; i >= 0; i--) {
    const t = at(trace, i)
    if (t.outcome !== "skipped" || t.kind !== "reflective") return undefined
    const before = trace[i - 1]?.metricCalls
    if (before === undefined || t.metricCalls !== before) return undefined
    const ids = t.subsampleIds
    if (ids === undefined || previous === undefined || !sameIds(ids, previous)) minibatches++
    previous = ids
    if (minibatches >= epoch) {
      // the whole of the oldest minibatch's proposals, for the count
      let first = i
      const sameMinibatch = (t: State.TraceEntry) =>
        ids !== undefined && t.outcome === "skipped" && t.subsampleIds !== undefined && sameIds(t.subsampleIds, ids)
      while (first > 1 && sameMinibatch(at(trace, first - 1))) first--
      const proposals = trace.length - first
      return `nothing left to learn: the last ${proposals} proposals, on ${epoch} minibatches (a pass over the training set), found their parents already perfect on them`
    }
  }
  return undefined
}

const sameIds = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  if (a === b) return true
  if (a.length !== b.length) return false
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false
  return true
}
