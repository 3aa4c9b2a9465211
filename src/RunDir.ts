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
import { Effect, Layer, Option, Schema, type Scope } from "effect"
import type { ConfigError } from "./Errors.js"
import { PersistenceError } from "./Errors.js"
import type { GepaEvent } from "./Event.js"
import { firstIssue } from "./internal/shared/issue.js"
import * as Ledger from "./internal/engine/ledger.js"
import { FILES as files, type Migrations } from "./internal/runDir/format.js"
import { encodeResult, eventLine, parseCandidateLog, parseJournal, replayJournal, stampNow } from "./internal/runDir/format.js"
import { makeOwed, makeReservations, parseReservations } from "./internal/runDir/budget.js"
import { allPayments, emptyIndex, forgetFolded, makeCache, parseCache, settle } from "./internal/runDir/cache.js"
import * as Disk from "./internal/runDir/disk.js"
import { openJournal } from "./internal/runDir/journal.js"
import { bestOutputs, loadState, makeBestFile, openCandidates, openRoot, openSideLogs, readStateFile, stopFile } from "./internal/runDir/open.js"
import * as Result from "./Result.js"
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

const open = <O>(
  disk: Disk.Disk,
  dir: string,
  options?: Options
): Effect.Effect<RunStore<O>, PersistenceError | ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const root = yield* openRoot(disk, dir)
    const file = (name: string) => disk.path.join(root, name)
    // generation of the last save: of the loaded state, then of each save
    let generation = 0
    const currentGeneration = () => generation

    const events = yield* Disk.openAppend(disk, file(FILES.events))
    const heldEvents = holdEvents()
    let finished = false
    // runs before the log's own close: what a resume would not rebuild stays out of it
    yield* Effect.addFinalizer(() => events.post(heldEvents.atClose(finished)))
    const candidates = yield* openCandidates(disk, file(FILES.candidates))
    const journal = yield* openJournal(disk, root)
    const owed = makeOwed()
    const cacheLog = (options?.cache ?? true) ? Option.some(yield* Disk.openAppend(disk, file(FILES.cache))) : Option.none()
    const index = Option.match(cacheLog, { onNone: () => emptyIndex<O>(), onSome: (log) => parseCache<O>(log.text) })
    const cacheDirty = { value: false }
    const cache = Option.map(cacheLog, (log) => makeCache<O>({ log, index, owed, generation: currentGeneration, dirty: cacheDirty }))
    const reservationFile = yield* Disk.openAppend(disk, file(FILES.reservations))
    const reservationLog = parseReservations(reservationFile.text)
    const reservations = makeReservations({
      file: reservationFile,
      log: reservationLog,
      syncEach: options?.syncReservations ?? false,
      generation: currentGeneration
    })

    /**
     * Continues from a saved generation: cached evaluations written after it,
     * or paid for by proposals it still had in flight, are not counted in its
     * metric calls, so they are owed (see `CachedEvaluation.owed`).
     */
    const resumeFrom = (loaded: { readonly state: State.GepaState; readonly generation: number }) =>
      Effect.gen(function*() {
        generation = loaded.generation
        const inFlight = new Set(loaded.state.pending.map((p) => p.iteration))
        for (const p of allPayments(index)) {
          // not counted by the saved state: paid by a proposal in flight at
          // the save or planned after it (or, without an iteration, written after it)
          if (p.i === undefined ? p.g >= generation : inFlight.has(p.i) || p.i > loaded.state.iteration) owed.add(p, 1)
        }
        yield* candidates.keep(loaded.state.candidates.length)
        yield* reservations.settle(Ledger.accounted(loaded.state, owed.left()))
        return Option.some(loaded.state)
      })

    /**
     * No saved state. Cache lines of generation 0 only: the process died
     * before its first save, and nothing it paid for is counted anywhere, so
     * all of it is owed. A later generation means saved states were removed
     * on purpose to start over on a warm cache: then hits are simply free.
     */
    const startFresh = Effect.gen(function*() {
      let everSaved = reservationLog.saved
      for (const p of allPayments(index)) if (p.g > 0) everSaved = true
      if (!everSaved) { for (const p of allPayments(index)) owed.add(p, 1) }
      yield* reservations.settleFresh(owed.left(), everSaved)
      yield* candidates.keep(0)
      yield* journal.startOver
      return Option.none<State.GepaState>()
    })

    const load = loadState({
      disk,
      root,
      migrations: options?.migrations ?? {},
      candidates: candidates.log,
      resume: (snapshot, lines, fromCurrent) => Effect.flatMap(journal.resume(snapshot, lines, { fromCurrent }), resumeFrom),
      fresh: startFresh
    }).pipe(Effect.tap(() => {
      // the payments not owed and the candidate lines read are not needed after the load
      settle(index)
      candidates.release()
    }))

    const best = makeBestFile(disk, root)
    const sideLogs = yield* openSideLogs(disk, root)
    const save = (state: State.GepaState): Effect.Effect<void, PersistenceError> =>
      Effect.gen(function*() {
        // the cache entries and candidates this state relies on reach the
        // disk first, with the reservations of the calls made since the last
        // save; the flushes run side by side (off the event loop), so a save
        // waits about one flush for them, not one per file
        yield* sideLogs.flush
        // the events this state holds: written after its journal line, so that a reader of the
        // event log never sees a candidate the saved state (and so a resumed run) does not have
        const ready = heldEvents.take()
        const flushes: Array<Effect.Effect<void, PersistenceError>> = []
        if (cacheDirty.value && Option.isSome(cacheLog)) flushes.push(cacheLog.value.sync)
        cacheDirty.value = false
        if (reservations.takeDirty()) flushes.push(reservationFile.sync)
        if (yield* candidates.append(state)) flushes.push(candidates.sync)
        yield* Effect.all(flushes, { concurrency: "unbounded", discard: true }).pipe(Effect.onError(() => heldEvents.putBack(ready)))
        yield* journal.save(state, generation + 1, state.candidates.length).pipe(Effect.onError(() => heldEvents.putBack(ready)))
        generation++
        // the events since the last save go out in one write (the event log is diagnostic)
        yield* events.post(ready.text)
        yield* events.flush
        yield* reservations.markSaved(generation)
        yield* best.writeIfChanged(state)
        forgetFolded(index, state)
      })

    const finish = (state: State.GepaState, stopReason: string, stoppedBy: Result.StoppedBy | null = null): Effect.Effect<void, PersistenceError> =>
      Effect.gen(function*() {
        yield* best.write(state)
        yield* Disk.writeAtomic(disk, root, FILES.result, JSON.stringify(encodeResult(Result.fromState(state, stopReason, stoppedBy)), null, 2) + "\n")
        if ((options?.trackBestOutputs ?? true) && Option.isSome(cacheLog)) {
          yield* Disk.writeAtomic(disk, root, FILES.bestOutputs, JSON.stringify(bestOutputs(state, index), null, 2) + "\n")
        }
        yield* Disk.syncDir(disk, root)
        finished = true
      })

    return {
      location: root,
      durable: true,
      load,
      save,
      cache,
      // the event log is diagnostic: written with the next save (or every 64 kB), and a full disk does not fail the run here
      onEvent: (event: GepaEvent) => Effect.sync(() => heldEvents.add(event._tag, JSON.stringify({ ts: stampNow(), ...(eventLine(event) as object) }) + "\n")),
      appendLog: sideLogs.append,
      stopRequested: stopFile(disk, root),
      finish,
      reserve: reservations.reserve,
      unaccounted: Effect.sync(() => ({ lost: reservations.lostAtLoad(), owed: owed.byIteration() }))
    }
  })

