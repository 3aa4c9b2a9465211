/**
 * A run directory: the file implementation of `RunStore`. Everything a run
 * needs to continue after a stop or a crash lives in one directory:
 *
 * - `gepa_state.json`: a snapshot of the state, as
 *   `{ schemaVersion, savedAt, generation, candidateCount, state }`, where
 *   `state` leaves out the per-candidate texts and scores. Replaced
 *   atomically (temp file, fsync, rename), so a reader never sees a partial
 *   file, and only when the journal would outgrow it (since 0.3).
 * - `gepa_state.jsonl`: the journal (since 0.3): each save appends one line
 *   `{ g, n, c }`, the change (`c`) that makes generation `g` from the one
 *   before, with `n` candidate lines. A load replays it on the snapshot; a
 *   line cut by a crash is dropped. A save therefore writes what changed,
 *   not the whole state.
 * - `candidates.jsonl`: each candidate's components and validation scores,
 *   one candidate a line, appended once when the candidate is first saved.
 *   These are the bulk of a long run and never change; the state's
 *   `candidateCount` (and each journal line's `n`) says how many lines
 *   belong to it.
 * - `gepa_state.prev.json` and `gepa_state.prev.jsonl`: the snapshot before
 *   it and the journal leading from it to the current one, the fallback when
 *   the current snapshot is unreadable (a corrupt one is kept aside as
 *   `gepa_state.corrupt-<time>.json`).
 * - `cache.jsonl`: the evaluation cache, one entry a line, appended as
 *   evaluations finish; a truncated last line is ignored.
 * - `reservations.jsonl`: the write-ahead budget. Before adapter calls
 *   start, a line `{ i, n, g }` (iteration, examples, save generation) is
 *   appended and fsynced for a block of them, so the calls of a process
 *   killed mid-evaluation are on record (a negative `n` gives back calls
 *   never started; a line `{ g }` notes a directory's first save). On load, the calls on record that the
 *   state neither counts nor finds in the cache are charged as lost work
 *   (`lostMetricCalls`). A line `{ base }` restarts the count (a new log
 *   beside an existing state, or a fresh start on a warm cache).
 * - `events.jsonl`: the event log (without the big state and result
 *   payloads).
 * - `side_info.jsonl`: written by `optimizeAnything` only: the full side
 *   information behind each reflection (`RunStore.appendLog`), one
 *   reflection a line.
 * - `best_candidate.json`: the current best candidate, rewritten when it
 *   changes; `result.json` (and `best_outputs.json`) when the run finishes.
 * - `gepa.lock`: held while a run uses the directory.
 * - `gepa.stop`: create it to stop the run gracefully after the current
 *   iteration. It is removed when a run opens the directory, so that a
 *   stopped run can be resumed without deleting it by hand.
 *
 * Outputs stored in the cache must be JSON values.
 *
 * @since 0.1.0
 */
import { Effect, Layer, type Option, type Scope } from "effect"
import type { ConfigError, PersistenceError } from "./Errors.js"
import * as access from "./internal/runDir/access.js"
import * as Disk from "./internal/runDir/disk.js"
import { FILES as files, type Migrations } from "./internal/runDir/format.js"
import { open } from "./internal/runDir/store.js"
import type * as Result from "./Result.js"
import { type RunStore, RunStoreService } from "./RunStore.js"
import type * as State from "./State.js"

/**
 * The file names inside a run directory.
 *
 * @since 0.1.0
 * @category constants
 */
export const FILES = files

/**
 * The name of a file of a run directory.
 *
 * @since 0.2.0
 * @category models
 */
export type FileName = (typeof FILES)[keyof typeof FILES]

export type {
  /**
   * One line of `candidates.jsonl`.
   *
   * @since 0.1.0
   * @category models
   */
  CandidateLine,
  /**
   * Converts a saved state of an older layout version to the next version:
   * `migrations[v]` takes a version-`v` state and returns a version-`v + 1`
   * state.
   *
   * @since 0.1.0
   * @category models
   */
  Migrations,
  /**
   * The envelope of `gepa_state.json`.
   *
   * @since 0.1.0
   * @category models
   */
  SavedState
} from "./internal/runDir/format.js"

/**
 * Options of a run directory: whether the cache persists and the best outputs
 * are written, the upgrades of older saved states, and whether reservations
 * are flushed to disk one by one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** persist the evaluation cache in `cache.jsonl` (default true) */
  readonly cache?: boolean
  /** write `best_outputs.json` (the best candidate's cached outputs) when the run finishes (default true) */
  readonly trackBestOutputs?: boolean
  /** upgrades of older saved states, keyed by the version they upgrade from */
  readonly migrations?: Migrations
  /**
   * flush every write-ahead reservation to disk before its calls start
   * (default false: a reservation is written before its calls start, which
   * survives the process being killed, and flushed with the next save; with
   * true it also survives the machine going down, at the cost of an fsync
   * per reservation)
   */
  readonly syncReservations?: boolean
}

