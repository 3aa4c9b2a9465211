/**
 * The state's snapshot and change journal of a run directory
 * (`gepa_state.json` and `gepa_state.jsonl`, with `.prev` of each): loads
 * replay the journal on the snapshot, saves append one line of changes, and
 * a new snapshot is written when the journal would outgrow the current one.
 * The previous snapshot and its journal stay as the fallback: together they
 * lead up to the current snapshot (the journal gets the new snapshot's own
 * line before it is set aside), and the current journal continues from
 * there, so a fallback resumes at the last save.
 *
 * @internal
 */
import { Effect, Exit, Option, Scope } from "effect"
import { PersistenceError } from "../../Errors.js"
import * as State from "../../State.js"
import {
  CANDIDATE_FIELDS,
  type CandidateLog,
  type Decoded,
  encodeState,
  FILES,
  GROWING_FIELDS,
  parseJournal,
  replayJournal,
  type SavedState,
  stampNow
} from "./format.js"
import { type AppendLog, byteLength, type Disk, exists, failed, openAppend, readText, remove, syncDir, writeAtomic } from "./disk.js"
import * as Journal from "./stateJournal.js"

/** Opens the journal of the run directory `root` for the scope. */
export const openJournal = (disk: Disk, root: string) =>
  Effect.gen(function*() {
    const file = (name: string) => disk.path.join(root, name)
    const journalFile = file(FILES.journal)
    // the journal's handle is replaced by each snapshot: it lives in a scope of its own
    let scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Effect.suspend(() => Scope.close(scope, Exit.void)))
    let handle: AppendLog = yield* Scope.extend(openAppend(disk, journalFile), scope)
    let log = parseJournal(handle.text)
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
      Effect.suspend(() => {
        const bytes = log.ends[used - 1] ?? 0
        return Effect.map(handle.truncate(bytes), () => {
          log = { lines: log.lines.slice(0, used), ends: log.ends.slice(0, used) }
          journalBytes = bytes
        })
      })

    const readPrevious = Effect.map(readText(disk, file(FILES.prevJournal)), (text) => Option.isNone(text) ? [] : parseJournal(text.value).lines)

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
        // the lines read are not needed any more
        log = { lines: [], ends: log.ends }
        last = replayed.state
        snapshotBytes = snapshot.bytes
        currentOk = options.fromCurrent
        previousOk = options.fromCurrent && (yield* exists(disk, file(FILES.prev)))
        due = !options.fromCurrent || snapshot.migrated
        return { state: replayed.state, generation: replayed.generation }
      })

    /** No saved state to continue from: whatever journals are left belong to no snapshot. */
    const startOver = Effect.gen(function*() {
      yield* keep(0)
      yield* remove(disk, file(FILES.prevJournal))
      last = undefined
      currentOk = false
      previousOk = false
      due = true
    })

    /** Writes a snapshot of generation `g`, then starts a new journal from it. */
    const snapshot = (state: State.GepaState, g: number, count: number) =>
      Effect.gen(function*() {
        const envelope: SavedState = {
          schemaVersion: State.SCHEMA_VERSION,
          savedAt: stampNow(),
          generation: g,
          candidateCount: count,
          state: encodeState({ ...state, candidates: [], valScores: [], objectiveScores: [] })
        }
        const text = JSON.stringify(envelope)
        yield* Scope.close(scope, Exit.void)
        if (currentOk) {
          // the current snapshot becomes the previous one and its journal the
          // previous journal: together they still lead up to the new snapshot
          yield* writeAtomic(disk, root, FILES.state, text, FILES.prev)
          yield* Effect.mapError(disk.fs.rename(journalFile, file(FILES.prevJournal)), failed(file(FILES.state), "save"))
          previousOk = true
        } else {
          yield* writeAtomic(disk, root, FILES.state, text)
          // older files that do not lead up to this snapshot
          for (const name of [FILES.prev, FILES.prevJournal, FILES.journal]) yield* remove(disk, file(name), "save")
          previousOk = false
        }
        scope = yield* Scope.make()
        handle = yield* Scope.extend(openAppend(disk, journalFile), scope)
        log = { lines: [], ends: [] }
        yield* syncDir(disk, root)
        currentOk = true
        snapshotBytes = byteLength(text)
        journalBytes = 0
        due = false
      })

    const asSave = (path: string) => (e: PersistenceError) => new PersistenceError({ path, operation: "save", detail: e.detail })

    const isFile = Effect.orElseSucceed(Effect.map(disk.fs.stat(file(FILES.state)), (info) => info.type === "File"), () => false)

    /** Saves generation `g`: one line of changes, or a new snapshot when one is due. */
    const save = (state: State.GepaState, g: number, count: number): Effect.Effect<void, PersistenceError> =>
      Effect.gen(function*() {
        if (currentOk && !(yield* isFile)) {
          // the snapshot was removed or replaced behind the run's back: the
          // journal alone leads nowhere, so this save writes a snapshot again
          currentOk = false
          due = true
        }
        const change = last === undefined ? undefined : Journal.diff(last, state, CANDIDATE_FIELDS, GROWING_FIELDS)
        const line: Journal.JournalLine = change === undefined ? { g, n: count } : { g, n: count, c: change }
        const text = JSON.stringify(line) + "\n"
        const bytes = byteLength(text)
        if (last === undefined || due || !previousOk || Journal.shouldSnapshot(snapshotBytes, journalBytes, bytes)) {
          if (currentOk && !due) {
            // the journal becomes the previous one: with this generation's line it leads from the
            // previous snapshot up to the new one, so a fallback loses no save
            yield* Effect.mapError(handle.append(text), asSave(journalFile))
            yield* handle.sync
          }
          yield* Effect.mapError(snapshot(state, g, count), asSave(file(FILES.state)))
        } else {
          yield* Effect.mapError(handle.append(text), asSave(journalFile))
          journalBytes += bytes
          yield* handle.sync
        }
        last = state
      })

    return { resume, startOver, save }
  })
