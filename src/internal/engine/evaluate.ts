/**
 * The evaluation pool: runs a candidate on examples with bounded concurrency,
 * a per-call timeout and optional retries, through the cache, and checks the
 * adapter's contract. A failing or timed-out call never fails the pool: its
 * examples score the fallback and carry the error, and are never cached (nor
 * are examples the adapter reports in `errors`). An unrecoverable model
 * failure (`ModelUnrecoverable`) is the exception: it is not retried and
 * fails the evaluation at once. The adapter's call and its classification
 * are in `adapterCall.ts`, the write-ahead budget in `reservation.ts`.
 *
 * @internal
 */
import { type Duration, Effect, Option, type Schedule } from "effect"
import type { Adapter } from "../../Adapter.js"
import * as Candidate from "../../Candidate.js"
import type { DataLoader, DataLoaderError } from "../../DataLoader.js"
import { AdapterContractError, type AdapterError, type EvaluationTimeout, type ModelUnrecoverable, type PersistenceError } from "../../Errors.js"
import type { EvaluationBatch, ObjectiveScores } from "../../EvaluationBatch.js"
import { batchOf, type CacheKey, type CachedEvaluation, type EvaluationCache, type Split } from "../../EvaluationCache.js"
import * as AdapterCall from "./adapterCall.js"
import { contractBreach } from "./adapterContract.js"
import * as CacheAccess from "./cacheAccess.js"
import * as Ledger from "./ledger.js"
import * as Reservation from "./reservation.js"
import * as Secrets from "../../Secrets.js"

/** @internal */
export interface Outcome<T, O> {
  readonly id: string
  readonly score: number
  readonly output: Option.Option<O>
  readonly trajectory: Option.Option<T>
  readonly objectiveScores: ObjectiveScores | undefined
  readonly error: string | undefined
  readonly cached: boolean
}

/** @internal */
export interface Pool<D, T, O> {
  readonly adapter: Adapter<D, T, O>
  readonly withPermit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * a permit served before those of `withPermit` (see `permits.ts`): a
   * minibatch evaluation's, which the next reflection waits for, goes ahead
   * of a validation's chunks. Absent: `withPermit`
   */
  readonly withFirstPermit?: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly chunkSize: number
  /** fibers an evaluation forks at most (the run's maxConcurrency: more could not hold a permit) */
  readonly workers: number
  readonly timeout: Duration.Duration | undefined
  readonly retry: Schedule.Schedule<unknown, AdapterError | EvaluationTimeout> | undefined
  readonly cache: EvaluationCache<O> | undefined
  readonly fallbackScore: number
  /**
   * the example's cache key: its content hash, so that a cached result can
   * never be attached to another example (the id when absent)
   */
  readonly exampleKey?: ((split: Split, id: string) => string) | undefined
  /** write-ahead budget: made durable before an evaluation's adapter calls start */
  readonly reserve?: ((iteration: number, calls: number) => Effect.Effect<void, PersistenceError>) | undefined
  /** the fewest calls one reservation covers (the calls that can start at once) */
  readonly reserveBlock?: number | undefined
  /** how fast the adapter's last call returned (see `Pace`); without it every evaluation forks its workers */
  readonly pace?: Pace | undefined
}

/**
 * What the pool last saw of the adapter's speed, shared by the run's
 * evaluations. While calls return within a time slice, an evaluation runs
 * its chunks in the calling fiber (under a permit, as a worker would) and
 * forks no worker fibers: a fast in-process adapter gains nothing from
 * them, and forking and joining fibers was a large share of the engine's
 * time per metric call. A slow call hands the evaluation's remaining chunks
 * to forked workers, and later evaluations fork from the start until calls
 * are fast again. Only timing changes: outcomes are written by position.
 *
 * @internal
 */
export interface Pace {
  fast: boolean
}

/** @internal */
export const makePace = (): Pace => ({ fast: false })

/** @internal */
export interface Request {
  readonly loader: { readonly name: string } & Pick<DataLoader<unknown>, "fetch">
  readonly ids: ReadonlyArray<string>
  readonly split: Split
  readonly captureTraces: boolean
  /** a short description of the call, used in contract errors */
  readonly call: string
  /** the iteration (proposal) paying for it, recorded with cached results */
  readonly iteration?: number | undefined
  /** only results paid for by iterations up to this one (or `iteration`) are served: see `CacheKey.visibleUpTo` */
  readonly visibleUpTo?: number | undefined
}

