/**
 * How an evaluation reads and writes the evaluation cache: the keys (the
 * candidate's hash, the example's content, and the hints a lookup carries),
 * one read or write for many keys when the cache can do it, and the checks
 * the engine makes on a hit whatever the cache did (visibility, and a traced
 * result only for the iteration that paid for it, with a trajectory that
 * decodes). See `evaluate.ts`.
 *
 * @internal
 */
import { Effect, Option } from "effect"
import type { Adapter } from "../../Adapter.js"
import type { PersistenceError } from "../../Errors.js"
import { batchOf, type CacheKey, type CachedEvaluation, type CachedScore, type EvaluationCache, isVisible, type Split } from "../../EvaluationCache.js"

/** What a lookup asks for. @internal */
export interface Lookup {
  readonly ids: ReadonlyArray<string>
  readonly split: Split
  readonly captureTraces: boolean
  readonly iteration?: number | undefined
  readonly visibleUpTo?: number | undefined
}

/** The keys of one evaluation: with the lookup's hints (`hinted`, for reads), or plain (for writes). @internal */
export interface Keys {
  readonly hinted: () => ReadonlyArray<CacheKey>
  readonly plain: (id: string) => CacheKey
  /** the hints every read carries (see `CacheKey`) */
  readonly asker: { readonly requestedBy: number | undefined; readonly traced: boolean; readonly visibleUpTo: number | undefined }
}

/** @internal */
export const keysOf = (
  exampleKey: ((split: Split, id: string) => string) | undefined,
  hash: string,
  lookup: Lookup
): Keys => {
  const { ids, split } = lookup
  const asker = { requestedBy: lookup.iteration, traced: lookup.captureTraces, visibleUpTo: lookup.visibleUpTo }
  return {
    asker,
    // one object per key, with the hints in it (no spread copies: this runs per example)
    hinted: () =>
      ids.map((id): CacheKey => ({
        candidateHash: hash,
        split,
        id,
        contentHash: exampleKey === undefined ? undefined : exampleKey(split, id),
        requestedBy: asker.requestedBy,
        traced: asker.traced,
        visibleUpTo: asker.visibleUpTo
      })),
    plain: (id) =>
      exampleKey === undefined
        ? { candidateHash: hash, split, id }
        : { candidateHash: hash, split, id, contentHash: exampleKey(split, id) }
  }
}

/**
 * What a lookup may use, by position: the hits (a miss is `undefined`), and
 * for a traced lookup each hit's decoded trajectory.
 *
 * @internal
 */
export interface Read<T, O> {
  readonly hits: ReadonlyArray<CachedScore<O> | undefined>
  readonly trajectories: ReadonlyArray<Option.Option<T>> | undefined
}

/**
 * The usable hits of a lookup: a hit the lookup may not see (a cache that
 * ignores the visibility hint), or a traced one paid by another iteration or
 * whose trajectory does not decode, is a miss. (No copy per hit: this runs
 * per example.)
 *
 * @internal
 */
export const read = <T, O>(
  cache: EvaluationCache<O>,
  codec: Adapter<unknown, T, O>["traceCodec"],
  keys: Keys,
  lookup: Lookup
): Effect.Effect<Read<T, O>> =>
  Effect.map(getAll(cache, keys.hinted()), (found) => {
    const hits = found.slice()
    if (!lookup.captureTraces) {
      for (let i = 0; i < hits.length; i++) {
        const hit = hits[i]
        if (hit !== undefined && !isVisible(keys.asker, hit)) hits[i] = undefined
      }
      return { hits, trajectories: undefined }
    }
    const trajectories = new Array<Option.Option<T>>(hits.length)
    for (let i = 0; i < hits.length; i++) {
      const hit = hits[i]
      trajectories[i] = Option.none()
      if (hit === undefined) continue
      if (hit.iteration !== lookup.iteration || hit.trajectory === undefined || codec === undefined) {
        hits[i] = undefined
        continue
      }
      try {
        trajectories[i] = Option.some(codec.decode(hit.trajectory))
      } catch {
        hits[i] = undefined
      }
    }
    return { hits, trajectories }
  })

/** A trajectory in its stored form; none when the codec cannot encode it (it is then evaluated again when needed). @internal */
export const encodeTrace = <T>(codec: NonNullable<Adapter<unknown, T, unknown>["traceCodec"]>, t: T | undefined): { trajectory?: unknown } => {
  if (t === undefined) return {}
  try {
    return { trajectory: codec.encode(t) }
  } catch {
    return {}
  }
}

/**
 * One read for all keys when the cache can do it, one per key otherwise.
 * Outputs come as options: a cache may keep a result without its output
 * (`Batch.getScores`).
 */
const getAll = <O>(
  cache: EvaluationCache<O>,
  keys: ReadonlyArray<CacheKey>
): Effect.Effect<ReadonlyArray<CachedScore<O> | undefined>> => {
  const fast = batchOf(cache)
  if (fast?.getScores !== undefined) return fast.getScores(keys)
  const withOutput = (hit: CachedEvaluation<O> | undefined): CachedScore<O> | undefined =>
    hit === undefined ? undefined : { ...hit, output: Option.some(hit.output) }
  return fast !== undefined
    ? Effect.map(fast.getMany(keys), (hits) => hits.map(withOutput))
    : Effect.forEach(keys, (key) => Effect.map(cache.get(key), (hit) => withOutput(Option.getOrUndefined(hit))))
}

/** One write for all entries when the cache can do it (one after the other otherwise). @internal */
export const write = <O>(
  cache: EvaluationCache<O>,
  entries: ReadonlyArray<readonly [CacheKey, CachedEvaluation<O>]>
): Effect.Effect<void, PersistenceError> =>
  batchOf(cache)?.setMany(entries) ?? Effect.forEach(entries, ([key, value]) => cache.set(key, value), { discard: true })
