/**
 * Logging through Effect's Logger: iteration summaries at info, details at
 * debug, so `Logger.withMinimumLogLevel` (and the CLI's `--log-level`)
 * decide what shows. The engine logs through its own observer
 * (`Gepa.Config.telemetry`); no test run passes one of its own unless it says so.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, HashMap, List, Logger, LogLevel, Metric } from "effect"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import { GepaEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"
import { fromFunction, LlmTimeout, scripted } from "../src/LanguageModel.js"
import * as GepaMetric from "../src/Metric.js"
import * as Telemetry from "../src/Telemetry.js"
import * as UpperCase from "./fixtures/upperCase.js"

const task = UpperCase.task()

/** Runs a small optimization and returns what was logged at or above `level`. */
const logsOf = (
  level: LogLevel.LogLevel,
  telemetry?: boolean | Telemetry.ObserverOptions,
  onEvent?: Gepa.Config<UpperCase.Example, unknown, string>["onEvent"]
) =>
  Effect.gen(function*() {
    const lines: Array<{ level: string; message: string }> = []
    const capture = Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel.label, message: (Array.isArray(message) ? message : [message]).join(" ") })
    })
    const adapter = yield* DefaultAdapter.make<UpperCase.Example>({
      model: task,
      input: (e) => e.q,
      metric: GepaMetric.exactMatch((e) => e.a)
    })
    const result = yield* Gepa.optimize({
      ...UpperCase.runOf(adapter),
      maxMetricCalls: 30,
      ...(telemetry === undefined ? {} : { telemetry }),
      ...(onEvent === undefined ? {} : { onEvent })
    }).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, capture)),
      Logger.withMinimumLogLevel(level)
    )
    return { lines, result }
  })

