/**
 * Model failures against a hostile OpenAI-compatible server on loopback:
 * what the model layer reports for each failure shape, and what a whole
 * `Gepa.optimize` run does with it (fail at once with one line, or record
 * the failure without caching it), with the API key nowhere.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option, Redacted } from "effect"
import * as fc from "fast-check"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import { ModelUnrecoverable } from "../src/Errors.js"
import * as EvaluationCache from "../src/EvaluationCache.js"
import type { GepaEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"
import { type LanguageModel, type LlmError, scrubber, unrecoverable } from "../src/LanguageModel.js"
import * as Metric from "../src/Metric.js"
import * as OpenAiLanguageModel from "../src/OpenAiLanguageModel.js"
import * as FakeServer from "./fixtures/openaiServer.js"
import { tmpDir } from "./fixtures/tmp.js"

const SECRET = "sk-hostile-KEY-9f8e7d6c5b4a3210"

const endpointOf = (server: { readonly baseURL: string }) => new URL(server.baseURL).host

const modelFor = (
  baseURL: string,
  overrides: Partial<OpenAiLanguageModel.Options> = {}
): Effect.Effect<LanguageModel, never> =>
  OpenAiLanguageModel.make({
    model: "task-m",
    apiKey: Redacted.make(SECRET),
    baseURL,
    retryBaseDelay: "1 millis",
    maxRetries: 1,
    timeout: "5 seconds",
    ...overrides
  }).pipe(Effect.orDie)

const failWith = (model: LanguageModel, prompt = "q"): Effect.Effect<LlmError> =>
  Effect.flip(model.complete(prompt)).pipe(
    Effect.catchAll((c) => Effect.dieMessage(`expected a failure, got the answer ${JSON.stringify(c.text)}`))
  )

/** a free port: a server was just there and is gone */
const closedBaseURL = Effect.scoped(Effect.map(FakeServer.make, (s) => s.baseURL))

const expectClean = (text: string) => {
  expect(text).not.toContain(SECRET)
}

const expectOneLine = (text: string) => {
  expect(text).not.toMatch(/[\r\n]/)
}

