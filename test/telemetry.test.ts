/**
 * OpenTelemetry through @effect/opentelemetry: a small run's span tree and
 * metric values, read from in-memory exporters and checked against the
 * run's result.
 *
 * One run only: Effect metrics are process-wide, and vitest gives each test
 * file its own worker, so the counters hold this run's values alone.
 *
 * Today the engine emits the spans (gepa.optimize, gepa.propose,
 * gepa.evaluate, gepa.reflect, gepa.merge), the model layers emit
 * gepa.model, and the run's metrics and span attributes come from
 * the engine's own observer (`Gepa.Config.telemetry`, on by default): the run
 * passes no `onEvent`.
 */
import { NodeSdk } from "@effect/opentelemetry"
import { assert, describe, expect, it } from "@effect/vitest"
import { AggregationTemporality, type CollectionResult, type DataPoint, MetricReader } from "@opentelemetry/sdk-metrics"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer } from "effect"
import * as AiLanguageModel from "../src/AiLanguageModel.js"
import type * as DefaultAdapter from "../src/DefaultAdapter.js"
import * as Gepa from "../src/Gepa.js"
import { type Question, questionAdapter, questions, reflectionHandler, taskHandler } from "./fixtures/capitals.js"
import * as FakeAi from "./fixtures/fakeAi.js"

/** A pull reader: `collect()` reads Effect's metrics on demand. */
class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }
  protected onShutdown() {
    return Promise.resolve()
  }
  protected onForceFlush() {
    return Promise.resolve()
  }
}

const points = (collected: CollectionResult, name: string): ReadonlyArray<DataPoint<unknown>> =>
  collected.resourceMetrics.scopeMetrics.flatMap((s) =>
    s.metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as ReadonlyArray<DataPoint<unknown>>)
  )

const sumOf = (collected: CollectionResult, name: string, attributes: Record<string, string> = {}) =>
  points(collected, name)
    .filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
    .reduce((acc, p) => acc + (typeof p.value === "number" ? p.value : (p.value as { count: number }).count), 0)