/** @internal */
export interface Evaluation<T, O> {
  readonly outcomes: ReadonlyArray<Outcome<T, O>>
  /**
   * the metric calls spent: examples run by the adapter (cache misses), plus
   * hits on evaluations an interrupted run paid for but never counted
   */
  readonly spent: number
}

const describe = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e))

// Candidates are never modified once made, and a proposal's candidate is
// evaluated several times (minibatch, validation, merges): hashed once.
const hashes = new WeakMap<Candidate.Candidate, string>()
/** @internal */
export const hashOf = (candidate: Candidate.Candidate): string => {
  let hash = hashes.get(candidate)
  if (hash === undefined) {
    hash = Candidate.hash(candidate)
    hashes.set(candidate, hash)
  }
  return hash
}

/** How long a worker may keep its permit across consecutive fast calls. */
const SLICE_MS = 1

/**
 * How long an evaluation may go without writing its results to an
 * effectful cache (a run folder's): a kill loses at most this much of a fast
 * adapter's completed work, a fast adapter's evaluation writes once, and a
 * slow adapter's results (calls of this long or more) are written as each
 * call returns.
 */
const HOLD_MS = 10

const failedOutcome = <T, O>(id: string, score: number, error: string): Outcome<T, O> => ({
  id,
  score,
  output: Option.none(),
  trajectory: Option.none(),
  objectiveScores: undefined,
  // an adapter's error may quote a key (its own, registered with `Secrets`);
  // the text goes to events, the run folder and the reflection prompt
  error: Secrets.scrub(error),
  cached: false
})

/**
 * Evaluates `candidate` on `request.ids`; outcomes come back in id order.
 *
 * The hot path of a run: a fast adapter spends most of its time here. So it
 * forks at most `pool.workers` fibers, which pull chunks in turn (each chunk
 * under one permit of the run-wide semaphore), instead of one fiber per
 * chunk; reads and writes the cache in one call when the cache supports it;
 * and writes outcomes straight into their positions.
 *
 * @internal
 */
export const evaluate = <D, T, O>(
  pool: Pool<D, T, O>,
  candidate: Candidate.Candidate,
  request: Request
): Effect.Effect<
  Evaluation<T, O>,
  AdapterContractError | DataLoaderError | PersistenceError | ModelUnrecoverable