describe("model layer against a hostile server", () => {
  it.scopedLive("connection refused: a transient error with its code, unrecoverable after the retries", () =>
    Effect.gen(function*() {
      const baseURL = yield* closedBaseURL
      const error = yield* failWith(yield* modelFor(baseURL, { maxRetries: 2 }))
      expect(error._tag).toBe("LlmTransportError")
      expect(error).toMatchObject({ code: "ECONNREFUSED", endpoint: new URL(baseURL).host })
      const fatal = Option.getOrThrow(unrecoverable(error, "task"))
      expect(fatal.message).toBe(`the task model "task-m" at ${new URL(baseURL).host} is unreachable: connection refused`)
    }))

  it.scopedLive("401 with the key echoed: one line naming role, model, host:port and status; key nowhere", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.error(401, `Incorrect API key provided: ${SECRET}\nsee docs`))
      const error = yield* failWith(yield* modelFor(server.baseURL, { model: "gpt-4.1" }))
      expect(error._tag).toBe("LlmAuthenticationError")
      expect(server.requests).toHaveLength(1)
      const fatal = Option.getOrThrow(unrecoverable(error, "reflection"))
      expect(fatal.message).toBe(`the reflection model "gpt-4.1" at ${endpointOf(server)} rejected the API key (HTTP 401)`)
      for (const text of [error.message, JSON.stringify(error), fatal.message, JSON.stringify(fatal)]) expectClean(text)
      expectOneLine(error.message)
    }))

  it.scopedLive("403, 404 and a plain 400 are unrecoverable; a 400 about one input is not", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const model = yield* modelFor(server.baseURL)
      server.enqueue(
        FakeServer.error(403, "project has no access"),
        FakeServer.error(404, "The model `task-m` does not exist"),
        FakeServer.error(400, "Unsupported parameter: 'temperature'"),
        { status: 400, body: { error: { message: "maximum context length is 8192 tokens", code: "context_length_exceeded" } } }
      )
      const reasons: Array<string | undefined> = []
      for (let i = 0; i < 4; i++) {
        reasons.push(Option.getOrUndefined(unrecoverable(yield* failWith(model), "task"))?.reason)
      }
      expect(reasons).toEqual(["permission", "model-not-found", "bad-request", undefined])
      server.enqueue(FakeServer.error(400, "Unsupported parameter: 'temperature'"))
      const bad = Option.getOrThrow(unrecoverable(yield* failWith(model), "task"))
      expect(bad.message).toBe(
        `the task model "task-m" at ${endpointOf(server)} rejected the request as invalid (HTTP 400): Unsupported parameter: 'temperature'`
      )
      // none of them retried
      expect(server.requests).toHaveLength(5)
    }))

  it.scopedLive("HTTP 200 with an error body echoing the key (JSON or text/plain): scrubbed, one line", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(
        { status: 200, body: { error: { message: `invalid key ${SECRET}` } } },
        { status: 200, body: `upstream said:\n  invalid key ${SECRET}\n` },
        { status: 200, body: { error: { message: `key ${SECRET} revoked`, code: 401 } } },
        { status: 200, body: { error: { message: `bad ${encodeURIComponent(SECRET)} ${JSON.stringify(SECRET)}` } } }
      )
      const model = yield* modelFor(server.baseURL)
      const errors: Array<LlmError> = []
      for (let i = 0; i < 4; i++) errors.push(yield* failWith(model))
      expect(errors.map((e) => e._tag)).toEqual([
        "LlmResponseError",
        "LlmResponseError",
        // an error body carrying a status is read as that status
        "LlmAuthenticationError",
        "LlmResponseError"
      ])
      expect(errors[0]!.message).toContain("invalid key [redacted]")
      expect(errors[1]!.message).toContain("upstream said: invalid key [redacted]")
      for (const e of errors) {
        expectClean(e.message)
        expectClean(JSON.stringify(e))
        expectOneLine(e.message)
      }
    }))

  it.scopedLive("a request hanging past the timeout is aborted and retried, then LlmTimeout", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.ok("too late", { delayMillis: 10_000 }))
      const error = yield* failWith(yield* modelFor(server.baseURL, { timeout: "150 millis", maxRetries: 1 }))
      expect(error).toMatchObject({ _tag: "LlmTimeout", millis: 150, endpoint: endpointOf(server) })
      expect(server.requests).toHaveLength(2)
      // both requests were cancelled at the server, not left running
      yield* server.waitFor(() => server.aborted === 2)
      expect(Option.isNone(unrecoverable(error, "task"))).toBe(true)
    }))

  it.scopedLive("a connection reset in the middle of the body is retried like a reset before the headers", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue({ ...FakeServer.ok("first try"), resetMidBody: true }, FakeServer.ok("second try"))
      const model = yield* modelFor(server.baseURL)
      expect((yield* model.complete("q")).text).toBe("second try")
      expect(server.requests).toHaveLength(2)

      server.setFallback(() => ({ ...FakeServer.ok("never whole"), resetMidBody: true }))
      const error = yield* failWith(model)
      expect(error._tag).toBe("LlmTransportError")
      expect(error.message).toContain("connection broke")
      expect(Option.isNone(unrecoverable(error, "task"))).toBe(true)
      expect(server.requests).toHaveLength(4)
    }))

  it.scopedLive("an empty choices array and other wrong shapes are one-line errors, not parse trees", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(
        { status: 200, body: { object: "chat.completion", choices: [] } },
        { status: 200, body: { object: "chat.completion", choices: [{ finish_reason: "stop" }] } },
        { status: 200, body: [1, 2] }
      )
      const model = yield* modelFor(server.baseURL)
      const messages: Array<string> = []
      for (let i = 0; i < 3; i++) messages.push((yield* failWith(model)).message)
      expect(messages[0]).toBe(`Malformed response from model "task-m" at ${endpointOf(server)}: the response has no choices`)
      expect(messages[1]).toContain("at choices.0.message")
      for (const m of messages) expectOneLine(m)
    }))

  it.scopedLive("an answer echoing the key is scrubbed too", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.enqueue(FakeServer.ok(`Your key is ${SECRET}.`))
      const completion = yield* (yield* modelFor(server.baseURL)).complete("q")
      expect(completion.text).toBe("Your key is [redacted].")
    }))

  it.scopedLive("a credential sent in a header of its own is scrubbed like the key", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const azureKey = "azure-HEADER-secret-55aa"
      server.enqueue(FakeServer.error(401, `api-key ${azureKey} is not valid`), FakeServer.ok(`echo ${azureKey}`))
      const model = yield* modelFor(server.baseURL, { headers: { "api-key": azureKey, "x-trace": "visible-trace-id" } })
      const error = yield* failWith(model)
      expect(error.message).not.toContain(azureKey)
      expect((yield* model.complete("q")).text).toBe("echo [redacted]")
      expect(server.requests[0]!.headers["api-key"]).toBe(azureKey)
    }))

  it.effect("a base URL holding credentials is a ConfigError that does not repeat them", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        OpenAiLanguageModel.make({ model: "m", apiKey: Redacted.make(SECRET), baseURL: "http://user:url-pass-7788@127.0.0.1:9/v1" })
      )
      expect(error.field).toBe("baseURL")
      expect(error.message).not.toContain("url-pass-7788")
    }))

  it("the scrub removes every secret of 4+ characters from any text", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 4, maxLength: 24 }), fc.array(fc.string(), { maxLength: 4 }), (secret, parts) => {
        const scrub = scrubber(Redacted.make(secret))
        const text = parts.join(secret)
        expect(scrub(`${text}${secret}`).includes(secret)).toBe(false)
      })
    )
    // placeholders are left alone
    expect(scrubber(Redacted.make("x"))("x marks")).toBe("x marks")
  })
})

