import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Ref, Schedule, Stream, TestClock } from "effect"
import fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Adapter from "../src/Adapter.js"
import { AdapterError } from "../src/Errors.js"
import type { GepaEvent } from "../src/Event.js"
import * as CandidateSelector from "../src/CandidateSelector.js"
import { ComponentProposalFailed } from "../src/ComponentProposer.js"
import * as EvaluationCache from "../src/EvaluationCache.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Gepa from "../src/Gepa.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as State from "../src/State.js"
import * as StopCondition from "../src/StopCondition.js"
import * as Toy from "./fixtures/toy.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"
import { onePerStep, oneRound } from "./fixtures/strategy.js"

const trainset = Toy.makeExamples(30)
const valset = Toy.makeExamples(12, 100)

type ToyAdapter = Adapter.Adapter<Toy.Example, Adapter.ExampleTrace<Toy.Example, never, string>, string>

const base = <T>(adapter: Adapter.Adapter<Toy.Example, T, string>) => ({
  seedCandidate: Toy.seedCandidate,
  trainset,
  valset,
  adapter,
  reflectionModel: Toy.reflectionModel()
})

/** Fields that define a run's outcome (everything but timing-dependent data). */
const outcome = (r: Gepa.OptimizeResult<string>) => ({
  candidates: r.candidates,
  parents: r.parents,
  valScores: r.valScores,
  bestIndex: r.bestIndex,
  totalMetricCalls: r.totalMetricCalls,
  trace: r.state.trace,
  rng: r.state.rng
})

describe("Gepa.optimize", () => {
  it.effect("improves the validation score well above the seed on the toy task", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      const result = yield* Gepa.optimize({ ...base(adapter), maxMetricCalls: 300 })
      assert.strictEqual(result.seedScore, 0)
      assert.isAtLeast(result.bestScore!, 0.9)
      assert.isAbove(result.candidates.length, 1)
      assert.isAtMost(result.totalMetricCalls, 300)
      assert.deepStrictEqual(State.checkConsistency(result.state), [])
    }))

  it.effect("takes the adapter and the reflection model from layers", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      const layers = Layer.merge(
        Adapter.layer(adapter),
        LanguageModel.layerReflection(Toy.reflectionModel())
      )
      const result = yield* Gepa.optimize<Toy.Example, Adapter.ExampleTrace<Toy.Example, never, string>, string>({
        seedCandidate: Toy.seedCandidate,
        trainset,
        valset,
        maxMetricCalls: 200
      }).pipe(Effect.provide(layers))
      assert.isAbove(result.bestScore!, result.seedScore!)
    }))

  it.effect("is reproducible: same seed, same result, with 1 and with 3 parallel proposals", () =>
    Effect.gen(function*() {
      for (const parallelProposals of [1, 3]) {
        const runs = []
        for (let i = 0; i < 2; i++) {
          const { adapter } = yield* Toy.makeAdapter()
          runs.push(yield* Gepa.optimize({ ...base(adapter), maxMetricCalls: 250, seed: 7, parallelProposals, merge: true }))
        }
        assert.deepStrictEqual(outcome(runs[0]!), outcome(runs[1]!))
      }
    }))

  it.effect("different seeds make different choices", () =>
    Effect.gen(function*() {
      const a = yield* Effect.flatMap(Toy.makeAdapter(), ({ adapter }) => Gepa.optimize({ ...base(adapter), maxMetricCalls: 150, seed: 1 }))
      const b = yield* Effect.flatMap(Toy.makeAdapter(), ({ adapter }) => Gepa.optimize({ ...base(adapter), maxMetricCalls: 150, seed: 2 }))
      assert.notDeepEqual(a.state.trace.map((t) => t.subsampleIds), b.state.trace.map((t) => t.subsampleIds))
    }))

  it("never exceeds the budget (property over budgets, batch sizes and parallelism)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 12, max: 200 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        fc.boolean(),
        async (budget, minibatchSize, parallelProposals, merge, cache) => {
          const { adapter, examplesEvaluated } = await Effect.runPromise(Toy.makeAdapter())
          const result = await Effect.runPromise(
            Gepa.optimize({ ...base(adapter), maxMetricCalls: budget, minibatchSize, parallelProposals, merge, cache })
          )
          const calls = await Effect.runPromise(Ref.get(examplesEvaluated))
          // every example the adapter ran is a metric call, and no more
          return result.totalMetricCalls <= budget && calls === result.totalMetricCalls
        }
      ),
      { numRuns: 40 }
    )
  })

  it.live("keeps at most maxConcurrency evaluations in flight, and runs parallel proposals concurrently", () =>
    Effect.gen(function*() {
      const { adapter, maxInFlight } = yield* Toy.makeAdapter({ latencyMs: 3 })
      const reflectionInFlight = yield* Ref.make(0)
      const reflectionMax = yield* Ref.make(0)
      const inner = Toy.reflectionModel()
      const slowReflection: LanguageModel.LanguageModel = {
        complete: (prompt) =>
          Effect.gen(function*() {
            const n = yield* Ref.updateAndGet(reflectionInFlight, (x) => x + 1)
            yield* Ref.update(reflectionMax, (m) => Math.max(m, n))
            yield* Effect.sleep("10 millis")
            return yield* inner.complete(prompt)
          }).pipe(Effect.ensuring(Ref.update(reflectionInFlight, (x) => x - 1)))
      }
      yield* Gepa.optimize({
        ...base(adapter),
        reflectionModel: slowReflection,
        maxMetricCalls: 200,
        maxConcurrency: 4,
        parallelProposals: 3,
        minibatchSize: 4
      })
      assert.isAtMost(yield* Ref.get(maxInFlight), 4)
      assert.strictEqual(yield* Ref.get(maxInFlight), 4)
      assert.isAbove(yield* Ref.get(reflectionMax), 1)
    }))

  it.effect("evaluates chunks of chunkSize examples per adapter call", () =>
    Effect.gen(function*() {
      const sizes: Array<number> = []
      const { adapter } = yield* Toy.makeAdapter()
      const counting: ToyAdapter = {
        ...adapter,
        evaluate: (batch, candidate, options) => Effect.zipRight(Effect.sync(() => sizes.push(batch.length)), adapter.evaluate(batch, candidate, options))
      }
      yield* Gepa.optimize({ ...base(counting), maxMetricCalls: 60, chunkSize: 5 })
      assert.isTrue(sizes.every((s) => s <= 5))
      assert.include(sizes, 5)
    }))

  it.effect("the evaluation cache makes repeated evaluations free", () =>
    Effect.gen(function*() {
      const cache = EvaluationCache.memory<string>()
      const first = yield* Effect.flatMap(Toy.makeAdapter(), ({ adapter }) => Gepa.optimize({ ...base(adapter), maxMetricCalls: 200, cache }))
      const { adapter, examplesEvaluated } = yield* Toy.makeAdapter()
      const events: Array<GepaEvent> = []
      const second = yield* Gepa.optimize({ ...base(adapter), maxMetricCalls: 200, cache, onEvent: (e) => void events.push(e) })
      // the same seeded run again: every evaluation without traces is a hit,
      // along the same path, so it spends far less for the same candidates
      // (and stops once a whole pass over the training set teaches nothing)
      assert.deepStrictEqual(second.candidates.slice(0, first.candidates.length), first.candidates)
      assert.isBelow(second.totalMetricCalls, first.totalMetricCalls / 2)
      const seedEval = events.find((e) => e._tag === "EvaluationEnded" && e.purpose === "seed-validation")
      assert.strictEqual(seedEval?._tag === "EvaluationEnded" ? seedEval.cacheHits : -1, valset.length)
      assert.strictEqual(yield* Ref.get(examplesEvaluated), second.totalMetricCalls)
    }))
})

