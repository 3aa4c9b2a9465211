import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted, Ref } from "effect"
import * as Adapter from "../src/Adapter.js"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import { AdapterError, ConfigError, ModelUnrecoverable } from "../src/Errors.js"
import { fromFunction, type LanguageModel, LlmAuthenticationError, LlmTimeout, messages, layerTask } from "../src/LanguageModel.js"
import * as Metric from "../src/Metric.js"
import * as OpenAiLanguageModel from "../src/OpenAiLanguageModel.js"
import * as FakeServer from "./fixtures/openaiServer.js"

interface Example {
  readonly question: string
  readonly answer: string
}

const examples: ReadonlyArray<Example> = [
  { question: "2+2", answer: "4" },
  { question: "3+3", answer: "6" },
  { question: "boom", answer: "x" }
]

/** Adds when the system prompt says so; fails on "boom". */
const arithmetic: LanguageModel = fromFunction((prompt) => {
  const [system, user] = messages(prompt)
  if (user?.content === "boom") return Effect.fail(new LlmTimeout({ model: "task", millis: 10 }))
  if (system?.content.includes("add") === true) {
    const [a, b] = user!.content.split("+").map(Number)
    return `${a! + b!}`
  }
  return "I don't know"
})

const metric = Metric.exactMatch<Example>((e) => e.answer)

