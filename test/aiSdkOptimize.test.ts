/**
 * A whole optimization with `@ai-sdk/openai` models as both the task and
 * the reflection model, served by the loopback OpenAI-compatible server:
 * usage and cost in the result, a 429 with Retry-After and a 500 burst
 * retried, an interrupt that closes the request in flight, a 401 that stops
 * the run with one line, and the API key in none of the output (log lines
 * at level all, events, the result, errors, the run folder).
 */
import { createOpenAI } from "@ai-sdk/openai"
import { describe, expect, it } from "@effect/vitest"
import { Cause, type Duration, Effect, Exit, Fiber, Layer, Logger, LogLevel, Redacted } from "effect"
import * as path from "node:path"
import * as AiSdkLanguageModel from "../src/AiSdkLanguageModel.js"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import * as Gepa from "../src/Gepa.js"
import * as Metric from "../src/Metric.js"
import * as Secrets from "../src/Secrets.js"
import * as Hostile from "./fixtures/hostile.js"
import * as FakeServer from "./fixtures/openaiServer.js"
import { tmpDir } from "./fixtures/tmp.js"

interface Question {
  readonly country: string
  readonly capital: string
}

const data: ReadonlyArray<Question> = [
  ["France", "Paris"],
  ["Japan", "Tokyo"],
  ["Kenya", "Nairobi"],
  ["Peru", "Lima"],
  ["Norway", "Oslo"],
  ["Egypt", "Cairo"],
  ["Chile", "Santiago"],
  ["Italy", "Rome"]
].map(([country, capital]) => ({ country: country!, capital: capital! }))

const messagesOf = (body: unknown): ReadonlyArray<{ role: string; content: string }> =>
  (body as { messages?: ReadonlyArray<{ role: string; content: string }> }).messages ?? []

/**
 * The task model answers the capital in lower case unless its system prompt
 * asks for upper case; the reflection model adds that instruction when the
 * feedback asks for capitals. The first reflection call gets a 429 with
 * Retry-After, the first task calls a burst of 500s, each echoing the key.
 */
const serve = (server: FakeServer.FakeOpenAi, key: string) => {
  let reflections = 0
  let tasks = 0
  server.setFallback((request) => {
    const body = request.body as { model?: string }
    const messages = messagesOf(request.body)
    if (body.model === "task") {
      if (tasks++ < 3) return FakeServer.error(500, `backend down for ${key}`, { "retry-after-ms": "1" })
      const system = messages.find((m) => m.role === "system")?.content ?? ""
      const user = messages.find((m) => m.role === "user")?.content ?? ""
      const capital = data.find((q) => user.includes(q.country))?.capital ?? "unknown"
      return FakeServer.ok(/upper ?case/i.test(system) ? capital.toUpperCase() : capital.toLowerCase(), {
        usage: { prompt_tokens: 30, completion_tokens: 2 }
      })
    }
    if (reflections++ === 0) return FakeServer.error(429, `slow down, ${key}`, { "retry-after": "0.1" })
    const prompt = messages.map((m) => m.content).join("\n")
    const current = /```+\n([\s\S]*?)\n```+/.exec(prompt)?.[1] ?? "Answer the question."
    const improved = /Expected "([A-Z]+)"/.test(prompt) ? `${current}\nAnswer with the capital city only, in UPPER CASE.` : current
    return FakeServer.ok("Revised text:\n```\n" + improved + "\n```", { usage: { prompt_tokens: 400, completion_tokens: 40 } })
  })
}

const models = (server: FakeServer.FakeOpenAi, key: string, timeout: Duration.DurationInput = "10 seconds") => {
  const openai = createOpenAI({ baseURL: server.baseURL, apiKey: key })
  const options = { retryBaseDelay: "1 millis", timeout, secrets: [Redacted.make(key)] } as const
  return Layer.merge(
    AiSdkLanguageModel.layerTask(openai.chat("task"), { ...options, price: { inputPerMillion: 0.4, outputPerMillion: 1.6 } }),
    AiSdkLanguageModel.layerReflection(openai.chat("reflect"), { ...options, price: { inputPerMillion: 2, outputPerMillion: 8 } })
  )
}

const optimize = (runDir: string, onEvent: (text: string) => void) => {
  const adapter = DefaultAdapter.layer<Question>({
    input: (q) => `What is the capital of ${q.country}?`,
    metric: Metric.exactMatch((q) => q.capital.toUpperCase())
  })
  return Gepa.optimize({
    seedCandidate: { system_prompt: "Answer the question." },
    trainset: data.slice(0, 5),
    valset: data.slice(5),
    maxMetricCalls: 40,
    maxConcurrency: 4,
    runDir,
    onEvent: (event) => onEvent(JSON.stringify(event))
  }).pipe(Effect.provide(adapter))
}

