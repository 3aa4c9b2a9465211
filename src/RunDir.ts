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
import * as fs from "node:fs"
import * as path from "node:path"
import * as Candidate from "./Candidate.js"
import { ConfigError, PersistenceError } from "./Errors.js"
import * as EvaluationCache from "./EvaluationCache.js"
import type { GepaEvent } from "./Event.js"
import { firstIssue } from "./internal/issue.js"
import {
  acquireLock,
  attempt,
  type CandidateLog,
  type Decoded,
  encodeResult,
  errorText,
  eventLine,
  flush,
  fsyncDir,
  isCode,
  openJournal,
  openLog,
  parseCandidateLog,
  parseJournal,
  readStateFile,
  releaseLock,
  replayJournal,
  stampNow,
  writeAtomic
} from "./internal/runDir.js"
import { type CandidateLine, FILES as files, type Migrations } from "./internal/runDir.js"
import * as Ledger from "./internal/ledger.js"
import { makeOwed, makeReservations, parseReservations } from "./internal/runDirBudget.js"
import { allPayments, type CacheIndex, emptyIndex, makeCache, parseCache } from "./internal/runDirCache.js"
import * as Result from "./Result.js"
import { type LogName, type RunStore, RunStoreService } from "./RunStore.js"
import * as State from "./State.js"

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

/**
 * `Migrations` (upgrades of older saved states), `SavedState` (the envelope
 * of `gepa_state.json`) and `CandidateLine` (one line of `candidates.jsonl`),
 * declared with the file mechanics that read them.
 *
 * @since 0.1.0
 * @category models
 */
export type { CandidateLine, Migrations, SavedState } from "./internal/runDir.js"

/**
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
 * @since 0.1.0
 * @category constructors
 */
export const make = <O>(
  dir: string,
  options?: Options
): Effect.Effect<RunStore<O>, PersistenceError | ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const root = yield* openRoot(dir)
    const file = (name: string) => path.join(root, name)
    // generation of the last save: of the loaded state, then of each save
    let generation = 0
    const currentGeneration = () => generation

    const events = yield* openAppend(file(FILES.events))
    const candidates = yield* openCandidates(file(FILES.candidates))
    const journal = yield* openJournal(root)
    const owed = makeOwed()
    const cacheLog = (options?.cache ?? true) ? Option.some(yield* openAppend(file(FILES.cache))) : Option.none()
    const index = Option.match(cacheLog, { onNone: () => emptyIndex<O>(), onSome: (log) => parseCache<O>(log.text) })
    const cacheDirty = { value: false }
    const cache = Option.map(cacheLog, (log) =>
      makeCache<O>({ file: file(FILES.cache), fd: log.fd, index, owed, generation: currentGeneration, dirty: cacheDirty }))
    const reservationFile = yield* openAppend(file(FILES.reservations))
    const reservationLog = parseReservations(reservationFile.text)
    const reservations = makeReservations({
      file: file(FILES.reservations),
      fd: reservationFile.fd,
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
        const inFlight = new Set(loaded.state.pending.map((p) =>
          p.iteration
        ))
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
      root,
      migrations: options?.migrations ?? {},
      candidates: () => candidates.log(),
      resume: (snapshot, fromCurrent) => Effect.flatMap(journal.resume(snapshot, candidates.log(), { fromCurrent }), resumeFrom),
      fresh: startFresh
    })

    const best = makeBestFile(root)
    const save = (state: State.GepaState): Effect.Effect<void, PersistenceError> =>
      Effect.gen(function*() {
        // the cache entries and candidates this state relies on reach the
        // disk first, with the reservations of the calls made since the last
        // save; the flushes run side by side (off the event loop), so a save
        // waits about one flush for them, not one per file
        const flushes: Array<readonly [string, number]> = []
        if (cacheDirty.value && Option.isSome(cacheLog)) flushes.push([file(FILES.cache), cacheLog.value.fd])
        cacheDirty.value = false
        if (reservations.takeDirty()) flushes.push([file(FILES.reservations), reservationFile.fd])
        if (yield* candidates.append(state)) flushes.push([file(FILES.candidates), candidates.fd])
        yield* Effect.forEach(flushes, ([name, fd]) => flush(name, fd), { concurrency: "unbounded", discard: true })
        yield* journal.save(state, generation + 1, state.candidates.length)
        generation++
        yield* attempt(file(FILES.state), "save", () => {
          reservations.markSaved(generation)
          best.writeIfChanged(state)
        })
      })

    const onEvent = (event: GepaEvent): Effect.Effect<void> =>
      Effect.sync(() => {
        try {
          fs.writeSync(events.fd, JSON.stringify({ ts: stampNow(), ...(eventLine(event) as object) }) + "\n")
        } catch {
          // the event log is diagnostic: a full disk must not fail the run here (save will report it)
        }
      })

    const finish = (state: State.GepaState, stopReason: string, stoppedBy: Result.StoppedBy | null = null): Effect.Effect<void, PersistenceError> =>
      attempt(file(FILES.result), "write", () => {
        best.write(state)
        writeAtomic(root, FILES.result, JSON.stringify(encodeResult(Result.fromState(state, stopReason, stoppedBy)), null, 2) + "\n")
        if ((options?.trackBestOutputs ?? true) && Option.isSome(cacheLog)) {
          writeAtomic(root, FILES.bestOutputs, JSON.stringify(bestOutputs(state, index), null, 2) + "\n")
        }
        fsyncDir(root)
      })

    return {
      location: root,
      durable: true,
      load,
      save,
      cache,
      onEvent,
      appendLog: yield* openSideLogs(root),
      stopRequested: Effect.sync(() => fs.existsSync(file(FILES.stop))),
      finish,
      reserve: reservations.reserve,
      unaccounted: Effect.sync(() => ({ lost: reservations.lostAtLoad(), owed: owed.byIteration() }))
    }
  })

