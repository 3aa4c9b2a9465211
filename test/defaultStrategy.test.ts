/**
 * The default strategy follows the candidate's components (Strategy.defaultFor):
 * it is printed at the run's start, saved with the run, kept on resume, gives
 * the same result at any maxConcurrency, and never spends over the budget.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import fc from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeTask } from "../bench/task.js"
import { fingerprint, resumedView, runOf, twoComponents } from "./fixtures/keywordTask.js"
import type * as Adapter from "../src/Adapter.js"
import * as Strategy from "../src/Strategy.js"
import type { GepaEvent } from "../src/Event.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Gepa from "../src/Gepa.js"
import * as RunStore from "../src/RunStore.js"
import * as StopCondition from "../src/StopCondition.js"

type AdapterOf = Adapter.Adapter<unknown, unknown, string>

/** the keyword task with its 16 keywords owned by 1, 2 or 4 components */
const taskOf = (components: number) => makeTask({ ...twoComponents, components, keywordsPerComponent: 16 / components })

describe("the default strategy", () => {
  it("follows the number of components, never maxConcurrency", () => {
    // one component: three rewrites of one minibatch's evidence per step, the best child validated
    assert.deepStrictEqual(Strategy.defaultFor(1), {
      proposalsPerStep: 3,
      proposalSampling: "same_minibatch",
      proposalSelection: "best",
      rewritesPerMinibatch: 3,
      buildOnChild: true,
      reuseChildMinibatch: true
    })
    assert.strictEqual(
      Strategy.format(Strategy.defaultFor(1)),
      "3 proposals per step, same_minibatch, 3 rewrites per minibatch, best, next step on the validated child and its minibatch"
    )
    // an adaptive width reads as one
    assert.strictEqual(
      Strategy.format({ proposalsPerStep: 8, proposalSampling: "independent", proposalSelection: "best", stepWidth: "adaptive" }),
      "1 to 8 proposals per step (wider as fewer are accepted), independent, best"
    )
    // three rounds of components per step, at most eight proposals
    assert.deepStrictEqual(Strategy.defaultFor(2), { proposalsPerStep: 6, proposalSampling: "same_minibatch", proposalSelection: "combine" })
    assert.strictEqual(Strategy.defaultFor(3).proposalsPerStep, 8)
    assert.strictEqual(Strategy.defaultFor(4).proposalsPerStep, 8)
    assert.strictEqual(Strategy.defaultFor(20).proposalsPerStep, Strategy.defaultMaxProposalsPerStep)
    assert.strictEqual(Strategy.format(Strategy.defaultFor(2)), "6 proposals per step, same_minibatch, combine")
  })

  it.effect("is said at the run's start and saved in the run's settings; given settings win", () =>
    Effect.gen(function*() {
      for (
        const [components, expected] of [[
          1,
          "3 proposals per step, same_minibatch, 3 rewrites per minibatch, best, next step on the validated child and its minibatch"
        ], [
          4,
          "8 proposals per step, same_minibatch, combine"
        ]] as const
      ) {
        const events: Array<GepaEvent> = []
        const result = yield* Gepa.optimize({ ...runOf(taskOf(components)), maxMetricCalls: 180, onEvent: (e) => void events.push(e) })
        const started = events.find((e) => e._tag === "OptimizationStarted")
        assert.strictEqual(started?._tag === "OptimizationStarted" ? started.strategy : undefined, expected)
        const saved = result.state.fingerprint?.settings ?? {}
        const strategy = Strategy.defaultFor(components)
        assert.strictEqual(saved["proposalsPerStep"], String(strategy.proposalsPerStep))
        assert.strictEqual(saved["proposalSampling"], strategy.proposalSampling)
        assert.strictEqual(saved["proposalSelection"], components === 1 ? "best" : "combine")
        assert.strictEqual(saved["stepWidth"], "fixed")
        assert.strictEqual(saved["rewritesPerMinibatch"], components === 1 ? "3" : "1")
      }
      const given = yield* Gepa.optimize({ ...runOf(taskOf(2)), maxMetricCalls: 120, proposalsPerStep: 3, proposalSelection: "best" })
      const saved = given.state.fingerprint?.settings ?? {}
      assert.deepStrictEqual([saved["proposalsPerStep"], saved["proposalSampling"], saved["proposalSelection"]], ["3", "same_minibatch", "best"])
      // a step size given for one component is a fixed one, unless the width is given too
      const fixed = yield* Gepa.optimize({ ...runOf(taskOf(1)), maxMetricCalls: 60, proposalsPerStep: 2 })
      assert.deepStrictEqual([fixed.state.fingerprint?.settings["proposalsPerStep"], fixed.state.fingerprint?.settings["stepWidth"]], ["2", "fixed"])
      const adaptive = yield* Gepa.optimize({ ...runOf(taskOf(1)), maxMetricCalls: 60, proposalsPerStep: 4, stepWidth: "adaptive" })
      assert.deepStrictEqual([adaptive.state.fingerprint?.settings["proposalsPerStep"], adaptive.state.fingerprint?.settings["stepWidth"]], ["4", "adaptive"])
    }))

  it.live("gives the same result at maxConcurrency 1, 8 and 16 under random latencies, for 1, 2 and 4 components", () =>
    Effect.gen(function*() {
      for (const components of [1, 2, 4]) {
        const task = taskOf(components)
        const run = (maxConcurrency: number) =>
          Gepa.optimize({
            ...runOf(task),
            adapter: FaultInjection.adapter(task.adapter, { latency: "0 millis", jitter: "2 millis", seed: maxConcurrency }).adapter,
            reflectionModel: FaultInjection.languageModel(task.reflectionModel, { latency: "0 millis", jitter: "2 millis", seed: maxConcurrency + 1 }).model,
            maxMetricCalls: 250,
            merge: true,
            seed: 5,
            maxConcurrency
          })
        const one = fingerprint(yield* run(1))
        assert.deepStrictEqual(fingerprint(yield* run(8)), one, `${components} components at 8`)
        assert.deepStrictEqual(fingerprint(yield* run(16)), one, `${components} components at 16`)
      }
    }), 120_000)

  it.effect("never spends over the budget, and every call is counted (many budgets, seeds and shapes)", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.integer({ min: 40, max: 500 }), fc.integer({ min: 0, max: 50 }), fc.constantFrom(1, 2, 4), async (budget, seed, components) => {
          const task = taskOf(components)
          let calls = 0
          const adapter = task.adapter as unknown as AdapterOf
          const counting: AdapterOf = {
            ...adapter,
            evaluate: (batch, candidate, options) => {
              calls += batch.length
              return adapter.evaluate(batch, candidate, options)
            }
          }
          const result = await Effect.runPromise(Gepa.optimize({ ...runOf(task), adapter: counting, maxMetricCalls: budget, merge: true, seed }))
          assert.strictEqual(result.totalMetricCalls, calls)
          assert.isAtMost(calls, budget)
          // spent but for what the smallest proposal could not use, unless nothing was left to learn
          if (!result.stopReason.startsWith("nothing left to learn")) assert.isAtMost(budget - calls, 2 + Math.ceil(task.valset.length / 4))
        }),
        { numRuns: 25 }
      )
    ), 120_000)

  it.live("a pause in the middle of a step resumes as the uninterrupted run (four components)", () =>
    Effect.gen(function*() {
      const task = taskOf(4)
      const config = { ...runOf(task), maxMetricCalls: 2000, stop: StopCondition.maxIterations(16), seed: 3 }
      const full = yield* Gepa.optimize(config)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-default-pause-"))
      try {
        // once the second step's shared evidence is in, every call hangs: the deadline pauses the run mid-step
        let hang = false
        const adapter = task.adapter as unknown as AdapterOf
        const hanging: AdapterOf = { ...adapter, evaluate: (batch, candidate, options) => hang ? Effect.never : adapter.evaluate(batch, candidate, options) }
        const onEvent = (e: GepaEvent) => {
          if (e._tag === "EvaluationEnded" && e.purpose === "parent-minibatch" && e.iteration === 5) hang = true
        }
        const paused = yield* Gepa.optimize({
          ...config,
          adapter: hanging,
          runDir: dir,
          onEvent,
          stop: [StopCondition.maxIterations(16), StopCondition.timeout("3 seconds")]
        })
        assert.include(paused.stopReason, "time limit")
        assert.isTrue(hang)
        assert.isAbove(paused.state.pending.length, 0)
        const resumed = yield* Gepa.optimize({ ...config, runDir: dir })
        assert.deepStrictEqual(resumedView(resumed), resumedView(full))
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }), 60_000)

  it.effect("a run saved with one proposal per step (before the default followed the components) resumes with it", () =>
    Effect.gen(function*() {
      const task = taskOf(2)
      const run = (iterations: number) => Gepa.optimize({ ...runOf(task), maxMetricCalls: 2000, seed: 3, stop: StopCondition.maxIterations(iterations) })
      // what 0.2.x's default saved: one proposal per step, independent, best
      const older = yield* Gepa.optimize({
        ...runOf(task),
        maxMetricCalls: 2000,
        seed: 3,
        stop: StopCondition.maxIterations(3),
        proposalsPerStep: 1,
        proposalSampling: "independent",
        proposalSelection: "best"
      })
      assert.strictEqual(older.iterations, 3)
      // without the saved strategy, the default (a step of both components) would be refused as another run
      const resumed = yield* run(7)
      assert.strictEqual(resumed.iterations, 7)
      const memory = yield* Ref.get(yield* RunStore.MemoryRef)
      const saved = Option.getOrThrow(memory.state).fingerprint?.settings ?? {}
      assert.deepStrictEqual([saved["proposalsPerStep"], saved["proposalSampling"], saved["proposalSelection"]], ["1", "independent", "best"])
    }).pipe(Effect.provide(RunStore.layerMemory)))
})