describe("Gepa.optimize with @ai-sdk/openai models on the loopback server", () => {
  it.scopedLive(
    "improves the prompt; usage and cost in the result; a 429 and a 500 burst retried; the key in none of the output",
    () =>
      Effect.gen(function*() {
        Secrets.unsafeClear()
        const key = Hostile.makeKey("aisdk")
        const server = yield* FakeServer.make
        serve(server, key.key)
        const texts: Array<string> = []
        const runDir = path.join(tmpDir("gepa-aisdk-"), "run")
        const logger = Logger.replace(Logger.defaultLogger, Logger.make((options) => void texts.push(Logger.jsonLogger.log(options))))
        const layer = models(server, key.key)
        const exit = yield* optimize(runDir, (e) => void texts.push(e)).pipe(
          Effect.provide(layer),
          Effect.provide(logger),
          Logger.withMinimumLogLevel(LogLevel.All),
          Effect.exit
        )
        if (Exit.isFailure(exit)) expect.fail(Cause.pretty(exit.cause))
        const result = exit.value
        expect(result.seedScore).toBe(0)
        expect(result.bestScore).toBe(1)
        expect(result.bestCandidate["system_prompt"]).toMatch(/UPPER CASE/)
        // usage and cost, read from the provider's answers and priced
        expect(result.state.reflectionUsage.inputTokens).toBeGreaterThanOrEqual(400)
        expect(result.state.reflectionUsage.cost).toBeCloseTo(
          (result.state.reflectionUsage.inputTokens * 2 + result.state.reflectionUsage.outputTokens * 8) / 1_000_000,
          12
        )
        expect(result.state.reflectionUsage.cost).toBeGreaterThan(0)
        // the 429 waited its Retry-After and the 500s were retried: every failure is in the log, none in the result
        const reflect = server.requests.filter((r) => (r.body as { model?: string }).model === "reflect")
        // (the first step's other rewrites are asked at the same time: the retry is the request with the same body)
        const retried = reflect.slice(1).find((r) => JSON.stringify(r.body) === JSON.stringify(reflect[0]!.body))
        expect(retried).toBeDefined()
        expect(retried!.receivedAt - reflect[0]!.receivedAt).toBeGreaterThanOrEqual(90)
        const log = texts.join("\n")
        expect(log).toMatch(/retrying model call .*Rate limited by model \\"reflect\\"/)
        expect(log.match(/retrying model call .*HTTP 500/g)?.length).toBe(3)
        expect(log).toContain("[redacted]")
        // the key went only where it belongs
        expect(server.requests.every((r) => r.headers.authorization === `Bearer ${key.key}`)).toBe(true)
        texts.push(JSON.stringify({ ...result, state: undefined }), JSON.stringify(result.state))
        for (const file of Hostile.filesUnder(runDir)) texts.push(file.text)
        expect(Hostile.filesUnder(runDir).length).toBeGreaterThan(2)
        expect(Hostile.leaksIn(texts.join("\n"), key)).toEqual([])
        Secrets.unsafeClear()
      }),
    30_000
  )

  it.scopedLive("a 401 echoing the key stops the run with one line naming the model; the key is not in it", () =>
    Effect.gen(function*() {
      Secrets.unsafeClear()
      const key = Hostile.makeKey("aisdk401")
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.error(401, `Incorrect API key provided: ${key.key}`))
      const exit = yield* optimize(path.join(tmpDir("gepa-aisdk-"), "run"), () => {}).pipe(
        Effect.provide(models(server, key.key)),
        Effect.exit
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const text = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
      expect(text).toMatch(/the task model "task" at 127\.0\.0\.1:\d+ rejected the API key \(HTTP 401\)/)
      expect(Hostile.leaksIn(text, key)).toEqual([])
      Secrets.unsafeClear()
    }), 30_000)

  it.scopedLive("interrupting the run closes the requests in flight: the server sees the sockets close", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.ok("too late", { delayMillis: 20_000 }))
      const fiber = yield* Effect.fork(
        optimize(path.join(tmpDir("gepa-aisdk-"), "run"), () => {}).pipe(Effect.provide(models(server, "sk-interrupt-0123456789", "60 seconds")))
      )
      yield* server.waitFor(() => server.requests.length >= 1)
      expect(server.aborted).toBe(0)
      const started = server.requests.length
      expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
      yield* server.waitFor(() => server.inFlight === 0, "3 seconds")
      expect(server.aborted).toBeGreaterThanOrEqual(started)
    }), 30_000)
})
