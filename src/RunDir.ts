/**
 * A run directory: the file implementation of `RunStore`. Everything a run
 * needs to continue after a stop or a crash lives in one directory:
 *
 * - `gepa_state.json`: the state after the last completed iteration, as
 *   `{ schemaVersion, savedAt, generation, candidateCount, state }`, where
 *   `state` leaves out the per-candidate texts and scores. Replaced
 *   atomically (temp file, fsync, rename), so a reader never sees a partial
 *   file.
 * - `candidates.jsonl`: each candidate's components and validation scores,
 *   one candidate a line, appended once when the candidate is first saved.
 *   These are the bulk of a long run and never change, so a save writes only
 *   the new ones plus the small `gepa_state.json`; the state file's
 *   `candidateCount` says how many lines belong to it.
 * - `gepa_state.prev.json`: the generation before it, the fallback when the
 *   current file is unreadable (a corrupt current file is kept aside as
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
 * - `best_candidate.json`: the current best candidate, rewritten on every
 *   save; `result.json` (and `best_outputs.json`) when the run finishes.
 * - `gepa.lock`: held while a run uses the directory.
 * - `gepa.stop`: create it to stop the run gracefully after the current
 *   iteration. It is removed when a run opens the directory, so that a
 *   stopped run can be resumed without deleting it by hand.
 *
 * Outputs stored in the cache must be JSON values.
 *
 * @since 0.1.0
 */