/**
 * The run store service (`RunStore.RunStoreService`) over a run directory:
 * every run opened through it uses (and locks, for the run's scope) the
 * directory `dir`, so a run resumes from the one before it.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (dir: string, options?: Options): Layer.Layer<RunStoreService> => Layer.succeed(RunStoreService, { open: <O>() => make<O>(dir, options) })

/**
 * Checks, creates and locks the run directory for the scope; removes the
 * stop file of the run that was stopped with it (it would end the resumed
 * run at once) and the temporary files of a save cut short by a crash.
 */
const openRoot = (dir: string): Effect.Effect<string, PersistenceError | ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    if (typeof dir !== "string" || dir.length === 0) {
      return yield* Effect.fail(new ConfigError({ field: "runDir", detail: "expected a non-empty directory path" }))
    }
    const root = path.resolve(dir)
    yield* attempt(root, "create the run directory", () => {
      fs.mkdirSync(root, { recursive: true })
      if (!fs.statSync(root).isDirectory()) throw new Error("exists and is not a directory")
      fs.accessSync(root, fs.constants.W_OK | fs.constants.R_OK)
    })
    yield* Effect.acquireRelease(acquireLock(root), (l) => Effect.sync(() => releaseLock(root, l)))
    const stop = path.join(root, FILES.stop)
    yield* attempt(stop, "remove the old stop file", () => fs.rmSync(stop, { force: true }))
    yield* attempt(root, "clean temporary files", () => {
      for (const name of fs.readdirSync(root)) {
        if (name.startsWith(".") && name.includes(".tmp-")) fs.rmSync(path.join(root, name), { force: true })
      }
    })
    return root
  })

/** Opens an append-only log for the scope: its complete lines (a cut last line is removed) and a descriptor to append to. */
const openAppend = (file: string) =>
  Effect.acquireRelease(
    attempt(file, "open", () => {
      const text = openLog(file)
      return { fd: fs.openSync(file, "a"), text }
    }),
    ({ fd }) => Effect.sync(() => fs.closeSync(fd))
  )

/**
 * `candidates.jsonl`: one line per candidate, appended when a save first
 * includes it; `keep` cuts lines a lost generation left past the loaded
 * state's count.
 */
const openCandidates = (file: string) =>
  Effect.gen(function*() {
    const opened = yield* openAppend(file)
    let log = parseCandidateLog(opened.text)
    // candidate lines that belong to the state in use (after load, or saved since)
    let written = 0
    const cut = (count: number) => {
      // a state whose candidates are not in the log (saved whole, as 0.2
      // did) has its candidates appended by the next save
      const kept = Math.min(count, log.lines.length)
      fs.truncateSync(file, log.ends[kept - 1] ?? 0)
      log = { lines: log.lines.slice(0, kept), ends: log.ends.slice(0, kept) }
      written = kept
    }
    return {
      fd: opened.fd,
      log: () => log,
      keep: (count: number) => attempt(file, "truncate", () => cut(count)),
      /** appends the candidates new since the last save; true when something was written (to flush) */
      append: (state: State.GepaState) =>
        attempt(file, "append to", () => {
          const count = state.candidates.length
          // not reached by the engine (candidates are only ever added); kept
          // so that the file always matches the state that was saved
          if (count < written) cut(count)
          if (count === written) return false
          let offset = log.ends[written - 1] ?? 0
          let chunk = ""
          for (let i = written; i < count; i++) {
            const line: CandidateLine = {
              i,
              candidate: state.candidates[i],
              valScores: state.valScores[i],
              objectiveScores: state.objectiveScores[i]
            }
            const text = JSON.stringify(line) + "\n"
            offset += Buffer.byteLength(text)
            log.lines.push(line)
            log.ends.push(offset)
            chunk += text
          }
          fs.writeSync(opened.fd, chunk)
          written = count
          return true
        })
    }
  })

