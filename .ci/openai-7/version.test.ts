// The client the model layer sends with is openai 7: its own version header.
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as OpenAiLanguageModel from "../../src/OpenAiLanguageModel.js"
import * as FakeServer from "../../test/fixtures/openaiServer.js"

it.scopedLive("OpenAiLanguageModel sends with openai 7", () =>
  Effect.gen(function*() {
    const server = yield* FakeServer.make
    const model = yield* OpenAiLanguageModel.make({ model: "m", apiKey: Redacted.make("sk-openai-7"), baseURL: server.baseURL })
    yield* Effect.either(model.complete("q"))
    expect(server.requests.length).toBeGreaterThan(0)
    expect(String(server.requests[0]!.headers["x-stainless-package-version"])).toMatch(/^7\./)
  }))
