/**
 * The file mechanics of a run directory: atomic writes with fsync, the
 * append-only logs (candidates, cache, events), the state file's decoding
 * and fallback, and the lock. `RunDir` is the only user.
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { PersistenceError } from "../Errors.js"
import type { GepaEvent } from "../Event.js"
import * as Result from "../Result.js"
import * as State from "../State.js"
import { firstIssue } from "./issue.js"
import * as Journal from "./stateJournal.js"

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

/** The file names inside a run directory (`RunDir.FILES`). */
export const FILES = {
  state: "gepa_state.json",
  prev: "gepa_state.prev.json",
  /** the changes saved since `gepa_state.json` was written, one save a line (since 0.3) */
  journal: "gepa_state.jsonl",
  /** the changes from `gepa_state.prev.json` to `gepa_state.json` (since 0.3) */
  prevJournal: "gepa_state.prev.jsonl",
  events: "events.jsonl",
  cache: "cache.jsonl",
  reservations: "reservations.jsonl",
  candidates: "candidates.jsonl",
  best: "best_candidate.json",
  bestOutputs: "best_outputs.json",
  result: "result.json",
  lock: "gepa.lock",
  stop: "gepa.stop",
  /** the settings of a run started by the `gepa` command */
  config: "config.json",
  /** the HTML report written by the `gepa` command */
  report: "report.html",
  /** the full side information behind each reflection of `optimizeAnything` (`RunStore.appendLog`) */
  sideInfo: "side_info.jsonl",
  /** the best candidate's scores on the test set, written by the `optimize-anything` command */
  testScores: "test_scores.json"
} as const

/** The valid prefix of `candidates.jsonl` and the byte offset after each line. */
export interface CandidateLog {
  readonly lines: Array<CandidateLine>
  readonly ends: Array<number>
}

export const parseCandidateLog = (text: string): CandidateLog => {
  const lines: Array<CandidateLine> = []
  const ends: Array<number> = []
  let offset = 0
  for (const raw of text.split("\n")) {
    if (raw.length === 0) break
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      break
    }
    const line = parsed as CandidateLine
    // lines are written in index order; anything else ends the usable prefix
    if (typeof parsed !== "object" || parsed === null || line.i !== lines.length) break
    offset += Buffer.byteLength(raw) + 1
    lines.push(line)
    ends.push(offset)
  }
  return { lines, ends }
}

export const errorText = (e: unknown): string => {
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code
    return code !== undefined && !e.message.includes(code) ? `${code}: ${e.message}` : e.message
  }
  return String(e)
}

export const attempt = <A>(file: string, operation: string, f: () => A): Effect.Effect<A, PersistenceError> =>
  Effect.try({ try: f, catch: (e) => new PersistenceError({ path: file, operation, detail: errorText(e) }) })

export const isCode = (e: unknown, code: string): boolean => typeof e === "object" && e !== null && (e as NodeJS.ErrnoException).code === code