/** Events that tell what a fold changed: candidates, scores, the state after an iteration. */
const stateEvents: ReadonlySet<GepaEvent["_tag"]> = new Set<GepaEvent["_tag"]>([
  "ValsetEvaluated",
  "CandidateAccepted",
  "CandidateRejected",
  "MergeAccepted",
  "ProposalEnded",
  "IterationEnded"
])

/**
 * The event lines posted since the last save, held until the save's journal
 * line is written. At the close of a run that did not finish (interrupted,
 * or failed), the lines before the first event of a fold the saved state
 * lacks still go out; the rest never do, as if the process had been killed.
 */
const holdEvents = () => {
  let held = ""
  // where the first line describing an unsaved fold starts (-1: none held)
  let unsavedFrom = -1
  return {
    add: (tag: GepaEvent["_tag"], line: string) => {
      if (unsavedFrom < 0 && stateEvents.has(tag)) unsavedFrom = held.length
      held += line
    },
    /** every line held, for the save that holds what they describe */
    take: (): { readonly text: string; readonly unsavedFrom: number } => {
      const out = { text: held, unsavedFrom }
      held = ""
      unsavedFrom = -1
      return out
    },
    /** a save that failed: its lines are held again, before the ones posted since */
    putBack: (taken: { readonly text: string; readonly unsavedFrom: number }) =>
      Effect.sync(() => {
        unsavedFrom = taken.unsavedFrom >= 0 ? taken.unsavedFrom : unsavedFrom < 0 ? -1 : taken.text.length + unsavedFrom
        held = taken.text + held
      }),
    atClose: (finished: boolean): string => finished || unsavedFrom < 0 ? held : held.slice(0, unsavedFrom)
  }
}