describe("OpenTelemetry", () => {
  // the exporters are read before the SDK layer closes: shutting it down
  // clears the in-memory exporter
  const exporter = new InMemorySpanExporter()
  const reader = new TestReader()
  const Otel = NodeSdk.layer(() => ({
    resource: { serviceName: "gepa-test" },
    spanProcessor: new SimpleSpanProcessor(exporter),
    metricReader: reader
  }))

  it.effect("a small run exports its span tree and metrics matching the result", () =>
    Effect.gen(function*() {
      const Models = Layer.mergeAll(
        AiLanguageModel.layerReflection({ model: "reflector", price: { inputPerMillion: 1, outputPerMillion: 4 } }).pipe(
          Layer.provide(FakeAi.layer(reflectionHandler))
        ),
        questionAdapter.pipe(
          Layer.provide(AiLanguageModel.layerTask({ model: "tasker" }).pipe(Layer.provide(FakeAi.layer(taskHandler))))
        )
      )
      // no observer of our own: the engine records the metrics and span
      // attributes itself (Gepa.Config.telemetry, on by default)
      const result = yield* Gepa.optimize<Question, DefaultAdapter.Trajectory<Question>, string>({
        seedCandidate: { system_prompt: "Answer the question." },
        trainset: questions.slice(0, 5),
        valset: questions.slice(5),
        maxMetricCalls: 40
      }).pipe(Effect.provide(Models))
      assert.strictEqual(result.bestScore, 1)
      assert.isAbove(result.iterations, 1)
      assert.isAbove(result.acceptedProposals, 0)
      assert.isAbove(result.reflectionCalls, 0)

      // ---- spans --------------------------------------------------------
      const spans = exporter.getFinishedSpans()
      const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
      const parentOf = (s: ReadableSpan) => {
        const id = s.parentSpanContext?.spanId
        return id === undefined ? undefined : byId.get(id)
      }
      const ancestors = (s: ReadableSpan): Array<string> => {
        const out: Array<string> = []
        for (let p = parentOf(s); p !== undefined; p = parentOf(p)) out.push(p.name)
        return out
      }
      const named = (name: string) => spans.filter((s) => s.name === name)

      const [root, ...others] = named("gepa.optimize")
      expect(others).toHaveLength(0)
      expect(parentOf(root!)).toBeUndefined()
      expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1)

      // the engine has no per-iteration span: proposals of several iterations
      // overlap in its pipeline, so each gepa.propose carries its iteration
      const proposes = named("gepa.propose")
      expect(proposes.length).toBeGreaterThan(0)
      for (const p of proposes) expect(parentOf(p)?.name).toBe("gepa.optimize")
      const iterationsSeen = new Set(proposes.map((p) => p.attributes["iteration"]))
      expect(iterationsSeen.size).toBe(proposes.length)
      expect(Math.max(...[...iterationsSeen].map(Number))).toBeLessThanOrEqual(result.iterations)

      // evaluations: the seed's validation under optimize, minibatches under propose
      const evaluations = named("gepa.evaluate")
      expect(evaluations.some((e) => parentOf(e)?.name === "gepa.propose")).toBe(true)
      expect(evaluations.some((e) => e.attributes["purpose"] === "seed-validation")).toBe(true)

      // model calls: reflection calls inside gepa.reflect, task calls inside gepa.evaluate
      const modelCalls = named("gepa.model")
      const reflectionCalls = modelCalls.filter((s) => s.attributes["gepa.model.role"] === "reflection")
      const taskCalls = modelCalls.filter((s) => s.attributes["gepa.model.role"] === "task")
      expect(reflectionCalls).toHaveLength(result.reflectionCalls)
      for (const s of reflectionCalls) {
        expect(ancestors(s)).toEqual(["Reflection.proposeComponent", "gepa.reflect", "gepa.propose", "gepa.optimize"])
        expect(s.attributes).toMatchObject({
          "gen_ai.request.model": "reflector",
          "gen_ai.usage.input_tokens": 300,
          "gen_ai.usage.output_tokens": 30,
          "gen_ai.response.finish_reasons": "stop"
        })
        expect(s.attributes["gepa.model.cost"]).toBeCloseTo((300 + 30 * 4) / 1_000_000)
      }
      expect(taskCalls.length).toBe(result.totalMetricCalls)
      for (const s of taskCalls) expect(ancestors(s)[0]).toBe("gepa.evaluate")
      // one span per model call: no span of the model layer, none of the provider
      expect(named("AiLanguageModel.complete")).toHaveLength(0)
      expect(named("LanguageModel.generateText")).toHaveLength(0)
      for (const s of modelCalls) {
        expect(s.attributes["gen_ai.system"]).toBe("fake")
        expect(s.attributes["gepa.model.retries"]).toBe(0)
      }

      // span attributes set by the engine's observer from the events
      const minibatchEval = evaluations.find((e) => e.attributes["purpose"] === "parent-minibatch")!
      expect(minibatchEval.attributes["gepa.examples"]).toBe(minibatchEval.attributes["size"])
      expect(root!.attributes).toMatchObject({
        "gepa.iterations": result.iterations,
        "gepa.metric_calls": result.totalMetricCalls,
        "gepa.candidates": result.candidates.length,
        "gepa.best_score": result.bestScore,
        "gepa.stop_reason": result.stopReason
      })

      // ---- metrics ------------------------------------------------------
      const collected = yield* Effect.promise(() => reader.collect())
      expect(collected.errors).toEqual([])
      // the run's metrics, from the events, with no user code
      expect(sumOf(collected, "gepa.metric_calls")).toBe(result.totalMetricCalls)
      expect(sumOf(collected, "gepa.iterations")).toBe(result.iterations)
      expect(sumOf(collected, "gepa.proposals", { outcome: "accepted", kind: "reflective" })).toBe(
        result.acceptedProposals
      )
      expect(sumOf(collected, "gepa.proposals", { outcome: "rejected", kind: "reflective" })).toBe(
        result.rejectedProposals
      )
      const [best] = points(collected, "gepa.best_score")
      expect(best?.value).toBe(result.bestScore)
      // one duration per evaluation span
      expect(sumOf(collected, "gepa.evaluation.duration")).toBe(evaluations.length)
      // model metrics, from the instrumented model layers
      expect(sumOf(collected, "gepa.model.calls", { role: "reflection", outcome: "ok" })).toBe(result.reflectionCalls)
      expect(sumOf(collected, "gepa.model.tokens", { role: "reflection", direction: "input" })).toBe(
        result.state.reflectionUsage.inputTokens
      )
      expect(sumOf(collected, "gepa.model.tokens", { role: "reflection", direction: "output" })).toBe(
        result.state.reflectionUsage.outputTokens
      )
      expect(sumOf(collected, "gepa.model.cost", { role: "reflection" })).toBeCloseTo(result.state.reflectionUsage.cost)
      expect(sumOf(collected, "gepa.model.calls", { role: "task", model: "tasker" })).toBe(result.totalMetricCalls)
      expect(sumOf(collected, "gepa.model.duration", { role: "task" })).toBe(result.totalMetricCalls)
    }).pipe(Effect.provide(Otel)))
})
