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
import { register, registerPeek } from "./internal/cacheBatch.js"

/**
 * Which data set an evaluation belongs to.
 *
 * @since 0.1.0
 * @category models
 */
export type Split = "train" | "val"

/**
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
 * A cache of evaluations. Persistent implementations write through.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvaluationCache<O> {
  readonly get: (key: CacheKey) => Effect.Effect<Option.Option<CachedEvaluation<O>>>
  readonly set: (key: CacheKey, value: CachedEvaluation<O>) => Effect.Effect<void, PersistenceError>
  readonly size: Effect.Effect<number>
}

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
export const isVisible = (key: CacheKey, hit: CachedEvaluation<unknown>): boolean =>
  key.visibleUpTo === undefined || hit.iteration === undefined || hit.iteration <= key.visibleUpTo ||
  hit.iteration === key.requestedBy

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
  existing: CachedEvaluation<O> | undefined,
  next: CachedEvaluation<O>
): boolean =>
  existing === undefined ||
  (next.iteration ?? Number.NEGATIVE_INFINITY) < (existing.iteration ?? Number.NEGATIVE_INFINITY)

/**
 * An in-memory cache, optionally pre-filled (for example from a run
 * directory's cache file).
 *
 * @since 0.1.0
 * @category constructors
 */
export const memory = <O>(
  initial?: Iterable<readonly [string, CachedEvaluation<O>]>
): EvaluationCache<O> => {
  const entries = new Map<string, CachedEvaluation<O>>(initial ?? [])
  const lookup = (key: CacheKey): CachedEvaluation<O> | undefined => {
    const hit = entries.get(keyString(key))
    return hit !== undefined && isVisible(key, hit) ? hit : undefined
  }
  const store = (key: CacheKey, value: CachedEvaluation<O>): void => {
    const k = keyString(key)
    if (replaces(entries.get(k), value)) entries.set(k, value)
  }
  const cache = register<O>({
    get: (key) => Effect.sync(() => Option.fromNullable(lookup(key))),
    set: (key, value) => Effect.sync(() => store(key, value)),
    size: Effect.sync(() => entries.size)
  }, {
    // one effect per evaluation instead of one per example: the hot path of a fast adapter
    getMany: (keys) => Effect.sync(() => keys.map(lookup)),
    setMany: (list) =>
      Effect.sync(() => {
        for (const [key, value] of list) store(key, value)
      })
  })
  return registerPeek(cache, (keys) => keys.map(lookup))
}
