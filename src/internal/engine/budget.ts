/**
 * The budget ledger. The strict budget is kept by reservation: a proposal is
 * planned only when its worst-case cost (parent and child minibatches, and
 * the validation of its child) fits in what is neither spent nor reserved by
 * proposals still in flight. A proposal's reservation is released when it is
 * folded, and replaced by what it really spent. Because reservations, not
 * in-flight spending, decide what may start, the decision is the same
 * whatever the timing, and the budget holds even if every in-flight proposal
 * spends its worst case.
 *
 * @internal
 */
import type * as State from "../../State.js"

/** @internal */
export interface Ledger {
  readonly budget: number | undefined
  /** metric calls spent by folded work */
  readonly spent: number
  /** worst-case calls reserved by proposals in flight */
  readonly reserved: number
}

/** @internal */
export const ledger = (
  budget: number | undefined,
  state: State.GepaState,
  owed?: ReadonlyMap<number, number> | undefined
): Ledger => {
  let reserved = 0
  for (const p of state.pending) reserved += p.reserved
  // Lost work (paid by a crashed process) and owed results (paid, not counted
  // yet) are real spending: the budget holds for what the adapter really ran.
  // Owed results of a proposal in flight are within its reservation (its
  // replay uses them in place of new calls); the others are counted here.
  let unreserved = 0
  if (owed !== undefined && owed.size > 0) {
    const inFlight = new Set(state.pending.map((p) => p.iteration))
    for (const [iteration, n] of owed) if (!inFlight.has(iteration)) unreserved += n
  }
  return { budget, spent: state.metricCalls + state.lostMetricCalls + unreserved, reserved }
}

/** Calls still free to reserve. @internal */
export const available = (l: Ledger): number =>
  l.budget === undefined ? Number.POSITIVE_INFINITY : l.budget - l.spent - l.reserved

/**
 * The worst-case cost of a reflective proposal: parent and child minibatches,
 * with proposals in flight the judging of a rebased child (the rebased child
 * and the candidate it is rebased on, on the same minibatch), and the
 * validation.
 *
 * @internal
 */
export const reflectiveCost = (minibatch: number, validation: number, pipelined: boolean): number =>
  (pipelined ? 4 : 2) * minibatch + validation

/**
 * Distinct ids: an evaluation runs each id once. Id lists are never
 * modified, and planning asks about the same validation list at every step:
 * counted once per list.
 *
 * @internal
 */
export const distinct = (ids: ReadonlyArray<string>): number => {
  let n = counted.get(ids)
  if (n === undefined) {
    n = new Set(ids).size
    counted.set(ids, n)
  }
  return n
}
const counted = new WeakMap<ReadonlyArray<string>, number>()

/** The worst-case cost of a merge proposal (its subsample evaluates each distinct id once). @internal */
export const mergeCost = (subsample: ReadonlyArray<string>, validation: number): number =>
  distinct(subsample) + validation
