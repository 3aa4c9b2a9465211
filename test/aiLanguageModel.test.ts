import * as AiError from "@effect/ai/AiError"
import { assert, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Option, Redacted, TestClock } from "effect"
import * as AiLanguageModel from "../src/AiLanguageModel.js"
import type * as DefaultAdapter from "../src/DefaultAdapter.js"
import { ConfigError } from "../src/Errors.js"
import * as Gepa from "../src/Gepa.js"
import { ReflectionModel, TaskModel } from "../src/LanguageModel.js"
import { type Question, questionAdapter, questions as data, reflectionHandler, taskHandler } from "./fixtures/capitals.js"
import * as FakeAi from "./fixtures/fakeAi.js"

const SECRET = "sk-ant-SUPERSECRET-0123456789"

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

const modelOver = (handler: FakeAi.Handler, options: AiLanguageModel.Options = {}) =>
  Effect.gen(function*() {
    const fake = yield* FakeAi.make(handler)
    const model = yield* AiLanguageModel.fromService(fake.service, {
      model: "fake-model",
      retryBaseDelay: "1 millis",
      secrets: [Redacted.make(SECRET)],
      ...options
    })
    return { model, calls: fake.calls }
  })

describe("AiLanguageModel", () => {
  it.effect("maps text, usage, cost, finish reason and the response model; messages keep their roles", () =>
    Effect.gen(function*() {
      const { calls, model } = yield* modelOver(() => Effect.succeed({ text: "hello", inputTokens: 1000, outputTokens: 500, modelId: "fake-2025" }), {
        price: { inputPerMillion: 2, outputPerMillion: 8 }
      })
      const completion = yield* model.complete({
        messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }]
      })
      expect(completion).toEqual({
        text: "hello",
        finishReason: "stop",
        usage: { inputTokens: 1000, outputTokens: 500 },
        cost: (1000 * 2 + 500 * 8) / 1_000_000,
        model: "fake-2025"
      })
      expect(calls[0]).toEqual([{ role: "system", content: "be brief" }, { role: "user", content: "hi" }])

      const plain = yield* model.complete("just text")
      expect(calls[1]).toEqual([{ role: "user", content: "just text" }])
      expect(plain.model).toBe("fake-2025")
    }))

  it.effect("finish reasons map to ours; missing usage gives no usage and no cost", () =>
    Effect.gen(function*() {
      const reasons = ["stop", "length", "content-filter", "tool-calls", "error", "pause", "other", "unknown"] as const
      const { model } = yield* modelOver((_m, i) => Effect.succeed({ text: "x", finishReason: reasons[i]! }), {
        price: { inputPerMillion: 1, outputPerMillion: 1 }
      })
      const out = []
      for (const _ of reasons) out.push(yield* model.complete("q"))
      expect(out.map((c) => c.finishReason)).toEqual([
        "stop",
        "length",
        "content_filter",
        "tool_calls",
        "other",
        "other",
        "other",
        "other"
      ])
      expect(out[0]!.usage).toBeUndefined()
      expect(out[0]!.cost).toBeUndefined()
      expect(out[0]!.model).toBe("fake-model")
    }))

  it.effect("429 with Retry-After waits the asked delay, then succeeds", () =>
    Effect.gen(function*() {
      const { calls, model } = yield* modelOver((_m, i) =>
        i === 0
          ? Effect.fail(FakeAi.responseError(429, "{\"error\":{\"message\":\"slow down\"}}", { "retry-after": "2" }))
          : Effect.succeed("ok")
      )
      const fiber = yield* Effect.fork(model.complete("q"))
      yield* TestClock.adjust("1999 millis")
      expect(calls).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      const completion = yield* Fiber.join(fiber)
      expect(completion.text).toBe("ok")
      expect(calls).toHaveLength(2)
    }))

  it.live("transient failures are retried maxRetries times, then surface as tagged errors", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [AiError.AiError, string, Record<string, unknown>]> = [
        [FakeAi.responseError(500, "{\"error\":{\"message\":\"upstream down\"}}"), "LlmTransportError", {
          status: 500,
          detail: "upstream down"
        }],
        [FakeAi.responseError(503), "LlmTransportError", { status: 503 }],
        [FakeAi.responseError(408), "LlmTransportError", { status: 408 }],
        [FakeAi.responseError(429, "quota", { "retry-after-ms": "1" }), "LlmRateLimited", {
          retryAfterMillis: 1,
          detail: "quota"
        }],
        [FakeAi.requestError("Transport", "connect ECONNREFUSED 127.0.0.1:9"), "LlmTransportError", {}]
      ]
      for (const [error, tag, fields] of cases) {
        const { calls, model } = yield* modelOver(() => Effect.fail(error), { maxRetries: 2 })
        const failure = failureOf(yield* Effect.exit(model.complete("q")))
        expect(failure._tag).toBe(tag)
        expect(failure).toMatchObject({ model: "fake-model", ...fields })
        expect(calls).toHaveLength(3)
      }
    }))

  it.effect("errors no retry fixes fail at once, with the secret scrubbed", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [AiError.AiError, string]> = [
        [FakeAi.responseError(401, `{"error":{"message":"invalid x-api-key ${SECRET}"}}`), "LlmAuthenticationError"],
        [FakeAi.responseError(403, "forbidden"), "LlmAuthenticationError"],
        [FakeAi.responseError(404, "{\"error\":{\"message\":\"model: claude-nope\"}}"), "LlmModelNotFound"],
        [FakeAi.responseError(400, `bad request, key ${SECRET}`), "LlmBadRequest"],
        [FakeAi.responseError(422, "unprocessable"), "LlmBadRequest"],
        [FakeAi.requestError("InvalidUrl", "not a url"), "LlmTransportError"],
        [FakeAi.requestError("Encode", "bad body"), "LlmTransportError"],
        [
          new AiError.MalformedOutput({ module: "Fake", method: "generateText", description: "missing content" }),
          "LlmResponseError"
        ],
        [
          new AiError.UnknownError({ module: "Fake", method: "generateText", description: `boom ${SECRET}` }),
          "LlmTransportError"
        ],
        [
          new AiError.HttpResponseError({
            module: "Fake",
            method: "generateText",
            reason: "Decode",
            request: {
              method: "POST",
              url: "https://ai.example",
              urlParams: [],
              hash: Option.none(),
              headers: {}
            },
            response: { status: 200, headers: {} },
            description: "unexpected token <"
          }),
          "LlmResponseError"
        ]
      ]
      for (const [error, tag] of cases) {
        const { calls, model } = yield* modelOver(() => Effect.fail(error), { maxRetries: 3 })
        const failure = failureOf(yield* Effect.exit(model.complete("q")))
        expect(failure._tag).toBe(tag)
        expect(calls).toHaveLength(1)
        expect(JSON.stringify(failure)).not.toContain(SECRET)
        expect(failure.message).not.toContain(SECRET)
      }
      const auth = failureOf(
        yield* Effect.exit(
          (yield* modelOver(() => Effect.fail(FakeAi.responseError(401, `{"error":{"message":"bad key ${SECRET}"}}`))))
            .model.complete("q")
        )
      )
      expect(auth).toMatchObject({ _tag: "LlmAuthenticationError", status: 401, detail: "bad key [redacted]" })
    }))

  it.effect("a Retry-After beyond maxRetryDelay stops the retries at once", () =>
    Effect.gen(function*() {
      const { calls, model } = yield* modelOver(() => Effect.fail(FakeAi.responseError(429, "come back tomorrow", { "retry-after": "3600" })), {
        maxRetryDelay: "10 seconds"
      })
      const failure = failureOf(yield* Effect.exit(model.complete("q")))
      expect(failure).toMatchObject({ _tag: "LlmRateLimited", retryAfterMillis: 3_600_000 })
      expect(calls).toHaveLength(1)
    }))

  it.effect("a call past the timeout is LlmTimeout after its retries, and each attempt is interrupted", () =>
    Effect.gen(function*() {
      let interrupted = 0
      const { calls, model } = yield* modelOver(
        () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => interrupted++))),
        { timeout: "1 second", maxRetries: 1 }
      )
      const fiber = yield* Effect.fork(Effect.exit(model.complete("q")))
      yield* TestClock.adjust("1 minute")
      const failure = failureOf(yield* Fiber.join(fiber))
      expect(failure).toMatchObject({ _tag: "LlmTimeout", model: "fake-model", millis: 1000 })
      expect(calls).toHaveLength(2)
      expect(interrupted).toBe(2)
    }))

  it.effect("interrupting the caller interrupts the provider call", () =>
    Effect.gen(function*() {
      let interrupted = false
      const { model } = yield* modelOver(() => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))))
      const fiber = yield* Effect.fork(model.complete("q"))
      yield* TestClock.adjust("10 millis")
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(interrupted).toBe(true)
    }))

  it.effect("maxConcurrency caps calls in flight", () =>
    Effect.gen(function*() {
      let inFlight = 0
      let maxInFlight = 0
      const { model } = yield* modelOver(() =>
        Effect.acquireUseRelease(
          Effect.sync(() => (maxInFlight = Math.max(maxInFlight, ++inFlight))),
          () => Effect.as(Effect.sleep("10 millis"), "ok"),
          () => Effect.sync(() => inFlight--)
        ), { maxConcurrency: 2 })
      const fiber = yield* Effect.fork(Effect.forEach([1, 2, 3, 4, 5], () => model.complete("q"), { concurrency: 5 }))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toHaveLength(5)
      expect(maxInFlight).toBe(2)
    }))

  it.effect("invalid options are ConfigErrors naming the field", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAi.make(() => Effect.succeed("x"))
      const bad: ReadonlyArray<readonly [AiLanguageModel.Options, string]> = [
        [{ timeout: 0 }, "timeout"],
        [{ maxRetries: -1 }, "maxRetries"],
        [{ maxConcurrency: 0 }, "maxConcurrency"],
        [{ rateLimit: { requests: 0, interval: "1 second" } }, "rateLimit.requests"],
        [{ price: { inputPerMillion: -1, outputPerMillion: 0 } }, "price.inputPerMillion"],
        [{ model: " " }, "model"],
        [{ secrets: ["plain" as unknown as Redacted.Redacted<string>] }, "secrets"]
      ]
      for (const [options, field] of bad) {
        const error = yield* Effect.flip(AiLanguageModel.fromService(fake.service, options))
        expect(error).toBeInstanceOf(ConfigError)
        expect(error.field).toBe(field)
      }
    }))

  it.effect("fromAiError maps a single error", () =>
    Effect.sync(() => {
      const error = AiLanguageModel.fromAiError(FakeAi.responseError(401, `key ${SECRET}`), {
        model: "m",
        secrets: [Redacted.make(SECRET)]
      })
      expect(error).toMatchObject({ _tag: "LlmAuthenticationError", model: "m", detail: "key [redacted]" })
    }))
})