describe("nothing left to learn", () => {
  const perfectSeed = { rules_a: "Mention alpha, bravo, charlie.", rules_b: "Mention delta, echo, foxtrot." }
  const freeReason = "all minibatch scores are perfect (known from earlier evaluations)"

  it.effect("with Pareto selection the run ends once every parent it can pick is known perfect on the whole training set", () =>
    Effect.gen(function*() {
      const { adapter, examplesEvaluated } = yield* Toy.makeAdapter()
      const result = yield* Gepa.optimize({ ...base(adapter), seedCandidate: perfectSeed, maxMetricCalls: 10_000 })
      assert.strictEqual(
        result.stopReason,
        `nothing left to learn: the one candidate the parent selection can pick (candidate 0) is known to be perfect on all ${trainset.length} training examples`
      )
      assert.strictEqual(result.stoppedBy?.kind, "nothingToLearn")
      // the paid pass, and no free one after it
      assert.isAtLeast(result.totalMetricCalls, valset.length + trainset.length)
      assert.isAtMost(result.totalMetricCalls, valset.length + trainset.length + 3)
      assert.strictEqual(yield* Ref.get(examplesEvaluated), result.totalMetricCalls)
      const free = result.state.trace.filter((t) => t.reason === freeReason)
      assert.isBelow(free.length, 10)
      assert.strictEqual(result.candidates.length, 1)
      // current-best selection: its one choice is known too
      const best = yield* Gepa.optimize({ ...base(adapter), seedCandidate: perfectSeed, maxMetricCalls: 10_000, candidateSelector: "current_best" })
      assert.strictEqual(best.stopReason, result.stopReason)
      assert.strictEqual(best.totalMetricCalls, result.totalMetricCalls)
    }))

  // stopping at once changes nothing but the trace's tail of free skips
  it.effect.each([1, 2, 3])("stops where a free pass over the training set would, less its free skips (seed %i)", (seed) =>
    Effect.gen(function*() {
      const run = (candidateSelector?: Gepa.Config<Toy.Example, unknown, string>["candidateSelector"]) =>
        Effect.gen(function*() {
          const { adapter, examplesEvaluated } = yield* Toy.makeAdapter()
          const events: Array<GepaEvent> = []
          const result = yield* Gepa.optimize({
            ...base(adapter),
            maxMetricCalls: 10_000,
            seed,
            onEvent: (e) => void events.push(e),
            ...(candidateSelector === undefined ? {} : { candidateSelector })
          })
          assert.strictEqual(result.stoppedBy?.kind, "nothingToLearn")
          assert.strictEqual(yield* Ref.get(examplesEvaluated), result.totalMetricCalls)
          return { result, events }
        })
      const exact = (yield* run()).result
      // a selection whose choices cannot be told in advance: a free pass over the training set ends the run
      const { events, result: fallback } = yield* run((state, rng) => CandidateSelector.pareto(state, rng))
      assert.match(exact.stopReason, /^nothing left to learn: .* known to be perfect on all 30 training examples$/)
      // a round's proposals share a minibatch: a pass is 10 minibatches, not 10 proposals
      const stalled = /^nothing left to learn: the last (\d+) proposals, on 10 minibatches/.exec(fallback.stopReason)
      assert.isNotNull(stalled)
      assert.isAbove(exact.candidates.length, 1)
      assert.deepStrictEqual(exact.candidates, fallback.candidates)
      assert.deepStrictEqual(exact.valScores, fallback.valScores)
      assert.strictEqual(exact.totalMetricCalls, fallback.totalMetricCalls)
      const cut = exact.state.trace.length
      assert.isBelow(cut, fallback.state.trace.length)
      assert.deepStrictEqual(exact.state.trace, fallback.state.trace.slice(0, cut))
      const tail = fallback.state.trace.slice(cut)
      assert.isTrue(tail.every((t) => t.reason === freeReason && t.metricCalls === fallback.totalMetricCalls))
      // (the oldest minibatch's proposals are counted whole: a round of them may have paid)
      const last = fallback.state.trace.slice(-Number(stalled![1]))
      assert.isTrue(last.every((t) => t.outcome === "skipped"))
      assert.strictEqual(new Set(last.map((t) => t.subsampleIds!.join(","))).size, 10)
      const free = last.filter((t) => t.reason === freeReason)
      // the proposals of a round share its minibatch: the round's skip is
      // reported once, by the proposal that would have paid for its evidence
      // (the round's first), and none of them is charged
      const reported = events.flatMap((e) =>
        e._tag === "EvaluationSkipped" && e.reason === freeReason && e.iteration > free[0]!.iteration - 1 ? [e.iteration] : []
      )
      const firsts = free.filter((t, i) => i === 0 || free[i - 1]!.subsampleIds!.join(",") !== t.subsampleIds!.join(","))
      assert.deepStrictEqual(reported, firsts.map((t) => t.iteration))
      assert.isTrue(free.every((t, i) => i === 0 || t.metricCalls === free[i - 1]!.metricCalls))
    }))
})