/**
 * Reads the saved state: the current snapshot with its journal, else the
 * previous snapshot with both journals (a corrupt current snapshot is moved
 * aside as `gepa_state.corrupt-<time>.json`), else nothing (`fresh`); fails
 * when state files are there and none is readable.
 */
const loadState = (o: {
  readonly root: string
  readonly migrations: Migrations
  readonly candidates: () => CandidateLog
  readonly resume: (
    snapshot: Extract<Decoded, { readonly _tag: "ok" }>,
    fromCurrent: boolean
  ) => Effect.Effect<Option.Option<State.GepaState>, PersistenceError>
  readonly fresh: Effect.Effect<Option.Option<State.GepaState>, PersistenceError>
}): Effect.Effect<Option.Option<State.GepaState>, PersistenceError> =>
  Effect.gen(function*() {
    const file = (name: string) => path.join(o.root, name)
    const current = yield* readStateFile(file(FILES.state), o.migrations, o.candidates())
    if (current._tag === "ok") return yield* o.resume(current, true)
    const previous = yield* readStateFile(file(FILES.prev), o.migrations, o.candidates())
    if (previous._tag === "ok") {
      if (current._tag === "corrupt") {
        const aside = file(`gepa_state.corrupt-${stampNow().replace(/[:.]/g, "-")}.json`)
        yield* attempt(file(FILES.state), "move the corrupt state file aside", () => fs.renameSync(file(FILES.state), aside))
      }
      return yield* o.resume(previous, false)
    }
    if (current._tag === "missing" && previous._tag === "missing") return yield* o.fresh
    const problems = [
      current._tag === "corrupt" ? `${FILES.state}: ${current.detail}` : `${FILES.state}: missing`,
      previous._tag === "corrupt" ? `${FILES.prev}: ${previous.detail}` : `${FILES.prev}: missing`
    ]
    return yield* Effect.fail(
      new PersistenceError({
        path: current._tag === "corrupt" ? file(FILES.state) : file(FILES.prev),
        operation: "load",
        detail: `no readable saved state (${problems.join("; ")}); move the run directory's state files away to start over`
      })
    )
  })

/** `best_candidate.json`: written when the best candidate (or its score) changes, and at the end. */
const makeBestFile = (root: string) => {
  let last: string | undefined
  const write = (state: State.GepaState) => {
    const best = State.bestIndex(state)
    writeAtomic(
      root,
      FILES.best,
      JSON.stringify(
        {
          index: best,
          score: State.scoreOf(state)(best),
          iteration: state.iteration,
          candidate: state.candidates[best]
        },
        null,
        2
      ) + "\n"
    )
  }
  return {
    write,
    writeIfChanged: (state: State.GepaState) => {
      const best = State.bestIndex(state)
      const key = `${best}:${State.scoreOf(state)(best)}`
      if (key === last) return
      last = key
      write(state)
      fsyncDir(root)
    }
  }
}

/** The best candidate's cached outputs on the validation set (`best_outputs.json`). */
const bestOutputs = <O>(state: State.GepaState, index: CacheIndex<O>) => {
  const best = State.bestIndex(state)
  const candidate = state.candidates[best]
  const outputs: Record<string, { output: unknown; score: number }> = {}
  if (candidate === undefined) return { candidate: best, outputs }
  const hash = Candidate.hash(candidate)
  // cache keys hold the example's content hash (the id in runs from before 0.2)
  const print = state.fingerprint?.valset
  const contentOf = new Map<string, string | undefined>(print === undefined ? [] : print.ids.map((id, i) => [id, print.hashes[i]] as const))
  for (const id of Object.keys(state.valScores[best] ?? {})) {
    const hit = index.entries.get(EvaluationCache.keyString({ candidateHash: hash, split: "val", id, contentHash: contentOf.get(id) }))
    if (hit !== undefined) outputs[id] = { output: hit.output, score: hit.score }
  }
  return { candidate: best, outputs }
}