describe("DefaultAdapter", () => {
  it.effect("evaluates with the component as system message and scores per example", () =>
    Effect.gen(function*() {
      const adapter = yield* DefaultAdapter.make<Example>({ model: arithmetic, input: (e) => e.question, metric })
      const result = yield* adapter.evaluate(examples, { system_prompt: "Please add." }, { captureTraces: true })
      expect(result.outputs).toEqual(["4", "6", ""])
      expect(result.scores).toEqual([1, 1, 0])
      // the failed call is a failure, reported as such, not a score of 0
      expect(result.errors?.[0]).toBeUndefined()
      expect(result.errors?.[1]).toBeUndefined()
      expect(result.errors?.[2]).toContain("did not answer within 10 ms")
      const failed = result.trajectories![2]!
      expect(failed.error).toContain("did not answer within 10 ms")
      expect(failed.feedback).toContain("task model call failed")
      expect(result.trajectories![0]!.completion?.text).toBe("4")

      const untraced = yield* adapter.evaluate(examples, { system_prompt: "Guess." }, { captureTraces: false })
      expect(untraced.scores).toEqual([0, 0, 0])
      expect(untraced.trajectories).toBeUndefined()
      expect(untraced.errors?.map((e) => e !== undefined)).toEqual([false, false, true])

      const clean = yield* adapter.evaluate(examples.slice(0, 2), { system_prompt: "add" }, { captureTraces: false })
      expect(clean.errors).toBeUndefined()
    }))

  it.effect("builds Inputs / Generated Outputs / Feedback records", () =>
    Effect.gen(function*() {
      const adapter = yield* DefaultAdapter.make<Example>({ model: arithmetic, input: (e) => e.question, metric })
      const evaluation = yield* adapter.evaluate(examples, { system_prompt: "Guess." }, { captureTraces: true })
      const dataset = yield* adapter.makeReflectiveDataset({ system_prompt: "Guess." }, evaluation, ["system_prompt"])
      expect(Object.keys(dataset)).toEqual(["system_prompt"])
      const recs = dataset["system_prompt"]!
      expect(recs).toHaveLength(3)
      expect(recs[0]).toEqual({
        "Inputs": "2+2",
        "Generated Outputs": "I don't know",
        "Feedback": "Expected \"4\" but got \"I don't know\"."
      })
      expect(recs[2]!["Generated Outputs"]).toContain("(no output:")

      const noTraces = yield* adapter.evaluate(examples, { system_prompt: "Guess." }, { captureTraces: false })
      const error = yield* Effect.flip(adapter.makeReflectiveDataset({ system_prompt: "x" }, noTraces, ["system_prompt"]))
      expect(error).toBeInstanceOf(AdapterError)
    }))

  it.effect("custom component name, describeInput, and a missing component", () =>
    Effect.gen(function*() {
      const adapter = yield* DefaultAdapter.make<Example>({
        model: arithmetic,
        component: "instructions",
        input: (e) => e.question,
        describeInput: (e) => ({ question: e.question, expected: e.answer }),
        metric
      })
      const evaluation = yield* adapter.evaluate([examples[0]!], { instructions: "add" }, { captureTraces: true })
      expect(evaluation.scores).toEqual([1])
      const dataset = yield* adapter.makeReflectiveDataset({ instructions: "add" }, evaluation, ["instructions"])
      expect(dataset["instructions"]![0]!["Inputs"]).toEqual({ question: "2+2", expected: "4" })

      const missing = yield* Effect.flip(adapter.evaluate(examples, { system_prompt: "add" }, { captureTraces: false }))
      expect(missing).toBeInstanceOf(AdapterError)
      expect(missing.detail).toContain("\"instructions\"")
    }))

  it.live("bounds the concurrency of task-model calls", () =>
    Effect.gen(function*() {
      const active = yield* Ref.make(0)
      const peak = yield* Ref.make(0)
      const slow: LanguageModel = {
        complete: () =>
          Effect.gen(function*() {
            const now = yield* Ref.updateAndGet(active, (n) => n + 1)
            yield* Ref.update(peak, (p) => Math.max(p, now))
            yield* Effect.sleep("20 millis")
            yield* Ref.update(active, (n) => n - 1)
            return { text: "4", finishReason: "stop" as const }
          })
      }
      const adapter = yield* DefaultAdapter.make<Example>({
        model: slow,
        input: (e) => e.question,
        metric,
        concurrency: 3
      })
      const batch = Array.from({ length: 10 }, () => examples[0]!)
      const result = yield* adapter.evaluate(batch, { system_prompt: "x" }, { captureTraces: false })
      expect(result.scores).toEqual(Array(10).fill(1))
      expect(yield* Ref.get(peak)).toBe(3)
    }))

  it.effect("a failing, throwing or non-finite metric is a failure of its example, not a score", () =>
    Effect.gen(function*() {
      const adapter = yield* DefaultAdapter.make<Example, string>({
        model: arithmetic,
        input: (e) => e.question,
        metric: (e, output) =>
          e.question === "2+2"
            ? Effect.fail("judge unavailable")
            : e.question === "3+3"
            ? (() => {
              throw new Error("metric bug")
            })()
            : { score: output === "" ? Number.NaN : 1 }
      })
      const batch = [examples[0]!, examples[1]!, { question: "1+1", answer: "2" }, { question: "x", answer: "" }]
      const result = yield* adapter.evaluate(batch, { system_prompt: "add" }, { captureTraces: true })
      expect(result.errors?.[0]).toContain("judge unavailable")
      expect(result.errors?.[1]).toContain("metric bug")
      expect(result.errors?.[2]).toBeUndefined()
      expect(result.scores[2]).toBe(1)
      expect(result.trajectories![0]!.feedback).toContain("judge unavailable")
      expect(result.trajectories![1]!.output).toBe("6")
    }))

  it.effect("a task-model failure no retry can fix fails the call with ModelUnrecoverable", () =>
    Effect.gen(function*() {
      const model = fromFunction((prompt) =>
        messages(prompt)[1]?.content === "3+3"
          ? Effect.fail(new LlmAuthenticationError({ model: "m", status: 401, detail: "bad key", endpoint: "h:1" }))
          : "4"
      )
      const adapter = yield* DefaultAdapter.make<Example>({ model, input: (e) => e.question, metric })
      const error = yield* Effect.flip(adapter.evaluate(examples, { system_prompt: "add" }, { captureTraces: false }))
      expect(error).toBeInstanceOf(ModelUnrecoverable)
      expect(error.message).toBe(`the task model "m" at h:1 rejected the API key (HTTP 401)`)
    }))

  it.effect("invalid options are ConfigErrors", () =>
    Effect.gen(function*() {
      const bad = yield* Effect.flip(
        DefaultAdapter.make<Example>({ model: arithmetic, input: (e) => e.question, metric, concurrency: 0 })
      )
      expect(bad).toBeInstanceOf(ConfigError)
      expect(bad.field).toBe("concurrency")
    }))

  it.effect("the layer reads the task model from TaskModel", () =>
    Effect.gen(function*() {
      const adapter = yield* Adapter.tag<Example, DefaultAdapter.Trajectory<Example>, string>()
      const result = yield* adapter.evaluate([examples[1]!], { system_prompt: "add" }, { captureTraces: false })
      expect(result.scores).toEqual([1])
    }).pipe(
      Effect.provide(
        DefaultAdapter.layer<Example>({ input: (e) => e.question, metric }).pipe(Layer.provide(layerTask(arithmetic)))
      )
    ))

  it.scopedLive("works over the OpenAI client against the local server", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback((request) => {
        const body = request.body as { messages: Array<{ role: string; content: string }> }
        const user = body.messages.find((m) => m.role === "user")!.content
        if (user === "fail") {
          return {
            status: 400,
            body: { error: { message: "This model's maximum context length is 8192 tokens", code: "context_length_exceeded" } }
          }
        }
        return FakeServer.ok(user === "2+2" ? "4" : "5")
      })
      const model = yield* OpenAiLanguageModel.make({
        model: "task",
        apiKey: Redacted.make("k-123456"),
        baseURL: server.baseURL
      })
      const adapter = yield* DefaultAdapter.make<Example>({ model, input: (e) => e.question, metric })
      const result = yield* adapter.evaluate(
        [{ question: "2+2", answer: "4" }, { question: "3+3", answer: "6" }, { question: "fail", answer: "?" }],
        { system_prompt: "Be exact." },
        { captureTraces: true }
      )
      expect(result.scores).toEqual([1, 0, 0])
      expect(result.trajectories![1]!.feedback).toBe("Expected \"6\" but got \"5\".")
      // an input too long for the model fails its example only
      expect(result.trajectories![2]!.error).toContain("maximum context length")
      expect(result.errors?.[2]).toContain("maximum context length")
      expect(result.errors?.[1]).toBeUndefined()
      const sent = server.requests.map((r) => (r.body as { messages: unknown }).messages)
      expect(sent).toContainEqual([{ role: "system", content: "Be exact." }, { role: "user", content: "2+2" }])
    }))
})