describe("the proposal pipeline", () => {
  // random per-call latencies: which proposal finishes first changes from run to run
  const jittery = (latencySeed: number) =>
    Effect.map(Toy.makeAdapter(), ({ adapter }) => ({
      adapter: FaultInjection.adapter(adapter, { latency: "1 millis", jitter: "6 millis", seed: latencySeed }).adapter,
      reflectionModel: FaultInjection.languageModel(Toy.reflectionModel(), { latency: "1 millis", jitter: "8 millis", seed: latencySeed + 100 }).model
    }))

  it.live("same seed, same result under random latencies, with proposals in flight (the default)", () =>
    Effect.gen(function*() {
      const runs: Array<ReturnType<typeof outcome>> = []
      for (const latencySeed of [1, 2, 3]) {
        const { adapter, reflectionModel } = yield* jittery(latencySeed)
        const events: Array<GepaEvent> = []
        const result = yield* Gepa.optimize({
          ...base(adapter),
          reflectionModel,
          maxMetricCalls: 300,
          maxConcurrency: 16,
          seed: 5,
          merge: true,
          onEvent: (e) => void events.push(e)
        })
        // two components: two proposals in flight by default
        const inFlight = events.filter((e) => e._tag === "IterationStarted").length -
          events.filter((e) => e._tag === "IterationEnded").length
        assert.strictEqual(inFlight, 0)
        runs.push(outcome(result))
      }
      assert.deepStrictEqual(runs[1], runs[0])
      assert.deepStrictEqual(runs[2], runs[0])
    }))

  it.live("proposals overlap: a proposal starts before the previous one is folded", () =>
    Effect.gen(function*() {
      const { adapter, reflectionModel } = yield* jittery(7)
      const order: Array<string> = []
      yield* Gepa.optimize({
        ...base(adapter),
        reflectionModel,
        maxMetricCalls: 200,
        parallelProposals: 2,
        onEvent: (e) => {
          if (e._tag === "IterationStarted") order.push(`start ${e.iteration}`)
          if (e._tag === "IterationEnded") order.push(`end ${e.iteration}`)
        }
      })
      assert.isBelow(order.indexOf("start 2"), order.indexOf("end 1"))
      // folded in plan order
      const ends = order.filter((o) => o.startsWith("end")).map((o) => Number(o.slice(4)))
      assert.deepStrictEqual(ends, [...ends].sort((a, b) => a - b))
    }))

  it.effect("a stale child is rebased on the candidate that superseded its parent", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      const result = yield* Gepa.optimize({
        ...base(adapter),
        ...oneRound,
        reflectionModel: Toy.reflectionModel(1),
        maxMetricCalls: 400,
        parallelProposals: 2,
        skipPerfectScore: false
      })
      const rebased = result.state.trace.filter((t) => t.reason?.startsWith("rebased on candidate") === true)
      assert.isAbove(rebased.length, 0)
      for (const t of rebased) {
        if (t.outcome !== "accepted") continue
        // the child descends from the candidate it was rebased on, and keeps that candidate's other texts
        const onto = Number(/rebased on candidate (\d+)/.exec(t.reason!)![1])
        assert.deepStrictEqual(result.parents[t.candidate!], [onto])
        const child = result.candidates[t.candidate!]!
        const changed = Object.keys(child).filter((k) => child[k] !== result.candidates[onto]![k])
        assert.deepStrictEqual(changed, [...(t.components ?? [])])
      }
    }))

  it.effect("never starts a proposal whose accepted child could not be validated; spends the budget to the end", () =>
    Effect.gen(function*() {
      for (const maxMetricCalls of [60, 97, 150, 233]) {
        for (const parallelProposals of [1, 2]) {
          const { adapter } = yield* Toy.makeAdapter()
          const events: Array<GepaEvent> = []
          const result = yield* Gepa.optimize({
            ...base(adapter),
            reflectionModel: Toy.reflectionModel(1),
            maxMetricCalls,
            parallelProposals,
            skipPerfectScore: false,
            onEvent: (e) => void events.push(e)
          })
          assert.isAtMost(result.totalMetricCalls, maxMetricCalls)
          // every accepted child was validated: none skipped for want of budget
          for (const t of result.state.trace) {
            if (t.outcome === "accepted") assert.isDefined(t.candidate)
            assert.notInclude(t.reason ?? "", "before validation")
          }
          // the run spent the budget, or stopped because no further proposal
          // fitted, and says how much was left
          const left = maxMetricCalls - result.totalMetricCalls
          if (left > 0) {
            assert.match(result.stopReason, /used the budget of \d+ metric calls: \d+ metric calls left, a proposal needs/)
            const needed = Number(/needs (?:at least|up to) (\d+)/.exec(result.stopReason)![1])
            assert.isBelow(left, needed)
          }
        }
      }
    }))

  it.effect("merges join the pipeline as proposals, within the cap", () =>
    Effect.gen(function*() {
      for (const maxInvocations of [1, 2]) {
        const { adapter } = yield* Toy.makeAdapter()
        const events: Array<GepaEvent> = []
        const result = yield* Gepa.optimize({
          ...base(adapter),
          ...oneRound,
          reflectionModel: Toy.reflectionModel(1),
          maxMetricCalls: 500,
          parallelProposals: 2,
          seed: 3,
          // rebasing keeps pipelined lineages together; exploring parents off the front lets them diverge
          candidateSelector: { epsilonGreedy: 0.5 },
          merge: { maxInvocations, overlapFloor: 3 },
          onEvent: (e) => void events.push(e)
        })
        const attempted = events.filter((e) => e._tag === "MergeAttempted").length
        assert.strictEqual(attempted, maxInvocations)
        assert.strictEqual(result.mergesAttempted, attempted)
        // a merge is a proposal like any other: planned, folded, one iteration
        const merges = result.state.trace.filter((t) => t.kind === "merge")
        assert.strictEqual(merges.length, attempted)
      }
    }))
})

