/**
 * The evaluation cache: (candidate hash, example content hash) -> output and
 * score. A hit costs no metric call. The engine uses it for evaluations
 * without traces: validation, merge subsamples and child minibatches. An
 * example is the same example whatever split it is evaluated in (its content
 * decides), so a pair is paid once even when the training and validation sets
 * share examples, as optimize-anything's multi-task mode does.
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import type { PersistenceError } from "./Errors.js"
import type { ObjectiveScores } from "./EvaluationBatch.js"
import { ExampleNumbers, PackedResults } from "./internal/shared/packedResults.js"

/**
 * Which data set an evaluation belongs to.
 *
 * @since 0.1.0
 * @category models
 */
export type Split = "train" | "val"

/**
 * What a cached evaluation is stored under (the candidate, the split, the
 * example), with lookup hints that are not part of the key.
 *
 * @since 0.1.0
 * @category models
 */
export interface CacheKey {
  readonly candidateHash: string
  readonly split: Split
  readonly id: string
  /**
   * the content hash of the example (since 0.2.0): what the key stands for,
   * so that a cached result is never attached to another example under the
   * same id; the id alone identifies the example when absent
   */
  readonly contentHash?: string | undefined
  /**
   * lookup hints, not part of the key (since 0.2.0): the iteration asking,
   * and whether it needs the trajectory. A cache that stores trajectories
   * per paying iteration (a run directory) returns the asker's own; one
   * that keeps a single value per key may ignore them.
   */
  readonly requestedBy?: number | undefined
  readonly traced?: boolean | undefined
  /**
   * lookup hint (since 0.3.0): only results paid for by iterations up to
   * this one (or by `requestedBy` itself) may be served. Proposals in flight
   * side by side never see each other's results, so whether a pair is paid
   * does not depend on which of them happened to run first: the run is the
   * same at any `maxConcurrency`. A cache that ignores it is still correct;
   * the engine checks `CachedEvaluation.iteration` against it again.
   */
  readonly visibleUpTo?: number | undefined
}

/**
 * One cached evaluation: the output, the score and who paid for it.
 *
 * @since 0.1.0
 * @category models
 */
export interface CachedEvaluation<O> {
  readonly output: O
  readonly score: number
  readonly objectiveScores?: ObjectiveScores | undefined
  /**
   * The evaluation was paid for by a run that stopped before saving the
   * state counting it (a crash mid-iteration). The first hit on it is charged
   * as a metric call, so a resumed run spends exactly what an uninterrupted
   * one does, without calling the adapter again.
   */
  readonly owed?: boolean | undefined
  /**
   * The iteration (proposal) that paid for it. A run directory marks entries
   * of proposals still in flight at the last save as owed on resume: the
   * saved state does not count them yet.
   */
  readonly iteration?: number | undefined
  /**
   * The trajectory, encoded by the adapter's `traceCodec`, when the
   * evaluation captured traces and the adapter can store them. Served only to
   * the iteration that paid for it: a proposal re-launched after a crash.
   */
  readonly trajectory?: unknown
}

/**
 * A cached result whose output the cache may not have kept (see
 * `MemoryOptions.keepOutput`): what `Batch.getScores` serves.
 *
 * @since 0.3.0
 * @category models
 */
export interface CachedScore<O> extends Omit<CachedEvaluation<O>, "output"> {
  readonly output: Option.Option<O>
}

/**
 * A cache of evaluations. Persistent implementations write through.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvaluationCache<O> {
  readonly get: (key: CacheKey) => Effect.Effect<Option.Option<CachedEvaluation<O>>>
  readonly set: (key: CacheKey, value: CachedEvaluation<O>) => Effect.Effect<void, PersistenceError>
  readonly size: Effect.Effect<number>
  /**
   * Batched access (since 0.3.0), optional: the caches this library builds
   * have it, a cache of your own need not. Used only while `get` and `set`
   * are the ones it was built with (see `batchOf`).
   */
  readonly batch?: Batch<O> | undefined
}