// -------------------------------------------------------------------------
// a full optimization with @effect/ai models as reflection and task models
// -------------------------------------------------------------------------

describe("AiLanguageModel in a run", () => {
  it.effect("an @effect/ai model as reflection model and as the DefaultAdapter's task model improves the score", () =>
    Effect.gen(function*() {
      const result = yield* Gepa.optimize<Question, DefaultAdapter.Trajectory<Question>, string>({
        seedCandidate: { system_prompt: "Answer the question." },
        trainset: data.slice(0, 5),
        valset: data.slice(5),
        maxMetricCalls: 40
      }).pipe(
        Effect.provide(Layer.mergeAll(
          AiLanguageModel.layerReflection({ price: { inputPerMillion: 1, outputPerMillion: 4 } }).pipe(
            Layer.provide(FakeAi.layer(reflectionHandler, "fake-reflect"))
          ),
          questionAdapter.pipe(
            Layer.provide(AiLanguageModel.layerTask().pipe(Layer.provide(FakeAi.layer(taskHandler, "fake-task"))))
          )
        ))
      )
      assert.strictEqual(result.seedScore, 0)
      assert.strictEqual(result.bestScore, 1)
      assert.match(result.bestCandidate.system_prompt!, /UPPER CASE/)
      assert.isAbove(result.reflectionCalls, 0)
      // usage came back through @effect/ai and was priced
      assert.strictEqual(result.state.reflectionUsage.inputTokens, 300 * result.reflectionCalls)
      assert.closeTo(result.state.reflectionUsage.cost, result.reflectionCalls * (300 + 30 * 4) / 1_000_000, 1e-12)
      assert.isAtMost(result.totalMetricCalls, 40)
    }))

  it.effect("the layers name the model after the @effect/ai provider and fail the run on an auth error", () =>
    Effect.gen(function*() {
      const failing = FakeAi.layer(() => Effect.fail(FakeAi.responseError(401, "invalid key")), "anthropic")
      const model = yield* ReflectionModel.pipe(
        Effect.provide(AiLanguageModel.layerReflection({ maxRetries: 0 }).pipe(Layer.provide(failing)))
      )
      const error = yield* Effect.flip(model.complete("q"))
      expect(error).toMatchObject({ _tag: "LlmAuthenticationError", model: "anthropic", status: 401 })
      const task = yield* TaskModel.pipe(
        Effect.provide(AiLanguageModel.layerTask({ model: "claude-x" }).pipe(Layer.provide(failing)))
      )
      expect(yield* Effect.flip(task.complete("q"))).toMatchObject({ model: "claude-x" })
    }))

  it.effect("an @effect/ai reflection model that rejects the key stops the run with one line naming it", () =>
    Effect.gen(function*() {
      const rejecting = FakeAi.layer(
        () => Effect.fail(FakeAi.responseError(401, `{"error":{"message":"invalid x-api-key ${SECRET}"}}`)),
        "anthropic"
      )
      const error = yield* Effect.flip(
        Gepa.optimize<Question, DefaultAdapter.Trajectory<Question>, string>({
          seedCandidate: { system_prompt: "Answer the question." },
          trainset: data.slice(0, 5),
          valset: data.slice(5),
          maxMetricCalls: 40
        }).pipe(
          Effect.provide(Layer.mergeAll(
            AiLanguageModel.layerReflection({ model: "claude-x", secrets: [Redacted.make(SECRET)] }).pipe(
              Layer.provide(rejecting)
            ),
            questionAdapter.pipe(
              Layer.provide(AiLanguageModel.layerTask().pipe(Layer.provide(FakeAi.layer(taskHandler, "fake-task"))))
            )
          ))
        )
      )
      expect(error._tag).toBe("ModelUnrecoverable")
      expect(error.message).toBe("the reflection model \"claude-x\" at ai.example:443 rejected the API key (HTTP 401)")
      expect(JSON.stringify(error)).not.toContain(SECRET)
    }))
})