describe("Telemetry logs", () => {
  it.effect("every line carries the run's annotation and log span; event lines their iteration, candidate, score, budget", () =>
    Effect.gen(function*() {
      const lines: Array<{ message: string; annotations: Record<string, unknown>; spans: ReadonlyArray<string> }> = []
      const capture = Logger.make(({ annotations, message, spans }) => {
        lines.push({
          message: String(message),
          annotations: Object.fromEntries(HashMap.toEntries(annotations)),
          spans: List.toArray(spans).map((s) => s.label)
        })
      })
      const adapter = yield* DefaultAdapter.make<UpperCase.Example>({ model: task, input: (e) => e.q, metric: GepaMetric.exactMatch((e) => e.a) })
      const result = yield* Gepa.optimize({
        ...UpperCase.runOf(adapter),
        maxMetricCalls: 30
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)), Logger.withMinimumLogLevel(LogLevel.Debug))
      expect(lines.length).toBeGreaterThan(0)
      const run = lines[0]!.annotations["run"]
      expect(run).toMatch(/^run-[0-9a-f]{8}$/)
      expect(lines.every((l) => l.annotations["run"] === run && l.spans.includes("gepa.run"))).toBe(true)
      const started = lines.find((l) => l.annotations["event"] === "OptimizationStarted")!
      expect(started.annotations).toMatchObject({ budget: 30 })
      const ended = lines.filter((l) => l.annotations["event"] === "IterationEnded")
      expect(ended).toHaveLength(result.iterations)
      expect(ended.map((l) => l.annotations["iteration"])).toEqual(Array.from({ length: result.iterations }, (_, i) => i + 1))
      expect(ended.every((l) => typeof l.annotations["metricCalls"] === "number")).toBe(true)
      const accepted = lines.find((l) => l.annotations["event"] === "CandidateAccepted")
      expect(accepted?.annotations).toMatchObject({ candidate: expect.any(Number), parent: expect.any(String), score: expect.any(Number) })
      const selected = lines.find((l) => l.annotations["event"] === "CandidateSelected")
      expect(selected?.annotations).toMatchObject({ iteration: expect.any(Number), candidate: expect.any(Number), score: expect.any(Number) })
      // the same function, for an application's own observer
      expect(Telemetry.annotationsOf(GepaEvent.ProposalStarted({ iteration: 4, parent: 2, components: ["a"] }))).toEqual({
        event: "ProposalStarted",
        iteration: 4,
        parent: 2
      })
    }))

  it.effect("info shows the run's start, one summary per iteration and the end; no details", () =>
    Effect.gen(function*() {
      const { lines, result } = yield* logsOf(LogLevel.Info, { summaryLevel: "info" })
      const summaries = lines.filter((l) => /^iteration \d+: \d+ accepted/.test(l.message))
      expect(summaries).toHaveLength(result.iterations)
      expect(summaries.every((l) => l.level === "INFO")).toBe(true)
      expect(summaries[0]!.message).toMatch(/^iteration 1: \d+ accepted, \d+ candidates, best score [\d.]+ \(candidate \d+\), \d+ metric calls$/)
      expect(lines[0]!.message).toBe(
        "starting optimization: 6 training and 6 validation examples, budget 30 metric calls, 1 to 8 proposals per step (wider as fewer are accepted), independent, best"
      )
      expect(lines.at(-1)!.message).toContain(`optimization ended after ${result.iterations} iterations: best score 1`)
      expect(lines.some((l) => l.level === "DEBUG")).toBe(false)
    }))

  it.effect("debug adds the details of each iteration", () =>
    Effect.gen(function*() {
      const { lines } = yield* logsOf(LogLevel.Debug)
      const debug = lines.filter((l) => l.level === "DEBUG").map((l) => l.message)
      expect(debug).toContain("iteration 1 started (6 metric calls so far)")
      expect(debug.some((m) => /^iteration 1: parent 0 \(score 0\)$/.test(m))).toBe(true)
      expect(debug.some((m) => m.startsWith("iteration 1: proposing system_prompt from parent 0"))).toBe(true)
      expect(debug.some((m) => /^iteration 1: candidate 1 accepted/.test(m))).toBe(true)
      expect(debug.some((m) => m.startsWith("iteration 1: evaluating 3 examples (parent-minibatch)"))).toBe(true)
    }))

  it.effect("the library default logs summaries at debug: a run under Effect's default level (info) prints nothing", () =>
    Effect.gen(function*() {
      expect((yield* logsOf(LogLevel.Info)).lines).toEqual([])
      const { lines, result } = yield* logsOf(LogLevel.Debug)
      const summaries = lines.filter((l) => /^iteration \d+: \d+ accepted/.test(l.message))
      expect(summaries).toHaveLength(result.iterations)
      expect(summaries.every((l) => l.level === "DEBUG")).toBe(true)
    }))

  it.effect("warning shows none of the iteration lines; logs: false and telemetry: false log nothing", () =>
    Effect.gen(function*() {
      expect((yield* logsOf(LogLevel.Warning, { summaryLevel: "info" })).lines).toEqual([])
      expect((yield* logsOf(LogLevel.All, { logs: false })).lines).toEqual([])
      expect((yield* logsOf(LogLevel.All, false)).lines).toEqual([])
    }))

  it.effect("telemetry: false records no metrics; the observer passed as onEvent still works", () =>
    Effect.gen(function*() {
      const before = (yield* Metric.value(Telemetry.metricCalls)).count
      const iterationsBefore = (yield* Metric.value(Telemetry.iterations)).count
      yield* logsOf(LogLevel.Info, false)
      expect((yield* Metric.value(Telemetry.metricCalls)).count).toBe(before)
      const observer = yield* Telemetry.observer()
      const { lines, result } = yield* logsOf(LogLevel.Info, false, observer)
      expect(lines.filter((l) => /^iteration \d+: \d+ accepted/.test(l.message))).toHaveLength(result.iterations)
      expect((yield* Metric.value(Telemetry.metricCalls)).count - before).toBe(result.totalMetricCalls)
      expect((yield* Metric.value(Telemetry.iterations)).count - iterationsBefore).toBe(result.iterations)
    }))
})

describe("Telemetry.describeEvent", () => {
  it("a generated seed is an info line naming the attempts and rejections", () => {
    const line = Telemetry.describeEvent(
      GepaEvent.SeedGenerated({ attempts: 2, rejected: ["no fenced block"], candidate: { prompt: "x" } }),
      undefined
    )
    expect(line).toEqual({
      level: "info",
      message: "seed candidate written by the reflection model after 2 attempts (rejected: no fenced block)"
    })
  })
})

