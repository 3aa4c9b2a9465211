/**
 * What a run directory knows about metric calls the saved state does not
 * count: the write-ahead log (`reservations.jsonl`: calls on record before
 * they start) and the cache lines paid for after the state's generation
 * (owed). `RunDir` reads `lost` and `owed` from here after a load
 * (`RunStore.unaccounted`); the engine's own count lives in the state.
 *
 * @internal
 */
import { Effect } from "effect"
import type { PersistenceError } from "../../Errors.js"
import * as Ledger from "../engine/ledger.js"
import type { AppendLog } from "./disk.js"
import { parseJsonLine } from "./jsonLine.js"

/** One payment of a cache key (one cache line): by which iteration, after which save, and whether the loaded state still owes it. */
export interface Payment {
  readonly i: number | undefined
  readonly g: number
  owed: boolean
}

/** Owed payments not used yet: charged once, by the hit that uses each (the count is the ledger's owed book). */
export const makeOwed = () => {
  const book = Ledger.owedBook()
  return {
    /** marks a payment owed (`+1`) or used (`-1`) */
    add: (payment: Payment, delta: 1 | -1) => {
      payment.owed = delta > 0
      book.add(payment.i, delta)
    },
    left: () => book.total(),
    byIteration: (): ReadonlyMap<number, number> => book.byIteration
  }
}

/** The owed payments of a run directory (`makeOwed`). */
export type Owed = ReturnType<typeof makeOwed>

/** What `reservations.jsonl` says: the calls on record since its last `{ base }` line. */
export interface ReservationLog {
  readonly onRecord: number
  /** a line of a save (`{ g }` with `g > 0`) is there: a state was saved in this directory once */
  readonly saved: boolean
  readonly empty: boolean
}

export const parseReservations = (text: string): ReservationLog => {
  let onRecord = 0
  let saved = false
  let empty = true
  for (const line of text.split("\n")) {
    const value = parseJsonLine(line)
    if (value === undefined) continue
    const parsed: { readonly n?: unknown; readonly base?: unknown; readonly g?: unknown } = typeof value === "object" && value !== null ? value : {}
    empty = false
    onRecord = Ledger.onRecordAfter(onRecord, parsed)
    if (typeof parsed.g === "number" && parsed.g > 0) saved = true
  }
  return { onRecord, saved, empty }
}

/**
 * The write-ahead log, open for appending: `reserve` puts calls on record
 * before they start; `flushForSave` says whether the save must flush it.
 */
export const makeReservations = (options: {
  readonly file: AppendLog
  readonly log: ReservationLog
  /** flush every reservation before its calls start */
  readonly syncEach: boolean
  /** the generation of the last save (reservations carry it) */
  readonly generation: () => number
}) => {
  let empty = options.log.empty
  let dirty = false
  let savedMarked = false
  let lostAtLoad = 0
  // the write returns before the calls start (the kernel has it: a killed
  // process does not lose it); with `sync`, the data (and the file size)
  // reach the disk before the calls start too
  const append = (line: object, sync = true): Effect.Effect<void, PersistenceError> =>
    Effect.zipRight(options.file.append(JSON.stringify(line) + "\n"), sync ? options.file.sync : Effect.void)
  return {
    reserve: (r: { readonly iteration: number; readonly calls: number }) => {
      dirty = true
      // written before the calls start: it survives the process being
      // killed; flushed to disk with the next save, or before the calls start
      // with `syncReservations` (a release need not be durable: losing it
      // only overcharges)
      return append({ i: r.iteration, n: r.calls, g: options.generation() }, options.syncEach && r.calls > 0)
    },
    /**
     * After a load that found a state counting `counted` calls (its own,
     * its lost ones and the owed results): what the log has on record beyond
     * them was lost with a crashed process. A log from before the
     * write-ahead budget starts counting here.
     */
    settle: (counted: number) =>
      Effect.suspend(() => {
        if (empty) {
          empty = false
          return append({ base: counted })
        }
        lostAtLoad = Ledger.lostOnRecord(options.log.onRecord, counted)
        return Effect.void
      }),
    /** A fresh start: what the log has on record beyond the owed results is lost; `restart` forgets it (a removed run's). */
    settleFresh: (owed: number, restart: boolean) =>
      Effect.suspend(() => {
        if (!restart) {
          lostAtLoad = Ledger.lostOnRecord(options.log.onRecord, owed)
          return Effect.void
        }
        return empty ? Effect.void : append({ base: 0 })
      }),
    lostAtLoad: () => lostAtLoad,
    /** the save flushes the log when something was reserved since the last one */
    takeDirty: (): boolean => {
      const was = dirty
      dirty = false
      return was
    },
    /** after the first save of this process: tells a later fresh start that a state was saved here */
    markSaved: (generation: number): Effect.Effect<void, PersistenceError> =>
      Effect.suspend(() => {
        if (savedMarked) return Effect.void
        savedMarked = true
        return append({ g: generation }, false)
      })
  }
}

/** The write-ahead log of a run directory (`makeReservations`). */
export type Reservations = ReturnType<typeof makeReservations>