describe("evaluation failures", () => {
  it.effect("injected failures and timeouts at 30% still let the run finish with correct accounting", () =>
    Effect.gen(function*() {
      const { adapter, examplesEvaluated } = yield* Toy.makeAdapter()
      const faulty = FaultInjection.adapter(adapter, { failureRate: 0.2, hangRate: 0.1, seed: 3 })
      const events: Array<GepaEvent> = []
      const fiber = yield* Effect.fork(Gepa.optimize({
        ...base(faulty.adapter),
        maxMetricCalls: 300,
        evaluationTimeout: "1 second",
        onEvent: (e) => void events.push(e)
      }))
      // drive the timeouts of hanging calls
      let exit = yield* Fiber.poll(fiber)
      while (Option.isNone(exit)) {
        yield* TestClock.adjust("1 second")
        exit = yield* Fiber.poll(fiber)
      }
      const result = yield* Fiber.join(fiber)
      assert.isAtMost(result.totalMetricCalls, 300)
      // every metric call is either a successful adapter run or a failed call
      const failedExamples = events.filter((e) => e._tag === "ExampleFailed").length
      assert.strictEqual(result.totalMetricCalls, (yield* Ref.get(examplesEvaluated)) + failedExamples)
      assert.isAbove(faulty.stats.failures, 0)
      assert.isAbove(faulty.stats.hangs, 0)
      assert.isAbove(result.bestScore!, result.seedScore!)
    }))

  it.effect("fault layers wrap the adapter and the reflection model provided by other layers", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      type Trace = Adapter.ExampleTrace<Toy.Example, never, string>
      const faulty = Layer.merge(
        FaultInjection.layerAdapter<Toy.Example, Trace, string>({ failureRate: 0.3, seed: 9 }).pipe(Layer.provide(Adapter.layer(adapter))),
        FaultInjection.layerReflection({ failureRate: 0.3, seed: 9 }).pipe(
          Layer.provide(LanguageModel.layerReflection(Toy.reflectionModel()))
        )
      )
      const events: Array<GepaEvent> = []
      const result = yield* Gepa.optimize<Toy.Example, Trace, string>({
        seedCandidate: Toy.seedCandidate,
        trainset,
        valset,
        maxMetricCalls: 300,
        // the faults are drawn in call order, which timing changes: a streak of
        // failed proposals (what would stop the run) is not what this checks
        maxConsecutiveFailedIterations: 1_000,
        onEvent: (e) => void events.push(e)
      }).pipe(Effect.provide(faulty))
      assert.isAbove(events.filter((e) => e._tag === "ExampleFailed").length, 0)
      assert.isTrue(result.state.trace.some((t) => t.outcome === "failed" && (t.reason ?? "").includes("injected")))
      assert.isAtMost(result.totalMetricCalls, 300)
    }))

  it.effect("retries transient failures with the retry schedule", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      const faulty = FaultInjection.adapter(adapter, { failureRate: 0.5, seed: 1 })
      const events: Array<GepaEvent> = []
      yield* Gepa.optimize({
        ...base(faulty.adapter),
        maxMetricCalls: 100,
        evaluationRetry: Schedule.recurs(10),
        onEvent: (e) => void events.push(e)
      })
      assert.strictEqual(events.filter((e) => e._tag === "ExampleFailed").length, 0)
      assert.isAbove(faulty.stats.failures, 0)
    }))

  it.effect("a wrong number of scores fails the run with a contract error naming the call", () =>
    Effect.gen(function*() {
      const broken = Adapter.fromBatch<Toy.Example, unknown, string>({
        evaluate: (batch) => Effect.succeed({ outputs: batch.map(() => "x"), scores: [1] }),
        makeReflectiveDataset: () => Effect.succeed({})
      })
      const error = yield* Effect.flip(Gepa.optimize({ ...base(broken), maxMetricCalls: 50, chunkSize: 3 }))
      assert.strictEqual(error._tag, "AdapterContractError")
      if (error._tag === "AdapterContractError") {
        assert.include(error.call, "evaluate(seed candidate")
        assert.include(error.message, "expected 3 scores")
      }
    }))

  it.effect("a NaN score fails the run with a contract error", () =>
    Effect.gen(function*() {
      const broken = Adapter.fromExample<Toy.Example, string>(() => Effect.succeed({ output: "x", score: Number.NaN }))
      const error = yield* Effect.flip(Gepa.optimize({ ...base(broken), maxMetricCalls: 50 }))
      assert.strictEqual(error._tag, "AdapterContractError")
      assert.include(error.message, "NaN")
    }))

  it.effect("stops with a clear error after N iterations in which every evaluation failed", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      let calls = 0
      // the seed evaluation succeeds, everything after fails
      const flaky: ToyAdapter = {
        ...adapter,
        evaluate: (batch, candidate, options) =>
          Effect.suspend(() => (calls++ < valset.length
            ? adapter.evaluate(batch, candidate, options)
            : Effect.fail(new AdapterError({ call: "evaluate", detail: "service down" })))
          )
      }
      const error = yield* Effect.flip(Gepa.optimize({ ...base(flaky), ...onePerStep, maxMetricCalls: 1000, maxConsecutiveFailedIterations: 3 }))
      assert.strictEqual(error._tag, "AllEvaluationsFailed")
      if (error._tag === "AllEvaluationsFailed") {
        assert.strictEqual(error.iterations, 3)
        assert.include(error.message, "service down")
      }
    }))

  it.effect("names the streak that reached the limit, even when a later proposal of the same step did not fail", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      // iterations 1 and 2 fail, 3 and 4 (the rest of the first step) do not
      const propose = ({ parent, component, iteration }: { parent: Record<string, string>; component: string; iteration: number }) =>
        iteration <= 2
          ? Effect.fail(new ComponentProposalFailed({ component, reason: `no idea at iteration ${iteration}` }))
          : Effect.succeed(`${parent[component]} (rewritten at ${iteration})`)
      const error = yield* Effect.flip(Gepa.optimize({
        ...base(adapter),
        proposalsPerStep: 4,
        proposalSampling: "independent",
        proposalSelection: "best",
        componentProposers: { rules_a: propose, rules_b: propose },
        maxMetricCalls: 500,
        maxConsecutiveFailedIterations: 2
      }))
      assert.strictEqual(error._tag, "ProposalsFailed")
      if (error._tag === "ProposalsFailed") {
        assert.strictEqual(error.iterations, 2)
        assert.strictEqual(error.message, "2 proposals in a row failed (last error: proposer of component \"rules_b\" failed: no idea at iteration 2)")
      }
    }))
})

