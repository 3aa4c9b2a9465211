/**
 * Batched access to caches the library built itself. Registered per cache
 * object, not as fields of the public interface: a user who decorates a
 * cache with `{ ...cache, set: ... }` gets a new object, which is not
 * registered, so every read and write still goes through their `get` and
 * `set`.
 *
 * @internal
 */
import type { Effect } from "effect"
import type { PersistenceError } from "../Errors.js"
import type { CachedEvaluation, CacheKey, EvaluationCache } from "../EvaluationCache.js"

/** @internal */
export interface Batched<O> {
  readonly getMany: (keys: ReadonlyArray<CacheKey>) => Effect.Effect<ReadonlyArray<CachedEvaluation<O> | undefined>>
  readonly setMany: (entries: ReadonlyArray<readonly [CacheKey, CachedEvaluation<O>]>) => Effect.Effect<void, PersistenceError>
}

const registry = new WeakMap<object, Batched<unknown>>()

/** @internal */
export const register = <O>(cache: EvaluationCache<O>, batched: Batched<O>): EvaluationCache<O> => {
  registry.set(cache, batched as Batched<unknown>)
  return cache
}

/** @internal */
export const batched = <O>(cache: EvaluationCache<O>): Batched<O> | undefined => registry.get(cache) as Batched<O> | undefined

/**
 * Reads without side effects: the results a key would be served, without
 * charging an owed payment (a run directory's `get` charges one). Used to
 * decide from what is already known, never to serve an evaluation.
 *
 * @internal
 */
export type Peek<O> = (keys: ReadonlyArray<CacheKey>) => ReadonlyArray<CachedEvaluation<O> | undefined>

const peeks = new WeakMap<object, Peek<unknown>>()

/** @internal */
export const registerPeek = <O>(cache: EvaluationCache<O>, peek: Peek<O>): EvaluationCache<O> => {
  peeks.set(cache, peek as Peek<unknown>)
  return cache
}

/** @internal */
export const peekOf = <O>(cache: EvaluationCache<O>): Peek<O> | undefined => peeks.get(cache) as Peek<O> | undefined
