import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import fc from "fast-check"
import { makeTask } from "../bench/task.js"
import type { Adapter } from "../src/Adapter.js"
import * as EvaluationCache from "../src/EvaluationCache.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Gepa from "../src/Gepa.js"
import * as State from "../src/State.js"

// a task that does not converge within these budgets, with two components
const taskOptions = { components: 2, keywordsPerComponent: 8, trainSize: 40, valSize: 12, learnPermille: 300 }

/** Everything that defines a run's outcome. */
const outcome = (r: Gepa.OptimizeResult<string>) => ({
  candidates: r.candidates,
  parents: r.parents,
  valScores: r.valScores,
  bestIndex: r.bestIndex,
  totalMetricCalls: r.totalMetricCalls,
  trace: r.state.trace,
  rng: r.state.rng,
  stopReason: r.stopReason
})

/** The task with random per-call latencies: which call finishes first changes with `latencySeed`. */
const jittery = (latencySeed: number) => {
  const task = makeTask(taskOptions)
  return {
    task,
    adapter: FaultInjection.adapter(task.adapter, { latency: "0 millis", jitter: "3 millis", seed: latencySeed }).adapter,
    reflectionModel: FaultInjection.languageModel(task.reflectionModel, { latency: "0 millis", jitter: "4 millis", seed: latencySeed + 100 }).model
  }
}

const runAt = (
  maxConcurrency: number,
  latencySeed: number,
  settings: Partial<Pick<Gepa.Config<unknown>, "proposalsPerStep" | "proposalSampling" | "proposalSelection" | "parallelProposals" | "foldOrder">> = {},
  budget = 240
) =>
  Effect.gen(function*() {
    const { adapter, reflectionModel, task } = jittery(latencySeed)
    return yield* Gepa.optimize({
      seedCandidate: task.seedCandidate,
      trainset: task.trainset,
      valset: task.valset,
      adapter,
      reflectionModel,
      maxMetricCalls: budget,
      maxConcurrency,
      seed: 3,
      merge: true,
      ...settings
    })
  })

describe("concurrency is an execution resource", () => {
  it.live("defaults: the same result at maxConcurrency 1, 4, 8, 16 and 32", () =>
    Effect.gen(function*() {
      const runs: Array<ReturnType<typeof outcome>> = []
      for (const [i, c] of [1, 4, 8, 16, 32].entries()) runs.push(outcome(yield* runAt(c, i + 1)))
      for (const run of runs.slice(1)) assert.deepStrictEqual(run, runs[0])
      // the steps did something worth comparing
      assert.isAbove(runs[0]!.candidates.length, 2)
    }), 60_000)

  it.live("defaults with injected failures: the same failures and the same result at maxConcurrency 1, 8 and 16", () =>
    Effect.gen(function*() {
      const runs: Array<ReturnType<typeof outcome>> = []
      for (const [i, maxConcurrency] of [1, 8, 16].entries()) {
        const task = makeTask(taskOptions)
        // the same seeded faults at every concurrency, inside latencies that differ with it
        const failing = FaultInjection.adapter(task.adapter, { failureRate: 0.15, seed: 11 }).adapter
        const flakyModel = FaultInjection.languageModel(task.reflectionModel, { failureRate: 0.1, seed: 12 }).model
        const result = yield* Gepa.optimize({
          seedCandidate: task.seedCandidate,
          trainset: task.trainset,
          valset: task.valset,
          adapter: FaultInjection.adapter(failing, { jitter: "3 millis", seed: 20 + i }).adapter,
          reflectionModel: FaultInjection.languageModel(flakyModel, { jitter: "4 millis", seed: 30 + i }).model,
          maxMetricCalls: 240,
          maxConcurrency,
          maxConsecutiveFailedIterations: 1_000,
          seed: 3,
          merge: true
        }).pipe(Logger.withMinimumLogLevel(LogLevel.Error)) // (each failed proposal logs a warning)
        runs.push(outcome(result))
      }
      for (const run of runs.slice(1)) assert.deepStrictEqual(run, runs[0])
      // failures happened, and the run still learned
      assert.isTrue(runs[0]!.trace.some((t) => t.outcome === "failed"))
      assert.isAbove(runs[0]!.candidates.length, 2)
    }), 60_000)

  it.live("every strategy: the same result at maxConcurrency 2 and 16 under different latencies", () =>
    Effect.gen(function*() {
      const strategies: ReadonlyArray<
        Partial<Pick<Gepa.Config<unknown>, "proposalsPerStep" | "proposalSampling" | "proposalSelection" | "parallelProposals">>
      > = [
        { proposalsPerStep: 1 },
        { proposalsPerStep: 3, proposalSelection: { topK: 2 } },
        { proposalsPerStep: 3, proposalSelection: "all", proposalSampling: "same_parent" },
        { proposalsPerStep: 2, parallelProposals: 2 },
        { proposalsPerStep: 1, parallelProposals: 3 },
        { proposalsPerStep: 4, proposalSampling: "same_minibatch", proposalSelection: "combine" },
        { proposalsPerStep: 4, proposalSampling: "same_minibatch", proposalSelection: "combine", parallelProposals: 2 }
      ]
      for (const settings of strategies) {
        const a = outcome(yield* runAt(2, 11, settings))
        const b = outcome(yield* runAt(16, 12, settings))
        assert.deepStrictEqual(b, a, JSON.stringify(settings))
      }
    }), 120_000)

  it.live("identical children of a step are paid once, whatever finishes first", () =>
    Effect.gen(function*() {
      // a model that ignores the feedback: siblings propose the same text
      const runs = []
      for (const [i, c] of [1, 16].entries()) {
        const { adapter, task } = jittery(20 + i)
        runs.push(outcome(
          yield* Gepa.optimize({
            seedCandidate: task.seedCandidate,
            trainset: task.trainset,
            valset: task.valset,
            adapter,
            proposer: (parent, _dataset, components) => Effect.succeed(Object.fromEntries(components.map((name) => [name, `${parent[name]} more`]))),
            maxMetricCalls: 150,
            maxConcurrency: c,
            proposalsPerStep: 3,
            proposalSampling: "same_parent",
            componentSelector: "all",
            proposalSelection: "all",
            acceptance: "improvement_or_equal",
            seed: 1
          })
        ))
      }
      assert.deepStrictEqual(runs[1], runs[0])
      const duplicates = runs[0]!.trace.filter((t) => t.reason?.includes("the same candidate as proposal") === true)
      assert.isAbove(duplicates.length, 0)
    }), 60_000)
})

