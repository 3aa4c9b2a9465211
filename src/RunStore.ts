/**
 * Where a run keeps its state between iterations. The engine loads from it at
 * the start (to resume), saves after every iteration that changed the state,
 * writes events to it, and asks it whether a stop was requested. The file
 * implementation is the run directory; without one, nothing is persisted.
 *
 * @since 0.1.0
 */
import type { Effect, Option } from "effect"
import type { PersistenceError } from "./Errors.js"
import type { EvaluationCache } from "./EvaluationCache.js"
import type { GepaEvent } from "./Event.js"
import type { StoppedBy } from "./Result.js"
import type { GepaState } from "./State.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface RunStore<O> {
  /** a human-readable location, used in events and errors */
  readonly location: string
  /** the saved state, if any */
  readonly load: Effect.Effect<Option.Option<GepaState>, PersistenceError>
  /** saves the state atomically */
  readonly save: (state: GepaState) => Effect.Effect<void, PersistenceError>
  /** a persistent evaluation cache */
  readonly cache?: EvaluationCache<O> | undefined
  /** records an event (e.g. to an append-only log) */
  readonly onEvent?: ((event: GepaEvent) => Effect.Effect<void>) | undefined
  /** true once a graceful stop was requested (e.g. a stop file exists) */
  readonly stopRequested?: Effect.Effect<boolean> | undefined
  /**
   * Write-ahead budget (since 0.2.0): called before adapter calls start,
   * with the iteration paying and the number of examples about to be
   * evaluated (a block of them). On record when it succeeds, so that a
   * process killed while the calls are in flight still has them (a run
   * directory writes it at once and flushes it to disk with the next save,
   * or at once with `syncReservations`). A negative
   * `calls` gives back calls reserved and never started (an evaluation
   * interrupted by a pause).
   */
  readonly reserve?: ((reservation: { readonly iteration: number; readonly calls: number }) => Effect.Effect<void, PersistenceError>) | undefined
  /**
   * Metric calls paid by earlier processes of the run that the loaded state
   * does not count (since 0.2.0), read after `load`: `lost`, reserved calls
   * whose results were never stored (charged once, as lost work), and
   * `owed`, per iteration that paid for them (-1 when unknown), stored
   * results not counted yet (each charged when first used). `owed` shrinks
   * as the owed results are used.
   */
  readonly unaccounted?: Effect.Effect<{ readonly lost: number; readonly owed: ReadonlyMap<number, number> }> | undefined
  /**
   * Appends an entry to a side log of the run (since 0.3.0): what a person
   * reading the run wants and the state does not need, such as the full
   * side information behind each reflection of `optimizeAnything`
   * (`"side_info"`). Like the event log it is diagnostic: a write that fails
   * does not fail the run. A run directory writes `<log>.jsonl`.
   */
  readonly appendLog?: ((log: LogName, entry: unknown) => Effect.Effect<void>) | undefined
  /** called with the final result's best candidate and outputs */
  readonly finish?:
    | ((state: GepaState, stopReason: string, stoppedBy?: StoppedBy | null) => Effect.Effect<void, PersistenceError>)
    | undefined
}

/**
 * The side logs a run may write (`RunStore.appendLog`): `"side_info"`, the
 * full side information behind each reflection of `optimizeAnything`.
 *
 * @since 0.3.0
 * @category models
 */
export type LogName = "side_info"
