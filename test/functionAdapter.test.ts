/**
 * FunctionAdapter: an app's own async function and a metric as the adapter.
 * The app here is real AI SDK code (`generateText` with a tool) over the
 * SDK's mock model.
 */
import { APICallError } from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { generateText, stepCountIs, tool } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import { Cause, Effect, Exit, Fiber, Option, Redacted } from "effect"
import { z } from "zod"
import type { Candidate } from "../src/Candidate.js"
import { ConfigError, ModelUnrecoverable } from "../src/Errors.js"
import * as FunctionAdapter from "../src/FunctionAdapter.js"
import * as Gepa from "../src/Gepa.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as Secrets from "../src/Secrets.js"

interface Example {
  readonly city: string
  readonly expected: string
}

const finish = { unified: "stop", raw: "stop" } as const
const usage = {
  inputTokens: { total: 5, noCache: 5, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}

/** A mock that calls the weather tool, then answers with the system prompt's style and the tool's result. */
const weatherModel = () =>
  new MockLanguageModelV3({
    doGenerate: async (options) => {
      const toolResult = options.prompt.flatMap((m) => (m.role === "tool" ? m.content : []))[0]
      const system = options.prompt.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("")
      const city = options.prompt.flatMap((m) => m.role === "user" ? m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])) : []).join("")
      if (toolResult === undefined) {
        return {
          content: [{ type: "tool-call", toolCallId: "1", toolName: "weather", input: JSON.stringify({ city }) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: []
        }
      }
      const output = toolResult.type === "tool-result" ? toolResult.output : undefined
      const value = output?.type === "text" || output?.type === "json" ? String(output.value) : "?"
      return { content: [{ type: "text", text: system.includes("SHOUT") ? value.toUpperCase() : value }], finishReason: finish, usage, warnings: [] }
    }
  })

/** The app: generateText with a system prompt and a tool whose description is optimized too. */
const app = (model: MockLanguageModelV3) => async (example: Example, texts: Candidate, abortSignal: AbortSignal) => {
  const { text } = await generateText({
    model,
    system: texts["system_prompt"] ?? "",
    prompt: example.city,
    tools: {
      weather: tool({
        description: texts["weather_tool"] ?? "",
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `sunny in ${city}`
      })
    },
    stopWhen: stepCountIs(2),
    abortSignal
  })
  return text
}

const metric = (example: Example, output: string | undefined) =>
  output === example.expected
    ? { score: 1, feedback: "right" }
    : { score: 0, feedback: `expected ${JSON.stringify(example.expected)}, got ${JSON.stringify(output)}` }

const candidate = { system_prompt: "Answer plainly.", weather_tool: "Weather of a city." }

