/**
 * Fault injection draws each call's fault from the seed, the call's content
 * and how many times it failed before: the same seed gives the same faults
 * whatever order concurrent calls arrive in, and a retried call draws again.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Adapter from "../src/Adapter.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as LanguageModel from "../src/LanguageModel.js"

type Example = { readonly id: number }
const inner = Adapter.fromBatch<Example, unknown, string>({
  evaluate: (batch) => Effect.succeed({ outputs: batch.map((e) => `out ${e.id}`), scores: batch.map(() => 1) }),
  makeReflectiveDataset: () => Effect.succeed({})
})
const batches = Array.from({ length: 40 }, (_, i) => [{ id: i }, { id: 100 + i }])
const candidate = { prompt: "Answer." }

// which batches fail, calling them in `order` through a fresh wrapper with `seed`
const failing = (order: ReadonlyArray<number>, seed: number) =>
  Effect.gen(function*() {
    const { adapter } = FaultInjection.adapter(inner, { failureRate: 0.4, seed })
    const failed: Array<number> = []
    for (const i of order) {
      const out = yield* Effect.either(adapter.evaluate(batches[i]!, candidate, { captureTraces: false }))
      if (Either.isLeft(out)) failed.push(i)
    }
    return failed.sort((a, b) => a - b)
  })

describe("FaultInjection", () => {
  it.effect("the same seed fails the same calls in any order; another seed fails others", () =>
    Effect.gen(function*() {
      const forward = Array.from({ length: 40 }, (_, i) => i)
      const mixed = forward.map((i) => (i * 17) % 40)
      const a = yield* failing(forward, 3)
      const b = yield* failing(forward.slice().reverse(), 3)
      const c = yield* failing(mixed, 3)
      assert.deepStrictEqual(b, a)
      assert.deepStrictEqual(c, a)
      // about 40 % of 40 calls
      assert.isAbove(a.length, 6)
      assert.isBelow(a.length, 26)
      assert.notDeepEqual(yield* failing(forward, 4), a)
    }))

  it.effect("a retried call draws again, the same way every time", () =>
    Effect.gen(function*() {
      const attempts = (seed: number) =>
        Effect.gen(function*() {
          const { adapter, stats } = FaultInjection.adapter(inner, { failureRate: 0.5, seed })
          const outcomes: Array<boolean> = []
          for (let k = 0; k < 12; k++) {
            outcomes.push(Either.isRight(yield* Effect.either(adapter.evaluate(batches[0]!, candidate, { captureTraces: false }))))
          }
          return { outcomes, stats: { ...stats } }
        })
      const first = yield* attempts(7)
      assert.deepStrictEqual(yield* attempts(7), first)
      // the same call does not always fail; once it answered, it answers again
      assert.isTrue(first.outcomes.includes(true) && first.outcomes.includes(false))
      assert.isTrue(first.outcomes.slice(first.outcomes.indexOf(true)).every((ok) => ok))
      assert.strictEqual(first.stats.calls, 12)
      assert.strictEqual(first.stats.failures, first.outcomes.filter((ok) => !ok).length)
    }))

  it.effect("a model's faults follow its prompts, not the order of its calls", () =>
    Effect.gen(function*() {
      const prompts = Array.from({ length: 30 }, (_, i) => `improve component ${i}`)
      const failed = (order: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const { model } = FaultInjection.languageModel(LanguageModel.fromFunction(() => "ok"), { failureRate: 0.4, seed: 1 })
          const out: Array<string> = []
          for (const p of order) if (Either.isLeft(yield* Effect.either(model.complete(p)))) out.push(p)
          return out.sort()
        })
      const a = yield* failed(prompts)
      assert.deepStrictEqual(yield* failed(prompts.slice().reverse()), a)
      assert.isAbove(a.length, 0)
    }))
})