/** The directory's file system (see `make`) for the utilities below; `orDie` for those that cannot fail. */
const onDisk = <A, E>(dir: string, f: (disk: Disk.Disk, root: string) => Effect.Effect<A, E>): Effect.Effect<A, E | PersistenceError> =>
  Effect.flatMap(Disk.resolve(String(dir)), (disk) => f(disk, disk.path.resolve(dir)))

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
export const readState = (
  dir: string,
  options?: { readonly migrations?: Migrations }
): Effect.Effect<Option.Option<State.GepaState>, PersistenceError> =>
  onDisk(dir, (disk, root) =>
    Effect.gen(function*() {
      const read = (name: string) => Disk.readText(disk, disk.path.join(root, name))
      const candidates = parseCandidateLog(Option.getOrElse(yield* read(FILES.candidates), () => ""))
      let corrupt: { readonly file: string; readonly detail: string } | undefined
      for (const name of [FILES.state, FILES.prev]) {
        const r = yield* readStateFile(disk, disk.path.join(root, name), options?.migrations ?? {}, candidates)
        if (r._tag === "ok") {
          const journals: Array<ReturnType<typeof parseJournal>["lines"]> = []
          for (const log of [FILES.prevJournal, FILES.journal]) journals.push(parseJournal(Option.getOrElse(yield* read(log), () => "")).lines)
          return Option.some(replayJournal(r, journals.flat(), candidates).state)
        }
        if (r._tag === "corrupt" && corrupt === undefined) corrupt = { file: disk.path.join(root, name), detail: r.detail }
      }
      if (corrupt !== undefined) {
        return yield* Effect.fail(new PersistenceError({ path: corrupt.file, operation: "read", detail: corrupt.detail }))
      }
      return Option.none()
    }))

/**
 * Writes a file of a run directory atomically (readers see the old or the
 * new content, never a mix), creating the directory if needed. For files
 * the run itself does not write, such as `config.json` and `report.html`.
 *
 * @since 0.2.0
 * @category utils
 */
export const writeFile = (dir: string, name: FileName, content: string): Effect.Effect<void, PersistenceError> =>
  onDisk(dir, (disk, root) =>
    Effect.zipRight(
      Effect.mapError(disk.fs.makeDirectory(root, { recursive: true }), Disk.failed(disk.path.join(root, name), "write")),
      Disk.writeAtomic(disk, root, name, content)
    ))