describe("configuration", () => {
  it.effect("a config without a stop condition is a clear error", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      const error = yield* Effect.flip(Gepa.optimize(base(adapter)))
      assert.strictEqual(error._tag, "ConfigError")
      if (error._tag === "ConfigError") assert.strictEqual(error.field, "stop")
    }))

  it.effect("invalid numbers name the field", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      const error = yield* Effect.flip(Gepa.optimize({ ...base(adapter), maxMetricCalls: 100, minibatchSize: 0 }))
      assert.strictEqual(error._tag, "ConfigError")
      if (error._tag === "ConfigError") assert.strictEqual(error.field, "minibatchSize")
      const cases = [
        [{ candidateSelector: { epsilonGreedy: 2 } }, "candidateSelector"],
        [{ merge: { maxInvocations: -1 } }, "merge.maxInvocations"],
        [{ evaluationPolicy: { incremental: 0 } }, "evaluationPolicy.incremental"],
        [{ maxMetricCalls: 10.5 }, "maxMetricCalls"]
      ] as const
      for (const [override, field] of cases) {
        const e = yield* Effect.flip(Gepa.optimize({ ...base(adapter), maxMetricCalls: 100, ...override }))
        assert.strictEqual(e._tag === "ConfigError" ? e.field : e._tag, field)
      }
    }))

  it.effect("a budget smaller than the validation set fails before any evaluation", () =>
    Effect.gen(function*() {
      const { adapter, examplesEvaluated } = yield* Toy.makeAdapter()
      const error = yield* Effect.flip(Gepa.optimize({ ...base(adapter), maxMetricCalls: 5 }))
      assert.strictEqual(error._tag, "ConfigError")
      assert.strictEqual(yield* Ref.get(examplesEvaluated), 0)
    }))

  it.effect("a non-instance frontier without objective scores is a clear error", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      const error = yield* Effect.flip(Gepa.optimize({ ...base(adapter), maxMetricCalls: 100, frontierType: "objective" }))
      assert.strictEqual(error._tag, "MissingObjectiveScores")
    }))

  it.effect("the objective frontier works when the adapter reports objective scores", () =>
    Effect.gen(function*() {
      const adapter = Adapter.fromExample<Toy.Example, string>((example, candidate) =>
        Effect.sync(() => {
          const r = Toy.solve(example, candidate)
          return { ...r, objectiveScores: { accuracy: r.score, brevity: 1 / (1 + (candidate.rules_a?.length ?? 0) / 100) } }
        })
      )
      const result = yield* Gepa.optimize({ ...base(adapter), maxMetricCalls: 200, frontierType: "hybrid" })
      assert.isAbove(result.bestScore!, result.seedScore!)
      assert.isTrue(Object.keys(result.state.fronts.objective.best).includes("brevity"))
    }))
})