> =>
  Effect.gen(function*() {
    const { ids } = request
    const cache = pool.cache
    const codec = pool.adapter.traceCodec
    // a traced evaluation is served from the cache only to the iteration that
    // paid for it (a proposal re-launched after a crash), and only with its
    // stored trajectory: anything else is evaluated as the uninterrupted run would
    const useCache = cache !== undefined && (!request.captureTraces || (codec !== undefined && request.iteration !== undefined))
    const keys = CacheAccess.keysOf(pool.exampleKey, cache === undefined ? "" : hashOf(candidate), request)
    const outcomes = new Array<Outcome<T, O>>(ids.length)
    // positions to evaluate; duplicate ids (merge subsamples may repeat) once
    const toRun: Array<number> = []
    const firstOf = new Map<string, number>()
    let owedHits = 0
    const found = useCache ? yield* CacheAccess.read(cache, codec, keys, request) : undefined
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!
      const hit = found?.hits[i]
      if (hit !== undefined) {
        if (hit.owed === true) owedHits++
        outcomes[i] = {
          id,
          score: hit.score,
          // none when the cache did not keep it (the engine's own keeps only outputs a run can still report)
          output: hit.output,
          trajectory: found?.trajectories?.[i] ?? Option.none(),
          objectiveScores: hit.objectiveScores,
          error: undefined,
          cached: true
        }
      } else if (!firstOf.has(id)) {
        firstOf.set(id, i)
        toRun.push(i)
      }
    }
    const examples = toRun.length === 0
      ? []
      : yield* (request.loader.fetch(toRun.map((i) => ids[i]!)) as Effect.Effect<ReadonlyArray<D>, DataLoaderError>)

    const size = pool.chunkSize
    const chunkCount = Math.ceil(toRun.length / size)

    // the write-ahead budget: a call is on record before it starts
    const reservation = Reservation.make(pool.reserve, request.iteration ?? 0, toRun.length, pool.reserveBlock ?? 1)
    const admit = reservation.admit

    // an unrecoverable model failure fails the evaluation: see `AdapterCall`
    let fatal: ModelUnrecoverable | undefined
    // a cache written at once (in memory): no effect per chunk
    const write = cache === undefined ? undefined : batchOf(cache)?.write
    // A cache written through an effect (a run folder's appends its lines to
    // a file, each write tens of microseconds of CPU): the chunks' results
    // are held and go out in one write when the evaluation ends, or once
    // `HOLD_MS` have passed since its chunks started or since its last write
    // (a slow adapter's results are written chunk by chunk, as they come).
    // Calls are on the write-ahead record before they start, so a kill
    // before the write is charged as lost work, never lost; the reservation
    // of calls never started is given back only after the write (`onExit`
    // below).
    const effectful = write === undefined ? cache : undefined
    let held: Array<readonly [CacheKey, CachedEvaluation<O>]> = []
    let lastWrite = performance.now()
    const release = (): Effect.Effect<void, PersistenceError> | undefined => {
      if (held.length === 0 || effectful === undefined) return undefined
      const out = held
      held = []
      return CacheAccess.write(effectful, out)
    }
    // The results of one chunk: `batch` when the call answered (checked),
    // else `failure`. Returns what is left to do (cache writes), or
    // `undefined` when everything is done.
    const settle = (from: number, to: number, batch: EvaluationBatch<T, O> | undefined, failure: string) => {
      for (let k = 0; k < to - from; k++) {
        const pos = toRun[from + k]!
        const id = ids[pos]!
        if (batch === undefined) {
          outcomes[pos] = failedOutcome(id, pool.fallbackScore, failure)
          continue
        }
        const error = batch.errors?.[k]
        if (error !== undefined) {
          // only results are cached: a failed example is evaluated again next time
          outcomes[pos] = failedOutcome(id, pool.fallbackScore, error)
          continue
        }
        const objectiveScores = batch.objectiveScores?.[k]
        const output = batch.outputs[k]!
        const score = batch.scores[k]!
        outcomes[pos] = {
          id,
          score,
          output: Option.some(output),
          trajectory: batch.trajectories ? Option.some(batch.trajectories[k]!) : Option.none(),
          objectiveScores,
          error: undefined,
          cached: false
        }
        if (cache !== undefined) {
          const iteration = request.iteration
          const value: CachedEvaluation<O> = request.captureTraces && codec !== undefined
            ? { output, score, objectiveScores, iteration, ...CacheAccess.encodeTrace(codec, batch.trajectories?.[k]) }
            : { output, score, objectiveScores, iteration }
          // cached as soon as the chunk is done (an effectful cache's results are held: see `held`)
          if (write !== undefined) write(keys.plain(id), value)
          else held.push([keys.plain(id), value])
        }
      }
      if (held.length === 0) return undefined
      const now = performance.now()
      if (now - lastWrite < HOLD_MS) return undefined
      lastWrite = now
      return release()
    }
    const wrapped = AdapterCall.isWrapped(pool)
    const options = { captureTraces: request.captureTraces }
    const callOf = wrapped ? AdapterCall.wrapped(pool, candidate, options, request.call) : undefined
    if (chunkCount > 0) {
      let next = 0
      type Failure = AdapterContractError | PersistenceError | ModelUnrecoverable
      // A worker keeps its permit for the next chunk only while its calls
      // return within a time slice: a fast (in-process) adapter then pays for
      // one permit per slice instead of one per call, and a slow one still
      // gives its slot back after every call, so other evaluations in flight
      // get their turn. In-flight calls never exceed the permits either way.
      //
      // One slice runs its chunks one after the other in one fiber, so its
      // handlers are made once per slice and read the chunk from the slice's
      // cursor: a fast adapter's call costs its own effect, one match and
      // one step on, nothing else of ours.
      const slice = (started: number): Effect.Effect<void, Failure> => {
        let from = 0
        let to = 0
        let callStart = 0
        // runs under a permit taken by the worker, before the timeout starts:
        // queueing time must not count against the call. Once a call failed
        // unrecoverably, chunks not started yet do not start: the evaluation is over.
        const onFailure = (e: AdapterCall.CallError): Effect.Effect<void, Failure> => {
          const failure = AdapterCall.fatalOf(e, wrapped)
          if (failure !== undefined) {
            fatal ??= failure
            return Effect.fail(failure)
          }
          const rest = settle(from, to, undefined, describe(e))
          return rest === undefined ? onward() : Effect.zipRight(rest, after)
        }
        const onSuccess = (batch: EvaluationBatch<T, O>): Effect.Effect<void, Failure> => {
          const breach = contractBreach(to - from, request.captureTraces, batch)
          if (breach !== undefined) return Effect.fail(new AdapterContractError({ call: request.call, detail: breach }))
          const rest = settle(from, to, batch, "")
          return rest === undefined ? onward() : Effect.zipRight(rest, after)
        }
        const handlers = { onFailure, onSuccess }
        // paid once the call starts (retries of the same examples are not new metric calls)
        const call = (batch: ReadonlyArray<D>) => {
          reservation.start(to - from)
          return Effect.matchEffect(
            // (called inside a suspension or a handler: a throw is a defect either way)
            callOf !== undefined ? callOf(batch) : pool.adapter.evaluate(batch, candidate, options),
            handlers
          )
        }
        // What follows a chunk: the next chunk of the slice, or its end. A
        // handler calls it directly when it has nothing left to do (a fast
        // adapter's every call): one step fewer per call than a suspension.
        const onward = (): Effect.Effect<void, Failure> => {
          const now = performance.now()
          if (pool.pace !== undefined) pool.pace.fast = now - callStart < SLICE_MS
          return now - started < SLICE_MS ? nextChunk() : Effect.void
        }
        const after: Effect.Effect<void, Failure> = Effect.suspend(onward)
        const nextChunk = (): Effect.Effect<void, Failure> => {
          if (next >= chunkCount) return Effect.void
          if (fatal !== undefined) return Effect.fail(fatal)
          callStart = performance.now()
          from = next++ * size
          to = Math.min(toRun.length, from + size)
          const batch: Array<D> = new Array(to - from)
          for (let k = from; k < to; k++) batch[k - from] = examples[k]!
          // the handlers go on to `onward`
          return admit === undefined ? call(batch) : Effect.zipRight(admit(to - from), Effect.suspend(() => call(batch)))
        }
        return Effect.suspend(nextChunk)
      }
      // the chunks of an evaluation on the validation set wait behind any minibatch evaluation's
      const withPermit = request.split === "train" ? pool.withFirstPermit ?? pool.withPermit : pool.withPermit
      const worker: Effect.Effect<void, Failure> = Effect.suspend(() =>
        next >= chunkCount
          ? Effect.void
          : Effect.zipRight(withPermit(Effect.suspend(() => slice(performance.now()))), worker)
      )
      const forked = (): Effect.Effect<void, Failure> => {
        const workers = Math.min(chunkCount - next, pool.workers)
        return workers <= 0
          ? Effect.void
          : workers === 1
          ? worker
          : Effect.all(Array.from({ length: workers }, () => worker), { concurrency: "unbounded", discard: true })
      }
      // while the adapter is fast, the calling fiber is the only worker; it
      // stops at the first slow call and forks workers for what is left
      const pace = pool.pace
      const inline: Effect.Effect<void, Failure> = Effect.suspend(() =>
        next >= chunkCount || pace?.fast !== true
          ? Effect.void
          : Effect.zipRight(withPermit(Effect.suspend(() => slice(performance.now()))), inline)
      )
      const runAll = pace === undefined || Math.min(chunkCount, pool.workers) === 1
        ? Effect.suspend(forked)
        : Effect.suspend(() => (pace.fast ? Effect.zipRight(inline, Effect.suspend(forked)) : forked()))
      // the held results are written however the chunks ended (a failure or
      // an interruption keeps what was paid for); then the calls reserved and
      // never started are given back
      const written = effectful === undefined
        ? runAll
        : Effect.onExit(
          Effect.zipRight(runAll, Effect.suspend(() => release() ?? Effect.void)),
          // (after a success the held results were written above; a failed write fails the evaluation)
          (exit) => (exit._tag === "Success" ? Effect.void : Effect.ignore(Effect.suspend(() => release() ?? Effect.void)))
        )
      yield* admit === undefined ? written : Effect.onExit(written, reservation.giveBack)
    }
    // a repeated id: same outcome as its first occurrence
    for (let i = 0; i < ids.length; i++) if (outcomes[i] === undefined) outcomes[i] = outcomes[firstOf.get(ids[i]!)!]!
    return { outcomes, spent: Ledger.charge(toRun.length, owedHits) }
  })