// ---------------------------------------------------------------------------
// whole runs
// ---------------------------------------------------------------------------

interface Example {
  readonly q: string
  readonly a: string
}

const trainset: ReadonlyArray<Example> = Array.from({ length: 8 }, (_, i) => ({ q: `q${i}`, a: `a${i}` }))

const userOf = (request: FakeServer.RecordedRequest): string => {
  const body = request.body as { readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }> }
  return body.messages.find((m) => m.role === "user")?.content ?? ""
}

/** a cache that remembers every id it was asked to store */
const recordingCache = () => {
  const inner = EvaluationCache.memory<string>()
  const stored: Array<string> = []
  const cache: EvaluationCache.EvaluationCache<string> = {
    ...inner,
    set: (key, value) => Effect.zipRight(Effect.sync(() => stored.push(key.id)), inner.set(key, value))
  }
  return { cache, stored }
}

const runWith = (options: {
  readonly task: LanguageModel
  readonly reflection: LanguageModel
  readonly cache?: EvaluationCache.EvaluationCache<string>
  readonly runDir?: string
  readonly maxMetricCalls?: number
}) => {
  const events: Array<GepaEvent> = []
  const run = Effect.gen(function*() {
    const adapter = yield* DefaultAdapter.make<Example>({
      model: options.task,
      input: (e) => e.q,
      metric: Metric.exactMatch<Example>((e) => e.a)
    })
    return yield* Gepa.optimize({
      seedCandidate: { system_prompt: "Answer the question." },
      trainset,
      adapter,
      reflectionModel: options.reflection,
      maxMetricCalls: options.maxMetricCalls ?? 24,
      minibatchSize: 2,
      ...(options.cache === undefined ? {} : { cache: options.cache }),
      ...(options.runDir === undefined ? {} : { runDir: options.runDir }),
      onEvent: (event) => void events.push(event)
    })
  })
  return { run, events }
}

const fencedAnswer = (text: string) => FakeServer.ok(`Thoughts.\n\n\`\`\`\n${text}\n\`\`\`\n`)

const expectKeyNowhere = (
  texts: ReadonlyArray<string>,
  servers: ReadonlyArray<FakeServer.FakeOpenAi>
) => {
  for (const text of texts) expectClean(text)
  for (const server of servers) {
    for (const request of server.requests) expectClean(JSON.stringify(request.body))
  }
}

