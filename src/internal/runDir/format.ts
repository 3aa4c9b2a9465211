/**
 * What a run directory's files hold and how they are read: the file names,
 * the saved state's envelope and its decoding, the candidate and journal
 * lines, the cache lines, the event lines and the lock's content. Pure: the
 * file access is `disk.ts` (on `FileSystem`), used by `RunDir` and the
 * other parts of this folder.
 *
 * @internal
 */
import { Effect, Option, Schema } from "effect"
import { PersistenceError } from "../../Errors.js"
import type { GepaEvent } from "../../Event.js"
import * as Result from "../../Result.js"
import * as State from "../../State.js"
import * as AppendOnly from "../engine/appendOnly.js"
import { firstIssue } from "../shared/issue.js"
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
 * Decodes one state file's text (`None`: no such file). A file that cannot
 * be read as a state is "corrupt" (the caller may fall back); a version this
 * code cannot handle is a hard failure, since the previous generation has
 * the same version.
 */
export const decodeSaved = (
  file: string,
  content: Option.Option<string>,
  migrations: Migrations,
  candidates: CandidateLog
): Effect.Effect<Decoded, PersistenceError> =>
  Effect.gen(function*() {
    if (Option.isNone(content)) return { _tag: "missing" } as const
    const text = content.value
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

/** The state's arrays that only ever grow at their end, entries never replaced (see `AppendOnly`): a save journals what was appended. */
export const GROWING_FIELDS: ReadonlySet<string> = new Set(["trace"])

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
    case "IterationEnded": {
      // (the counts without the state: making it copies what grows with the run)
      const { candidates, metricCalls } = AppendOnly.countsOf(event)
      return { _tag: event._tag, iteration: event.iteration, accepted: event.accepted, candidates, metricCalls }
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
