/**
 * The evaluation cache: (candidate hash, split, example content hash) -> output and
 * score. A hit costs no metric call. The engine uses it for evaluations
 * without traces: validation, merge subsamples and child minibatches.
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import type { PersistenceError } from "./Errors.js"
import type { ObjectiveScores } from "./EvaluationBatch.js"
import { register } from "./internal/cacheBatch.js"

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
  `${key.candidateHash}\u0000${key.split}\u0000${key.contentHash ?? key.id}`

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
  return register<O>({
    get: (key) => Effect.sync(() => Option.fromNullable(entries.get(keyString(key)))),
    set: (key, value) => Effect.sync(() => void entries.set(keyString(key), value)),
    size: Effect.sync(() => entries.size)
  }, {
    // one effect per evaluation instead of one per example: the hot path of a fast adapter
    getMany: (keys) => Effect.sync(() => keys.map((key) => entries.get(keyString(key)))),
    setMany: (list) =>
      Effect.sync(() => {
        for (const [key, value] of list) entries.set(keyString(key), value)
      })
  })
}