describe("Gepa.optimize against a hostile server", () => {
  it.scopedLive("a rejected task key fails the run at once with one line; the key is nowhere", () =>
    Effect.gen(function*() {
      const taskServer = yield* FakeServer.make
      const reflectionServer = yield* FakeServer.make
      taskServer.setFallback(() => FakeServer.error(401, `Incorrect API key provided: ${SECRET}`))
      const { events, run } = runWith({
        task: yield* modelFor(taskServer.baseURL),
        reflection: yield* modelFor(reflectionServer.baseURL, { model: "refl-m" })
      })
      const error = yield* Effect.flip(run)
      expect(error).toBeInstanceOf(ModelUnrecoverable)
      expect(error.message).toBe(`the task model "task-m" at ${endpointOf(taskServer)} rejected the API key (HTTP 401)`)
      // at once: no retries, no further evaluations, no reflection
      expect(taskServer.requests.length).toBeLessThanOrEqual(trainset.length)
      expect(reflectionServer.requests).toHaveLength(0)
      expect(events.some((e) => e._tag === "OptimizationEnded")).toBe(false)
      expectKeyNowhere([error.message, JSON.stringify(error), JSON.stringify(events)], [taskServer, reflectionServer])
    }))

  it.scopedLive("an unreachable task server fails the run with one line after the retries", () =>
    Effect.gen(function*() {
      const baseURL = yield* closedBaseURL
      const reflectionServer = yield* FakeServer.make
      const { run } = runWith({
        task: yield* modelFor(baseURL),
        reflection: yield* modelFor(reflectionServer.baseURL)
      })
      const error = yield* Effect.flip(run)
      expect(error.message).toBe(`the task model "task-m" at ${new URL(baseURL).host} is unreachable: connection refused`)
    }))

  it.scopedLive("a rejected reflection key fails the run at once with one line naming the reflection model", () =>
    Effect.gen(function*() {
      const taskServer = yield* FakeServer.make
      const reflectionServer = yield* FakeServer.make
      // wrong answers, so there is something to reflect on
      taskServer.setFallback(() => FakeServer.ok("no idea"))
      reflectionServer.setFallback(() => FakeServer.error(401, `invalid key ${SECRET}`))
      const { events, run } = runWith({
        task: yield* modelFor(taskServer.baseURL),
        reflection: yield* modelFor(reflectionServer.baseURL, { model: "gpt-4.1" })
      })
      const error = yield* Effect.flip(run)
      expect(error.message).toBe(
        `the reflection model "gpt-4.1" at ${endpointOf(reflectionServer)} rejected the API key (HTTP 401)`
      )
      // the proposals of the first step are asked together (three rewrites with the one-component
      // default when the budget holds fifteen validations, one here); no later step starts
      const strategy = events.find((e) => e._tag === "OptimizationStarted")
      const perStep = Number(/^(\d+) proposals? per step/.exec(strategy?._tag === "OptimizationStarted" ? strategy.strategy ?? "" : "")?.[1] ?? 1)
      expect(reflectionServer.requests.length).toBeGreaterThanOrEqual(1)
      expect(reflectionServer.requests.length).toBeLessThanOrEqual(perStep)
      expect(events.filter((e) => e._tag === "IterationStarted").map((e) => e._tag === "IterationStarted" ? e.iteration : 0))
        .toEqual(Array.from({ length: perStep }, (_, i) => i + 1))
      expectKeyNowhere([error.message, JSON.stringify(events)], [taskServer, reflectionServer])
    }))

  it.scopedLive("transient task failures are recorded as failures, never cached, and the key is nowhere", () =>
    Effect.gen(function*() {
      const taskServer = yield* FakeServer.make
      const reflectionServer = yield* FakeServer.make
      const resetOnce = new Set<string>()
      taskServer.setFallback((request) => {
        const q = userOf(request)
        switch (q) {
          case "q1":
            return FakeServer.error(500, `upstream crashed for key ${SECRET}`)
          case "q2":
            return { status: 200, body: { error: { message: `invalid key ${SECRET}` } } }
          case "q3":
            return { status: 200, body: `denied:\n${SECRET}\n` }
          case "q4":
            return FakeServer.ok("late", { delayMillis: 10_000 })
          case "q5":
            if (!resetOnce.has(q)) {
              resetOnce.add(q)
              return { ...FakeServer.ok("a5"), resetMidBody: true }
            }
            return FakeServer.ok("a5")
          case "q6":
            return { status: 200, body: { object: "chat.completion", choices: [] } }
          default:
            return FakeServer.ok(`a${q.slice(1)}`)
        }
      })
      reflectionServer.setFallback(() => fencedAnswer("Answer with the letter a and the question's number."))
      const { cache, stored } = recordingCache()
      const { events, run } = runWith({
        // long enough that an answer does not time out on a loaded machine (q4 never answers in time)
        task: yield* modelFor(taskServer.baseURL, { timeout: "500 millis" }),
        reflection: yield* modelFor(reflectionServer.baseURL, { model: "refl-m" }),
        cache
      })
      const result = yield* run
      const failed = events.flatMap((e) => (e._tag === "ExampleFailed" ? [e] : []))
      const seedFailures = failed.filter((e) => e.purpose === "seed-validation")
      expect(seedFailures.map((e) => e.id).sort()).toEqual(["1", "2", "3", "4", "6"])
      for (const f of failed) expectOneLine(f.error)
      expect(seedFailures.find((e) => e.id === "4")!.error).toContain("did not answer within 500 ms")
      expect(seedFailures.find((e) => e.id === "6")!.error).toContain("the response has no choices")
      // the seed's evaluation reports its failures
      const seedEnded = events.find((e) => e._tag === "EvaluationEnded" && e.purpose === "seed-validation")
      expect(seedEnded).toMatchObject({ failures: 5 })
      // failed examples scored the fallback for accounting, but were never cached
      expect(stored.filter((id) => ["1", "2", "3", "4", "6"].includes(id))).toEqual([])
      expect(stored).toContain("0")
      expect(stored).toContain("5")
      expect(result.totalMetricCalls).toBeLessThanOrEqual(24)
      expectKeyNowhere(
        [JSON.stringify(events), JSON.stringify(result)],
        [taskServer, reflectionServer]
      )
    }))

  it.scopedLive("a reflection model failing transiently fails its proposals; the run goes on and ends", () =>
    Effect.gen(function*() {
      const taskServer = yield* FakeServer.make
      const reflectionServer = yield* FakeServer.make
      taskServer.setFallback(() => FakeServer.ok("no idea"))
      reflectionServer.setFallback(() => FakeServer.error(503, `overloaded (key ${SECRET})`))
      const { events, run } = runWith({
        task: yield* modelFor(taskServer.baseURL),
        reflection: yield* modelFor(reflectionServer.baseURL),
        // fewer proposals than the limit of consecutive failures fit: the seed's
        // validation takes 8, each failed proposal 2 (its parent's minibatch), and
        // the smallest proposal needs 3 (a minibatch of 1 and a sample of 1)
        maxMetricCalls: 16
      })
      const result = yield* run
      expect(result.candidates).toHaveLength(1)
      const ended = events.flatMap((e) => (e._tag === "ProposalEnded" ? [e] : []))
      expect(ended.length).toBeGreaterThan(0)
      for (const e of ended) {
        expect(e.outcome).toBe("failed")
        expect(e.reason).toContain("HTTP 503")
        expectOneLine(e.reason ?? "")
      }
      expectKeyNowhere([JSON.stringify(events), JSON.stringify(result)], [taskServer, reflectionServer])
    }))

  it.scopedLive("an unfenced reflection answer is never adopted: the proposal fails with the reason", () =>
    Effect.gen(function*() {
      const taskServer = yield* FakeServer.make
      const reflectionServer = yield* FakeServer.make
      taskServer.setFallback(() => FakeServer.ok("no idea"))
      reflectionServer.setFallback(() =>
        FakeServer.ok("I looked at the failures and the prompt needs more rules. Adding rule:banana should fix those questions.")
      )
      const { events, run } = runWith({
        task: yield* modelFor(taskServer.baseURL),
        reflection: yield* modelFor(reflectionServer.baseURL),
        // fewer proposals than the limit of consecutive failures fit: the seed's
        // validation takes 8, each failed proposal 2 (its parent's minibatch), and
        // the smallest proposal needs 3 (a minibatch of 1 and a sample of 1)
        maxMetricCalls: 16
      })
      const result = yield* run
      expect(result.candidates).toHaveLength(1)
      const ended = events.flatMap((e) => (e._tag === "ProposalEnded" ? [e] : []))
      expect(ended.length).toBeGreaterThan(0)
      for (const e of ended) {
        expect(e.outcome).toBe("failed")
        expect(e.reason).toContain("no fenced code block")
      }
      expect(events.some((e) => e._tag === "Error" && e.message.includes("no fenced code block"))).toBe(true)
    }))

  it.scopedLive("a run stopped by an unrecoverable failure resumes from its run directory after the fix", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-hostile-")
      const taskServer = yield* FakeServer.make
      const reflectionServer = yield* FakeServer.make
      let keyValid = true
      taskServer.setFallback(() => (keyValid ? FakeServer.ok("no idea") : FakeServer.error(401, "key revoked")))
      reflectionServer.setFallback((_, i) => {
        // the key is revoked while the first iteration reflects
        keyValid = false
        return fencedAnswer(`Try harder, take ${i}.`)
      })
      const task = yield* modelFor(taskServer.baseURL)
      const reflection = yield* modelFor(reflectionServer.baseURL)
      const first = runWith({ task, reflection, runDir: dir })
      const exit = yield* Effect.exit(first.run)
      expect(Exit.isFailure(exit)).toBe(true)
      const error = yield* Effect.flip(exit)
      expect(error._tag).toBe("ModelUnrecoverable")
      // the seed's state was saved before the failure
      expect(first.events.some((e) => e._tag === "StateSaved")).toBe(true)

      keyValid = true
      reflectionServer.setFallback((_, i) => fencedAnswer(`Try harder, take ${i}.`))
      const second = runWith({ task, reflection, runDir: dir })
      const result = yield* second.run
      expect(second.events.find((e) => e._tag === "OptimizationStarted")).toMatchObject({ resumed: true })
      expect(result.iterations).toBeGreaterThan(0)
    }))
})
