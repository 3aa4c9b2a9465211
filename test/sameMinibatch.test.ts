import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeTask } from "../bench/task.js"
import { fingerprint, runOf, twoComponents } from "./fixtures/keywordTask.js"
import { recorder } from "./fixtures/stepRecorder.js"
import * as Adapter from "../src/Adapter.js"
import type { GepaEvent } from "../src/Event.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Gepa from "../src/Gepa.js"
import * as State from "../src/State.js"
import * as StopCondition from "../src/StopCondition.js"

type AdapterOf = Adapter.Adapter<unknown, unknown, string>

const sharing = { proposalsPerStep: 4, proposalSampling: "same_minibatch" } as const

describe("proposalSampling: same_minibatch", () => {
  it.effect("the proposals of a step share one parent and one minibatch per round of components, and the parent is evaluated once for them", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      const { groups, onEvent, parentEvaluations, proposal } = recorder()
      const result = yield* Gepa.optimize({ ...runOf(task), ...sharing, maxMetricCalls: 400, seed: 3, onEvent })
      assert.isAtMost(result.totalMetricCalls, 400)
      let shared = 0
      // groups: consecutive reflective proposals on the same minibatch
      for (const group of groups()) {
        const first = group[0]!
        // one parent, and each component once, per group
        assert.isTrue(group.every((it) => proposal.get(it)?.parent === proposal.get(first)?.parent))
        assert.strictEqual(new Set(group.map((it) => proposal.get(it)?.components)).size, group.length)
        assert.isAtMost(group.length, 2)
        // the parent's evaluation is charged to the group's first proposal, and paid at most once
        for (const it of group.slice(1)) assert.isFalse(parentEvaluations.has(it), `iteration ${it} paid for its parent again`)
        assert.isAtMost(parentEvaluations.get(first) ?? 0, 1)
        if (group.length > 1) shared++
      }
      assert.isAbove(shared, 5)
      assert.deepStrictEqual(State.checkConsistency(result.state), [])
    }))

  it.effect("combine: the selected child takes the other accepted children's changes, judged on their minibatches together", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      const result = yield* Gepa.optimize({ ...runOf(task), ...sharing, proposalSelection: "combine", maxMetricCalls: 400, seed: 3 })
      const trace = result.state.trace
      const parts = trace.filter((t) => t.reason?.includes("is part of the child of proposal") === true)
      assert.isAbove(parts.length, 0)
      for (const part of parts) {
        const into = Number(/proposal (\d+)/.exec(part.reason!)![1])
        const combined = trace.find((t) => t.iteration === into)!
        assert.strictEqual(combined.outcome, "accepted")
        assert.deepStrictEqual(combined.parents, part.parents)
        // the combined child carries the part's change, on top of its own
        const child = result.candidates[combined.candidate!]!
        const parent = result.candidates[part.parents[0]!]!
        for (const c of part.components ?? []) {
          assert.include(combined.components ?? [], c)
          assert.notStrictEqual(child[c], parent[c])
        }
        // judged on the minibatches of both
        for (const id of part.subsampleIds ?? []) assert.include(combined.subsampleIds ?? [], id)
      }
      assert.isAtMost(result.totalMetricCalls, 400)
      assert.deepStrictEqual(State.checkConsistency(result.state), [])
    }))

  it.effect("combine: a combination that does not pass leaves the best child alone, and its parts say so", () =>
    Effect.gen(function*() {
      // each component's change helps alone and hurts with the other's
      const adapter = Adapter.fromExample<{ readonly id: number }, string>((_example, candidate) =>
        Effect.succeed({ output: "", score: (candidate.a !== "a") !== (candidate.b !== "b") ? 1 : 0, feedback: "try again" })
      )
      const trainset = Array.from({ length: 6 }, (_, id) => ({ id }))
      const result = yield* Gepa.optimize({
        seedCandidate: { a: "a", b: "b" },
        trainset,
        adapter,
        proposer: (parent, _dataset, components) => Effect.succeed(Object.fromEntries(components.map((c) => [c, `${parent[c]}+`]))),
        proposalsPerStep: 2,
        proposalSampling: "same_minibatch",
        proposalSelection: "combine",
        maxMetricCalls: 60,
        stop: StopCondition.maxIterations(2)
      })
      const [first, second] = result.state.trace
      assert.strictEqual(first?.outcome, "accepted")
      assert.deepStrictEqual(first?.components, ["a"])
      assert.strictEqual(second?.outcome, "rejected")
      assert.include(second?.reason ?? "", "the combination of their changes did not pass")
      assert.deepStrictEqual(result.candidates[1], { a: "a+", b: "b" })
      assert.strictEqual(result.bestScore, 1)
    }))

  it.effect("records missing for one component of a shared minibatch stop the run with one line naming the call and the component", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      const adapter = task.adapter as unknown as AdapterOf
      const names = Object.keys(task.seedCandidate)
      // records for every component but the last
      const missing: AdapterOf = {
        ...adapter,
        makeReflectiveDataset: (candidate, batch, components) =>
          Effect.map(adapter.makeReflectiveDataset(candidate, batch, components), (d) => {
            const { [names.at(-1)!]: _, ...rest } = d
            return rest
          })
      }
      const error = yield* Effect.flip(Gepa.optimize({ ...runOf(task), adapter: missing, ...sharing, maxMetricCalls: 300, seed: 3 }))
      assert.strictEqual(error._tag, "AdapterContractError")
      assert.include(error.message, "makeReflectiveDataset")
      assert.include(error.message, names.at(-1)!)
    }))

  it.live("the same result at maxConcurrency 1 and 16, with one step or two in flight", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      for (const more of [{}, { proposalSelection: "combine" as const }, { proposalSelection: "combine" as const, parallelProposals: 2 }]) {
        const run = (maxConcurrency: number) => Gepa.optimize({ ...runOf(task), ...sharing, ...more, maxMetricCalls: 300, seed: 5, maxConcurrency })
        assert.deepStrictEqual(fingerprint(yield* run(16)), fingerprint(yield* run(1)), JSON.stringify(more))
      }
    }), 60_000)

  it.effect(
    "the budget is never exceeded, and every call is counted (many budgets and seeds, one or two steps in flight)",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.integer({ min: 40, max: 500 }), fc.integer({ min: 0, max: 50 }), fc.boolean(), async (budget, seed, deep) => {
            const task = makeTask(twoComponents)
            let calls = 0
            const adapter = task.adapter as unknown as AdapterOf
            const counting: AdapterOf = {
              ...adapter,
              evaluate: (batch, candidate, options) => {
                calls += batch.length
                return adapter.evaluate(batch, candidate, options)
              }
            }
            const result = await Effect.runPromise(Gepa.optimize({
              ...runOf(task),
              adapter: counting,
              ...sharing,
              proposalSelection: "combine",
              parallelProposals: deep ? 2 : 1,
              maxMetricCalls: budget,
              merge: true,
              seed
            }))
            assert.strictEqual(result.totalMetricCalls, calls)
            assert.isAtMost(calls, budget)
            assert.deepStrictEqual(State.checkConsistency(result.state), [])
          }),
          { numRuns: 20 }
        )
      ),
    60_000
  )

  it.live("a pause in the middle of a step, while its proposals reflect on their shared evidence, resumes as the uninterrupted run", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      // calls that take time, so that the step is in flight when the stop file is seen
      const adapter = FaultInjection.adapter(task.adapter, { latency: "3 millis" }).adapter
      const reflectionModel = FaultInjection.languageModel(task.reflectionModel, { latency: "5 millis" }).model
      // ends on its iteration count, not its budget: the calls the pause cut short are charged as lost work;
      // two steps in flight: a stop file is seen between folds, and a pause interrupts what is in flight then
      const config = {
        ...runOf(task),
        adapter,
        reflectionModel,
        ...sharing,
        proposalSelection: "combine" as const,
        parallelProposals: 2,
        maxMetricCalls: 2000,
        stop: StopCondition.maxIterations(16),
        seed: 3
      }
      const full = yield* Gepa.optimize(config)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-same-minibatch-pause-"))
      try {
        const onEvent = (e: GepaEvent) => {
          // the evidence of the second step's first round is in, and its proposals are reflecting
          if (e._tag === "EvaluationEnded" && e.purpose === "parent-minibatch" && e.iteration === 5) fs.writeFileSync(path.join(dir, "gepa.stop"), "")
        }
        const paused = yield* Gepa.optimize({ ...config, runDir: dir, onEvent })
        assert.include(paused.stopReason, "stop file")
        assert.isAbove(paused.state.pending.length, 0)
        const resumed = yield* Gepa.optimize({ ...config, runDir: dir })
        const { candidates, parents, valScores } = JSON.parse(JSON.stringify(resumed)) as Gepa.OptimizeResult<unknown>
        const expected = JSON.parse(JSON.stringify(full)) as Gepa.OptimizeResult<unknown>
        assert.deepStrictEqual({ candidates, parents, valScores }, {
          candidates: expected.candidates,
          parents: expected.parents,
          valScores: expected.valScores
        })
        assert.strictEqual(resumed.iterations, full.iterations)
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }))

  it.effect("a run stopped after any step and resumed from its run directory ends as the uninterrupted run", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      const config = { ...runOf(task), ...sharing, proposalSelection: "combine" as const, maxMetricCalls: 200, seed: 3 }
      const full = yield* Gepa.optimize(config)
      // at the end of a step: a cap inside one cuts it short, and the uninterrupted run plans it whole
      for (const iterations of [4, 8, 12]) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-same-minibatch-"))
        try {
          yield* Gepa.optimize({ ...config, runDir: dir, stop: StopCondition.maxIterations(iterations) })
          const resumed = yield* Gepa.optimize({ ...config, runDir: dir })
          assert.deepStrictEqual(fingerprint(resumed), fingerprint(full), `stopped after iteration ${iterations}`)
        } finally {
          fs.rmSync(dir, { recursive: true, force: true })
        }
      }
    }))
})
