/**
 * Where a run keeps its state between iterations. The engine loads from it at
 * the start (to resume), saves after every iteration that changed the state,
 * writes events to it, and asks it whether a stop was requested. The file
 * implementation is the run directory; without one, nothing is persisted.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Ref, type Scope } from "effect"
import type { ConfigError, PersistenceError } from "./Errors.js"
import type { EvaluationCache } from "./EvaluationCache.js"
import type { GepaEvent } from "./Event.js"
import type { StoppedBy } from "./Result.js"
import type { GepaState } from "./State.js"

/**
 * A run's persistence. Every member is there: a run without a folder gets
 * a store whose operations do nothing (`none`) or keep the state in memory
 * (`memory`), chosen by the caller, never a missing member.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunStore<O> {
  /** a human-readable location, used in events and errors */
  readonly location: string
  /**
   * whether saves outlive the process (since 0.3.0): the engine announces
   * each save (`StateSaved`) and reserves budget ahead of adapter calls
   * (`reserve`) only for a durable store
   */
  readonly durable: boolean
  /** the saved state, if any */
  readonly load: Effect.Effect<Option.Option<GepaState>, PersistenceError>
  /** saves the state atomically */
  readonly save: (state: GepaState) => Effect.Effect<void, PersistenceError>
  /** a persistent evaluation cache (since 0.3.0 an `Option`: none when the store keeps no cache) */
  readonly cache: Option.Option<EvaluationCache<O>>
  /** records an event (e.g. to an append-only log) */
  readonly onEvent: (event: GepaEvent) => Effect.Effect<void>
  /** true once a graceful stop was requested (e.g. a stop file exists) */
  readonly stopRequested: Effect.Effect<boolean>
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
  readonly reserve: (reservation: { readonly iteration: number; readonly calls: number }) => Effect.Effect<void, PersistenceError>
  /**
   * Metric calls paid by earlier processes of the run that the loaded state
   * does not count (since 0.2.0), read after `load`: `lost`, reserved calls
   * whose results were never stored (charged once, as lost work), and
   * `owed`, per iteration that paid for them (-1 when unknown), stored
   * results not counted yet (each charged when first used). `owed` shrinks
   * as the owed results are used.
   */
  readonly unaccounted: Effect.Effect<Unaccounted>
  /**
   * Appends an entry to a side log of the run (since 0.3.0): what a person
   * reading the run wants and the state does not need, such as the full
   * side information behind each reflection of `optimizeAnything`
   * (`"side_info"`). Like the event log it is diagnostic: a write that fails
   * does not fail the run. A run directory writes `<log>.jsonl`.
   */
  readonly appendLog: (log: LogName, entry: unknown) => Effect.Effect<void>
  /** called with the final result's best candidate and outputs */
  readonly finish: (state: GepaState, stopReason: string, stoppedBy?: StoppedBy | null) => Effect.Effect<void, PersistenceError>
}

/**
 * What earlier processes of a run paid that the loaded state does not count
 * (`RunStore.unaccounted`).
 *
 * @since 0.3.0
 * @category models
 */
export interface Unaccounted {
  readonly lost: number
  readonly owed: ReadonlyMap<number, number>
}

const nothingUnaccounted: Unaccounted = { lost: 0, owed: new Map() }

// the stores `none` made: a run may skip work that only matters to a store that keeps what it is given
const keepsNothing = new WeakSet<object>()

/**
 * The store of a run that keeps nothing: loads find no state, saves and
 * logs do nothing, no stop is ever requested.
 *
 * @since 0.3.0
 * @category constructors
 */
export const none = <O>(): RunStore<O> => {
  const store: RunStore<O> = {
    location: "(not saved)",
    durable: false,
    load: Effect.succeed(Option.none()),
    save: () => Effect.void,
    cache: Option.none(),
    onEvent: () => Effect.void,
    stopRequested: Effect.succeed(false),
    reserve: () => Effect.void,
    unaccounted: Effect.succeed(nothingUnaccounted),
    appendLog: () => Effect.void,
    finish: () => Effect.void
  }
  keepsNothing.add(store)
  return store
}