/** A run of steps of three proposals, without merges (a merge would take an iteration of its own). */
const threePerStep = (seed: number) => {
  const task = makeTask(taskOptions)
  return Gepa.optimize({
    seedCandidate: task.seedCandidate,
    trainset: task.trainset,
    valset: task.valset,
    adapter: task.adapter,
    reflectionModel: task.reflectionModel,
    maxMetricCalls: 400,
    proposalsPerStep: 3,
    seed
  })
}

describe("steps of several proposals", () => {
  it.effect("best: at most one child per step is validated; the others say why", () =>
    Effect.gen(function*() {
      const result = yield* threePerStep(2)
      const steps = new Map<number, Array<State.TraceEntry>>()
      // proposals of a step are planned together: consecutive iterations in threes, until the budget's end
      for (const t of result.state.trace) {
        const step = Math.floor((t.iteration - 1) / 3)
        steps.set(step, [...(steps.get(step) ?? []), t])
      }
      let unselected = 0
      for (const entries of steps.values()) {
        assert.isAtMost(entries.filter((t) => t.outcome === "accepted").length, 1)
        unselected += entries.filter((t) => t.reason?.startsWith("not selected") === true).length
      }
      assert.isAbove(unselected, 0)
      assert.isAbove(result.bestScore!, result.seedScore!)
      assert.deepStrictEqual(State.checkConsistency(result.state), [])
    }))

  it.effect("the validated child of a step is the one that improved its minibatch most", () =>
    Effect.gen(function*() {
      const result = yield* threePerStep(4)
      const gain = (t: State.TraceEntry) => (t.scoresAfter ?? []).reduce((a, b) => a + b, 0) - (t.scoresBefore ?? []).reduce((a, b) => a + b, 0)
      for (const t of result.state.trace) {
        if (!t.reason?.startsWith("not selected") === true) continue
        const winner = Number(/proposal (\d+)/.exec(t.reason!)![1])
        const w = result.state.trace.find((x) => x.iteration === winner)!
        assert.isAtLeast(gain(w), gain(t))
        if (gain(w) === gain(t)) assert.isBelow(winner, t.iteration)
      }
    }))

  it.live("steps in completion order and with several steps in flight finish within the budget", () =>
    Effect.gen(function*() {
      for (const settings of [{ foldOrder: "completion" as const, parallelProposals: 3 }, { parallelProposals: 3 }]) {
        const result = yield* runAt(8, 5, { proposalsPerStep: 2, ...settings }, 300)
        assert.isAtMost(result.totalMetricCalls, 300)
        assert.strictEqual(result.state.pending.length, 0)
        assert.deepStrictEqual(State.checkConsistency(result.state), [])
      }
    }), 60_000)

  it.effect("rejects bad step settings with one line naming the field", () =>
    Effect.gen(function*() {
      const task = makeTask(taskOptions)
      const cfg = {
        seedCandidate: task.seedCandidate,
        trainset: task.trainset,
        adapter: task.adapter,
        reflectionModel: task.reflectionModel,
        maxMetricCalls: 100
      }
      const a = yield* Effect.flip(Gepa.optimize({ ...cfg, proposalsPerStep: 0 }))
      assert.include(String(a.message), "proposalsPerStep")
      const b = yield* Effect.flip(Gepa.optimize({ ...cfg, proposalSelection: { topK: 0 } }))
      assert.include(String(b.message), "proposalSelection")
      const c = yield* Effect.flip(Gepa.optimize({ ...cfg, proposalSampling: "both" as "independent" }))
      assert.include(String(c.message), "proposalSampling")
    }))
})