import { Effect, Option, Schema, type Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Candidate from "./Candidate.js"
import { ConfigError, PersistenceError } from "./Errors.js"
import * as EvaluationCache from "./EvaluationCache.js"
import type { GepaEvent } from "./Event.js"
import { firstIssue } from "./internal/issue.js"
import * as Ledger from "./internal/ledger.js"
import {
  CacheLine,
  acquireLock,
  attempt,
  encodeResult,
  encodeState,
  errorText,
  eventLine,
  fsyncDir,
  isCacheLine,
  isCode,
  openLog,
  parseCandidateLog,
  readStateFile,
  releaseLock,
  sharedKey,
  stampNow,
  writeAtomic
} from "./internal/runDir.js"
import { FILES as files } from "./internal/runDir.js"
import { registerPeek } from "./internal/cacheBatch.js"
import * as Result from "./Result.js"
import type { LogName, RunStore } from "./RunStore.js"
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
 * Converts a saved state of an older layout version to the next version:
 * `migrations[v]` takes a version-`v` state and returns a version-`v + 1`
 * state.
 *
 * @since 0.1.0
 * @category models
 */
export type Migrations = Readonly<Record<number, (old: unknown) => unknown>>

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
 * The envelope of `gepa_state.json`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SavedState {
  readonly schemaVersion: number
  readonly savedAt: string
  /**
   * counts the saves of this run directory; cache lines carry the generation
   * of the last save before them, so a load knows which cached evaluations
   * the state does not count yet (absent in files from before it existed)
   */
  readonly generation?: number
  /**
   * how many lines of `candidates.jsonl` belong to this state; when present,
   * `state` has empty `candidates`, `valScores` and `objectiveScores`
   */
  readonly candidateCount?: number
  readonly state: unknown
}

/**
 * One line of `candidates.jsonl`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CandidateLine {
  readonly i: number
  readonly candidate: unknown
  readonly valScores: unknown
  readonly objectiveScores: unknown
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
    const file = (name: string) => path.join(root, name)

    // a stop file from the run that was stopped with it would end the resumed run at once
    yield* attempt(file(FILES.stop), "remove the old stop file", () => fs.rmSync(file(FILES.stop), { force: true }))
    // leftovers of a save interrupted by a crash
    yield* attempt(root, "clean temporary files", () => {
      for (const name of fs.readdirSync(root)) {
        if (name.startsWith(".") && name.includes(".tmp-")) fs.rmSync(path.join(root, name), { force: true })
      }
    })

    const openAppend = (name: string) =>
      Effect.acquireRelease(
        attempt(file(name), "open", () => {
          const text = openLog(file(name))
          return { fd: fs.openSync(file(name), "a"), text }
        }),
        ({ fd }) => Effect.sync(() => fs.closeSync(fd))
      )

    const events = yield* openAppend(FILES.events)
    const candidateFile = yield* openAppend(FILES.candidates)
    let candidateLog = parseCandidateLog(candidateFile.text)
    // candidate lines that belong to the state in use (after load, or saved since)
    let written = 0
    /** Drops candidate lines past `count` (left by a generation that was lost). */
    const keepCandidates = (count: number) =>
      attempt(file(FILES.candidates), "truncate", () => {
        const bytes = count === 0 ? 0 : candidateLog.ends[count - 1]!
        fs.truncateSync(file(FILES.candidates), bytes)
        candidateLog = { lines: candidateLog.lines.slice(0, count), ends: candidateLog.ends.slice(0, count) }
        written = count
      })
    const useCache = options?.cache ?? true
    let cacheFd: number | undefined
    // the latest result per key (without trajectory)
    const entries = new Map<string, EvaluationCache.CachedEvaluation<O>>()
    // every payment of a key (one per cache line): by which iteration, after
    // which save, and whether the loaded state still owes it
    interface Payment {
      readonly i: number | undefined
      readonly g: number
      owed: boolean
    }
    const payments = new Map<string, Array<Payment>>()
    // trajectories per key, per iteration that paid for them: a traced result
    // is served to that iteration only (two proposals in flight may evaluate
    // the same parent on the same example)
    const traces = new Map<string, Map<number, unknown>>()
    const addPayment = (k: string, p: Payment) => {
      const list = payments.get(k)
      if (list === undefined) payments.set(k, [p])
      else list.push(p)
    }
    // results a later proposal paid for beside an earlier one that paid for the
    // same pair: the earlier one is the entry every later proposal sees, but a
    // proposal re-launched after a crash must find its own result again (it
    // cannot see the earlier one's), or it pays for the pair twice
    const shadowed = new Map<string, Map<number, EvaluationCache.CachedEvaluation<O>>>()
    const keep = (k: string, entry: EvaluationCache.CachedEvaluation<O>) => {
      const existing = entries.get(k)
      if (EvaluationCache.replaces(existing, entry)) {
        entries.set(k, entry)
        // the entry it replaces stays its payer's own
        if (existing?.iteration !== undefined) keep(k, existing)
        return
      }
      if (entry.iteration === undefined || entry.iteration === existing?.iteration) return
      const own = shadowed.get(k)
      if (own === undefined) shadowed.set(k, new Map([[entry.iteration, entry]]))
      else if (!own.has(entry.iteration)) own.set(entry.iteration, entry)
    }
    const addTrace = (k: string, i: number, t: unknown) => {
      const m = traces.get(k)
      if (m === undefined) traces.set(k, new Map([[i, t]]))
      else m.set(i, t)
    }
    // generation of the last save: of the loaded state, then of each save
    let generation = 0
    if (useCache) {
      const opened = yield* openAppend(FILES.cache)
      cacheFd = opened.fd
      for (const line of opened.text.split("\n")) {
        if (line.length === 0) continue
        let parsed: unknown
        try {
          parsed = JSON.parse(line)
        } catch {
          continue
        }
        if (!isCacheLine(parsed)) continue
        const k = sharedKey(parsed.k)
        const entry: EvaluationCache.CachedEvaluation<O> = {
          output: parsed.output as O,
          score: parsed.score,
          objectiveScores: parsed.objectiveScores,
          ...(parsed.i === undefined ? {} : { iteration: parsed.i })
        }
        keep(k, entry)
        addPayment(k, { i: parsed.i, g: parsed.g ?? 0, owed: false })
        if (parsed.t !== undefined && parsed.i !== undefined) addTrace(k, parsed.i, parsed.t)
      }
    }
    let cacheDirty = false
    // owed entries not used yet (see `unaccounted`), kept by the ledger
    const owed = Ledger.owedBook()
    const addOwed = (payment: Payment, delta: number) => {
      payment.owed = delta > 0
      owed.add(payment.i, delta)
    }

    // the write-ahead budget: calls on record since the last `base` line
    const reservations = yield* openAppend(FILES.reservations)
    let onRecord = 0
    let logSaved = false
    let logEmpty = true
    for (const line of reservations.text.split("\n")) {
      if (line.length === 0) continue
      let parsed: { readonly n?: unknown; readonly base?: unknown; readonly g?: unknown }
      try {
        parsed = JSON.parse(line) as typeof parsed
      } catch {
        continue
      }
      logEmpty = false
      onRecord = Ledger.onRecordAfter(onRecord, parsed)
      if (typeof parsed.g === "number" && parsed.g > 0) logSaved = true
    }
    const appendReservation = (line: object, sync = true): Effect.Effect<void, PersistenceError> =>
      Effect.flatMap(
        attempt(file(FILES.reservations), "append to", () => fs.writeSync(reservations.fd, JSON.stringify(line) + "\n")),
        // the data (and the file size) reach the disk before the call starts;
        // the flush runs off the event loop, so other calls keep going meanwhile
        () =>
          sync
            ? Effect.async<void, PersistenceError>((resume) => {
              fs.fdatasync(reservations.fd, (e) =>
                resume(
                  e === null
                    ? Effect.void
                    : Effect.fail(new PersistenceError({ path: file(FILES.reservations), operation: "fsync", detail: errorText(e) }))
                ))
            })
            : Effect.void
      )
    let lostAtLoad = 0
    let savedMarked = false
    let reservationsDirty = false
    const syncEach = options?.syncReservations ?? false
    const reserve = (r: { readonly iteration: number; readonly calls: number }) => {
      reservationsDirty = true
      // written before the calls start: it survives the process being
      // killed; flushed to disk with the next save, or before the calls start
      // with `syncReservations` (a release need not be durable: losing it
      // only overcharges)
      return appendReservation({ i: r.iteration, n: r.calls, g: generation }, syncEach && r.calls > 0)
    }

    const cache: EvaluationCache.EvaluationCache<O> | undefined = cacheFd === undefined ? undefined : registerPeek<O>({
      get: (key) =>
        Effect.sync(() => {
          const k = EvaluationCache.keyString(key)
          let hit = entries.get(k)
          if (hit === undefined) return Option.none()
          // a result of a proposal the asker runs beside is not served (and
          // an owed payment is not consumed by it)
          if (key.traced !== true && !EvaluationCache.isVisible(key, hit)) {
            const own = key.requestedBy === undefined ? undefined : shadowed.get(k)?.get(key.requestedBy)
            if (own === undefined) return Option.none()
            hit = own
          }
          if (key.traced === true) {
            // only the trajectory the asking iteration paid for
            const t = key.requestedBy === undefined ? undefined : traces.get(k)?.get(key.requestedBy)
            if (t === undefined) return Option.none()
            hit = { ...hit, iteration: key.requestedBy, trajectory: t }
          }
          // an owed payment is charged once, by the hit that uses it: the
          // asking iteration's own payment first
          const list = payments.get(k)
          if (owed.total() > 0 && list !== undefined) {
            const own = list.find((p) => p.owed && p.i === key.requestedBy) ?? list.find((p) => p.owed)
            if (own !== undefined) {
              addOwed(own, -1)
              return Option.some({ ...hit, owed: true })
            }
          }
          return Option.some(hit)
        }),
      set: (key, value) =>
        attempt(file(FILES.cache), "append to", () => {
          const k = EvaluationCache.keyString(key)
          const line: CacheLine = {
            k,
            output: value.output,
            score: value.score,
            ...(value.objectiveScores === undefined ? {} : { objectiveScores: value.objectiveScores }),
            g: generation,
            ...(value.iteration === undefined ? {} : { i: value.iteration }),
            ...(value.trajectory === undefined ? {} : { t: value.trajectory })
          }
          // written before the entry is visible, so a hit is always on disk too
          fs.writeSync(cacheFd!, JSON.stringify(line) + "\n")
          const { owed: _, trajectory, ...entry } = value
          keep(k, entry)
          // a new payment; an owed earlier one (a result evaluated again
          // because its trajectory could not be stored) stays owed, never free
          addPayment(k, { i: value.iteration, g: generation, owed: false })
          if (trajectory !== undefined && value.iteration !== undefined) addTrace(k, value.iteration, trajectory)
          cacheDirty = true
        }),
      size: Effect.sync(() => entries.size)
    }, (keys) =>
      keys.map((key) => {
        const hit = entries.get(EvaluationCache.keyString(key))
        return hit !== undefined && EvaluationCache.isVisible(key, hit) ? hit : undefined
      }))

    const migrations = options?.migrations ?? {}

    /**
     * Continues from a saved generation: cached evaluations written after it,
     * or paid for by proposals it still had in flight, are not counted in its
     * metric calls, so they are owed (see `CachedEvaluation.owed`).
     */
    const resumeFrom = (loaded: { readonly state: State.GepaState; readonly generation: number }) =>
      Effect.gen(function*() {
        generation = loaded.generation
        const inFlight = new Set(loaded.state.pending.map((p) => p.iteration))
        for (const list of payments.values()) {
          for (const p of list) {
            // not counted by the saved state: paid by a proposal in flight at
            // the save or planned after it (or, without an iteration, written after it)
            if (p.i === undefined ? p.g >= generation : inFlight.has(p.i) || p.i > loaded.state.iteration) addOwed(p, 1)
          }
        }
        yield* keepCandidates(loaded.state.candidates.length)
        const counted = Ledger.accounted(loaded.state, owed.total())
        if (logEmpty) {
          // a run directory from before the write-ahead budget: its count starts here
          yield* appendReservation({ base: counted })
          logEmpty = false
        } else {
          lostAtLoad = Ledger.lostOnRecord(onRecord, counted)
        }
        return Option.some(loaded.state)
      })

    const load: Effect.Effect<Option.Option<State.GepaState>, PersistenceError> = Effect.gen(function*() {
      const current = yield* readStateFile(file(FILES.state), migrations, candidateLog)
      if (current._tag === "ok") return yield* resumeFrom(current)
      const previous = yield* readStateFile(file(FILES.prev), migrations, candidateLog)
      if (previous._tag === "ok") {
        if (current._tag === "corrupt") {
          const aside = file(`gepa_state.corrupt-${stampNow().replace(/[:.]/g, "-")}.json`)
          yield* attempt(file(FILES.state), "move the corrupt state file aside", () => fs.renameSync(file(FILES.state), aside))
        }
        return yield* resumeFrom(previous)
      }
      if (current._tag === "missing" && previous._tag === "missing") {
        // Lines of generation 0 only: the process died before its first save,
        // and nothing it paid for is counted anywhere, so all of it is owed.
        // A later generation means saved states were removed on purpose to
        // start over on a warm cache: then hits are simply free.
        let everSaved = logSaved
        for (const list of payments.values()) for (const p of list) if (p.g > 0) everSaved = true
        if (!everSaved) {
          for (const list of payments.values()) for (const p of list) addOwed(p, 1)
          lostAtLoad = Ledger.lostOnRecord(onRecord, owed.total())
        } else if (!logEmpty) {
          // what the removed run paid is not this run's
          yield* appendReservation({ base: 0 })
        }
        yield* keepCandidates(0)
        return Option.none()
      }
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

    const writeBest = (state: State.GepaState) =>
      writeAtomic(root, FILES.best, JSON.stringify({
        index: State.bestIndex(state),
        score: State.scoreOf(state)(State.bestIndex(state)),
        iteration: state.iteration,
        candidate: state.candidates[State.bestIndex(state)]
      }, null, 2) + "\n")

    const save = (state: State.GepaState): Effect.Effect<void, PersistenceError> =>
      attempt(file(FILES.state), "save", () => {
        // the cache entries this state relies on reach the disk first, with
        // the reservations of the calls made since the last save
        if (cacheDirty && cacheFd !== undefined) {
          fs.fsyncSync(cacheFd)
          cacheDirty = false
        }
        if (reservationsDirty) {
          fs.fdatasyncSync(reservations.fd)
          reservationsDirty = false
        }
        const count = state.candidates.length
        if (count < written) {
          // not reached by the engine (candidates are only ever added); kept
          // so that the file always matches the state that was saved
          fs.truncateSync(file(FILES.candidates), count === 0 ? 0 : candidateLog.ends[count - 1]!)
          candidateLog = { lines: candidateLog.lines.slice(0, count), ends: candidateLog.ends.slice(0, count) }
          written = count
        }
        if (count > written) {
          let offset = written === 0 ? 0 : candidateLog.ends[written - 1]!
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
            candidateLog.lines.push(line)
            candidateLog.ends.push(offset)
            chunk += text
          }
          fs.writeSync(candidateFile.fd, chunk)
          fs.fsyncSync(candidateFile.fd)
          written = count
        }
        const envelope: SavedState = {
          schemaVersion: State.SCHEMA_VERSION,
          savedAt: stampNow(),
          generation: generation + 1,
          candidateCount: count,
          state: encodeState({ ...state, candidates: [], valScores: [], objectiveScores: [] })
        }
        writeAtomic(root, FILES.state, JSON.stringify(envelope), FILES.prev)
        generation++
        if (!savedMarked) {
          // tells a later fresh start on this directory that a state was saved
          // here (and removed on purpose), not lost before its first save
          fs.writeSync(reservations.fd, JSON.stringify({ g: generation }) + "\n")
          savedMarked = true
        }
        writeBest(state)
        fsyncDir(root)
      })

    const onEvent = (event: GepaEvent): Effect.Effect<void> =>
      Effect.sync(() => {
        try {
          fs.writeSync(events.fd, JSON.stringify({ ts: stampNow(), ...(eventLine(event) as object) }) + "\n")
        } catch {
          // the event log is diagnostic: a full disk must not fail the run here (save will report it)
        }
      })

    // side logs are opened on their first entry: most runs never write one
    const sideLogs = new Map<LogName, number>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const fd of sideLogs.values()) fs.closeSync(fd)
      })
    )
    const sideLogFile: Record<LogName, string> = { side_info: FILES.sideInfo }
    const appendLog = (log: LogName, entry: unknown): Effect.Effect<void> =>
      Effect.sync(() => {
        try {
          let fd = sideLogs.get(log)
          if (fd === undefined) {
            openLog(file(sideLogFile[log]))
            fd = fs.openSync(file(sideLogFile[log]), "a")
            sideLogs.set(log, fd)
          }
          fs.writeSync(fd, JSON.stringify({ ts: stampNow(), ...(entry as object) }) + "\n")
        } catch {
          // diagnostic, like the event log: a full disk must not fail the run here (save will report it)
        }
      })

    const stopRequested = Effect.sync(() => fs.existsSync(file(FILES.stop)))

    const finish = (state: State.GepaState, stopReason: string, stoppedBy: Result.StoppedBy | null = null): Effect.Effect<void, PersistenceError> =>
      attempt(file(FILES.result), "write", () => {
        writeBest(state)
        writeAtomic(root, FILES.result, JSON.stringify(encodeResult(Result.fromState(state, stopReason, stoppedBy)), null, 2) + "\n")
        if ((options?.trackBestOutputs ?? true) && cacheFd !== undefined) {
          const best = State.bestIndex(state)
          const hash = Candidate.hash(state.candidates[best]!)
          const outputs: Record<string, { output: unknown; score: number }> = {}
          // cache keys hold the example's content hash (the id in runs from before 0.2)
          const print = state.fingerprint?.valset
          const contentOf = new Map(print === undefined ? [] : print.ids.map((id, i) => [id, print.hashes[i]!] as const))
          for (const id of Object.keys(state.valScores[best] ?? {})) {
            const hit = entries.get(EvaluationCache.keyString({ candidateHash: hash, split: "val", id, contentHash: contentOf.get(id) }))
            if (hit !== undefined) outputs[id] = { output: hit.output, score: hit.score }
          }
          writeAtomic(root, FILES.bestOutputs, JSON.stringify({ candidate: best, outputs }, null, 2) + "\n")
        }
        fsyncDir(root)
      })

    const unaccounted = Effect.sync(() => ({ lost: lostAtLoad, owed: owed.byIteration }))
    const store: RunStore<O> = { location: root, load, save, cache, onEvent, appendLog, stopRequested, finish, reserve, unaccounted }
    return store
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
      if (r._tag === "ok") return Option.some(r.state)
      if (r._tag === "corrupt" && corrupt === undefined) corrupt = { file: path.join(root, name), detail: r.detail }
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