describe("FunctionAdapter", () => {
  it.effect("runs the app's generateText with the candidate's texts; outputs, scores and the reflective records", () =>
    Effect.gen(function*() {
      const model = weatherModel()
      const adapter = yield* FunctionAdapter.make({ run: app(model), metric, components: ["system_prompt", "weather_tool"] })
      const batch = [{ city: "Oslo", expected: "sunny in Oslo" }, { city: "Rome", expected: "SUNNY IN ROME" }]
      const evaluation = yield* adapter.evaluate(batch, candidate, { captureTraces: true })
      expect(evaluation.outputs).toEqual(["sunny in Oslo", "sunny in Rome"])
      expect(evaluation.scores).toEqual([1, 0])
      expect(evaluation.errors).toBeUndefined()
      // the texts reached the model: the system prompt and the tool's description
      const first = model.doGenerateCalls[0]!
      expect(first.prompt[0]).toEqual({ role: "system", content: "Answer plainly." })
      expect(first.tools?.[0]).toMatchObject({ name: "weather", description: "Weather of a city." })
      const dataset = yield* adapter.makeReflectiveDataset(candidate, evaluation, ["system_prompt"])
      expect(dataset["system_prompt"]).toEqual([
        { Inputs: batch[0], "Generated Outputs": "sunny in Oslo", Feedback: "right" },
        { Inputs: batch[1], "Generated Outputs": "sunny in Rome", Feedback: `expected "SUNNY IN ROME", got "sunny in Rome"` }
      ])
    }))

  it.effect("a thrown app error or a failed metric is an evaluation failure of that example, never a score; secrets scrubbed", () =>
    Effect.gen(function*() {
      Secrets.unsafeClear()
      const key = "sk-app-Zq81Xy72Wv63Ut54"
      const adapter = yield* FunctionAdapter.make({
        secrets: [Redacted.make(key)],
        run: async (example: Example) => {
          if (example.city === "Nowhere") throw new Error(`upstream said no to ${key}`)
          return example.city
        },
        metric: async (example: Example, output: string) => {
          if (example.city === "Bad") throw new Error("judge down")
          return { score: output === example.expected ? 1 : 0 }
        }
      })
      const evaluation = yield* adapter.evaluate(
        [{ city: "Nowhere", expected: "x" }, { city: "Oslo", expected: "Oslo" }, { city: "Bad", expected: "Bad" }],
        {},
        { captureTraces: true }
      )
      expect(evaluation.outputs).toEqual([undefined, "Oslo", "Bad"])
      expect(evaluation.scores[1]).toBe(1)
      expect(evaluation.errors).toEqual(["the app failed: upstream said no to [redacted]", undefined, "the metric failed: judge down"])
      const dataset = yield* adapter.makeReflectiveDataset({}, evaluation, ["c"])
      expect(dataset["c"]![0]!["Generated Outputs"]).toBe("(no output: the app failed: upstream said no to [redacted])")
      expect(JSON.stringify(dataset)).not.toContain(key)
      Secrets.unsafeClear()
    }))

  it.effect("a 401 from the app's AI SDK call stops with ModelUnrecoverable; a 500 fails the example only", () =>
    Effect.gen(function*() {
      const failing = (status: number) =>
        new MockLanguageModelV3({
          modelId: "gpt-app",
          doGenerate: () =>
            Promise.reject(
              new APICallError({
                message: status === 401 ? "Incorrect API key provided" : "boom",
                url: "https://api.example.com/v1/chat/completions",
                requestBodyValues: { model: "gpt-app" },
                statusCode: status
              })
            )
        })
      const run = (model: MockLanguageModelV3) => async (example: Example) => (await generateText({ model, prompt: example.city, maxRetries: 0 })).text
      const denied = yield* FunctionAdapter.make({ run: run(failing(401)), metric })
      const exit = yield* Effect.exit(denied.evaluate([{ city: "Oslo", expected: "x" }], candidate, { captureTraces: false }))
      const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
      expect(Option.getOrUndefined(failure)).toBeInstanceOf(ModelUnrecoverable)
      expect(Option.getOrThrow(failure).message).toBe(`the task model "gpt-app" at api.example.com:443 rejected the API key (HTTP 401)`)

      const flaky = yield* FunctionAdapter.make({ run: run(failing(500)), metric })
      const evaluation = yield* flaky.evaluate([{ city: "Oslo", expected: "x" }], candidate, { captureTraces: false })
      expect(evaluation.errors?.[0]).toMatch(/^the app failed: /)
      // our own LlmErrors thrown by the app are read the same way
      const ours = yield* FunctionAdapter.make({
        run: async () => {
          throw new LanguageModel.LlmModelNotFound({ model: "m", detail: "no such model" })
        },
        metric
      })
      const notFound = yield* Effect.exit(ours.evaluate([{ city: "Oslo", expected: "x" }], candidate, { captureTraces: false }))
      expect(Exit.isFailure(notFound) && Cause.failureOption(notFound.cause).pipe(Option.map((e) => e._tag))).toEqual(Option.some("ModelUnrecoverable"))
    }))

  it.live("interrupting an evaluation fires the signal the app passed to generateText", () =>
    Effect.gen(function*() {
      const signals: Array<AbortSignal> = []
      const hanging = new MockLanguageModelV3({
        doGenerate: ({ abortSignal }) =>
          new Promise((_resolve, reject) => {
            signals.push(abortSignal!)
            abortSignal!.addEventListener("abort", () => reject(abortSignal!.reason))
          })
      })
      const adapter = yield* FunctionAdapter.make({ run: app(hanging), metric })
      const fiber = yield* Effect.fork(adapter.evaluate([{ city: "Oslo", expected: "x" }], candidate, { captureTraces: false }))
      while (signals.length === 0) yield* Effect.sleep("1 millis")
      expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
      expect(signals[0]!.aborted).toBe(true)
    }))

  it.effect("a candidate without a component the app reads, and bad options, fail with one line naming it", () =>
    Effect.gen(function*() {
      const adapter = yield* FunctionAdapter.make({ run: async (e: Example) => e.city, metric, components: ["system_prompt", "weather_tool"] })
      const exit = yield* Effect.exit(adapter.evaluate([{ city: "Oslo", expected: "Oslo" }], { system_prompt: "x" }, { captureTraces: false }))
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain(`the candidate has no component "weather_tool" (it has "system_prompt")`)
      const bad = yield* Effect.exit(FunctionAdapter.make({ run: async (e: Example) => e.city, metric, concurrency: 0 }))
      expect(Exit.isFailure(bad) && Option.getOrUndefined(Cause.failureOption(bad.cause))).toMatchObject({ field: "concurrency" })
      expect(Exit.isFailure(bad) && Option.getOrUndefined(Cause.failureOption(bad.cause))).toBeInstanceOf(ConfigError)
    }))

  it.effect("types flow from the app's function into the metric and the result", () =>
    Effect.gen(function*() {
      const adapter = yield* FunctionAdapter.make({
        run: async (example: Example) => ({ answer: example.city.length }),
        // no annotation: the metric's example and output types come from `run`
        metric: (example, output) => ({ score: output?.answer === example.city.length ? 1 : 0 })
      })
      const result = yield* Gepa.optimize({
        seedCandidate: { system_prompt: "x" },
        trainset: [{ city: "Oslo", expected: "" }],
        adapter,
        reflectionModel: LanguageModel.fromFunction(() => "```\ny\n```"),
        maxMetricCalls: 4
      })
      const answer: number | undefined = Object.values(result.bestOutputs)[0]?.output?.answer
      expect(answer).toBe(4)
    }))
})