describe("stop conditions", () => {
  // one proposal at a time, so a stop lands exactly where it holds; the
  // pipeline's behaviour is tested below
  const run = (stop: StopCondition.StopCondition | ReadonlyArray<StopCondition.StopCondition>, maxMetricCalls = 2000) =>
    Effect.flatMap(Toy.makeAdapter(), ({ adapter }) =>
      Gepa.optimize({
        ...base(adapter),
        reflectionModel: Toy.reflectionModel(1),
        stop,
        maxMetricCalls,
        skipPerfectScore: false,
        parallelProposals: 1,
        ...onePerStep
      }))

  it.effect("with proposals in flight, no proposal starts once a condition holds; those in flight finish", () =>
    Effect.gen(function*() {
      for (const parallelProposals of [2, 4]) {
        const { adapter } = yield* Toy.makeAdapter()
        const events: Array<GepaEvent> = []
        const result = yield* Gepa.optimize({
          ...base(adapter),
          reflectionModel: Toy.reflectionModel(1),
          stop: StopCondition.maxCandidates(3),
          maxMetricCalls: 2000,
          skipPerfectScore: false,
          parallelProposals,
          ...onePerStep,
          onEvent: (e) => void events.push(e)
        })
        // the condition held after the fold that added the third candidate;
        // every proposal planned after that fold would be a violation
        const ends = events.flatMap((e) => (e._tag === "IterationEnded" ? [e] : []))
        const holds = ends.findIndex((e) => e.state.candidates.length >= 3)
        assert.isAtLeast(holds, 0)
        const lastPlanned = Math.max(...events.flatMap((e) => (e._tag === "IterationStarted" ? [e.iteration] : [])))
        assert.strictEqual(lastPlanned, ends[holds]!.state.iteration)
        // every planned proposal was folded, and at most depth - 1 of them after the stop
        assert.strictEqual(ends.length, lastPlanned)
        assert.isAtMost(ends.length - 1 - holds, parallelProposals - 1)
        assert.isAtMost(result.candidates.length, 3 + parallelProposals - 1)
        assert.deepStrictEqual(result.state.pending, [])
      }
    }))

  it.effect("maxIterations", () =>
    Effect.map(run(StopCondition.maxIterations(4)), (r) => {
      assert.strictEqual(r.iterations, 4)
      // the reason in words, and which condition fired for programs
      assert.strictEqual(r.stopReason, "ran the maximum of 4 iterations")
      assert.deepStrictEqual(r.stoppedBy, { kind: "condition", condition: "maxIterations(4)" })
    }))

  it.effect("maxMetricCalls as a stop condition is a strict budget", () =>
    Effect.map(run(StopCondition.maxMetricCalls(40), 100000), (r) => assert.isAtMost(r.totalMetricCalls, 40)))

  it.effect("maxCandidates", () => Effect.map(run(StopCondition.maxCandidates(3)), (r) => assert.strictEqual(r.candidates.length, 3)))

  it.effect("scoreThreshold", () =>
    Effect.map(run(StopCondition.scoreThreshold(0.5)), (r) => {
      assert.isAtLeast(r.bestScore!, 0.5)
      assert.match(r.stopReason, /^the best validation score \d\.\d{3} reached the threshold 0\.5$/)
      assert.deepStrictEqual(r.stoppedBy, { kind: "condition", condition: "scoreThreshold(0.5)" })
    }))

  it.effect("noImprovement", () =>
    Effect.map(run(StopCondition.noImprovement(3)), (r) => {
      assert.strictEqual(r.state.iteration - r.state.lastImprovementIteration, 3)
      assert.match(r.stopReason, /^no better validation score in the last 3 iterations \(best \d\.\d{3}, found /)
    }))

  it.effect("timeout follows the Clock (TestClock)", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter({ latencyMs: 100 })
      const fiber = yield* Effect.fork(Gepa.optimize({ ...base(adapter), stop: StopCondition.timeout("1 second"), maxMetricCalls: 100000 }))
      let exit = yield* Fiber.poll(fiber)
      while (Option.isNone(exit)) {
        yield* TestClock.adjust("100 millis")
        exit = yield* Fiber.poll(fiber)
      }
      const result = yield* Fiber.join(fiber)
      assert.match(result.stopReason, /^reached the time limit of 1s/)
      assert.isAbove(result.iterations, 0)
    }))

  it.effect("timeout is a deadline: a hung call does not keep the run alive; resuming continues what was in flight", () =>
    Effect.gen(function*() {
      const dir = makeTmpDir("gepa-deadline-")
      const { adapter } = yield* Toy.makeAdapter()
      let calls = 0
      // the clock moves once a call hangs (saves flush off the event loop, so the run may not be there yet)
      const hung = yield* Deferred.make<void>()
      // the seed's validation and the first proposals answer, then every call hangs
      const hanging: ToyAdapter = {
        ...adapter,
        evaluate: (batch, candidate, options) =>
          Effect.suspend(() =>
            calls++ < valset.length + 12 ? adapter.evaluate(batch, candidate, options) : Effect.zipRight(Deferred.succeed(hung, undefined), Effect.never)
          )
      }
      const fiber = yield* Effect.fork(Gepa.optimize({
        ...base(hanging),
        runDir: dir,
        maxMetricCalls: 300,
        stop: StopCondition.timeout("10 seconds")
      }))
      yield* Deferred.await(hung)
      yield* TestClock.adjust("11 seconds")
      const stopped = yield* Fiber.join(fiber)
      assert.strictEqual(stopped.stopReason, "reached the time limit of 10s (proposals in flight paused)")
      assert.deepStrictEqual(stopped.stoppedBy, { kind: "deadline", condition: null })
      // the proposals in flight were interrupted, not folded half-done: they are still planned
      assert.isAbove(stopped.state.pending.length, 0)
      assert.deepStrictEqual(State.checkConsistency(stopped.state), [])
      // resumed with a working adapter, the run re-launches them and finishes
      const resumed = yield* Gepa.optimize({ ...base(adapter), runDir: dir, maxMetricCalls: 300 })
      assert.deepStrictEqual(resumed.state.pending, [])
      assert.isAtLeast(resumed.iterations, stopped.state.iteration)
      assert.isAtMost(resumed.totalMetricCalls, 300)
    }))

  it.effect("stopFile", () =>
    Effect.gen(function*() {
      const dir = makeTmpDir("gepa-stop-")
      const file = path.join(dir, "gepa.stop")
      let iterations = 0
      const { adapter } = yield* Toy.makeAdapter()
      const result = yield* Gepa.optimize({
        ...base(adapter),
        ...onePerStep,
        maxMetricCalls: 2000,
        parallelProposals: 1,
        stop: StopCondition.stopFile(file),
        onEvent: (e) => {
          if (e._tag === "IterationEnded" && ++iterations === 2) fs.writeFileSync(file, "")
        }
      })
      assert.strictEqual(result.iterations, 2)
      assert.match(result.stopReason, /^stopped by request \(the file .* exists\)$/)
      assert.strictEqual(result.stoppedBy?.condition?.startsWith("stopFile("), true)
    }))

  it.effect("maxReflectionCost reads the cost reported by the model", () =>
    Effect.gen(function*() {
      const inner = Toy.reflectionModel()
      const priced: LanguageModel.LanguageModel = {
        complete: (p) => Effect.map(inner.complete(p), (c) => ({ ...c, usage: { inputTokens: 100, outputTokens: 10 }, cost: 0.25 }))
      }
      const { adapter } = yield* Toy.makeAdapter()
      const result = yield* Gepa.optimize({
        ...base(adapter),
        ...onePerStep,
        reflectionModel: priced,
        skipPerfectScore: false,
        maxMetricCalls: 5000,
        parallelProposals: 1,
        stop: StopCondition.maxReflectionCost(1)
      })
      assert.strictEqual(result.state.reflectionUsage.cost, 1)
      assert.strictEqual(result.reflectionCalls, 4)
      assert.strictEqual(result.state.reflectionUsage.inputTokens, 400)
    }))

  it.effect("onSignal stops gracefully at the next safe point", () =>
    Effect.gen(function*() {
      let iterations = 0
      const { adapter } = yield* Toy.makeAdapter()
      const result = yield* Gepa.optimize({
        ...base(adapter),
        maxMetricCalls: 2000,
        skipPerfectScore: false,
        parallelProposals: 1,
        ...onePerStep,
        stop: StopCondition.onSignal(["SIGUSR2"]),
        onEvent: (e) => {
          if (e._tag === "IterationEnded" && ++iterations === 3) process.emit("SIGUSR2")
        }
      })
      assert.strictEqual(result.iterations, 3)
      assert.strictEqual(result.stopReason, "stopped by hand (SIGUSR2)")
      assert.strictEqual(process.listenerCount("SIGUSR2"), 0)
    }))

  it.effect("a user-defined condition over the snapshot", () =>
    Effect.map(
      run(StopCondition.make("two accepted", (s) => Effect.succeed(s.state.acceptedProposals >= 2))),
      (r) => assert.strictEqual(r.acceptedProposals, 2)
    ))

  it.effect("any / all / not", () =>
    Effect.gen(function*() {
      const anyResult = yield* run(StopCondition.any(StopCondition.maxIterations(10), StopCondition.maxIterations(3)))
      assert.strictEqual(anyResult.iterations, 3)
      const allResult = yield* run(StopCondition.all(StopCondition.maxIterations(2), StopCondition.maxIterations(5)))
      assert.strictEqual(allResult.iterations, 5)
      const notResult = yield* run(StopCondition.not(StopCondition.fromPredicate("under 4", (s) => s.state.iteration < 4)))
      assert.strictEqual(notResult.iterations, 4)
      // a list of conditions means any of them
      const listResult = yield* run([StopCondition.maxIterations(6), StopCondition.maxIterations(2)])
      assert.strictEqual(listResult.iterations, 2)
    }))
})

