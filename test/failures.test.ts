/**
 * How the evaluation pool treats adapters' failures: examples reported in a
 * batch's `errors` and failed calls score the fallback and are never cached;
 * an unrecoverable model failure, typed or wrapped in an `AdapterError`,
 * fails the run at once without retries.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref, Schedule } from "effect"
import * as fc from "fast-check"
import * as Adapter from "../src/Adapter.js"
import { AdapterContractError, AdapterError, ModelUnrecoverable } from "../src/Errors.js"
import * as EvaluationCache from "../src/EvaluationCache.js"
import type { GepaEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"
import * as LanguageModel from "../src/LanguageModel.js"

interface Example {
  readonly id: number
}

const trainset: ReadonlyArray<Example> = Array.from({ length: 6 }, (_, id) => ({ id }))

const reflectionModel = LanguageModel.fromFunction(() => "```\nA better text.\n```")

const datasetOf: Adapter.Adapter<Example, Example, string>["makeReflectiveDataset"] = (_c, evaluation, components) =>
  Effect.succeed(Object.fromEntries(components.map((c) => [c, (evaluation.trajectories ?? []).map((t) => ({ Inputs: t.id }))])))

/** an adapter that reports the examples in `failing` as failures, in `errors` */
const reportingAdapter = (failing: ReadonlySet<number>): Adapter.Adapter<Example, Example, string> => ({
  evaluate: (batch, _candidate, { captureTraces }) =>
    Effect.succeed({
      outputs: batch.map((e) => `out${e.id}`),
      scores: batch.map(() => 0.5),
      trajectories: captureTraces ? batch : undefined,
      errors: batch.map((e) => (failing.has(e.id) ? `example ${e.id} failed` : undefined))
    }),
  makeReflectiveDataset: datasetOf
})

const recordingCache = () => {
  const inner = EvaluationCache.memory<string>()
  const stored: Array<string> = []
  const cache: EvaluationCache.EvaluationCache<string> = {
    ...inner,
    set: (key, value) => Effect.zipRight(Effect.sync(() => stored.push(key.id)), inner.set(key, value))
  }
  return { cache, stored }
}

describe("evaluation failures", () => {
  it.effect("examples reported in `errors` score the fallback, are reported, and are never cached", () =>
    Effect.gen(function*() {
      const { cache, stored } = recordingCache()
      const events: Array<GepaEvent> = []
      const result = yield* Gepa.optimize({
        seedCandidate: { p: "Seed." },
        trainset,
        adapter: reportingAdapter(new Set([1, 4])),
        reflectionModel,
        maxMetricCalls: 20,
        minibatchSize: 2,
        fallbackScore: -1,
        cache,
        onEvent: (e) => void events.push(e)
      })
      const seed = result.state.valScores[0]!
      expect(seed["1"]).toBe(-1)
      expect(seed["4"]).toBe(-1)
      expect(seed["0"]).toBe(0.5)
      const failedIds = events.flatMap((e) => (e._tag === "ExampleFailed" ? [e.id] : []))
      expect(new Set(failedIds)).toEqual(new Set(["1", "4"]))
      expect(stored).not.toContain("1")
      expect(stored).not.toContain("4")
      expect(stored).toContain("0")
    }))

  it("whatever examples fail, none of them is ever cached", () =>
    fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 0, max: 5 }), { maxLength: 5 }), async (failing) => {
        const { cache, stored } = recordingCache()
        await Effect.runPromise(Gepa.optimize({
          seedCandidate: { p: "Seed." },
          trainset,
          adapter: reportingAdapter(new Set(failing)),
          reflectionModel,
          maxMetricCalls: 16,
          minibatchSize: 2,
          cache
        }))
        for (const id of failing) expect(stored).not.toContain(String(id))
      }),
      { numRuns: 15 }
    ))

  it.effect("an `errors` list of the wrong length is a contract violation", () =>
    Effect.gen(function*() {
      const adapter: Adapter.Adapter<Example, Example, string> = {
        evaluate: (batch) => Effect.succeed({ outputs: batch.map(() => ""), scores: batch.map(() => 0), errors: [] }),
        makeReflectiveDataset: datasetOf
      }
      const error = yield* Effect.flip(Gepa.optimize({ seedCandidate: { p: "S." }, trainset, adapter, reflectionModel, maxMetricCalls: 10 }))
      expect(error).toBeInstanceOf(AdapterContractError)
      expect(error.message).toContain("error entries")
    }))

  const authError = new LanguageModel.LlmAuthenticationError({ model: "m", status: 401, detail: "no", endpoint: "h:1" })

  for (
    const [name, fail] of [
      ["typed", () => new ModelUnrecoverable({ role: "task", model: "m", reason: "authentication", status: 401, endpoint: "h:1", detail: "no" })],
      ["wrapped in an AdapterError", () => new AdapterError({ call: "evaluate", detail: authError.message, cause: authError })]
    ] as const
  ) {
    it.effect(`an unrecoverable model failure (${name}) fails the run at once, without retries`, () =>
      Effect.gen(function*() {
        const calls = yield* Ref.make(0)
        const adapter: Adapter.Adapter<Example, Example, string> = {
          evaluate: () => Effect.zipRight(Ref.update(calls, (n) => n + 1), Effect.fail(fail())),
          makeReflectiveDataset: datasetOf
        }
        const error = yield* Effect.flip(Gepa.optimize({
          seedCandidate: { p: "S." },
          trainset,
          adapter,
          reflectionModel,
          maxMetricCalls: 30,
          maxConcurrency: 1,
          evaluationRetry: Schedule.recurs(5)
        }))
        expect(error).toBeInstanceOf(ModelUnrecoverable)
        expect(error.message).toBe(`the task model "m" at h:1 rejected the API key (HTTP 401)`)
        // the first call failed, nothing was retried, nothing else ran
        expect(yield* Ref.get(calls)).toBe(1)
      }))
  }

  it.effect("a transient failure wrapped in an AdapterError is still retried and recorded", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const timeout = new LanguageModel.LlmTimeout({ model: "m", millis: 5 })
      const adapter: Adapter.Adapter<Example, Example, string> = {
        evaluate: () =>
          Effect.zipRight(
            Ref.update(calls, (n) => n + 1),
            Effect.fail(new AdapterError({ call: "evaluate", detail: timeout.message, cause: timeout }))
          ),
        makeReflectiveDataset: datasetOf
      }
      const error = yield* Effect.flip(Gepa.optimize({
        seedCandidate: { p: "S." },
        trainset,
        adapter,
        reflectionModel,
        maxMetricCalls: 30,
        evaluationRetry: Schedule.recurs(1)
      }))
      // every seed evaluation failed: the run stops, but only after retrying each call
      expect(error._tag).toBe("AllEvaluationsFailed")
      expect(yield* Ref.get(calls)).toBe(trainset.length * 2)
    }))
})
