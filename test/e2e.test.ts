/**
 * End to end over real HTTP: Gepa.optimize with the DefaultAdapter, where
 * the task model and the reflection model are both served by a local
 * OpenAI-compatible server through the real client.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import * as Gepa from "../src/Gepa.js"
import * as Metric from "../src/Metric.js"
import * as OpenAiLanguageModel from "../src/OpenAiLanguageModel.js"
import * as FakeServer from "./fixtures/openaiServer.js"

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
  ["Italy", "Rome"],
  ["Spain", "Madrid"],
  ["Cuba", "Havana"],
  ["Ghana", "Accra"],
  ["Nepal", "Kathmandu"]
].map(([country, capital]) => ({ country: country!, capital: capital! }))

const messagesOf = (
  body: unknown
): ReadonlyArray<{ role: string; content: string }> => ((body as { messages?: ReadonlyArray<{ role: string; content: string }> }).messages ?? [])

/**
 * The scripted server: the "task" model answers with the capital in lower
 * case unless its system prompt asks for upper case; the "reflect" model
 * reads the feedback and adds that instruction.
 */
const serve = (server: FakeServer.FakeOpenAi) =>
  server.setFallback((request) => {
    const body = request.body as { model?: string }
    const messages = messagesOf(request.body)
    if (body.model === "task") {
      const system = messages.find((m) => m.role === "system")?.content ?? ""
      const user = messages.find((m) => m.role === "user")?.content ?? ""
      const capital = data.find((q) => user.includes(q.country))?.capital ?? "unknown"
      return FakeServer.ok(/upper ?case/i.test(system) ? capital.toUpperCase() : capital.toLowerCase())
    }
    const prompt = messages.map((m) => m.content).join("\n")
    const current = /```+\n([\s\S]*?)\n```+/.exec(prompt)?.[1] ?? "Answer the question."
    const wantsUpper = /Expected "([A-Z]+)"/.test(prompt)
    const improved = wantsUpper ? `${current}\nAnswer with the capital city only, in UPPER CASE.` : current
    return FakeServer.ok("Revised text:\n```\n" + improved + "\n```", { usage: { prompt_tokens: 400, completion_tokens: 40 } })
  })

describe("end to end over HTTP", () => {
  it.scoped("DefaultAdapter + reflection through the real client improve the validation score", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      serve(server)
      const common = { apiKey: Redacted.make("sk-e2e"), baseURL: server.baseURL, retryBaseDelay: "5 millis" as const }
      const taskModel = yield* OpenAiLanguageModel.make({ ...common, model: "task" })
      const reflectionModel = yield* OpenAiLanguageModel.make({
        ...common,
        model: "reflect",
        price: { inputPerMillion: 1, outputPerMillion: 4 }
      })
      const adapter = yield* DefaultAdapter.make<Question>({
        model: taskModel,
        input: (q) => `What is the capital of ${q.country}?`,
        metric: Metric.exactMatch((q) => q.capital.toUpperCase())
      })
      const result = yield* Gepa.optimize({
        seedCandidate: { system_prompt: "Answer the question." },
        trainset: data.slice(0, 6),
        valset: data.slice(6),
        adapter,
        reflectionModel,
        maxMetricCalls: 40,
        maxConcurrency: 4
      })
      assert.strictEqual(result.seedScore, 0)
      assert.strictEqual(result.bestScore, 1)
      assert.match(result.bestCandidate.system_prompt!, /UPPER CASE/)
      assert.isAbove(result.reflectionCalls, 0)
      // usage came back from the server and was priced
      assert.isAbove(result.state.reflectionUsage.cost, 0)
      assert.isAtMost(result.totalMetricCalls, 40)
      assert.isTrue(server.requests.some((r) => (r.body as { model?: string }).model === "reflect"))
    }))
})
