/**
 * AiSdkLanguageModel against real AI SDK parts: the SDK's own mock model
 * (`MockLanguageModelV3` from `ai/test`) and the `@ai-sdk/openai` provider
 * talking to the loopback OpenAI-compatible fake server.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { APICallError } from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { MockLanguageModelV3 } from "ai/test"
import { Cause, Effect, Exit, Fiber, Option, Redacted } from "effect"
import * as AiSdkLanguageModel from "../src/AiSdkLanguageModel.js"
import { ConfigError } from "../src/Errors.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as Secrets from "../src/Secrets.js"
import * as FakeServer from "./fixtures/openaiServer.js"

const SECRET = "sk-aisdk-SUPERSECRET-0123456789"

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

type MockResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>

const result = (text: string, overrides: Partial<MockResult> = {}): MockResult => ({
  content: [{ type: "reasoning", text: "thinking..." }, { type: "text", text }],
  finishReason: { unified: "stop", raw: "stop" },
  usage: {
    inputTokens: { total: 1200, noCache: 1200, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 300, text: 300, reasoning: undefined }
  },
  warnings: [],
  response: { modelId: "mock-model-2026" },
  ...overrides
})

const apiError = (statusCode: number | undefined, message: string, headers: Record<string, string> = {}, cause?: unknown) =>
  new APICallError({
    message,
    url: "http://127.0.0.1:9/v1/chat/completions",
    requestBodyValues: {},
    // the SDK marks a request that got no answer (fetch failed) retryable
    ...(statusCode === undefined ? { isRetryable: true } : { statusCode }),
    responseHeaders: headers,
    responseBody: JSON.stringify({ error: { message, code: statusCode === 400 ? "context_length_exceeded" : null } }),
    ...(cause === undefined ? {} : { cause })
  })

/** A mock whose doGenerate answers from a list of outcomes (an Error is thrown). */
const scripted = (outcomes: ReadonlyArray<MockResult | Error>) => {
  let i = 0
  return new MockLanguageModelV3({
    provider: "mock.provider",
    modelId: "mock-model",
    doGenerate: () => {
      const outcome = outcomes[Math.min(i++, outcomes.length - 1)]!
      return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome)
    }
  })
}

