import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as EvaluationCache from "../src/EvaluationCache.js"

const defined = <A>(a: A | undefined): A => {
  if (a === undefined) throw new Error("expected a value")
  return a
}

const key = (id: string): EvaluationCache.CacheKey => ({ candidateHash: "c", split: "val", id, contentHash: `h${id}` })

describe("EvaluationCache batch API", () => {
  it.effect("a memory cache batches its reads and writes, and peeks without side effects", () =>
    Effect.gen(function*() {
      const cache = EvaluationCache.memory<string>()
      const batch = defined(EvaluationCache.batchOf(cache))
      yield* batch.setMany([[key("1"), { output: "a", score: 1 }]])
      expect(yield* batch.getMany([key("1"), key("2")])).toEqual([{ output: "a", score: 1 }, undefined])
      expect(batch.peek?.([key("1")])).toEqual([{ output: "a", score: 1 }])
      expect(yield* cache.size).toBe(1)
    }))

  it.effect("a decorator that replaces get or set is used key by key: its own set sees every write", () =>
    Effect.gen(function*() {
      const inner = EvaluationCache.memory<string>()
      const seen: Array<string> = []
      const decorated: EvaluationCache.EvaluationCache<string> = {
        ...inner,
        set: (k, v) => Effect.zipRight(Effect.sync(() => seen.push(k.id)), inner.set(k, v))
      }
      expect(EvaluationCache.batchOf(decorated)).toBeUndefined()
      // a plain copy reads and writes like the original: its batch still applies
      expect(EvaluationCache.batchOf({ ...inner })).toBeDefined()
      yield* decorated.set(key("1"), { output: "a", score: 1 })
      expect(seen).toEqual(["1"])
    }))

  it.effect("withPeek: batched reads go through the cache's own get", () =>
    Effect.gen(function*() {
      const gets: Array<string> = []
      const base = EvaluationCache.memory<string>()
      const cache = EvaluationCache.withPeek<string>({
        get: (k) => Effect.zipRight(Effect.sync(() => gets.push(k.id)), base.get(k)),
        set: base.set,
        size: base.size
      }, () => [])
      const batch = defined(EvaluationCache.batchOf(cache))
      yield* batch.setMany([[key("1"), { output: "a", score: 1 }]])
      expect(yield* batch.getMany([key("1"), key("2")])).toEqual([{ output: "a", score: 1 }, undefined])
      expect(gets).toEqual(["1", "2"])
      expect(Option.isSome(yield* cache.get(key("1")))).toBe(true)
    }))
})
