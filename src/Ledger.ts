/**
 * The ledger of metric calls: the one owner of the budget. A metric call is
 * one example evaluated by the adapter; the budget (`StopCondition.budget`,
 * `maxMetricCalls`) is strict, never exceeded, and this module is the only
 * code that adds up, reserves, releases or compares counts of them. The
 * engine, the run folder, `Telemetry` and the result carry the counts it
 * gives them and never count on their own.
 *
 * How the budget holds:
 *
 * - **Reserve before evaluating.** A proposal is planned only when its
 *   worst case (parent and child minibatches, and the validation of its
 *   child) fits in what is neither spent nor reserved by proposals still in
 *   flight (`available`). Reservations, not in-flight spending, decide what
 *   may start, so the decision is the same whatever the timing.
 * - **Spend and release on fold.** When a proposal is folded its
 *   reservation is released and what it really spent is added (`spend`).
 * - **Write ahead.** With a run folder, calls are put on record before they
 *   start, in blocks, and what was reserved and never started is given back.
 * - **Lost calls after a crash.** On resume, calls on record that neither
 *   the saved state nor the stored results account for were paid by the
 *   process that died: they are charged once as lost work
 *   (`Result.lostMetricCalls`). Stored results the saved state does not
 *   count are owed: charged when first used, and as lost work if never used.
 *
 * The ledger's book is the run's state (`GepaState.metricCalls`,
 * `lostMetricCalls` and the reservations of `pending`): it is saved and
 * resumed with the state, and the engine's fold stays a pure function of it.
 *
 * @since 0.3.0
 */
import * as internal from "./internal/engine/ledger.js"
import type { Balance, Book } from "./internal/engine/ledger.js"

export type {
  /**
   * What the budget decision sees at a point of the run: the budget, the
   * calls spent and the calls reserved by proposals in flight. Declared
   * beside the implementation, so that it never imports this face.
   *
   * @since 0.3.0
   * @category models
   */
  Balance,
  /**
   * The counts the ledger keeps in a run's state (`GepaState` is a `Book`:
   * `metricCalls`, `lostMetricCalls` and the reservations of `pending`).
   *
   * @since 0.3.0
   * @category models
   */
  Book
} from "./internal/engine/ledger.js"

/**
 * The balance of a run's book (its state), with the results an interrupted process paid
 * for and the state does not count yet (`owed`, per iteration that paid for
 * them; see `RunStore.unaccounted`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const balance: (
  budget: number | undefined,
  book: Book,
  owed?: ReadonlyMap<number, number> | undefined
) => Balance = internal.balance

/**
 * Calls still free to reserve (infinite without a budget).
 *
 * @since 0.3.0
 * @category accessors
 */
export const available: (balance: Balance) => number = internal.available

/**
 * Follows a run's running total of metric calls, as its events report it
 * (`IterationStarted`, `BudgetUpdated`), and says how much each new total
 * adds: what `Telemetry.observer` counts. A resumed run's first total is
 * what the saved state already spent, not this process's, so it adds nothing.
 *
 * @since 0.3.0
 * @category models
 */
export interface Follower {
  /** called on `OptimizationStarted` */
  readonly start: (resumed: boolean) => void
  /** the calls a new total adds (0 when it did not grow) */
  readonly to: (total: number) => number
}

/**
 * A fresh `Follower`, for one run's events.
 *
 * @since 0.3.0
 * @category constructors
 */
export const follower: () => Follower = internal.follower