/**
 * Batched access to a cache: one effect for an evaluation's keys instead of
 * one per example (the hot path of a fast adapter), and reads without side
 * effects. It names the `get` and `set` it reads and writes like: a decorator
 * that replaces either (`{ ...cache, set: mySet }`) keeps the object but not
 * the equality, so `batchOf` ignores it and every read and write of the
 * decorated cache goes through the decorator's own `get` and `set`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Batch<O> {
  /** the `get` this batch reads like */
  readonly get: EvaluationCache<O>["get"]
  /** the `set` this batch writes like */
  readonly set: EvaluationCache<O>["set"]
  readonly getMany: (keys: ReadonlyArray<CacheKey>) => Effect.Effect<ReadonlyArray<CachedEvaluation<O> | undefined>>
  readonly setMany: (entries: ReadonlyArray<readonly [CacheKey, CachedEvaluation<O>]>) => Effect.Effect<void, PersistenceError>
  /**
   * The results the keys would be served, without side effects: an owed
   * payment is not charged (a run directory's `get` charges one). Used to
   * decide from what is already known, never to serve an evaluation;
   * `undefined` when the cache cannot read so. Outputs are not read.
   */
  readonly peek: ((keys: ReadonlyArray<CacheKey>) => ReadonlyArray<Omit<CachedEvaluation<O>, "output"> | undefined>) | undefined
  /**
   * `getMany` for a reader that can do without an output (since 0.3.0),
   * optional: it also serves the results whose output the cache did not
   * keep, which `get` and `getMany` treat as absent (see
   * `MemoryOptions.keepOutput`).
   */
  readonly getScores?: ((keys: ReadonlyArray<CacheKey>) => Effect.Effect<ReadonlyArray<CachedScore<O> | undefined>>) | undefined
  /**
   * `set` done at once (since 0.3.0), optional: for a cache in memory,
   * whose writes need no effect. The engine writes a fast adapter's results
   * through it, without an effect per call.
   */
  readonly write?: ((key: CacheKey, value: CachedEvaluation<O>) => void) | undefined
}

/**
 * The cache's batched access, when it has one that still reads and writes
 * like its `get` and `set`; `undefined` otherwise (the caller then goes key
 * by key).
 *
 * @since 0.3.0
 * @category utils
 */
export const batchOf = <O>(cache: EvaluationCache<O>): Batch<O> | undefined => {
  const batch = cache.batch
  return batch !== undefined && batch.get === cache.get && batch.set === cache.set ? batch : undefined
}

/**
 * A cache with a side-effect-free `peek` (see `Batch.peek`); its batched
 * reads and writes go key by key through its `get` and `set`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const withPeek = <O>(
  cache: Omit<EvaluationCache<O>, "batch">,
  peek: NonNullable<Batch<O>["peek"]>
): EvaluationCache<O> => ({
  ...cache,
  batch: {
    get: cache.get,
    set: cache.set,
    getMany: (keys) => Effect.forEach(keys, (key) => Effect.map(cache.get(key), Option.getOrUndefined)),
    setMany: (entries) => Effect.forEach(entries, ([key, value]) => cache.set(key, value), { discard: true }),
    peek
  }
})

/**
 * The key as one string.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyString = (key: CacheKey): string =>
  key.contentHash === undefined
    ? `${key.candidateHash}\u0000${key.split}\u0000${key.id}`
    : `${key.candidateHash}\u0000${key.contentHash}`

/**
 * Whether a cached result may serve `key`: paid for by an iteration the
 * asker may see (see `CacheKey.visibleUpTo`).
 *
 * @since 0.3.0
 * @category utils
 */
export const isVisible = (
  key: Pick<CacheKey, "requestedBy" | "visibleUpTo">,
  hit: Pick<CachedEvaluation<unknown>, "iteration">
): boolean => visibleAt(key, hit.iteration)