/**
 * Whether a store was made by `none` and so keeps nothing it is given (a
 * state it saves may change afterwards without anyone seeing it).
 *
 * @since 0.3.0
 * @category guards
 */
export const isNone = <O>(store: RunStore<O>): boolean => keepsNothing.has(store)

/**
 * What a memory store holds (`memory`): the last state saved, the side-log
 * entries recorded, and the stop reason once the run finished.
 *
 * @since 0.3.0
 * @category models
 */
export interface Memory {
  readonly state: Option.Option<GepaState>
  readonly logs: ReadonlyArray<{ readonly log: LogName; readonly entry: unknown }>
  readonly finished: Option.Option<string>
}

/**
 * An empty memory for `memory`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const emptyMemory: Memory = { state: Option.none(), logs: [], finished: Option.none() }

/**
 * A store that keeps the run in memory (for tests): `load` returns the last
 * state saved in the same `Ref`, so a second run on it resumes the first.
 * Not durable: the engine reserves no budget ahead and announces no saves.
 *
 * @since 0.3.0
 * @category constructors
 */
export const memory = <O>(ref: Ref.Ref<Memory>): RunStore<O> => ({
  location: "(memory)",
  durable: false,
  load: Effect.map(Ref.get(ref), (m) => m.state),
  save: (state) => Ref.update(ref, (m) => ({ ...m, state: Option.some(state) })),
  cache: Option.none(),
  // not kept: a run without a durable store builds no events for its store
  onEvent: () => Effect.void,
  stopRequested: Effect.succeed(false),
  reserve: () => Effect.void,
  unaccounted: Effect.succeed(nothingUnaccounted),
  appendLog: (log, entry) => Ref.update(ref, (m) => ({ ...m, logs: [...m.logs, { log, entry }] })),
  finish: (state, stopReason) => Ref.update(ref, (m) => ({ ...m, state: Option.some(state), finished: Option.some(stopReason) }))
})

/**
 * The run store as a service: `open` gives the store of one run, for the
 * run's scope (a run directory is locked while it is open). `Gepa.optimize`
 * uses it when the config names neither `store` nor `runDir`; without it a
 * run keeps nothing. Layers: `RunDir.layer` (a run directory),
 * `layerMemory` (tests), `layerNone`.
 *
 * @since 0.3.0
 * @category tags
 */
export class RunStoreService extends Context.Tag("effect-gepa/RunStore")<RunStoreService, {
  readonly open: <O>() => Effect.Effect<RunStore<O>, PersistenceError | ConfigError, Scope.Scope>
}>() {}

/**
 * The memory behind `layerMemory`.
 *
 * @since 0.3.0
 * @category tags
 */
export class MemoryRef extends Context.Tag("effect-gepa/RunStore/MemoryRef")<MemoryRef, Ref.Ref<Memory>>() {}

/**
 * The service whose runs keep nothing.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerNone: Layer.Layer<RunStoreService> = Layer.succeed(RunStoreService, {
  open: <O>() => Effect.succeed(none<O>())
})

/**
 * The service for tests: every run opened through it shares one memory, so
 * a run resumes from the state the previous one saved. Read the memory with
 * `MemoryRef`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerMemory: Layer.Layer<RunStoreService | MemoryRef> = Layer.effectContext(
  Effect.map(Ref.make(emptyMemory), (ref) => Context.make(RunStoreService, { open: <O>() => Effect.succeed(memory<O>(ref)) }).pipe(Context.add(MemoryRef, ref)))
)

/**
 * The side logs a run may write (`RunStore.appendLog`): `"side_info"`, the
 * full side information behind each reflection of `optimizeAnything`.
 *
 * @since 0.3.0
 * @category models
 */
export type LogName = "side_info"