/** Side logs (`RunStore.appendLog`), opened on their first entry: most runs never write one. */
const openSideLogs = (root: string) =>
  Effect.gen(function*() {
    const fds = new Map<LogName, number>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const fd of fds.values()) fs.closeSync(fd)
      })
    )
    const names: Record<LogName, string> = { side_info: FILES.sideInfo }
    return (log: LogName, entry: unknown): Effect.Effect<void> =>
      Effect.sync(() => {
        try {
          let fd = fds.get(log)
          if (fd === undefined) {
            const file = path.join(root, names[log])
            openLog(file)
            fd = fs.openSync(file, "a")
            fds.set(log, fd)
          }
          fs.writeSync(fd, JSON.stringify({ ts: stampNow(), ...(entry as object) }) + "\n")
        } catch {
          // diagnostic, like the event log: a full disk must not fail the run here (save will report it)
        }
      })
  })

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
  Effect.gen(function*() {
    const root = path.resolve(dir)
    const candidates = yield* attempt(path.join(root, FILES.candidates), "read", () =>
      parseCandidateLog(fs.existsSync(path.join(root, FILES.candidates)) ? fs.readFileSync(path.join(root, FILES.candidates), "utf8") : ""))
    let corrupt: { readonly file: string; readonly detail: string } | undefined
    for (const name of [FILES.state, FILES.prev]) {
      const r = yield* readStateFile(path.join(root, name), options?.migrations ?? {}, candidates)
      if (r._tag === "ok") {
        const journals = yield* attempt(path.join(root, FILES.journal), "read", () =>
          [FILES.prevJournal, FILES.journal].flatMap((log) => {
            const f = path.join(root, log)
            return fs.existsSync(f) ? parseJournal(fs.readFileSync(f, "utf8")).lines : []
          }))
        return Option.some(replayJournal(r, journals, candidates).state)
      }
      if (r._tag === "corrupt" && corrupt === undefined) {
        corrupt = { file: path.join(root, name), detail: r.detail }
      }
    }
    if (corrupt !== undefined) {
      return yield* Effect.fail(new PersistenceError({ path: corrupt.file, operation: "read", detail: corrupt.detail }))
    }
    return Option.none()
  })

/**
 * Writes a file of a run directory atomically (readers see the old or the
 * new content, never a mix), creating the directory if needed. For files
 * the run itself does not write, such as `config.json` and `report.html`.
 *
 * @since 0.2.0
 * @category utils
 */
export const writeFile = (dir: string, name: FileName, content: string): Effect.Effect<void, PersistenceError> =>
  attempt(path.join(path.resolve(dir), name), "write", () => {
    const root = path.resolve(dir)
    fs.mkdirSync(root, { recursive: true })
    writeAtomic(root, name, content)
  })

/**
 * Reads a file of a run directory; `None` when it does not exist.
 *
 * @since 0.2.0
 * @category utils
 */
export const readFile = (dir: string, name: FileName): Effect.Effect<Option.Option<string>, PersistenceError> => {
  const file = path.join(path.resolve(dir), name)
  return attempt(file, "read", () => {
    try {
      return Option.some(fs.readFileSync(file, "utf8"))
    } catch (e) {
      if (isCode(e, "ENOENT")) return Option.none()
      throw e
    }
  })
}

/**
 * What is at a run directory's path: nothing yet, a directory, or something
 * else (a file), which cannot hold a run.
 *
 * @since 0.3.0
 * @category utils
 */
export const pathKind = (dir: string): Effect.Effect<"missing" | "directory" | "other", PersistenceError> =>
  attempt(path.resolve(dir), "inspect", () => {
    try {
      return fs.statSync(dir).isDirectory() ? "directory" : "other"
    } catch (e) {
      if (isCode(e, "ENOENT")) return "missing"
      throw e
    }
  })

/**
 * Removes a run directory and everything in it (for a run that failed before
 * it scored anything: nothing in it is worth resuming).
 *
 * @since 0.3.0
 * @category utils
 */
export const remove = (dir: string): Effect.Effect<void, PersistenceError> =>
  attempt(path.resolve(dir), "remove", () => fs.rmSync(dir, { recursive: true, force: true }))

/**
 * Whether a run directory holds the file `name`.
 *
 * @since 0.3.0
 * @category utils
 */
export const exists = (dir: string, name: FileName): Effect.Effect<boolean> => Effect.sync(() => fs.existsSync(path.join(path.resolve(dir), name)))

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
  Effect.sync(() => [FILES.state, FILES.prev, FILES.result, FILES.config].some((name) => fs.existsSync(path.join(path.resolve(dir), name))))

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
    const file = path.join(path.resolve(dir), FILES.result)
    const text = yield* readFile(dir, FILES.result)
    if (Option.isNone(text)) return Option.none()
    const fail = (detail: string) => Effect.fail(new PersistenceError({ path: file, operation: "read", detail }))
    let json: unknown
    try {
      json = JSON.parse(text.value)
    } catch (e) {
      return yield* fail(`not valid JSON (${errorText(e)})`)
    }
    const decoded = decodeResult(json)
    if (decoded._tag === "Left") return yield* fail(`not a GEPA result: ${firstIssue(decoded.left)}`)
    return Option.some(decoded.right)
  })
