/**
 * What a model layer reports about one call (its retries and provider, see
 * `modelCall.CallSlot`) lands on that call's span, whatever else runs: calls
 * in turn on one fiber, calls at once on fibers forked from one parent, and
 * a call inside another.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import * as modelCall from "../src/internal/models/call.js"
import { type LanguageModel } from "../src/LanguageModel.js"
import * as Telemetry from "../src/Telemetry.js"

/** A tracer that keeps every span's attributes. */
const recording = () => {
  const spans: Array<{ readonly name: string; readonly attributes: Map<string, unknown> }> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const attributes = new Map<string, unknown>()
      spans.push({ name, attributes })
      return {
        _tag: "Span",
        name,
        spanId: `${spans.length}`,
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        end: () => {},
        attribute: (key, value) => {
          attributes.set(key, value)
        },
        event: () => {},
        addLinks: () => {}
      }
    },
    context: (f) => f()
  })
  return { spans, tracer }
}

/** A model that names its provider after a pause (so that calls overlap) and reports `retries` retries. */
const reporting = (provider: string, retries: number, pause: number): LanguageModel => ({
  complete: () =>
    Effect.gen(function*() {
      yield* Effect.sleep(pause)
      yield* modelCall.reportProvider(provider)
      yield* Effect.sleep(pause)
      yield* Effect.withFiberRuntime((fiber) => {
        const slot = fiber.getFiberRef(modelCall.currentCallStats)
        if (slot?.current !== undefined) slot.current.retries = retries
        return Effect.void
      })
      return { text: provider, finishReason: "stop" as const }
    })
})

describe("call stats", () => {
  it.live("each call's span gets its own provider and retries: in turn, at once, and nested", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recording()
      const a = Telemetry.instrumentModel(reporting("alpha", 1, 5), { role: "task", model: "a" })
      const b = Telemetry.instrumentModel(reporting("beta", 2, 3), { role: "task", model: "b" })
      // a model that calls another instrumented model before answering itself
      const outer = Telemetry.instrumentModel({
        complete: (prompt) =>
          Effect.zipRight(b.complete(prompt), Effect.zipRight(modelCall.reportProvider("gamma"), Effect.succeed({ text: "g", finishReason: "stop" as const })))
      }, { role: "reflection", model: "outer" })
      yield* Effect.gen(function*() {
        yield* a.complete("1")
        yield* b.complete("2")
        yield* Effect.all([a.complete("3"), b.complete("4"), a.complete("5"), b.complete("6")], { concurrency: "unbounded" })
        yield* outer.complete("7")
        yield* a.complete("8")
      }).pipe(Effect.withTracer(tracer))
      const calls = spans.filter((s) => s.name === "gepa.model").map((
        s
      ) => [s.attributes.get("gen_ai.request.model"), s.attributes.get("gen_ai.system"), s.attributes.get("gepa.model.retries")])
      expect(calls).toEqual([
        ["a", "alpha", 1],
        ["b", "beta", 2],
        ["a", "alpha", 1],
        ["b", "beta", 2],
        ["a", "alpha", 1],
        ["b", "beta", 2],
        ["outer", "gamma", 0],
        ["b", "beta", 2],
        ["a", "alpha", 1]
      ])
    }))
})
