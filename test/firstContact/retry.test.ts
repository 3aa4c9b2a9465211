import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import * as retry from "../../src/internal/models/retry.js"
import { LlmTransportError } from "../../src/LanguageModel.js"

const refused = new LlmTransportError({ model: "task", endpoint: "127.0.0.1:1", detail: "fetch failed (ECONNREFUSED)", code: "ECONNREFUSED" })
const policy = { maxRetries: 4, retryBaseDelayMillis: 1000, maxRetryDelayMillis: 60_000 }

const attempts = (failure: retry.AttemptFailure) =>
  Effect.gen(function*() {
    const logs: Array<string> = []
    let calls = 0
    const logger = Logger.make(({ logLevel, message }) => logs.push(`${logLevel.label} ${String(Array.isArray(message) ? message[0] : message)}`))
    const started = Date.now()
    yield* Effect.either(Effect.retry(
      Effect.suspend(() => (calls++, Effect.fail(failure))),
      retry.retrySchedule(policy, "task", "http://127.0.0.1:1/v1")
    )).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    return { calls, logs, millis: Date.now() - started }
  })

describe("model call retries", () => {
  it.live(
    "a server never reached gets 3 short retries, each one warning line naming the base URL and the cause; none for the retry that does not happen",
    () =>
      Effect.gen(function*() {
        const reach = retry.makeReachability()
        const marked = reach.mark({ error: refused, retryable: true })
        expect(marked.unreached).toBe(true)
        const r = yield* attempts(marked)
        expect(r.calls).toBe(4)
        expect(r.millis).toBeLessThan(2000)
        expect(r.logs).toHaveLength(3)
        for (const [k, line] of r.logs.entries()) {
          expect(line).toMatch(new RegExp(`^WARN retrying model call \\(${k + 1} of 3, in 0\\.\\d s\\): `))
          expect(line).toContain("ECONNREFUSED")
          expect(line).toContain("base URL http://127.0.0.1:1/v1")
        }
      }),
    10_000
  )

  it("once the server has answered, a refused connection is retried as usual", () => {
    const reach = retry.makeReachability()
    reach.answered()
    expect(reach.mark({ error: refused, retryable: true }).unreached).toBeUndefined()
    // an HTTP status is an answer too
    const other = retry.makeReachability()
    other.mark({ error: new LlmTransportError({ model: "task", status: 502, detail: "bad gateway" }), retryable: true })
    expect(other.mark({ error: refused, retryable: true }).unreached).toBeUndefined()
  })
})
