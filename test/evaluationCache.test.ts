import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import fc from "fast-check"
import { makeTask } from "../bench/task.js"
import * as EvaluationCache from "../src/EvaluationCache.js"
import type { GepaEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"

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

  it.effect("an entry whose output is undefined is a hit", () =>
    Effect.gen(function*() {
      const cache = EvaluationCache.memory<string | undefined>()
      yield* cache.set(key("1"), { output: undefined, score: 0.5, iteration: 2 })
      const hit = yield* cache.get(key("1"))
      expect(Option.isSome(hit)).toBe(true)
      expect(Option.getOrThrow(hit)).toEqual({ output: undefined, score: 0.5, iteration: 2 })
    }))

  it.effect("an entry kept without its output serves its score to getScores and peek, and is absent for get and getMany", () =>
    Effect.gen(function*() {
      const cache = EvaluationCache.memory<string>(undefined, { keepOutput: (k, v) => k.id === "1" || v.score > 0.5 })
      const batch = defined(EvaluationCache.batchOf(cache))
      yield* batch.setMany([[key("1"), { output: "a", score: 0 }], [key("2"), { output: "b", score: 0.25, iteration: 3 }]])
      defined(batch.write)(key("3"), { output: "c", score: 1 })
      expect(yield* batch.getMany([key("1"), key("2"), key("3")])).toEqual([{ output: "a", score: 0 }, undefined, { output: "c", score: 1 }])
      expect(yield* cache.get(key("2"))).toEqual(Option.none())
      expect(yield* defined(batch.getScores)([key("1"), key("2"), key("4")])).toEqual([
        { output: Option.some("a"), score: 0 },
        { output: Option.none(), score: 0.25, iteration: 3 },
        undefined
      ])
      expect(batch.peek?.([key("2")])).toEqual([{ output: Option.none(), score: 0.25, iteration: 3 }])
      // the visibility hint applies to entries without output too
      expect(yield* defined(batch.getScores)([{ ...key("2"), visibleUpTo: 2 }])).toEqual([undefined])
      expect(yield* cache.size).toBe(3)
    }))

  it("reads what was written, in any order of examples and candidates (against a plain map)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            c: fc.integer({ min: 0, max: 3 }),
            id: fc.integer({ min: 0, max: 40 }),
            iteration: fc.integer({ min: 0, max: 5 }),
            // entries kept whole beside the packed ones, which must follow their example as others are inserted before it
            whole: fc.boolean()
          }),
          { maxLength: 300, size: "max" }
        ),
        (writes) => {
          const cache = EvaluationCache.memory<string>()
          const batch = defined(EvaluationCache.batchOf(cache))
          const model = new Map<string, EvaluationCache.CachedEvaluation<string>>()
          const keyOf = (c: number, id: number): EvaluationCache.CacheKey => ({ candidateHash: `c${c}`, split: "val", id: `${id}`, contentHash: `h${id}` })
          writes.forEach(({ c, id, iteration, whole }, n) => {
            const value = whole
              ? { output: `o${n}`, score: n / 4, iteration, objectiveScores: { n } }
              : { output: `o${n}`, score: n / 4, iteration }
            defined(batch.write)(keyOf(c, id), value)
            const k = `${c}/${id}`
            const old = model.get(k)
            // an earlier iteration's result replaces a later one's
            if (old === undefined || iteration < (old.iteration ?? 0)) model.set(k, value)
          })
          for (let c = 0; c <= 3; c++) {
            for (let id = 0; id <= 40; id++) {
              const expected = model.get(`${c}/${id}`)
              expect(batch.peek?.([keyOf(c, id)])).toEqual([expected])
              expect(Effect.runSync(defined(batch.getScores)([keyOf(c, id)]))).toEqual([
                expected === undefined ? undefined : { ...expected, output: Option.some(expected.output) }
              ])
            }
          }
          expect(Effect.runSync(cache.size)).toBe(model.size)
        }
      ),
      { numRuns: 200 }
    )
  })

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

describe("the run's own cache", () => {
  const taskOptions = { components: 2, keywordsPerComponent: 6, trainSize: 30, valSize: 10, learnPermille: 400 }
  const runWith = (cache: EvaluationCache.EvaluationCache<string> | undefined, onEvent: (event: GepaEvent) => void) =>
    Effect.gen(function*() {
      const task = makeTask(taskOptions)
      return yield* Gepa.optimize({
        seedCandidate: task.seedCandidate,
        trainset: task.trainset,
        // examples shared with the training set: a child's minibatch results serve its validation
        valset: task.trainset.slice(0, 10),
        adapter: task.adapter,
        reflectionModel: task.reflectionModel,
        maxMetricCalls: 600,
        seed: 3,
        merge: true,
        onEvent,
        ...(cache === undefined ? {} : { cache })
      })
    })

  it.effect("keeps only outputs a run can report: the same run and best outputs as a cache that keeps every output", () =>
    Effect.gen(function*() {
      let servedOnValidation = 0
      const own = yield* runWith(undefined, (e) => {
        if (e._tag === "EvaluationEnded" && e.purpose === "validation") servedOnValidation += e.cacheHits
      })
      const all = yield* runWith(EvaluationCache.memory<string>(), () => {})
      expect(own.state).toEqual(all.state)
      expect(own.totalMetricCalls).toBe(all.totalMetricCalls)
      expect(own.bestOutputs).toEqual(all.bestOutputs)
      expect(Object.keys(own.bestOutputs).length).toBe(taskOptions.valSize)
      // validations were served from the cache (outputs read back, or dropped where the run could not read them)
      expect(servedOnValidation).toBeGreaterThan(0)
    }))
})