describe("AiSdkLanguageModel with the AI SDK's MockLanguageModelV3", () => {
  it.effect("text (reasoning left out), usage, cost, finish reason and the response's model; the prompt and settings as the spec has them", () =>
    Effect.gen(function*() {
      const mock = new MockLanguageModelV3({ modelId: "mock-model", doGenerate: result("Hello there") })
      const model = yield* AiSdkLanguageModel.make(mock, {
        price: { inputPerMillion: 2, outputPerMillion: 8 },
        temperature: 0.3,
        maxOutputTokens: 256,
        providerOptions: { openai: { reasoningEffort: "low" } }
      })
      const completion = yield* model.complete({ messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }] })
      expect(completion).toEqual({
        text: "Hello there",
        finishReason: "stop",
        usage: { inputTokens: 1200, outputTokens: 300 },
        cost: (1200 * 2 + 300 * 8) / 1_000_000,
        model: "mock-model-2026"
      })
      expect(mock.doGenerateCalls).toHaveLength(1)
      const call = mock.doGenerateCalls[0]!
      expect(call.prompt).toEqual([
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Hi" }] }
      ])
      expect(call).toMatchObject({ temperature: 0.3, maxOutputTokens: 256, providerOptions: { openai: { reasoningEffort: "low" } } })
      expect(call.abortSignal).toBeInstanceOf(AbortSignal)
    }))

  it.effect("maps the unified finish reasons; missing usage gives no usage and no cost", () =>
    Effect.gen(function*() {
      const cases = [
        ["stop", "stop"],
        ["length", "length"],
        ["content-filter", "content_filter"],
        ["tool-calls", "tool_calls"],
        ["error", "other"],
        ["other", "other"]
      ] as const
      for (const [unified, ours] of cases) {
        const mock = new MockLanguageModelV3({
          doGenerate: result("x", {
            finishReason: { unified, raw: undefined },
            usage: {
              inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
              outputTokens: { total: 3, text: 3, reasoning: undefined }
            }
          })
        })
        const model = yield* AiSdkLanguageModel.make(mock, { price: { inputPerMillion: 1, outputPerMillion: 1 } })
        const completion = yield* model.complete("q")
        expect(completion.finishReason).toBe(ours)
        expect(completion.usage).toBeUndefined()
        expect(completion.cost).toBeUndefined()
      }
    }))

  it.live("an APICallError 429 waits the Retry-After, a 503 is retried, then the answer", () =>
    Effect.gen(function*() {
      const mock = scripted([apiError(429, "slow down", { "retry-after-ms": "200" }), apiError(503, "overloaded"), result("finally")])
      const model = yield* AiSdkLanguageModel.make(mock, { retryBaseDelay: "1 millis" })
      const start = Date.now()
      expect((yield* model.complete("q")).text).toBe("finally")
      expect(mock.doGenerateCalls).toHaveLength(3)
      expect(Date.now() - start).toBeGreaterThanOrEqual(190)
    }))

  it.live("a 500 burst ends in LlmTransportError with the status and the provider's message after the retries", () =>
    Effect.gen(function*() {
      const mock = scripted([apiError(500, "internal boom")])
      const model = yield* AiSdkLanguageModel.make(mock, { retryBaseDelay: "1 millis", maxRetries: 3 })
      const error = failureOf(yield* Effect.exit(model.complete("q")))
      expect(error).toMatchObject({ _tag: "LlmTransportError", status: 500, detail: "internal boom", endpoint: "127.0.0.1:9" })
      expect(mock.doGenerateCalls).toHaveLength(4)
    }))

  it.effect("401, 404 and 400 are not retried; a 400 for one input only keeps its code; secrets given are scrubbed", () =>
    Effect.gen(function*() {
      Secrets.unsafeClear()
      const cases = [
        [401, `Incorrect API key provided: ${SECRET}`, "LlmAuthenticationError"],
        [404, "The model `nope` does not exist", "LlmModelNotFound"],
        [400, "This model's maximum context length is 8192 tokens", "LlmBadRequest"]
      ] as const
      for (const [status, message, tag] of cases) {
        const mock = scripted([apiError(status, message)])
        const model = yield* AiSdkLanguageModel.make(mock, { secrets: [Redacted.make(SECRET)] })
        const error = failureOf(yield* Effect.exit(model.complete("q")))
        expect(error._tag).toBe(tag)
        expect(mock.doGenerateCalls).toHaveLength(1)
        expect(JSON.stringify(error) + error.message).not.toContain(SECRET)
        if (status === 400) {
          expect(error).toMatchObject({ code: "context_length_exceeded" })
          // it fails that example, not the run
          expect(LanguageModel.isUnrecoverable(error)).toBe(false)
        } else {
          expect(LanguageModel.isUnrecoverable(error)).toBe(true)
        }
      }
      expect(failureOf(yield* Effect.exit(Effect.flatMap(AiSdkLanguageModel.make(scripted([apiError(401, `bad ${SECRET}`)])), (m) => m.complete("q")))).message)
        .toContain("[redacted]")
      Secrets.unsafeClear()
    }))

  it.live("a connection failure (no status) names the system code and is retried; an unreadable answer is not", () =>
    Effect.gen(function*() {
      const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" })
      const mock = scripted([apiError(undefined, "Cannot connect to API: fetch failed", {}, new TypeError("fetch failed", { cause: refused })), result("up")])
      const model = yield* AiSdkLanguageModel.make(mock, { retryBaseDelay: "1 millis" })
      expect((yield* model.complete("q")).text).toBe("up")
      expect(mock.doGenerateCalls).toHaveLength(2)

      const refusedAlways = scripted([apiError(undefined, "Cannot connect to API: fetch failed", {}, new TypeError("fetch failed", { cause: refused }))])
      const down = yield* AiSdkLanguageModel.make(refusedAlways, { retryBaseDelay: "1 millis", maxRetries: 2 })
      const error = failureOf(yield* Effect.exit(down.complete("q")))
      expect(error).toMatchObject({ _tag: "LlmTransportError", code: "ECONNREFUSED", endpoint: "127.0.0.1:9" })
      expect(LanguageModel.unrecoverable(error, "task").pipe(Option.map((e) => e.reason))).toEqual(Option.some("connection-refused"))

      const garbled = Object.assign(new Error("Invalid JSON response"), { name: "AI_JSONParseError" })
      const bad = scripted([garbled, result("never")])
      const readErr = failureOf(yield* Effect.exit(Effect.flatMap(AiSdkLanguageModel.make(bad), (m) => m.complete("q"))))
      expect(readErr).toMatchObject({ _tag: "LlmResponseError", detail: "Invalid JSON response" })
      expect(bad.doGenerateCalls).toHaveLength(1)
    }))

  it.live("interrupting the caller fires the abort signal doGenerate was given; the timeout does too and is retried", () =>
    Effect.gen(function*() {
      const signals: Array<AbortSignal> = []
      const hanging = new MockLanguageModelV3({
        doGenerate: ({ abortSignal }) =>
          new Promise((_resolve, reject) => {
            signals.push(abortSignal!)
            abortSignal!.addEventListener("abort", () => reject(abortSignal!.reason))
          })
      })
      const model = yield* AiSdkLanguageModel.make(hanging, { timeout: "30 seconds" })
      const fiber = yield* Effect.fork(model.complete("q"))
      while (signals.length === 0) yield* Effect.sleep("1 millis")
      expect(signals[0]!.aborted).toBe(false)
      expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
      expect(signals[0]!.aborted).toBe(true)

      const slow = yield* AiSdkLanguageModel.make(hanging, { timeout: "50 millis", maxRetries: 1, retryBaseDelay: "1 millis" })
      const error = failureOf(yield* Effect.exit(slow.complete("q")))
      expect(error).toMatchObject({ _tag: "LlmTimeout", millis: 50 })
      expect(signals.slice(1).map((s) => s.aborted)).toEqual([true, true])
    }))

  it.effect("a model id string, a v2 model, and bad options are ConfigErrors naming the field", () =>
    Effect.gen(function*() {
      const mock = new MockLanguageModelV3({ doGenerate: result("x") })
      const cases: ReadonlyArray<readonly [Effect.Effect<unknown, ConfigError>, string, RegExp]> = [
        // the type says a model object; plain JavaScript callers get a clear line
        [AiSdkLanguageModel.make("openai/gpt-4.1" as unknown as AiSdkLanguageModel.Model), "model", /model object such as openai\("openai\/gpt-4.1"\)/],
        [
          AiSdkLanguageModel.make({ ...mock, doGenerate: mock.doGenerate, specificationVersion: "v2" } as unknown as AiSdkLanguageModel.Model),
          "model",
          /specification v2 \(ai 5\); supported are v3 \(ai 6\) and v4 \(ai 7\)/
        ],
        [AiSdkLanguageModel.make(mock, { temperature: 3 }), "temperature", /between 0 and 2/],
        [AiSdkLanguageModel.make(mock, { maxOutputTokens: 0 }), "maxOutputTokens", /positive integer/],
        [AiSdkLanguageModel.make(mock, { maxRetries: -1 }), "maxRetries", /non-negative/],
        [AiSdkLanguageModel.make(mock, { secrets: ["plain" as unknown as Redacted.Redacted<string>] }), "secrets", /Redacted/]
      ]
      for (const [made, field, detail] of cases) {
        const error = failureOf(yield* Effect.exit(made))
        expect(error).toBeInstanceOf(ConfigError)
        expect(error).toMatchObject({ field })
        expect(error.message).toMatch(detail)
      }
    }))

  it.effect("fromAiSdkError reads generateText's RetryError as its last attempt", () =>
    Effect.sync(() => {
      const last = apiError(401, "Incorrect API key")
      const retryError = Object.assign(new Error("Failed after 3 attempts"), { name: "AI_RetryError", lastError: last, errors: [last] })
      const error = AiSdkLanguageModel.fromAiSdkError(retryError, { model: "gpt" })
      expect(error).toMatchObject({ _tag: "LlmAuthenticationError", status: 401, model: "gpt", detail: "Incorrect API key" })
    }))
})