describe("supervision and observability", () => {
  it.live("interruption stops in-flight evaluations and leaves no running fiber", () =>
    Effect.gen(function*() {
      const { adapter, inFlight } = yield* Toy.makeAdapter({ latencyMs: 20 })
      const states: Array<State.GepaState> = []
      const started = yield* Ref.make(0)
      const fiber = yield* Effect.fork(Gepa.optimize({
        ...base(adapter),
        maxMetricCalls: 100000,
        onEvent: (e) =>
          Effect.gen(function*() {
            if (e._tag === "IterationEnded") states.push(e.state)
            if (e._tag === "EvaluationStarted") yield* Ref.update(started, (n) => n + 1)
          })
      }))
      while ((yield* Ref.get(started)) < 4) yield* Effect.sleep("5 millis")
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.strictEqual(yield* Ref.get(inFlight), 0)
      for (const s of states) assert.deepStrictEqual(State.checkConsistency(s), [])
    }))

  it.effect("Gepa.stream emits events step by step and can be stopped early", () =>
    Effect.gen(function*() {
      const { adapter, examplesEvaluated } = yield* Toy.makeAdapter()
      const steps = yield* Gepa.stream({ ...base(adapter), maxMetricCalls: 100000, skipPerfectScore: false }).pipe(
        Stream.filter((e) => e._tag === "IterationEnded"),
        Stream.take(3),
        Stream.runCollect
      )
      const folded = Array.from(steps).flatMap((e) => (e._tag === "IterationEnded" ? [e.iteration] : []))
      assert.deepStrictEqual(folded, [1, 2, 3])
      const afterStop = yield* Ref.get(examplesEvaluated)
      // the run is gone: nothing evaluates after the stream ended
      yield* Effect.yieldNow()
      assert.strictEqual(yield* Ref.get(examplesEvaluated), afterStop)
    }))

  it.effect("events cover the run", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      const tags = new Set<string>()
      yield* Gepa.optimize({ ...base(adapter), maxMetricCalls: 200, onEvent: (e) => void tags.add(e._tag) })
      for (
        const tag of [
          "OptimizationStarted",
          "OptimizationEnded",
          "IterationStarted",
          "IterationEnded",
          "CandidateSelected",
          "MinibatchSampled",
          "EvaluationStarted",
          "EvaluationEnded",
          "ValsetEvaluated",
          "ReflectiveDatasetBuilt",
          "ProposalStarted",
          "ProposalEnded",
          "CandidateAccepted",
          "ParetoFrontUpdated",
          "BudgetUpdated"
        ]
      ) assert.isTrue(tags.has(tag), `missing event ${tag}`)
    }))

  it.effect("a custom proposer replaces the reflection model", () =>
    Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      const result = yield* Gepa.optimize({
        seedCandidate: Toy.seedCandidate,
        trainset,
        valset,
        adapter,
        maxMetricCalls: 200,
        proposer: (candidate, _dataset, components) =>
          Effect.succeed(Object.fromEntries(components.map((c) => [c, `${candidate[c]} alpha bravo charlie delta echo foxtrot`])))
      })
      assert.strictEqual(result.bestScore, 1)
    }))
})

