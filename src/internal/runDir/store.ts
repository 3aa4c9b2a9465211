/**
 * A run directory opened for a run (`RunDir.make`, `RunDir.layer`): the
 * `RunStore` over its files, which loads the saved state, saves each new
 * one (the files it relies on first, then the journal line, then the
 * events it holds), keeps the cache and the write-ahead budget, and writes
 * the result when the run finishes. The steps of opening are in `open.ts`.
 *
 * @internal
 */
import { Effect, Option, type Scope } from "effect"
import type { ConfigError, PersistenceError } from "../../Errors.js"
import type { GepaEvent } from "../../Event.js"
import * as Result from "../../Result.js"
import type { RunStore } from "../../RunStore.js"
import type * as State from "../../State.js"
import * as Ledger from "../engine/ledger.js"
import { makeOwed, makeReservations, parseReservations } from "./budget.js"
import { allPayments, emptyIndex, forgetFolded, makeCache, parseCache, settle } from "./cache.js"
import * as Disk from "./disk.js"
import { encodeResult, eventLine, FILES, type Migrations, stampNow } from "./format.js"
import { openJournal } from "./journal.js"
import { bestOutputs, loadState, makeBestFile, openCandidates, openRoot, openSideLogs, stopFile } from "./open.js"

/**
 * Options of a run directory: the shape of `RunDir.Options` (documented
 * there), declared here too so that this folder never imports the face.
 *
 * @internal
 */
export interface Options {
  readonly cache?: boolean
  readonly trackBestOutputs?: boolean
  readonly migrations?: Migrations
  readonly syncReservations?: boolean
}

/**
 * Opens (creating it if needed) the run directory `dir` on `disk`, locked
 * for the scope, as a `RunStore` (see `RunDir.make`).
 *
 * @internal
 */
export const open = <O>(
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