describe("AiSdkLanguageModel with @ai-sdk/openai on the loopback server", () => {
  const openaiFor = (server: FakeServer.FakeOpenAi) => createOpenAI({ baseURL: server.baseURL, apiKey: SECRET })

  it.scopedLive("usage, cost, the request the provider sent; a 429 with Retry-After and a 500 burst are retried", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(
        FakeServer.error(429, "slow down", { "retry-after": "0.2" }),
        FakeServer.error(500, "boom"),
        FakeServer.error(502, "bad gateway"),
        FakeServer.error(503, "overloaded"),
        FakeServer.ok("Hello there", { usage: { prompt_tokens: 1200, completion_tokens: 300 }, model: "gpt-test-2026" })
      )
      const model = yield* AiSdkLanguageModel.make(openaiFor(server).chat("gpt-test"), {
        price: { inputPerMillion: 2, outputPerMillion: 8 },
        retryBaseDelay: "5 millis",
        temperature: 0
      })
      const completion = yield* model.complete({ messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }] })
      expect(completion).toEqual({
        text: "Hello there",
        finishReason: "stop",
        usage: { inputTokens: 1200, outputTokens: 300 },
        cost: (1200 * 2 + 300 * 8) / 1_000_000,
        model: "gpt-test-2026"
      })
      expect(server.requests).toHaveLength(5)
      const [first, second] = server.requests.map((r) => r.receivedAt)
      expect(second! - first!).toBeGreaterThanOrEqual(190)
      const request = server.requests[4]!
      expect(request.url).toBe("/v1/chat/completions")
      expect(request.headers.authorization).toBe(`Bearer ${SECRET}`)
      expect(request.body).toMatchObject({
        model: "gpt-test",
        temperature: 0,
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }]
      })
    }))

  it.scopedLive("a 401 echoing the key: LlmAuthenticationError, not retried, the key nowhere", () =>
    Effect.gen(function*() {
      Secrets.unsafeClear()
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.error(401, `Incorrect API key provided: ${SECRET}.`))
      const model = yield* AiSdkLanguageModel.make(openaiFor(server).chat("gpt-test"), { secrets: [Redacted.make(SECRET)] })
      const exit = yield* Effect.exit(model.complete("q"))
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "LlmAuthenticationError", status: 401 })
      expect(error.message).toContain("[redacted]")
      expect(server.requests).toHaveLength(1)
      expect(Cause.pretty(Exit.isFailure(exit) ? exit.cause : Cause.empty) + JSON.stringify(error)).not.toContain(SECRET)
      Secrets.unsafeClear()
    }))

  it.scopedLive("a body the SDK cannot read is LlmResponseError, not retried; an error sent with HTTP 200 is read as its status and retried", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(
        { status: 200, headers: { "content-type": "application/json" }, body: "{not json" },
        { status: 200, body: { error: { message: "upstream overloaded", status: 503 } } },
        FakeServer.ok("recovered")
      )
      const model = yield* AiSdkLanguageModel.make(openaiFor(server).chat("gpt-test"), { retryBaseDelay: "1 millis" })
      const error = failureOf(yield* Effect.exit(model.complete("q")))
      expect(error._tag).toBe("LlmResponseError")
      expect(server.requests).toHaveLength(1)
      expect((yield* model.complete("q")).text).toBe("recovered")
      expect(server.requests).toHaveLength(3)
    }))

  it.scopedLive("interrupting the caller closes the in-flight request: the server sees the socket close", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.ok("never seen", { delayMillis: 10_000 }))
      const model = yield* AiSdkLanguageModel.make(openaiFor(server).chat("gpt-test"), { timeout: "30 seconds" })
      const fiber = yield* Effect.fork(model.complete("q"))
      yield* server.waitFor(() => server.requests.length === 1)
      expect(server.aborted).toBe(0)
      const start = Date.now()
      expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
      yield* server.waitFor(() => server.aborted === 1, "2 seconds")
      expect(Date.now() - start).toBeLessThan(2_000)
      expect(server.inFlight).toBe(0)
    }))
})