describe("merge", () => {
  it.effect("merges complementary lineages, within the cap", () =>
    Effect.gen(function*() {
      for (const maxInvocations of [1, 2]) {
        const { adapter } = yield* Toy.makeAdapter()
        const events: Array<GepaEvent> = []
        // the first two proposals start from the seed and improve different
        // components (round robin), so two lineages diverge and a merge can
        // combine them (sequential proposals: the pipeline's rebase would
        // combine them itself)
        const result = yield* Gepa.optimize({
          ...base(adapter),
          ...oneRound,
          reflectionModel: Toy.reflectionModel(1),
          maxMetricCalls: 400,
          parallelProposals: 1,
          candidateSelector: (state, rng) => state.candidates.length <= 2 ? 0 : CandidateSelector.pareto(state, rng),
          merge: { maxInvocations, overlapFloor: 3 },
          onEvent: (e) => void events.push(e)
        })
        const attempted = events.filter((e) => e._tag === "MergeAttempted").length
        const accepted = events.filter((e) => e._tag === "MergeAccepted")
        assert.isAtLeast(accepted.length, 1)
        assert.isAtMost(attempted, maxInvocations)
        assert.strictEqual(result.mergesAttempted, attempted)
        for (const e of accepted) {
          if (e._tag !== "MergeAccepted") continue
          // the merged child has both lineages as parents and takes each
          // component from the side that changed it
          assert.strictEqual(result.parents[e.candidate]!.length, 2)
          const [p1, p2] = result.parents[e.candidate]!
          const merged = result.candidates[e.candidate]!
          for (const name of Object.keys(merged)) {
            assert.include([result.candidates[p1!]![name], result.candidates[p2!]![name]], merged[name])
          }
        }
      }
    }))
})
