import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import fc from "fast-check"
import { makeTask } from "../bench/task.js"
import { runOf, twoComponents } from "./fixtures/keywordTask.js"
import { recorder } from "./fixtures/stepRecorder.js"
import * as Strategy from "../src/Strategy.js"
import * as Gepa from "../src/Gepa.js"
import { rotated } from "../src/internal/engine/evidence.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as RunStore from "../src/RunStore.js"
import * as State from "../src/State.js"
import * as StopCondition from "../src/StopCondition.js"

const oneComponent = { ...twoComponents, components: 1, keywordsPerComponent: 16 }

describe("rewritesPerMinibatch", () => {
  it("orders the records of each rewrite differently: a permutation, 2n orders of n ≥ 3 records", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer(), { minLength: 0, maxLength: 8 }), fc.nat(40), (records, rewrite) => {
        const out = rotated(records, rewrite)!
        assert.deepStrictEqual([...out].sort((a, b) => a - b), [...records].sort((a, b) => a - b))
        if (rewrite === 0) assert.strictEqual(out, records)
      })
    )
    for (const n of [3, 4, 5]) {
      const records = Array.from({ length: n }, (_, i) => i)
      const orders = new Set(Array.from({ length: 2 * n }, (_, k) => rotated(records, k)!.join(",")))
      assert.strictEqual(orders.size, 2 * n)
    }
    assert.strictEqual(rotated(undefined, 2), undefined)
  })

  it.effect("one component, by default: three proposals per step rewrite it from one minibatch, whose evaluation of the parent is paid once", () =>
    Effect.gen(function*() {
      const task = makeTask(oneComponent)
      const seen = recorder()
      // the prompts the model was asked, by the set of records they show
      const prompts: Array<string> = []
      const model = LanguageModel.fromFunction((prompt) => {
        prompts.push(LanguageModel.promptText(prompt))
        return task.reflectionModel.complete(prompt).pipe(Effect.map((c) => c.text))
      })
      const result = yield* Gepa.optimize({ ...runOf(task), reflectionModel: model, maxMetricCalls: 400, seed: 3, onEvent: seen.onEvent })
      assert.isAtMost(result.totalMetricCalls, 400)
      const groups = seen.groups()
      let threes = 0
      for (const group of groups) {
        const first = group[0]!
        assert.isAtMost(group.length, 3)
        assert.isTrue(group.every((it) => seen.proposal.get(it)?.parent === seen.proposal.get(first)?.parent))
        for (const it of group.slice(1)) assert.isFalse(seen.parentEvaluations.has(it), `iteration ${it} paid for its parent again`)
        assert.isAtMost(seen.parentEvaluations.get(first) ?? 0, 1)
        if (group.length === 3) threes++
      }
      assert.isAbove(threes, 5)
      // the rewrites of one minibatch read the same records in different orders
      const recordsOf = (text: string) => [...text.matchAll(/a question of category (\d+)/g)].map((m) => m[1]).join(",")
      const bySet = new Map<string, Set<string>>()
      for (const text of prompts) {
        const order = recordsOf(text)
        const key = order.split(",").sort().join(",")
        bySet.set(key, (bySet.get(key) ?? new Set()).add(order))
      }
      assert.isAbove([...bySet.values()].filter((orders) => orders.size === 3).length, 5)
      // at most one child of a group is validated
      const accepted = new Set(result.state.trace.filter((t) => t.outcome === "accepted").map((t) => t.iteration))
      for (const group of groups) assert.isAtMost(group.filter((it) => accepted.has(it)).length, 1)
      assert.deepStrictEqual(State.checkConsistency(result.state), [])
    }))

  it.effect("given for several components: each is rewritten that many times on one minibatch", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      const seen = recorder()
      const result = yield* Gepa.optimize({
        ...runOf(task),
        proposalsPerStep: 4,
        proposalSampling: "same_minibatch",
        rewritesPerMinibatch: 2,
        maxMetricCalls: 400,
        seed: 3,
        onEvent: seen.onEvent
      })
      assert.strictEqual(result.state.fingerprint?.settings["rewritesPerMinibatch"], "2")
      let fours = 0
      for (const group of seen.groups()) {
        const counts = new Map<string, number>()
        for (const it of group) {
          const c = seen.proposal.get(it)!.components
          counts.set(c, (counts.get(c) ?? 0) + 1)
        }
        assert.isTrue([...counts.values()].every((n) => n <= 2))
        if (group.length === 4) fours++
      }
      assert.isAbove(fours, 5)
    }))

  it.effect("minibatches of one example (one record has one order) or a budget of a few validations: one component keeps the GEPA loop with adaptive steps", () =>
    Effect.gen(function*() {
      const loop = { proposalsPerStep: 8, proposalSampling: "independent", proposalSelection: "best", stepWidth: "adaptive" } as const
      assert.deepStrictEqual(Strategy.defaultFor(1, { minibatchSize: 1 }), loop)
      assert.strictEqual(Strategy.defaultFor(1, { minibatchSize: 2 }).rewritesPerMinibatch, 3)
      // a training set of one example makes minibatches of one, whatever the configured size
      assert.deepStrictEqual(Strategy.defaultFor(1, { minibatchSize: 3, trainsetSize: 1 }), loop)
      assert.strictEqual(Strategy.defaultFor(1, { trainsetSize: 2 }).rewritesPerMinibatch, 3)
      // a budget of fewer than fifteen validations: too few steps for three rewrites to pay
      assert.deepStrictEqual(Strategy.defaultFor(1, { budget: 149, valsetSize: 10 }), loop)
      assert.strictEqual(Strategy.defaultFor(1, { budget: 150, valsetSize: 10 }).rewritesPerMinibatch, 3)
      assert.strictEqual(Strategy.defaultFor(1, { valsetSize: 10 }).rewritesPerMinibatch, 3)
      // several components are not concerned
      assert.deepStrictEqual(Strategy.defaultFor(2, { minibatchSize: 1, budget: 20, valsetSize: 10 }), Strategy.defaultFor(2))
      const task = makeTask(oneComponent)
      const settingsOf = (r: Gepa.OptimizeResult<unknown>) => {
        const s = r.state.fingerprint?.settings ?? {}
        return [s["proposalsPerStep"], s["proposalSampling"], s["stepWidth"], s["rewritesPerMinibatch"]]
      }
      // the setting, or a training set of one example
      const small = yield* Gepa.optimize({ ...runOf(task), maxMetricCalls: 60, minibatchSize: 1 })
      assert.deepStrictEqual(settingsOf(small), ["8", "independent", "adaptive", "1"])
      const single = yield* Gepa.optimize({ ...runOf(task), trainset: task.trainset.slice(0, 1), maxMetricCalls: 60 })
      assert.deepStrictEqual(settingsOf(single), ["8", "independent", "adaptive", "1"])
      // the budget, in validations of the run's validation set (12 examples here)
      const short = yield* Gepa.optimize({ ...runOf(task), maxMetricCalls: 179 })
      assert.deepStrictEqual(settingsOf(short), ["8", "independent", "adaptive", "1"])
      const long = yield* Gepa.optimize({ ...runOf(task), maxMetricCalls: 180 })
      assert.deepStrictEqual(settingsOf(long), ["3", "same_minibatch", "fixed", "3"])
    }))

  it.effect("a bad value is refused in one line naming the setting", () =>
    Effect.gen(function*() {
      const task = makeTask(oneComponent)
      for (const bad of [0, 1.5, -2]) {
        const error = yield* Effect.flip(Gepa.optimize({ ...runOf(task), maxMetricCalls: 100, rewritesPerMinibatch: bad }))
        assert.strictEqual(error._tag, "ConfigError")
        if (error._tag === "ConfigError") assert.strictEqual(error.field, "rewritesPerMinibatch")
      }
    }))

  it.effect("a one-component run saved before the setting existed resumes with its own strategy, one rewrite per minibatch", () =>
    Effect.gen(function*() {
      const task = makeTask(oneComponent)
      const older = { proposalsPerStep: 8, proposalSampling: "independent", proposalSelection: "best", stepWidth: "adaptive" } as const
      const first = yield* Gepa.optimize({ ...runOf(task), ...older, maxMetricCalls: 2000, seed: 5, stop: StopCondition.maxIterations(4) })
      assert.strictEqual(first.iterations, 4)
      // what a run saved before `rewritesPerMinibatch` holds: no such setting
      const memory = yield* RunStore.MemoryRef
      yield* Ref.update(memory, (m) => ({
        ...m,
        state: Option.map(m.state, (s) => {
          const { rewritesPerMinibatch: _, ...settings } = s.fingerprint?.settings ?? {}
          return { ...s, fingerprint: s.fingerprint === undefined ? undefined : { ...s.fingerprint, settings } }
        })
      }))
      const resumed = yield* Gepa.optimize({ ...runOf(task), maxMetricCalls: 2000, seed: 5, stop: StopCondition.maxIterations(12) })
      const saved = resumed.state.fingerprint?.settings ?? {}
      assert.deepStrictEqual(
        [saved["proposalsPerStep"], saved["proposalSampling"], saved["stepWidth"], saved["rewritesPerMinibatch"]],
        ["8", "independent", "adaptive", "1"]
      )
      // the same run as one that was never stopped
      const whole = yield* Gepa.optimize({
        ...runOf(task),
        ...older,
        rewritesPerMinibatch: 1,
        maxMetricCalls: 2000,
        seed: 5,
        stop: StopCondition.maxIterations(12)
      })
        .pipe(Effect.provide(RunStore.layerNone))
      assert.deepStrictEqual(resumed.candidates, whole.candidates)
      assert.deepStrictEqual(resumed.valScores, whole.valScores)
    }).pipe(Effect.provide(RunStore.layerMemory)))
})
