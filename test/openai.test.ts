import { describe, expect, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Exit, Fiber, HashMap, Logger, LogLevel, Option, Random, Redacted } from "effect"
import { ConfigError } from "../src/Errors.js"
import { type LanguageModel, ReflectionModel, TaskModel } from "../src/LanguageModel.js"
import * as OpenAiLanguageModel from "../src/OpenAiLanguageModel.js"
import * as Reflection from "../src/Reflection.js"
import * as FakeServer from "./fixtures/openaiServer.js"

const SECRET = "sk-test-SUPERSECRET-0123456789"

const modelFor = (
  server: FakeServer.FakeOpenAi,
  overrides: Partial<OpenAiLanguageModel.Options> = {}
): Effect.Effect<LanguageModel, ConfigError> =>
  OpenAiLanguageModel.make({
    model: "test-model",
    apiKey: Redacted.make(SECRET),
    baseURL: server.baseURL,
    retryBaseDelay: "5 millis",
    timeout: "5 seconds",
    ...overrides
  })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

const expectNoSecret = (value: unknown) => {
  const texts = [String(value), JSON.stringify(value)]
  if (value instanceof Error) texts.push(value.message, value.stack ?? "")
  for (const text of texts) expect(text).not.toContain(SECRET)
}

describe("OpenAiLanguageModel", () => {
  it.scopedLive("returns text, usage, cost and finish reason", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(FakeServer.ok("Hello there", { usage: { prompt_tokens: 1200, completion_tokens: 300 } }))
      const model = yield* modelFor(server, {
        price: { inputPerMillion: 2, outputPerMillion: 8 },
        temperature: 0.3,
        maxOutputTokens: 256,
        extraBody: { reasoning_effort: "low" }
      })
      const completion = yield* model.complete({
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }]
      })
      expect(completion.text).toBe("Hello there")
      expect(completion.finishReason).toBe("stop")
      expect(completion.usage).toEqual({ inputTokens: 1200, outputTokens: 300 })
      expect(completion.cost).toBeCloseTo((1200 * 2 + 300 * 8) / 1_000_000, 12)
      expect(completion.model).toBe("test-model")

      expect(server.requests).toHaveLength(1)
      const request = server.requests[0]!
      expect(request.url).toBe("/v1/chat/completions")
      expect(request.headers.authorization).toBe(`Bearer ${SECRET}`)
      expect(request.body).toMatchObject({
        model: "test-model",
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }],
        temperature: 0.3,
        max_completion_tokens: 256,
        reasoning_effort: "low"
      })
    }))

  it.scopedLive("a plain string prompt is one user message; max_tokens field is selectable", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const model = yield* modelFor(server, { maxOutputTokens: 10, maxTokensField: "max_tokens" })
      yield* model.complete("question")
      expect(server.requests[0]!.body).toMatchObject({
        messages: [{ role: "user", content: "question" }],
        max_tokens: 10
      })
      expect(server.requests[0]!.body).not.toHaveProperty("max_completion_tokens")
    }))

  it.scopedLive("maps finish reasons", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const model = yield* modelFor(server)
      const cases = [
        ["stop", "stop"],
        ["length", "length"],
        ["content_filter", "content_filter"],
        ["tool_calls", "tool_calls"],
        ["function_call", "tool_calls"],
        ["something_new", "other"],
        [null, "other"]
      ] as const
      for (const [raw, mapped] of cases) {
        server.enqueue(FakeServer.ok("x", { finishReason: raw }))
        const completion = yield* model.complete("q")
        expect(completion.finishReason).toBe(mapped)
      }
    }))

  it.scopedLive("a response without usage gives no usage and no cost", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(FakeServer.ok("x", { usage: null }))
      const model = yield* modelFor(server, { price: { inputPerMillion: 1, outputPerMillion: 1 } })
      const completion = yield* model.complete("q")
      expect(completion.usage).toBeUndefined()
      expect(completion.cost).toBeUndefined()
    }))

  it.scopedLive("429 with Retry-After is retried after the asked delay, then succeeds", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(
        FakeServer.error(429, "slow down", { "retry-after-ms": "250" }),
        FakeServer.error(429, "slow down", { "retry-after": "0.1" }),
        FakeServer.ok("finally")
      )
      const model = yield* modelFor(server)
      const completion = yield* model.complete("q")
      expect(completion.text).toBe("finally")
      expect(server.requests).toHaveLength(3)
      const [a, b, c] = server.requests.map((r) => r.receivedAt)
      expect(b! - a!).toBeGreaterThanOrEqual(240)
      expect(c! - b!).toBeGreaterThanOrEqual(90)
    }))

  it.scopedLive("429 that persists ends in LlmRateLimited carrying the wait", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.error(429, "quota", { "retry-after-ms": "10" }))
      const model = yield* modelFor(server, { maxRetries: 2 })
      const error = failureOf(yield* Effect.exit(model.complete("q")))
      expect(error._tag).toBe("LlmRateLimited")
      expect(error).toMatchObject({ retryAfterMillis: 10, detail: "quota" })
      expect(server.requests).toHaveLength(3)
    }))

  it.scopedLive("a Retry-After beyond maxRetryDelay stops the retries at once", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.error(429, "come back tomorrow", { "retry-after": "3600" }))
      const model = yield* modelFor(server, { maxRetries: 4, maxRetryDelay: "10 seconds" })
      const error = failureOf(yield* Effect.exit(model.complete("q")))
      expect(error).toMatchObject({ _tag: "LlmRateLimited", retryAfterMillis: 3_600_000 })
      expect(server.requests).toHaveLength(1)
    }))

  it.scopedLive("repeated 500 gives LlmTransportError with the status after the retries", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.error(500, "internal boom"))
      const model = yield* modelFor(server, { maxRetries: 3 })
      const start = Date.now()
      const error = failureOf(yield* Effect.exit(model.complete("q")))
      expect(error._tag).toBe("LlmTransportError")
      expect(error).toMatchObject({ status: 500, detail: "internal boom" })
      expect(error.message).toContain("HTTP 500")
      expect(server.requests).toHaveLength(4)
      // backoff 5, 10, 20 ms halved at worst: at least 17 ms in total
      expect(Date.now() - start).toBeGreaterThanOrEqual(17)
    }))

  it.scopedLive("503 then success is retried", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(FakeServer.error(503, "overloaded"), FakeServer.error(502, "bad gateway"), FakeServer.ok("up"))
      const model = yield* modelFor(server)
      expect((yield* model.complete("q")).text).toBe("up")
      expect(server.requests).toHaveLength(3)
    }))

  it.scopedLive("401 is LlmAuthenticationError, not retried, and the key is nowhere in the error", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      // a server echoing the key back, as some do
      server.setFallback(() => FakeServer.error(401, `Incorrect API key provided: ${SECRET}.`))
      const model = yield* modelFor(server)
      const exit = yield* Effect.exit(model.complete("q"))
      const error = failureOf(exit)
      expect(error._tag).toBe("LlmAuthenticationError")
      expect(error).toMatchObject({ status: 401 })
      expect(server.requests).toHaveLength(1)
      expectNoSecret(error)
      expect(error.message).toContain("[redacted]")
      expect(Cause.pretty(Exit.isFailure(exit) ? exit.cause : Cause.empty)).not.toContain(SECRET)
    }))

  it.scopedLive("403, 400 and 422 are not retried", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const model = yield* modelFor(server)
      const cases = [[403, "LlmAuthenticationError"], [400, "LlmBadRequest"], [422, "LlmBadRequest"]] as const
      for (const [status, tag] of cases) {
        const before = server.requests.length
        server.enqueue(FakeServer.error(status, "no"))
        const error = failureOf(yield* Effect.exit(model.complete("q")))
        expect(error._tag).toBe(tag)
        expect(server.requests.length - before).toBe(1)
      }
    }))

  it.scopedLive("404 is LlmModelNotFound", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.error(404, "The model `nope` does not exist"))
      const model = yield* modelFor(server, { model: "nope" })
      const error = failureOf(yield* Effect.exit(model.complete("q")))
      expect(error._tag).toBe("LlmModelNotFound")
      expect(error).toMatchObject({ model: "nope" })
      expect(error.message).toContain("does not exist")
      expect(server.requests).toHaveLength(1)
    }))

  it.scopedLive("a slow server gives LlmTimeout and the request is cancelled", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.ok("too late", { delayMillis: 3_000 }))
      const model = yield* modelFor(server, { timeout: "300 millis", maxRetries: 1 })
      const start = Date.now()
      const error = failureOf(yield* Effect.exit(model.complete("q")))
      expect(error).toMatchObject({ _tag: "LlmTimeout", millis: 300 })
      // a timeout is retried once, then reported
      expect(server.requests).toHaveLength(2)
      expect(Date.now() - start).toBeLessThan(2_000)
      yield* server.waitFor(() => server.aborted === 2)
    }))

  it.scopedLive("a body that is not JSON gives LlmResponseError", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(
        { status: 200, headers: { "content-type": "application/json" }, body: "{not json" },
        { status: 200, body: "<html>gateway</html>" },
        { status: 200, body: { object: "chat.completion", choices: [] } },
        { status: 200, body: { error: { message: "upstream provider failed" } } }
      )
      const model = yield* modelFor(server)
      const details: Array<string> = []
      for (let i = 0; i < 4; i++) {
        const error = failureOf(yield* Effect.exit(model.complete("q")))
        expect(error._tag).toBe("LlmResponseError")
        details.push(error.message)
      }
      expect(details[0]).toContain("not valid JSON")
      expect(details[1]).toContain("<html>gateway</html>")
      expect(details[3]).toContain("upstream provider failed")
      // malformed bodies are not retried
      expect(server.requests).toHaveLength(4)
    }))

  it.scopedLive("a refused connection is a retried LlmTransportError", () =>
    Effect.gen(function*() {
      // a port that was just free: nothing listens there
      const closed = yield* Effect.scoped(Effect.map(FakeServer.make, (s) => s.baseURL))
      const model = yield* OpenAiLanguageModel.make({
        model: "m",
        apiKey: Redacted.make(SECRET),
        baseURL: closed,
        maxRetries: 2,
        retryBaseDelay: "1 millis"
      })
      const error = failureOf(yield* Effect.exit(model.complete("q")))
      expect(error._tag).toBe("LlmTransportError")
      expect(error).not.toHaveProperty("status", 500)
      expectNoSecret(error)
    }))

  it.scopedLive("interrupting the fiber aborts the HTTP request", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.ok("never seen", { delayMillis: 10_000 }))
      const model = yield* modelFor(server, { timeout: "30 seconds" })
      const fiber = yield* Effect.fork(model.complete("q"))
      yield* server.waitFor(() => server.requests.length === 1)
      expect(server.aborted).toBe(0)
      const start = Date.now()
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      yield* server.waitFor(() => server.aborted === 1, "2 seconds")
      expect(Date.now() - start).toBeLessThan(2_000)
      expect(server.inFlight).toBe(0)
    }))

  it.scopedLive("maxConcurrency caps requests in flight across callers", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback((_r, i) => FakeServer.ok(`answer ${i}`, { delayMillis: 80 }))
      const model = yield* modelFor(server, { maxConcurrency: 2 })
      // two independent callers sharing the one model
      const results = yield* Effect.all(
        [
          Effect.forEach([1, 2, 3], () => model.complete("a"), { concurrency: "unbounded" }),
          Effect.forEach([1, 2, 3], () => model.complete("b"), { concurrency: "unbounded" })
        ],
        { concurrency: "unbounded" }
      )
      expect(results.flat()).toHaveLength(6)
      expect(server.requests).toHaveLength(6)
      expect(server.maxInFlight).toBe(2)
    }))

  it.scopedLive("the rate limit spaces request starts", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const model = yield* modelFor(server, { rateLimit: { requests: 2, interval: "300 millis" } })
      const start = Date.now()
      yield* Effect.forEach([1, 2, 3, 4], () => model.complete("q"), { concurrency: "unbounded" })
      // two requests start at once; the other two wait for the window to pass
      expect(Date.now() - start).toBeGreaterThanOrEqual(295)
      expect(server.requests).toHaveLength(4)
    }))

  it.scopedLive("finish reason \"length\" makes the reflection proposal Unusable", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(FakeServer.ok("```\nA much better prompt that got cut o", { finishReason: "length" }))
      const model = yield* modelFor(server)
      const proposal = yield* Reflection.proposeComponent(model, {
        component: "system_prompt",
        currentText: "Answer.",
        records: [{ Inputs: "2+2", "Generated Outputs": "5", Feedback: "Expected 4" }],
        config: {}
      })
      expect(proposal._tag).toBe("Unusable")
      if (proposal._tag === "Unusable") {
        expect(proposal.reason).toContain("cut off")
        expect(proposal.completion?.finishReason).toBe("length")
      }
      const prompt = (server.requests[0]!.body as { messages: Array<{ content: string }> }).messages[0]!.content
      expect(prompt).toContain("Expected 4")
    }))

  it.scopedLive("a reflection proposal through the real client is adopted", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(FakeServer.ok("Thoughts first.\n\n```text\nAlways show your arithmetic.\n```\n"))
      const model = yield* modelFor(server)
      const proposal = yield* Reflection.proposeComponent(model, {
        component: "system_prompt",
        currentText: "Answer.",
        records: [{ Feedback: "wrong" }],
        config: {}
      })
      expect(proposal).toMatchObject({ _tag: "Proposed", text: "Always show your arithmetic." })
    }))

  it.scopedLive("retries leave the ambient Random untouched and log no key", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(FakeServer.error(500, `server saw key ${SECRET}`), FakeServer.ok("done"))
      const model = yield* modelFor(server)
      const logs: Array<string> = []
      const logger = Logger.make(({ annotations, message }) => {
        logs.push(`${JSON.stringify(message)} ${JSON.stringify(HashMap.toEntries(annotations))}`)
      })
      const drawn = yield* Effect.gen(function*() {
        yield* model.complete("q")
        return yield* Random.next
      }).pipe(
        Effect.withRandom(Random.make("seed")),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Logger.withMinimumLogLevel(LogLevel.Debug)
      )
      const expected = yield* Effect.withRandom(Random.next, Random.make("seed"))
      expect(drawn).toBe(expected)
      expect(logs.some((l) => l.includes("retrying model call") && l.includes("[redacted]"))).toBe(true)
      for (const line of logs) expect(line).not.toContain(SECRET)
    }))

  it.effect("invalid options are ConfigErrors naming the field", () =>
    Effect.gen(function*() {
      const base: OpenAiLanguageModel.Options = { model: "m", apiKey: Redacted.make("k") }
      const cases: ReadonlyArray<[Partial<OpenAiLanguageModel.Options>, string]> = [
        [{ model: "" }, "model"],
        [{ apiKey: Redacted.make("") }, "apiKey"],
        [{ baseURL: "ftp://x" }, "baseURL"],
        [{ baseURL: "not a url" }, "baseURL"],
        [{ temperature: 3 }, "temperature"],
        [{ maxOutputTokens: 0 }, "maxOutputTokens"],
        [{ maxOutputTokens: 1.5 }, "maxOutputTokens"],
        [{ timeout: 0 }, "timeout"],
        [{ timeout: -5 }, "timeout"],
        [{ maxRetries: -1 }, "maxRetries"],
        [{ retryBaseDelay: -1 }, "retryBaseDelay"],
        [{ maxConcurrency: 0 }, "maxConcurrency"],
        [{ rateLimit: { requests: 0, interval: "1 second" } }, "rateLimit.requests"],
        [{ rateLimit: { requests: 1, interval: 0 } }, "rateLimit.interval"],
        [{ price: { inputPerMillion: -1, outputPerMillion: 1 } }, "price.inputPerMillion"],
        [{ extraBody: { stream: true } }, "extraBody.stream"],
        [{ extraBody: { messages: [] } }, "extraBody.messages"]
      ]
      for (const [override, field] of cases) {
        const error = yield* Effect.flip(OpenAiLanguageModel.make({ ...base, ...override }))
        expect(error).toBeInstanceOf(ConfigError)
        expect(error.field).toBe(field)
      }
    }))

  it.effect("fromEnv reads the key (redacted) and the base URL", () =>
    Effect.gen(function*() {
      const provider = ConfigProvider.fromMap(
        new Map([["OPENAI_API_KEY", SECRET], ["OPENAI_BASE_URL", "http://127.0.0.1:9/v1"]])
      )
      const options = yield* Effect.withConfigProvider(
        OpenAiLanguageModel.config({ model: "gpt-test", maxRetries: 1 }),
        provider
      )
      expect(options.model).toBe("gpt-test")
      expect(options.baseURL).toBe("http://127.0.0.1:9/v1")
      expect(Redacted.value(options.apiKey)).toBe(SECRET)
      expectNoSecret(options)
      const model = yield* Effect.withConfigProvider(OpenAiLanguageModel.fromEnv({ model: "gpt-test" }), provider)
      expectNoSecret(model)

      const missing = yield* Effect.flip(
        Effect.withConfigProvider(OpenAiLanguageModel.fromEnv({ model: "m" }), ConfigProvider.fromMap(new Map()))
      )
      expect(missing).toBeInstanceOf(ConfigError)
      expect(missing.field).toBe("OPENAI_API_KEY")

      const custom = yield* Effect.withConfigProvider(
        OpenAiLanguageModel.config({ model: "m", apiKeyVariable: "MY_KEY" }),
        ConfigProvider.fromMap(new Map([["MY_KEY", "abc"]]))
      )
      expect(custom.baseURL).toBeUndefined()
    }))

  it.scopedLive("layers provide the reflection and task models", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.ok("from layer"))
      const options: OpenAiLanguageModel.Options = {
        model: "m",
        apiKey: Redacted.make(SECRET),
        baseURL: server.baseURL
      }
      const both = yield* Effect.gen(function*() {
        const reflection = yield* ReflectionModel
        const task = yield* TaskModel
        return [yield* reflection.complete("a"), yield* task.complete("b")] as const
      }).pipe(
        Effect.provide(OpenAiLanguageModel.layerReflection(options)),
        Effect.provide(OpenAiLanguageModel.layerTask(options))
      )
      expect(both.map((c) => c.text)).toEqual(["from layer", "from layer"])
    }))

  it("retryAfterMillis reads milliseconds, seconds and HTTP dates", () => {
    const headers = (entries: Record<string, string>) => new Headers(entries)
    const now = Date.parse("2025-01-01T00:00:00Z")
    expect(OpenAiLanguageModel.retryAfterMillis(headers({ "retry-after-ms": "1500" }), now)).toEqual(Option.some(1500))
    expect(OpenAiLanguageModel.retryAfterMillis(headers({ "retry-after": "2" }), now)).toEqual(Option.some(2000))
    expect(
      OpenAiLanguageModel.retryAfterMillis(headers({ "retry-after": "Wed, 01 Jan 2025 00:00:03 GMT" }), now)
    ).toEqual(Option.some(3000))
    expect(
      OpenAiLanguageModel.retryAfterMillis(headers({ "retry-after": "Tue, 31 Dec 2024 23:00:00 GMT" }), now)
    ).toEqual(Option.some(0))
    expect(OpenAiLanguageModel.retryAfterMillis(headers({ "retry-after": "soon" }), now)).toEqual(Option.none())
    expect(OpenAiLanguageModel.retryAfterMillis(headers({}), now)).toEqual(Option.none())
  })
})