/**
 * Opens (creating it if needed) a run directory and locks it for the scope.
 * Fails before anything is evaluated when the directory cannot be created or
 * written, or when another live run holds its lock (a `PersistenceError` on
 * `gepa.lock` naming the holder's pid, host and start time). A lock whose
 * process is gone (same host) is taken over.
 *
 * Every file of the directory is read and written through
 * `@effect/platform`'s `FileSystem` and `Path` (since 0.3.0): the ones in
 * the context when it has both (a test's in-memory or recording file
 * system), else Node's, from `@effect/platform-node` (an optional peer,
 * loaded here; without it the run fails with one line saying what to
 * install).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <O>(
  dir: string,
  options?: Options
): Effect.Effect<RunStore<O>, PersistenceError | ConfigError, Scope.Scope> => Effect.flatMap(Disk.resolve(String(dir)), (disk) => open<O>(disk, dir, options))

/**
 * The run store service (`RunStore.RunStoreService`) over a run directory:
 * every run opened through it uses (and locks, for the run's scope) the
 * directory `dir`, so a run resumes from the one before it. The directory's
 * `FileSystem` and `Path` are the ones where the layer is built (e.g.
 * `Layer.provide(RunDir.layer(dir), fileSystemLayer)`), else the run's, else
 * Node's (see `make`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Gepa, RunDir } from "effect-gepa"
 *
 * declare const config: Gepa.Config<{ readonly text: string }, unknown, string>
 *
 * // run again after a stop or a crash: the run resumes from `.gepa-runs/support`
 * const program = Gepa.optimize(config).pipe(Effect.provide(RunDir.layer(".gepa-runs/support")))
 * ```
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (dir: string, options?: Options): Layer.Layer<RunStoreService> =>
  Layer.effect(
    RunStoreService,
    Effect.map(Disk.fromContext, (found) => ({
      open: <O>() => Effect.flatMap(Disk.resolve(String(dir), found), (disk) => open<O>(disk, dir, options))
    }))
  )

/**
 * Reads the saved state of a run directory without locking it (for
 * inspection while a run is going on): the current generation, else the
 * previous one. `None` when the directory holds no state file; fails with a
 * `PersistenceError` naming the file and its first problem when state files
 * are there but none of them is readable.
 *
 * @since 0.1.0
 * @category utils
 */
export const readState: (
  dir: string,
  options?: { readonly migrations?: Migrations }
) => Effect.Effect<Option.Option<State.GepaState>, PersistenceError> = access.readState

/**
 * Writes a file of a run directory atomically (readers see the old or the
 * new content, never a mix), creating the directory if needed. For files
 * the run itself does not write, such as `config.json` and `report.html`.
 *
 * @since 0.2.0
 * @category utils
 */
export const writeFile: (dir: string, name: FileName, content: string) => Effect.Effect<void, PersistenceError> = access.writeFile

/**
 * Reads a file of a run directory; `None` when it does not exist.
 *
 * @since 0.2.0
 * @category utils
 */
export const readFile: (dir: string, name: FileName) => Effect.Effect<Option.Option<string>, PersistenceError> = access.readFile

/**
 * What is at a run directory's path: nothing yet, a directory, or something
 * else (a file), which cannot hold a run.
 *
 * @since 0.3.0
 * @category utils
 */
export const pathKind: (dir: string) => Effect.Effect<"missing" | "directory" | "other", PersistenceError> = access.pathKind

/**
 * Removes a run directory and everything in it (for a run that failed before
 * it scored anything: nothing in it is worth resuming).
 *
 * @since 0.3.0
 * @category utils
 */
export const remove: (dir: string) => Effect.Effect<void, PersistenceError> = access.remove

/**
 * Whether a run directory holds the file `name` (a directory whose file
 * system cannot be had, without `@effect/platform-node`, is a defect here).
 *
 * @since 0.3.0
 * @category utils
 */
export const exists: (dir: string, name: FileName) => Effect.Effect<boolean> = access.exists

/**
 * Whether a directory holds a saved state (`gepa_state.json`).
 *
 * @since 0.3.0
 * @category utils
 */
export const holdsState: (dir: string) => Effect.Effect<boolean> = access.holdsState

/**
 * Whether a directory already holds a run (a saved state, a result or the
 * settings of a `gepa` run): starting a new run there would mix two.
 *
 * @since 0.2.0
 * @category utils
 */
export const holdsRun: (dir: string) => Effect.Effect<boolean> = access.holdsRun

/**
 * Requests a graceful stop of the run using a directory (`gepa.stop`): the
 * run saves its state after the proposals in flight and ends; a resume
 * continues it.
 *
 * @since 0.3.0
 * @category utils
 */
export const requestStop: (dir: string, note: string) => Effect.Effect<void, PersistenceError> = access.requestStop

/**
 * Reads `result.json`; `None` when the run has not finished. Fails with a
 * `PersistenceError` naming the file and its first problem when it is not
 * JSON or not a result.
 *
 * @since 0.2.0
 * @category utils
 */
export const readResult: (dir: string) => Effect.Effect<Option.Option<Result.GepaResult>, PersistenceError> = access.readResult