describe("Telemetry.observer", () => {
  it.effect("a resumed run counts only the metric calls it spends itself", () =>
    Effect.gen(function*() {
      const before = (yield* Metric.value(Telemetry.metricCalls)).count
      const observe = yield* Telemetry.observer({ logs: false })
      yield* observe(GepaEvent.OptimizationStarted({ resumed: true, trainSize: 3, valSize: 3, budget: 100 }))
      yield* observe(GepaEvent.IterationStarted({ iteration: 8, metricCalls: 40 }))
      yield* observe(GepaEvent.BudgetUpdated({ metricCalls: 46, budget: 100 }))
      yield* observe(GepaEvent.IterationStarted({ iteration: 9, metricCalls: 46 }))
      yield* observe(GepaEvent.BudgetUpdated({ metricCalls: 49, budget: 100 }))
      expect((yield* Metric.value(Telemetry.metricCalls)).count - before).toBe(9)

      const fresh = yield* Telemetry.observer({ logs: false })
      yield* fresh(GepaEvent.OptimizationStarted({ resumed: false, trainSize: 3, valSize: 3, budget: 100 }))
      yield* fresh(GepaEvent.BudgetUpdated({ metricCalls: 3, budget: 100 }))
      expect((yield* Metric.value(Telemetry.metricCalls)).count - before).toBe(12)
    }))

  it.effect("proposals are counted by outcome and kind; the best score only rises", () =>
    Effect.gen(function*() {
      const count = (outcome: string, kind: string) =>
        Effect.map(
          Metric.value(Metric.tagged(Metric.tagged(Telemetry.proposals, "outcome", outcome), "kind", kind)),
          (s) => s.count
        )
      const accepted = yield* count("accepted", "reflective")
      const failed = yield* count("failed", "reflective")
      const merged = yield* count("rejected", "merge")
      const observe = yield* Telemetry.observer({ logs: false })
      yield* observe(GepaEvent.ProposalEnded({ iteration: 1, parent: 0, outcome: "accepted" }))
      yield* observe(GepaEvent.ProposalEnded({ iteration: 1, parent: 0, outcome: "failed", reason: "x" }))
      yield* observe(GepaEvent.ProposalEnded({ iteration: 2, parent: 0, outcome: "accepted" }))
      yield* observe(GepaEvent.MergeRejected({ iteration: 3, parents: [1, 2], reason: "no gain" }))
      expect((yield* count("accepted", "reflective")) - accepted).toBe(2)
      expect((yield* count("failed", "reflective")) - failed).toBe(1)
      expect((yield* count("rejected", "merge")) - merged).toBe(1)

      yield* observe(GepaEvent.ValsetEvaluated({ iteration: 1, candidate: 1, score: 0.75, coverage: 1 }))
      yield* observe(GepaEvent.ValsetEvaluated({ iteration: 2, candidate: 2, score: 0.5, coverage: 1 }))
      expect((yield* Metric.value(Telemetry.bestScore)).value).toBe(0.75)
    }))
})

describe("Telemetry.instrumentModel", () => {
  it.effect("counts calls by outcome, tokens and cost once, even when wrapped twice", () =>
    Effect.gen(function*() {
      const tagged = (metric: typeof Telemetry.modelCalls, tags: Record<string, string>) =>
        Object.entries(tags).reduce((m, [k, v]) => Metric.tagged(m, k, v), metric)
      const count = (tags: Record<string, string>) => Effect.map(Metric.value(tagged(Telemetry.modelCalls, tags)), (s) => s.count)
      const tokens = (direction: string) =>
        Effect.map(
          Metric.value(tagged(Telemetry.modelTokens, { role: "task", model: "answer-model", direction })),
          (s) => s.count
        )
      const base = scripted([
        { text: "a", finishReason: "stop", usage: { inputTokens: 7, outputTokens: 3 }, cost: 0.5, model: "answer-model" }
      ])
      const inner = yield* base
      const once = Telemetry.instrumentModel(inner, { role: "task" })
      const twice = Telemetry.instrumentModel(once, { role: "task", model: "other" })
      expect(twice).toBe(once)
      const okBefore = yield* count({ role: "task", model: "answer-model", outcome: "ok" })
      const inBefore = yield* tokens("input")
      yield* twice.complete("q")
      yield* twice.complete("q")
      expect((yield* count({ role: "task", model: "answer-model", outcome: "ok" })) - okBefore).toBe(2)
      expect((yield* tokens("input")) - inBefore).toBe(14)

      const failing = Telemetry.instrumentModel(
        fromFunction(() => Effect.fail(new LlmTimeout({ model: "slow", millis: 5 }))),
        { role: "reflection", model: "slow" }
      )
      const errBefore = yield* count({ role: "reflection", model: "slow", outcome: "error" })
      const error = yield* Effect.flip(failing.complete("q"))
      expect(error._tag).toBe("LlmTimeout")
      expect((yield* count({ role: "reflection", model: "slow", outcome: "error" })) - errBefore).toBe(1)
    }))
})