/** Writes a file so that readers see either the old or the new content, never a mix. */
export const writeAtomic = (dir: string, name: string, content: string, keepPrevious?: string): void => {
  const target = path.join(dir, name)
  const tmp = path.join(dir, `.${name}.tmp-${process.pid}`)
  const fd = fs.openSync(tmp, "w")
  try {
    fs.writeFileSync(fd, content)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  if (keepPrevious !== undefined && fs.existsSync(target)) {
    // a hard link keeps the current file in place until the rename below
    // replaces it, so there is no moment without a current state file
    const prevTmp = path.join(dir, `.${keepPrevious}.tmp-${process.pid}`)
    fs.rmSync(prevTmp, { force: true })
    try {
      fs.linkSync(target, prevTmp)
    } catch {
      fs.copyFileSync(target, prevTmp)
    }
    fs.renameSync(prevTmp, path.join(dir, keepPrevious))
  }
  fs.renameSync(tmp, target)
}

const isFile = (file: string): boolean => {
  try {
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** Flushes an appended file's data (and size) to disk, off the event loop. */
export const flush = (file: string, fd: number): Effect.Effect<void, PersistenceError> =>
  Effect.async<void, PersistenceError>((resume) => {
    fs.fdatasync(fd, (e) => resume(e === null ? Effect.void : Effect.fail(new PersistenceError({ path: file, operation: "fsync", detail: errorText(e) }))))
  })

export const fsyncDir = (dir: string): void => {
  // makes the renames durable; some platforms cannot open a directory
  let fd: number | undefined
  try {
    fd = fs.openSync(dir, "r")
    fs.fsyncSync(fd)
  } catch {
    // best effort
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/**
 * Cuts a partial last line (left by a crash mid-append), so that the next
 * append starts on a line of its own. Returns the complete content.
 */
export const openLog = (file: string): string => {
  if (!fs.existsSync(file)) return ""
  const text = fs.readFileSync(file, "utf8")
  if (text.length === 0 || text.endsWith("\n")) return text
  const keep = text.lastIndexOf("\n") + 1
  fs.truncateSync(file, Buffer.byteLength(text.slice(0, keep)))
  return text.slice(0, keep)
}

export const decodeState = Schema.decodeUnknownEither(State.GepaState)
// Every field of GepaState encodes to itself (plain numbers, strings,
// records and arrays), so the state is written as is: running the encoder
// over a large run only copies it. Loading still decodes and validates.
export const encodeState = (state: State.GepaState): unknown => state
export const encodeResult = Schema.encodeSync(Result.GepaResult)

export type Decoded =
  | {
    readonly _tag: "ok"
    readonly state: State.GepaState
    readonly generation: number
    /** the snapshot file's size */
    readonly bytes: number
    /** the snapshot needed a migration (its layout is older) */
    readonly migrated: boolean
  }
  | { readonly _tag: "missing" }
  | { readonly _tag: "corrupt"; readonly detail: string }

/**
 * Reads and decodes one state file. A file that cannot be read as a state is
 * "corrupt" (the caller may fall back); a version this code cannot handle is
 * a hard failure, since the previous generation has the same version.
 */
export const readStateFile = (
  file: string,
  migrations: Migrations,
  candidates: CandidateLog
): Effect.Effect<Decoded, PersistenceError> =>
  Effect.gen(function*() {
    let text: string
    try {
      text = fs.readFileSync(file, "utf8")
    } catch (e) {
      if (isCode(e, "ENOENT")) return { _tag: "missing" } as const
      return yield* Effect.fail(new PersistenceError({ path: file, operation: "read", detail: errorText(e) }))
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (e) {
      return { _tag: "corrupt", detail: `not valid JSON (${errorText(e)}; ${text.length} bytes)` } as const
    }
    if (typeof json !== "object" || json === null || !("state" in json) || !("schemaVersion" in json)) {
      return { _tag: "corrupt", detail: "expected { schemaVersion, savedAt, state }" } as const
    }
    const envelope = json as SavedState
    let version = envelope.schemaVersion
    const migrated = version !== State.SCHEMA_VERSION
    if (typeof version !== "number" || !Number.isInteger(version)) {
      return { _tag: "corrupt", detail: `schemaVersion is ${JSON.stringify(version)}` } as const
    }
    if (version > State.SCHEMA_VERSION) {
      return yield* Effect.fail(
        new PersistenceError({
          path: file,
          operation: "load",
          detail: `state layout version ${version} was written by a newer effect-gepa (this one reads up to ${State.SCHEMA_VERSION}); upgrade effect-gepa`
        })
      )
    }
    let state = envelope.state
    if (envelope.candidateCount !== undefined) {
      const count = envelope.candidateCount
      if (!Number.isInteger(count) || count < 0) {
        return { _tag: "corrupt", detail: `candidateCount is ${JSON.stringify(count)}` } as const
      }
      if (candidates.lines.length < count) {
        return {
          _tag: "corrupt",
          detail: `${FILES.candidates} holds ${candidates.lines.length} readable candidate lines, the state needs ${count}`
        } as const
      }
      if (typeof state !== "object" || state === null) return { _tag: "corrupt", detail: "state is not an object" } as const
      const own = candidates.lines.slice(0, count)
      state = {
        ...(state as object),
        candidates: own.map((l) => l.candidate),
        valScores: own.map((l) => l.valScores),
        objectiveScores: own.map((l) => l.objectiveScores)
      }
    }
    while (version < State.SCHEMA_VERSION) {
      const migrate = migrations[version]
      if (migrate === undefined) {
        return yield* Effect.fail(
          new PersistenceError({
            path: file,
            operation: "load",
            detail: `state layout version ${version} is older than ${State.SCHEMA_VERSION} and no migration from version ${version} was given`
          })
        )
      }
      const from = version
      state = yield* attempt(file, `migrate from version ${from}`, () => migrate(state))
      version++
    }
    const decoded = decodeState(state)
    if (decoded._tag === "Left") {
      return { _tag: "corrupt", detail: `not a valid state: ${firstIssue(decoded.left)}` } as const
    }
    const generation = typeof envelope.generation === "number" && Number.isInteger(envelope.generation)
      ? envelope.generation
      : 0
    return { _tag: "ok", state: decoded.right, generation, bytes: Buffer.byteLength(text), migrated } as const
  })

/** The fields of the state kept in `candidates.jsonl`, not in the snapshot or the journal. */
export const CANDIDATE_FIELDS: ReadonlySet<string> = new Set(["candidates", "valScores", "objectiveScores"])

/**
 * Replays journal lines on top of a decoded snapshot: lines of generations
 * the snapshot already holds are skipped, then each line must make the next
 * generation; replay stops at a gap, at a line whose candidates are not all
 * in `candidates.jsonl`, or at a line that does not fit the state (damage).
 * `used` counts the lines read (applied or skipped), so that the caller can
 * cut the rest off the log it appends to.
 */
export const replayJournal = (
  base: { readonly state: State.GepaState; readonly generation: number },
  lines: ReadonlyArray<Journal.JournalLine>,
  candidates: CandidateLog
): { readonly state: State.GepaState; readonly generation: number; readonly used: number } => {
  let value: unknown = base.state
  let generation = base.generation
  let count = base.state.candidates.length
  let used = 0
  let applied = 0
  let good = { state: base.state, generation, used: 0 }
  for (const line of lines) {
    if (line.g <= generation && applied === 0) {
      used++
      good = { ...good, used }
      continue
    }
    if (line.g !== generation + 1 || line.n > candidates.lines.length) break
    try {
      value = line.c === undefined ? value : Journal.apply(value, line.c)
    } catch {
      break
    }
    generation = line.g
    count = line.n
    used++
    applied++
    good = { ...good, generation, used }
  }
  if (applied === 0) return good
  const own = candidates.lines.slice(0, count)
  const decoded = decodeState({
    ...(value as object),
    candidates: own.map((l) => l.candidate),
    valScores: own.map((l) => l.valScores),
    objectiveScores: own.map((l) => l.objectiveScores)
  })
  // a journal that replays into an invalid state is damage: the snapshot alone is what is known good
  if (decoded._tag === "Left") return { state: base.state, generation: base.generation, used: good.used - applied }
  return { state: decoded.right, generation, used }
}

/** The readable prefix of a journal file's text. */
export const parseJournal = (text: string): Journal.LineLog<Journal.JournalLine> => Journal.parseLines(text, Journal.isJournalLine)

export const stampNow = () => new Date().toISOString()

/** The line written to `events.jsonl`: without payloads that grow with the run. */
export const eventLine = (event: GepaEvent): unknown => {
  switch (event._tag) {
    case "IterationEnded":
      return {
        _tag: event._tag,
        iteration: event.iteration,
        accepted: event.accepted,
        candidates: event.state.candidates.length,
        metricCalls: event.state.metricCalls
      }
    case "OptimizationEnded": {
      const { candidates, parents, valScores, objectiveScores, perInstanceBest, valAggregateScores, valCoverage, discoveryBudget, ...rest } = event.result
      return { ...rest, _tag: event._tag, candidates: candidates.length }
    }
    default:
      return event
  }
}

export interface Lock {
  readonly pid: number
  readonly hostname: string
  readonly startedAt: string
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: the process exists but belongs to someone else
    return !isCode(e, "ESRCH")
  }
}

export const acquireLock = (dir: string): Effect.Effect<Lock, PersistenceError> =>
  Effect.gen(function*() {
    const file = path.join(dir, FILES.lock)
    const mine: Lock = { pid: process.pid, hostname: os.hostname(), startedAt: stampNow() }
    for (let tries = 0; tries < 3; tries++) {
      try {
        const fd = fs.openSync(file, "wx")
        try {
          fs.writeFileSync(fd, JSON.stringify(mine))
          fs.fsyncSync(fd)
        } finally {
          fs.closeSync(fd)
        }
        return mine
      } catch (e) {
        if (!isCode(e, "EEXIST")) {
          return yield* Effect.fail(new PersistenceError({ path: file, operation: "create the lock file", detail: errorText(e) }))
        }
      }
      let holder: Partial<Lock> = {}
      try {
        holder = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<Lock>
      } catch {
        // a lock file left half-written by a crash while taking it
      }
      const pid = typeof holder.pid === "number" ? holder.pid : undefined
      const sameHost = holder.hostname === undefined || holder.hostname === os.hostname()
      // a lock from another host cannot be checked, so it is respected
      const stale = pid === undefined ? holder.startedAt === undefined : sameHost && !isAlive(pid)
      if (!stale) {
        return yield* Effect.fail(
          new PersistenceError({
            path: file,
            operation: "lock the run directory",
            detail: `it is in use by process ${pid ?? "?"} on ${holder.hostname ?? "an unknown host"} since ${
              holder.startedAt ?? "an unknown time"
            }; wait for that run to end, or delete the lock file if that process is gone`
          })
        )
      }
      yield* attempt(file, "remove the stale lock file", () => fs.rmSync(file, { force: true }))
    }
    return yield* Effect.fail(
      new PersistenceError({ path: file, operation: "create the lock file", detail: "another process keeps taking it" })
    )
  })

export const releaseLock = (dir: string, lock: Lock): void => {
  const file = path.join(dir, FILES.lock)
  try {
    const holder = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<Lock>
    // only our own lock: a takeover by another run must not be undone
    if (holder.pid === lock.pid && holder.startedAt === lock.startedAt) fs.rmSync(file, { force: true })
  } catch {
    // already gone
  }
}

export interface CacheLine {
  readonly k: string
  readonly output: unknown
  readonly score: number
  readonly objectiveScores?: Readonly<Record<string, number>>
  /** generation of the last save before this line was written */
  readonly g?: number
  /** the iteration (proposal) that paid for it */
  readonly i?: number
  /** the trajectory, as the adapter's `traceCodec` encoded it */
  readonly t?: unknown
}

export const isCacheLine = (u: unknown): u is CacheLine =>
  typeof u === "object" && u !== null && typeof (u as CacheLine).k === "string" && typeof (u as CacheLine).score === "number"

/**
 * A cache line's key in today's form. Run folders written before 0.3 kept
 * the split in the key (`hash, split, content`); an example is now the same
 * example in either split, so such keys drop the split when they name a
 * content hash (24 hex digits). Keys without a content hash keep it: the id
 * alone does not say the two splits hold the same example.
 *
 * @internal
 */
export const sharedKey = (k: string): string => {
  const parts = k.split("\u0000")
  return parts.length === 3 && (parts[1] === "train" || parts[1] === "val") && /^[0-9a-f]{24}$/.test(parts[2]!)
    ? `${parts[0]}\u0000${parts[2]}`
    : k
}

/**
 * The state's snapshot and change journal (`gepa_state.json` and
 * `gepa_state.jsonl`, with `.prev` of each): loads replay the journal on the
 * snapshot, saves append one line of changes, and a new snapshot is written
 * when the journal would outgrow the current one. The previous snapshot and
 * its journal stay as the fallback: together they lead up to the current
 * snapshot, and the current journal continues from there.
 */
export const openJournal = (root: string) =>
  Effect.gen(function*() {
    const file = (name: string) => path.join(root, name)
    const text = yield* attempt(file(FILES.journal), "open", () => openLog(file(FILES.journal)))
    let fd = yield* attempt(file(FILES.journal), "open", () => fs.openSync(file(FILES.journal), "a"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.closeSync(fd)))
    let log = parseJournal(text)
    // the last state saved (or loaded): the next save writes what changed since
    let last: State.GepaState | undefined
    let snapshotBytes = 0
    let journalBytes = 0
    // whether gepa_state.json is this run's own, with gepa_state.prev.json (and its journal) leading up to it
    let currentOk = false
    let previousOk = false
    // a snapshot is due at the next save (after a fallback, a migration, or a fresh start)
    let due = true

    /** Cuts the journal after its first `used` lines. */
    const keep = (used: number) =>
      attempt(file(FILES.journal), "truncate", () => {
        const bytes = log.ends[used - 1] ?? 0
        fs.ftruncateSync(fd, bytes)
        log = { lines: log.lines.slice(0, used), ends: log.ends.slice(0, used) }
        journalBytes = bytes
      })

    const readPrevious = attempt(file(FILES.prevJournal), "read", () => {
      try {
        return parseJournal(fs.readFileSync(file(FILES.prevJournal), "utf8")).lines
      } catch (e) {
        if (isCode(e, "ENOENT")) return []
        throw e
      }
    })

    /** Continues from a decoded snapshot (the current one, or the previous one as a fallback). */
    const resume = (
      snapshot: Extract<Decoded, { readonly _tag: "ok" }>,
      candidates: CandidateLog,
      options: { readonly fromCurrent: boolean }
    ) =>
      Effect.gen(function*() {
        const previous = yield* readPrevious
        const replayed = replayJournal(snapshot, [...previous, ...log.lines], candidates)
        // lines after the generation reached are of a lost save: the next save writes its own
        yield* keep(Math.max(0, replayed.used - previous.length))
        last = replayed.state
        snapshotBytes = snapshot.bytes
        currentOk = options.fromCurrent
        previousOk = options.fromCurrent && fs.existsSync(file(FILES.prev))
        due = !options.fromCurrent || snapshot.migrated
        return { state: replayed.state, generation: replayed.generation }
      })

    /** No saved state to continue from: whatever journals are left belong to no snapshot. */
    const startOver = Effect.gen(function*() {
      yield* keep(0)
      yield* attempt(file(FILES.prevJournal), "remove", () => fs.rmSync(file(FILES.prevJournal), { force: true }))
      last = undefined
      currentOk = false
      previousOk = false
      due = true
    })

    /** Writes a snapshot of generation `g`, then starts a new journal from it. */
    const snapshot = (state: State.GepaState, g: number, count: number) => {
      const envelope: SavedState = {
        schemaVersion: State.SCHEMA_VERSION,
        savedAt: stampNow(),
        generation: g,
        candidateCount: count,
        state: encodeState({ ...state, candidates: [], valScores: [], objectiveScores: [] })
      }
      const text = JSON.stringify(envelope)
      if (currentOk) {
        // the current snapshot becomes the previous one and its journal the
        // previous journal: together they still lead up to the new snapshot
        writeAtomic(root, FILES.state, text, FILES.prev)
        fs.renameSync(file(FILES.journal), file(FILES.prevJournal))
        previousOk = true
      } else {
        writeAtomic(root, FILES.state, text)
        // older files that do not lead up to this snapshot
        fs.rmSync(file(FILES.prev), { force: true })
        fs.rmSync(file(FILES.prevJournal), { force: true })
        fs.rmSync(file(FILES.journal), { force: true })
        previousOk = false
      }
      fs.closeSync(fd)
      fd = fs.openSync(file(FILES.journal), "a")
      log = { lines: [], ends: [] }
      fsyncDir(root)
      currentOk = true
      snapshotBytes = Buffer.byteLength(text)
      journalBytes = 0
      due = false
    }

    /** Saves generation `g`: one line of changes, or a new snapshot when one is due. */
    const save = (state: State.GepaState, g: number, count: number): Effect.Effect<void, PersistenceError> =>
      Effect.suspend(() => {
        if (currentOk && !isFile(file(FILES.state))) {
          // the snapshot was removed or replaced behind the run's back: the
          // journal alone leads nowhere, so this save writes a snapshot again
          currentOk = false
          due = true
        }
        const change = last === undefined ? undefined : Journal.diff(last, state, CANDIDATE_FIELDS)
        const line: Journal.JournalLine = change === undefined ? { g, n: count } : { g, n: count, c: change }
        const text = JSON.stringify(line) + "\n"
        const bytes = Buffer.byteLength(text)
        const written = last === undefined || due || !previousOk || Journal.shouldSnapshot(snapshotBytes, journalBytes, bytes)
          ? attempt(file(FILES.state), "save", () => snapshot(state, g, count))
          : Effect.zipRight(
            attempt(file(FILES.journal), "save", () => {
              fs.writeSync(fd, text)
              journalBytes += bytes
            }),
            flush(file(FILES.journal), fd)
          )
        return Effect.tap(written, () => {
          last = state
        })
      })

    return { resume, startOver, save }
  })
