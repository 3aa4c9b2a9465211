/**
 * One evaluation's write-ahead budget: a call is on record before it starts.
 *
 * Calls are reserved in blocks (taken by the chunk that needs one, while it
 * holds its permit, at least half the evaluation): one or two durable
 * appends per evaluation, and a crash is charged at most the block's calls
 * that had not started. An evaluation that ends early (a pause, an
 * unrecoverable failure) gives back what it reserved and never started.
 *
 * @internal
 */
import { Deferred, Effect, FiberId } from "effect"
import type { PersistenceError } from "../../Errors.js"
import * as Ledger from "./ledger.js"

/** @internal */
export interface Reservation {
  /** records that a chunk's calls start (paid: retries of the same examples are not new calls) */
  readonly start: (calls: number) => void
  /**
   * admits a chunk of `calls` before they start: done once they are on
   * record; `undefined` when the run keeps no write-ahead record
   */
  readonly admit: ((calls: number) => Effect.Effect<void, PersistenceError>) | undefined
  /** gives back the calls reserved and never started (when the evaluation ends) */
  readonly giveBack: () => Effect.Effect<void>
}

const nothingToGiveBack = (): Effect.Effect<void> => Effect.void

/**
 * The reservation of an evaluation of `calls` metric calls, through the
 * run's `reserve` (absent: nothing is written, calls are only counted).
 *
 * @internal
 */
export const make = (
  reserve: ((iteration: number, calls: number) => Effect.Effect<void, PersistenceError>) | undefined,
  iteration: number,
  calls: number,
  reserveBlock: number
): Reservation => {
  const record = Ledger.writeAhead(calls, Math.max(reserveBlock, Math.ceil(calls / 2)))
  const start = record.start
  if (reserve === undefined || calls === 0) return { start, admit: undefined, giveBack: nothingToGiveBack }
  // The append of the latest block, while it is under way: a chunk the
  // block covers, admitted meanwhile by another worker, waits for it too
  // (its call must not start before the kernel has the block), and once it
  // is written, every earlier block is too (one log, written in order).
  let writing: Deferred.Deferred<void, PersistenceError> | undefined
  const admit = (chunk: number): Effect.Effect<void, PersistenceError> =>
    Effect.suspend(() => {
      const more = record.admit(chunk)
      if (more === 0) return writing === undefined ? Effect.void : Deferred.await(writing)
      // made and published in the same step as the admission (unsafely, not
      // through an effect): no other worker may run between the two
      const done = Deferred.unsafeMake<void, PersistenceError>(FiberId.none)
      writing = done
      // (done however the append ends, an interruption included: the chunks waiting for it learn it)
      return Effect.onExit(reserve(iteration, more), (exit) =>
        Effect.sync(() => {
          if (writing === done) writing = undefined
          Deferred.unsafeDone(done, exit)
        }))
    })
  const giveBack = (): Effect.Effect<void> => {
    const unused = record.unused()
    return unused > 0 ? Effect.ignore(reserve(iteration, -unused)) : Effect.void
  }
  return { start, admit, giveBack }
}