describe("the budget", () => {
  it.effect("is spent until nothing that can change the result fits, and never exceeded (many budgets and seeds)", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.integer({ min: 120, max: 700 }), fc.integer({ min: 0, max: 50 }), async (budget, seed) => {
          const task = makeTask(taskOptions)
          let calls = 0
          const counting: Adapter<unknown, unknown, string> = {
            ...(task.adapter as unknown as Adapter<unknown, unknown, string>),
            evaluate: (batch, candidate, options) => {
              calls += batch.length
              return (task.adapter as unknown as Adapter<unknown, unknown, string>).evaluate(batch, candidate, options)
            }
          }
          const result = await Effect.runPromise(Gepa.optimize({
            seedCandidate: task.seedCandidate,
            trainset: task.trainset,
            valset: task.valset,
            adapter: counting,
            reflectionModel: task.reflectionModel,
            maxMetricCalls: budget,
            merge: true,
            seed
          }))
          assert.strictEqual(result.totalMetricCalls, calls)
          assert.isAtMost(calls, budget)
          // stopped only when nothing that could change the result fitted: the
          // smallest proposal (a minibatch of 1, a child validated on a sample of
          // at most a quarter of the validation set) needs at most 2 + 3 calls here
          if (calls < budget && !result.stopReason.startsWith("nothing left to learn")) {
            const needed = Number(/needs at least (\d+)/.exec(result.stopReason)?.[1])
            assert.isBelow(budget - calls, needed, result.stopReason)
            assert.isAtMost(needed, 2 + Math.ceil(task.valset.length / 4))
          }
        }),
        { numRuns: 25 }
      )
    ), 120_000)
})

describe("one cache across splits", () => {
  it.effect("an example in both the training and the validation set is paid once per candidate", () =>
    Effect.gen(function*() {
      const task = makeTask(taskOptions)
      const seen = new Map<string, number>()
      const adapter = task.adapter as unknown as Adapter<{ readonly id: number }, unknown, string>
      const counting: Adapter<{ readonly id: number }, unknown, string> = {
        ...adapter,
        evaluate: (batch, candidate, options) => {
          if (!options.captureTraces) {
            for (const ex of batch) {
              const key = `${JSON.stringify(candidate)}|${ex.id}`
              seen.set(key, (seen.get(key) ?? 0) + 1)
            }
          }
          return adapter.evaluate(batch, candidate, options)
        }
      }
      const result = yield* Gepa.optimize({
        seedCandidate: task.seedCandidate,
        trainset: task.trainset,
        // the same examples in both splits, as optimize-anything's multi-task mode has
        valset: task.trainset,
        adapter: counting,
        reflectionModel: task.reflectionModel,
        maxMetricCalls: 500,
        seed: 1
      })
      assert.isAbove(result.candidates.length, 1)
      for (const [key, n] of seen) assert.strictEqual(n, 1, key)
    }))

  it.effect("keys name the example's content, not its split; keys without content keep the split", () =>
    Effect.sync(() => {
      const a = EvaluationCache.keyString({ candidateHash: "h", split: "train", id: "1", contentHash: "c" })
      const b = EvaluationCache.keyString({ candidateHash: "h", split: "val", id: "1", contentHash: "c" })
      assert.strictEqual(a, b)
      assert.notStrictEqual(
        EvaluationCache.keyString({ candidateHash: "h", split: "train", id: "1" }),
        EvaluationCache.keyString({ candidateHash: "h", split: "val", id: "1" })
      )
    }))
})