describe("Metric", () => {
  it("exactMatch, optionally ignoring case and white space, with several accepted answers", () => {
    const strict = Metric.exactMatch<string>((e) => e)
    expect(strict("Paris", " Paris\n")).toEqual({ score: 1, feedback: "Correct: the output is \"Paris\" as expected." })
    expect(strict("Paris", "paris")).toEqual({ score: 0, feedback: "Expected \"Paris\" but got \"paris\"." })
    const loose = Metric.exactMatch<string>((e) => e, { ignoreCase: true, ignoreWhitespace: true })
    expect(loose("New  York", "new york")).toMatchObject({ score: 1 })
    const several = Metric.exactMatch<ReadonlyArray<string>>((e) => e)
    expect(several(["4", "four"], "four")).toMatchObject({ score: 1 })
    expect(several(["4", "four"], "5").feedback).toBe("Expected one of \"4\", \"four\" but got \"5\".")
  })

  it("contains: fraction of required parts, or any", () => {
    const all = Metric.contains<ReadonlyArray<string>>((e) => e)
    const half = all(["alpha", "beta"], "only alpha here")
    expect(half.score).toBe(0.5)
    expect(half.feedback).toContain("Expected the output to contain \"beta\"")
    expect(all(["alpha"], "ALPHA").score).toBe(0)
    expect(Metric.contains<string>((e) => e, { ignoreCase: true })("alpha", "ALPHA").score).toBe(1)
    const any = Metric.contains<ReadonlyArray<string>>((e) => e, { mode: "any" })
    expect(any(["x", "y"], "has y").score).toBe(1)
    expect(any(["x", "y"], "none").feedback).toContain("one of \"x\", \"y\"")
  })

  it("regex, stateless even with the global flag", () => {
    const m = Metric.regex<unknown>(/\d{3}/g, { description: "a three-digit number" })
    expect(m(null, "code 123")).toEqual({ score: 1, feedback: "Correct: the output matches a three-digit number." })
    expect(m(null, "code 456").score).toBe(1)
    expect(m(null, "code 12").feedback).toBe("Expected the output to match a three-digit number but got \"code 12\".")
    const perExample = Metric.regex<string>((e) => new RegExp(`^${e}$`))
    expect(perExample("yes", "yes").score).toBe(1)
  })

  it("jsonField parses plain, fenced and embedded JSON and compares a path", () => {
    const m = Metric.jsonField<{ readonly label: string }>("result.label", (e) => e.label)
    expect(m({ label: "spam" }, "{\"result\": {\"label\": \"spam\"}}")).toMatchObject({ score: 1 })
    expect(m({ label: "spam" }, "Sure:\n```json\n{\"result\": {\"label\": \"ham\"}}\n```")).toEqual({
      score: 0,
      feedback: "Expected field \"result.label\" to be \"spam\" but got \"ham\"."
    })
    expect(m({ label: "spam" }, "The answer is {\"result\": {\"label\": \"spam\"}} ok").score).toBe(1)
    expect(m({ label: "spam" }, "{\"result\": {}}").feedback).toContain("has no field \"result.label\"")
    expect(m({ label: "spam" }, "not json at all").feedback).toContain("not valid JSON")
    const list = Metric.jsonField<unknown>(["items", 1], () => ({ b: 2, a: 1 }))
    expect(list(null, "{\"items\": [0, {\"a\": 1, \"b\": 2}]}").score).toBe(1)
    const caseless = Metric.jsonField<unknown>("x", () => "YES", { ignoreCase: true })
    expect(caseless(null, "{\"x\": \"yes\"}").score).toBe(1)
    expect(Either.isLeft(Metric.parseJson(""))).toBe(true)
  })

  it.effect("run accepts plain and effectful metrics", () =>
    Effect.gen(function*() {
      const plain = yield* Metric.run(() => ({ score: 0.25 }), null, "x")
      expect(plain.score).toBe(0.25)
      const effectful = yield* Metric.run(() => Effect.succeed({ score: 1, feedback: "judge says yes" }), null, "x")
      expect(effectful.feedback).toBe("judge says yes")
    }))
})