const visibleAt = (key: Pick<CacheKey, "requestedBy" | "visibleUpTo">, iteration: number | undefined): boolean =>
  key.visibleUpTo === undefined || iteration === undefined || iteration <= key.visibleUpTo || iteration === key.requestedBy

/**
 * Whether `next` replaces the result kept for its key: it does when it was
 * paid for by an earlier iteration. Two proposals in flight may pay for the same pair; the
 * earlier one in plan order is the one every later proposal may see,
 * whichever finished first.
 *
 * @since 0.3.0
 * @category utils
 */
export const replaces = <O>(
  existing: Pick<CachedEvaluation<O>, "iteration"> | undefined,
  next: Pick<CachedEvaluation<O>, "iteration">
): boolean => existing === undefined || replacesAt(existing.iteration, next.iteration)

const replacesAt = (existing: number | undefined, next: number | undefined): boolean =>
  (next ?? Number.NEGATIVE_INFINITY) < (existing ?? Number.NEGATIVE_INFINITY)

/**
 * An in-memory cache, optionally pre-filled (for example from a run
 * directory's cache file).
 *
 * Entries are held per candidate, packed in two arrays (each example's
 * content hash numbered once), so an entry costs four array cells, not a key
 * string or a map slot of its own: a long run keeps about a million of them,
 * and most candidates keep only the handful of a rejected child's
 * minibatch. An entry whose output is `undefined` (an adapter may return
 * one) is a hit like any other.
 *
 * @since 0.1.0
 * @category constructors
 */
export const memory = <O>(
  initial?: Iterable<readonly [string, CachedEvaluation<O>]>,
  options?: MemoryOptions<O>
): EvaluationCache<O> => {
  const byCandidate = new Map<string, Bucket<O>>()
  const examples = new ExampleNumbers()
  let size = 0
  const keepTrajectories = options?.trajectories ?? true
  const keepOutput = options?.keepOutput
  const put = (candidateHash: string, exampleKey: string, value: CachedEvaluation<O>, output: boolean): void => {
    let bucket = byCandidate.get(candidateHash)
    if (bucket === undefined) {
      bucket = new Bucket()
      byCandidate.set(candidateHash, bucket)
    }
    const example = examples.of(exampleKey)
    const found = bucket.find(example)
    const slot = found < 0 ? undefined : found
    if (slot !== undefined && !replacesAt(bucket.iteration(slot), value.iteration)) return
    if (slot === undefined) size++
    bucket.write(example, slot, value, keepTrajectories, output)
  }
  for (const [k, value] of initial ?? []) {
    const cut = k.indexOf("\u0000")
    put(k.slice(0, cut), k.slice(cut + 1), value, true)
  }
  // the visible slot of a key in its candidate's bucket, or -1
  const slotOf = (bucket: Bucket<O> | undefined, key: CacheKey): number => {
    if (bucket === undefined) return -1
    const example = examples.get(exampleKey(key))
    const slot = example === undefined ? -1 : bucket.find(example)
    return slot < 0 || !visibleAt(key, bucket.iteration(slot)) ? -1 : slot
  }
  const lookup = (key: CacheKey): CachedEvaluation<O> | undefined => {
    const bucket = byCandidate.get(key.candidateHash)
    const slot = slotOf(bucket, key)
    return bucket === undefined || slot < 0 ? undefined : bucket.read(slot)
  }
  const lookupScore = (key: CacheKey): CachedScore<O> | undefined => {
    const bucket = byCandidate.get(key.candidateHash)
    const slot = slotOf(bucket, key)
    return bucket === undefined || slot < 0 ? undefined : bucket.readScore(slot)
  }
  const store = (key: CacheKey, value: CachedEvaluation<O>): void =>
    put(key.candidateHash, exampleKey(key), value, keepOutput === undefined || keepOutput(key, value))
  const get: EvaluationCache<O>["get"] = (key) => Effect.sync(() => Option.fromNullable(lookup(key)))
  const set: EvaluationCache<O>["set"] = (key, value) => Effect.sync(() => store(key, value))
  return {
    get,
    set,
    size: Effect.sync(() => size),
    batch: {
      get,
      set,
      // one effect per evaluation instead of one per example: the hot path of a fast adapter
      getMany: (keys) => Effect.sync(() => keys.map(lookup)),
      setMany: (list) =>
        Effect.sync(() => {
          for (const [key, value] of list) store(key, value)
        }),
      // with the output when it was kept (as `getMany` reads), else the score alone
      peek: (keys) => keys.map((key) => lookup(key) ?? lookupScore(key)),
      getScores: (keys) => Effect.sync(() => keys.map(lookupScore)),
      write: store
    }
  }
}