/**
 * Reads a file of a run directory; `None` when it does not exist.
 *
 * @since 0.2.0
 * @category utils
 */
export const readFile = (dir: string, name: FileName): Effect.Effect<Option.Option<string>, PersistenceError> =>
  onDisk(dir, (disk, root) => Disk.readText(disk, disk.path.join(root, name)))

/**
 * What is at a run directory's path: nothing yet, a directory, or something
 * else (a file), which cannot hold a run.
 *
 * @since 0.3.0
 * @category utils
 */
export const pathKind = (dir: string): Effect.Effect<"missing" | "directory" | "other", PersistenceError> => onDisk(dir, (disk, root) => Disk.kind(disk, root))

/**
 * Removes a run directory and everything in it (for a run that failed before
 * it scored anything: nothing in it is worth resuming).
 *
 * @since 0.3.0
 * @category utils
 */
export const remove = (dir: string): Effect.Effect<void, PersistenceError> => onDisk(dir, (disk, root) => Disk.remove(disk, root, "remove", true))

/**
 * Whether a run directory holds the file `name` (a directory whose file
 * system cannot be had, without `@effect/platform-node`, is a defect here).
 *
 * @since 0.3.0
 * @category utils
 */
export const exists = (dir: string, name: FileName): Effect.Effect<boolean> =>
  Effect.orDie(onDisk(dir, (disk, root) => Disk.exists(disk, disk.path.join(root, name))))

/**
 * Whether a directory holds a saved state (`gepa_state.json`).
 *
 * @since 0.3.0
 * @category utils
 */
export const holdsState = (dir: string): Effect.Effect<boolean> => exists(dir, FILES.state)

/**
 * Whether a directory already holds a run (a saved state, a result or the
 * settings of a `gepa` run): starting a new run there would mix two.
 *
 * @since 0.2.0
 * @category utils
 */
export const holdsRun = (dir: string): Effect.Effect<boolean> =>
  Effect.map(
    Effect.forEach([FILES.state, FILES.prev, FILES.result, FILES.config], (name) => exists(dir, name)),
    (found) => found.some((x) => x)
  )

/**
 * Requests a graceful stop of the run using a directory (`gepa.stop`): the
 * run saves its state after the proposals in flight and ends; a resume
 * continues it.
 *
 * @since 0.3.0
 * @category utils
 */
export const requestStop = (dir: string, note: string): Effect.Effect<void, PersistenceError> =>
  onDisk(dir, (disk, root) => {
    const file = disk.path.join(root, FILES.stop)
    return Effect.mapError(disk.fs.writeFileString(file, note), Disk.failed(file, "write"))
  })

const decodeResult = Schema.decodeUnknownEither(Result.GepaResult)

/**
 * Reads `result.json`; `None` when the run has not finished. Fails with a
 * `PersistenceError` naming the file and its first problem when it is not
 * JSON or not a result.
 *
 * @since 0.2.0
 * @category utils
 */
export const readResult = (dir: string): Effect.Effect<Option.Option<Result.GepaResult>, PersistenceError> =>
  Effect.gen(function*() {
    const text = yield* readFile(dir, FILES.result)
    if (Option.isNone(text)) return Option.none()
    const file = yield* onDisk(dir, (disk, root) => Effect.succeed(disk.path.join(root, FILES.result)))
    const fail = (detail: string) => Effect.fail(new PersistenceError({ path: file, operation: "read", detail }))
    let json: unknown
    try {
      json = JSON.parse(text.value)
    } catch (e) {
      return yield* fail(`not valid JSON (${e instanceof Error ? e.message : String(e)})`)
    }
    const decoded = decodeResult(json)
    if (decoded._tag === "Left") return yield* fail(`not a GEPA result: ${firstIssue(decoded.left)}`)
    return Option.some(decoded.right)
  })
