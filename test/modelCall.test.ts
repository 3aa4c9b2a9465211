import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Random, TestClock } from "effect"
import * as fc from "fast-check"
import * as internal from "../src/internal/models/call.js"
import * as Retry from "../src/internal/models/retry.js"
import { LlmBadRequest, LlmRateLimited, LlmTransportError } from "../src/LanguageModel.js"

const policy = { maxRetries: 3, retryBaseDelayMillis: 100, maxRetryDelayMillis: 1000 }
const transient: Retry.AttemptFailure = {
  error: new LlmTransportError({ model: "m", detail: "reset" }),
  retryable: true
}

/** Runs an always-failing attempt under the schedule; returns the attempt times. */
const attemptTimes = (failure: Retry.AttemptFailure, p = policy) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    const attempt = Effect.flatMap(TestClock.currentTimeMillis, (now) => {
      times.push(now)
      return Effect.fail(failure)
    })
    const fiber = yield* Effect.fork(Effect.either(Effect.retry(attempt, Retry.retrySchedule(p, "m"))))
    yield* TestClock.adjust("1 hour")
    const result = yield* Fiber.join(fiber)
    return { times, result }
  })

describe("retry schedule", () => {
  it("backoff doubles, is capped and jittered between half and all of it; Retry-After wins", () =>
    fc.assert(fc.property(fc.nat(12), fc.option(fc.nat(5000), { nil: undefined }), (retry, after) => {
      const failure = { ...transient, retryAfterMillis: after }
      const delay = Retry.retryDelayMillis(policy, retry, failure)
      if (after !== undefined) return delay === after
      const full = Math.min(1000, 100 * 2 ** retry)
      return delay >= full / 2 && delay <= full
    })))

  it.effect("a transient failure is tried 1 + maxRetries times with growing waits", () =>
    Effect.gen(function*() {
      const { result, times } = yield* attemptTimes(transient)
      expect(result._tag).toBe("Left")
      expect(times).toHaveLength(4)
      const gaps = times.slice(1).map((t, i) => t - times[i]!)
      expect(gaps[0]).toBeGreaterThanOrEqual(50)
      expect(gaps[0]).toBeLessThanOrEqual(100)
      expect(gaps[2]).toBeGreaterThanOrEqual(200)
      expect(gaps[2]).toBeLessThanOrEqual(400)
    }))

  it.effect("a permanent failure is tried once; a Retry-After is waited exactly; a too-long one stops", () =>
    Effect.gen(function*() {
      const permanent = { error: new LlmBadRequest({ model: "m", status: 400, detail: "no" }), retryable: false }
      expect((yield* attemptTimes(permanent)).times).toHaveLength(1)
      const limited = (after: number) => ({
        error: new LlmRateLimited({ model: "m", detail: "slow", retryAfterMillis: after }),
        retryable: true,
        retryAfterMillis: after
      })
      const waited = yield* attemptTimes(limited(700))
      expect(waited.times.map((t) => t - waited.times[0]!)).toEqual([0, 700, 1400, 2100])
      expect((yield* attemptTimes(limited(5000))).times).toHaveLength(1)
      expect((yield* attemptTimes(transient, { ...policy, maxRetries: 0 })).times).toHaveLength(1)
    }))

  it.effect("the jitter leaves the Effect Random stream untouched", () =>
    Effect.gen(function*() {
      const draws = (withRetries: boolean) =>
        Effect.gen(function*() {
          if (withRetries) yield* attemptTimes(transient)
          return yield* Random.nextInt
        }).pipe(Effect.withRandom(Random.make(42)))
      expect(yield* draws(true)).toBe(yield* draws(false))
    }))

  it("Retry-After headers: milliseconds, seconds and HTTP dates", () => {
    const get = (h: Record<string, string>) => (name: string) => h[name]
    const now = Date.parse("2025-01-01T00:00:00Z")
    expect(Retry.parseRetryAfter(get({ "retry-after-ms": "250" }), now)).toEqual(Option.some(250))
    expect(Retry.parseRetryAfter(get({ "retry-after": "3" }), now)).toEqual(Option.some(3000))
    expect(Retry.parseRetryAfter(get({ "retry-after": "Wed, 01 Jan 2025 00:00:05 GMT" }), now)).toEqual(
      Option.some(5000)
    )
    expect(Retry.parseRetryAfter(get({ "retry-after": "later" }), now)).toEqual(Option.none())
  })

  it.effect("the rate limiter keeps at most `requests` starts in any window", () =>
    Effect.gen(function*() {
      const limit = yield* internal.makeRateLimiter(2, 1000)
      const starts: Array<number> = []
      const fiber = yield* Effect.fork(
        Effect.forEach(
          [1, 2, 3, 4, 5],
          () => Effect.zipRight(limit, Effect.flatMap(TestClock.currentTimeMillis, (t) => Effect.sync(() => starts.push(t)))),
          { concurrency: "unbounded" }
        )
      )
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      expect([...starts].sort((a, b) => a - b)).toEqual([0, 0, 1000, 1000, 2000])
    }))
})