/** Where a bucket holds no output (see `MemoryOptions.keepOutput`). */
const noOutput: unique symbol = Symbol("effect-gepa/EvaluationCache/noOutput")

/**
 * One candidate's entries: packed (see `PackedResults`), an output the cache
 * chose not to keep marked `noOutput`; the rare entry with objective scores,
 * an owed flag or a trajectory is kept whole beside them, by example number.
 */
class Bucket<O> extends PackedResults<O | typeof noOutput> {
  whole: Map<number, CachedScore<O>> | undefined
  read(slot: number): CachedEvaluation<O> | undefined {
    const output = this.output(slot)
    if (output === noOutput) return undefined
    const whole = this.whole?.get(this.example(slot))
    if (whole !== undefined) {
      const { output: _, ...rest } = whole
      return { ...rest, output }
    }
    const iteration = this.iteration(slot)
    return iteration === undefined
      ? { output, score: this.score(slot) }
      : { output, score: this.score(slot), iteration }
  }
  readScore(slot: number): CachedScore<O> {
    const whole = this.whole?.get(this.example(slot))
    if (whole !== undefined) return whole
    const stored = this.output(slot)
    const output = stored === noOutput ? Option.none() : Option.some(stored)
    const iteration = this.iteration(slot)
    return iteration === undefined
      ? { output, score: this.score(slot) }
      : { output, score: this.score(slot), iteration }
  }
  write(example: number, existing: number | undefined, value: CachedEvaluation<O>, keepTrajectories: boolean, keepOutput: boolean): void {
    this.set(existing ?? this.add(example), keepOutput ? value.output : noOutput, value.score, value.iteration)
    const plain = value.objectiveScores === undefined && value.owed === undefined &&
      (value.trajectory === undefined || !keepTrajectories)
    if (plain) {
      this.whole?.delete(example)
      return
    }
    const { output, trajectory, ...rest } = value
    const kept = keepOutput ? Option.some(output) : Option.none()
    ;(this.whole ??= new Map()).set(example, keepTrajectories && trajectory !== undefined ? { ...rest, output: kept, trajectory } : { ...rest, output: kept })
  }
}

/**
 * Options of `memory`.
 *
 * @since 0.3.0
 * @category models
 */
export interface MemoryOptions<O = unknown> {
  /**
   * keep the trajectories evaluations hand in (default true). A trajectory
   * is served only to the proposal that paid for it, re-launched after a
   * crash; a cache that lives no longer than its run (the engine's default)
   * never serves one, and drops them to save memory.
   */
  readonly trajectories?: boolean | undefined
  /**
   * whether to keep an entry's output (default: every one). An entry kept
   * without its output still answers `Batch.getScores` and `peek` (its score,
   * with no output); `get` and `getMany`, which must hand out an output,
   * treat it as absent. The engine's own cache keeps only the outputs a run
   * can still report (one that beats the best output recorded for its
   * validation example): a run reads an output back from the cache for
   * nothing else, and outputs are most of what a long run's cache holds.
   *
   * @since 0.3.0
   */
  readonly keepOutput?: ((key: CacheKey, value: CachedEvaluation<O>) => boolean) | undefined
}

/** The part of a key after the candidate hash (see `keyString`). */
const exampleKey = (key: CacheKey): string => key.contentHash ?? `${key.split}\u0000${key.id}`
