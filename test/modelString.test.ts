import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import * as Net from "node:net"
import { ConfigError } from "../src/Errors.js"
import * as LanguageModel from "../src/LanguageModel.js"
import { ReflectionModel, TaskModel } from "../src/LanguageModel.js"
import * as ModelString from "../src/ModelString.js"
import * as Telemetry from "../src/Telemetry.js"
import * as FakeAi from "./fixtures/fakeAi.js"
import * as FakeServer from "./fixtures/openaiServer.js"

const SECRET = "sk-ant-SECRET-9876543210"

const parseError = (text: string, field?: string) => {
  const result = ModelString.parse(text, field)
  if (Either.isRight(result)) throw new Error(`expected "${text}" to be refused`)
  return result.left
}

const missingModule = (specifier: string) =>
  Object.assign(new Error(`Cannot find package '${specifier}' imported from /app/node_modules/effect-gepa`), {
    code: "ERR_MODULE_NOT_FOUND"
  })

describe("ModelString.parse", () => {
  it("reads the four providers", () => {
    expect(ModelString.parse("openai:gpt-4.1-mini")).toEqual(Either.right({ provider: "openai", model: "gpt-4.1-mini" }))
    expect(ModelString.parse(" anthropic:claude-sonnet-4-5 ")).toEqual(
      Either.right({ provider: "anthropic", model: "claude-sonnet-4-5" })
    )
    expect(ModelString.parse("google:gemini-2.5-flash")).toEqual(
      Either.right({ provider: "google", model: "gemini-2.5-flash" })
    )
    expect(ModelString.parse("openai-compatible:http://127.0.0.1:8000/v1#Qwen/Qwen3-8B")).toEqual(
      Either.right({ provider: "openai-compatible", model: "Qwen/Qwen3-8B", baseURL: "http://127.0.0.1:8000/v1" })
    )
    // a model name may itself hold colons (Ollama tags)
    expect(ModelString.parse("openai-compatible:http://localhost:11434/v1#llama3.2:3b")).toEqual(
      Either.right({ provider: "openai-compatible", model: "llama3.2:3b", baseURL: "http://localhost:11434/v1" })
    )
  })

  it("isModelString tells model strings from plain model names", () => {
    expect(ModelString.isModelString("openai:gpt-4.1-mini")).toBe(true)
    expect(ModelString.isModelString("openai-compatible:http://h/v1#m")).toBe(true)
    expect(ModelString.isModelString("Anthropic:claude-x")).toBe(true)
    expect(ModelString.isModelString("gpt-4.1-mini")).toBe(false)
    expect(ModelString.isModelString("qwen2.5:7b")).toBe(false)
    expect(ModelString.isModelString("mistral:latest")).toBe(false)
  })

  it("refuses malformed strings with one line naming the field", () => {
    const unknown = parseError("mistral:large", "reflectionModel")
    expect(unknown).toBeInstanceOf(ConfigError)
    expect(unknown.field).toBe("reflectionModel")
    expect(unknown.message).toBe(
      "Invalid configuration \"reflectionModel\": unknown provider \"mistral\" in \"mistral:large\" " +
        "(providers: openai, openai-compatible, anthropic, google)"
    )
    expect(parseError("gpt-4.1-mini").detail).toContain("names no provider; write provider:model, e.g. openai:gpt-4.1-mini")
    expect(parseError("").detail).toContain("a model string is required")
    expect(parseError("openai:").detail).toContain("the model name after \"openai:\" is missing")
    expect(parseError("openai-compatible:http://127.0.0.1:8000/v1").detail).toContain("the model name after \"#\" is missing")
    expect(parseError("openai-compatible:127.0.0.1:8000#m").detail).toContain("expected openai-compatible:<http(s) URL>#<model>")
    expect(parseError("openai-compatible:ftp://host/v1#m").detail).toContain("expected openai-compatible")
    for (const text of ["gpt-4.1-mini", "mistral:large", "openai:"]) {
      expect(parseError(text).message.split("\n")).toHaveLength(1)
    }
  })
})

describe("ModelString.make", () => {
  it.scopedLive("openai-compatible reaches the named server with the named model, without a key", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.ok("pong", { usage: { prompt_tokens: 10, completion_tokens: 2 } }))
      const model = yield* ModelString.make(`openai-compatible:${server.baseURL}#local-model`, {
        env: {},
        price: { inputPerMillion: 1, outputPerMillion: 1 }
      })
      const completion = yield* model.complete("ping")
      expect(completion.text).toBe("pong")
      expect(completion.cost).toBeCloseTo(12 / 1_000_000)
      expect(server.requests[0]!.url).toBe("/v1/chat/completions")
      expect((server.requests[0]!.body as { model: string }).model).toBe("local-model")
      expect(server.requests[0]!.headers.authorization).toBe("Bearer unused")
    }))

  it.scopedLive("openai reads OPENAI_API_KEY and OPENAI_BASE_URL", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const model = yield* ModelString.make("openai:gpt-4.1-mini", {
        env: { OPENAI_API_KEY: "sk-openai-123456", OPENAI_BASE_URL: server.baseURL }
      })
      yield* model.complete("q")
      expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-openai-123456")
      expect((server.requests[0]!.body as { model: string }).model).toBe("gpt-4.1-mini")
    }))

  it.effect("a missing key and invalid options are ConfigErrors naming the field", () =>
    Effect.gen(function*() {
      const noKey = yield* Effect.flip(ModelString.make("openai:gpt-4.1-mini", { env: {}, field: "taskModel" }))
      expect(noKey).toMatchObject({ field: "taskModel" })
      expect(noKey.detail).toContain("OPENAI_API_KEY is not set")
      const noAnthropicKey = yield* Effect.flip(ModelString.make("anthropic:claude-x", { env: {} }))
      expect(noAnthropicKey.detail).toContain("ANTHROPIC_API_KEY is not set")
      const badTemperature = yield* Effect.flip(
        ModelString.make("openai-compatible:http://127.0.0.1:1/v1#m", { env: {}, temperature: 9, field: "taskModel" })
      )
      expect(badTemperature.field).toBe("taskModel.temperature")
    }))

  it.effect("a provider package that is not installed is one clear error", () =>
    Effect.gen(function*() {
      const requested: Array<string> = []
      const importer = (specifier: string) => {
        requested.push(specifier)
        return Promise.reject(missingModule(specifier))
      }
      const google = yield* Effect.flip(
        ModelString.make("google:gemini-2.5-flash", { env: { GEMINI_API_KEY: "g-key-123456" }, importer })
      )
      expect(google.message).toBe(
        "Invalid configuration \"model\": install @effect/ai-google to use google: models " +
          "(npm install @effect/ai@^0.37 @effect/ai-google)"
      )
      const anthropic = yield* Effect.flip(
        ModelString.make("anthropic:claude-x", { env: { ANTHROPIC_API_KEY: SECRET }, importer, field: "reflectionModel" })
      )
      expect(anthropic.message).toBe(
        "Invalid configuration \"reflectionModel\": install @effect/ai-anthropic to use anthropic: models " +
          "(npm install @effect/ai@^0.37 @effect/ai-anthropic)"
      )
      expect(requested).toEqual(["@effect/ai-google", "@effect/ai-anthropic"])
      // a package of the wrong shape is named too
      const wrong = yield* Effect.flip(
        ModelString.make("google:gemini", { env: { GOOGLE_API_KEY: "g-key-123456" }, importer: () => Promise.resolve({}) })
      )
      expect(wrong.detail).toContain("@effect/ai-google has no GoogleClient.layer or GoogleLanguageModel.model")
    }))

  it.effect("google: the provider module's client and model layers are composed under our model", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const fakeGoogle = {
        GoogleClient: {
          layer: (options: unknown) => {
            seen.push(options)
            return Layer.empty
          }
        },
        GoogleLanguageModel: {
          model: (name: string, config: unknown) => {
            seen.push(name, config)
            return FakeAi.layer((messages) => Effect.succeed({ text: `${name} says ${messages[0]!.content}` }), "google")
          }
        }
      }
      const model = yield* ModelString.make("google:gemini-2.5-flash", {
        env: { GEMINI_API_KEY: "g-key-123456" },
        importer: (specifier) => Promise.resolve(specifier === "@effect/ai-google" ? fakeGoogle : {}),
        temperature: 0.5,
        maxOutputTokens: 256
      })
      const completion = yield* model.complete("hi")
      expect(completion.text).toBe("gemini-2.5-flash says hi")
      expect(seen[0]).toBe("gemini-2.5-flash")
      expect(seen[1]).toEqual({ generationConfig: { maxOutputTokens: 256, temperature: 0.5 } })
      expect(String((seen[2] as { apiKey: unknown }).apiKey)).not.toContain("g-key")
    }))

  it.scopedLive("anthropic through the real @effect/ai-anthropic against a local server", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => ({
        body: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "claude-test-1",
          content: [{ type: "text", text: "bonjour" }],
          stop_reason: "max_tokens",
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 3 }
        }
      }))
      const model = yield* ModelString.make("anthropic:claude-test", {
        env: { ANTHROPIC_API_KEY: SECRET, ANTHROPIC_BASE_URL: server.baseURL.replace(/\/v1$/, "") },
        maxOutputTokens: 64,
        price: { inputPerMillion: 3, outputPerMillion: 15 }
      })
      const completion = yield* model.complete({
        messages: [{ role: "system", content: "translate" }, { role: "user", content: "hello" }]
      })
      expect(completion).toMatchObject({
        text: "bonjour",
        finishReason: "length",
        usage: { inputTokens: 12, outputTokens: 3 },
        model: "claude-test-1"
      })
      expect(completion.cost).toBeCloseTo((12 * 3 + 3 * 15) / 1_000_000)
      const request = server.requests[0]!
      expect(request.url).toMatch(/^\/v1\/messages/)
      expect(request.headers["x-api-key"]).toBe(SECRET)
      expect(request.body).toMatchObject({ model: "claude-test", max_tokens: 64, system: [{ text: "translate" }] })

      // an auth failure maps to our error, with the key scrubbed from the detail
      server.setFallback(() => ({
        status: 401,
        body: { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${SECRET}` } }
      }))
      const error = yield* Effect.flip(model.complete("q"))
      expect(error).toMatchObject({ _tag: "LlmAuthenticationError", status: 401, model: "claude-test" })
      expect(JSON.stringify(error)).not.toContain(SECRET)
      expect(error.message).toContain("[redacted]")
    }))

  it.scopedLive("anthropic: a refused connection is a transport error with its system code, unrecoverable after retries", () =>
    Effect.gen(function*() {
      // a port nothing listens on: bind one, note it, close it
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const probe = Net.createServer()
          probe.listen(0, "127.0.0.1", () => {
            const { port } = probe.address() as Net.AddressInfo
            probe.close(() => resolve(port))
          })
        })
      )
      const model = yield* ModelString.make("anthropic:claude-test", {
        env: { ANTHROPIC_API_KEY: SECRET, ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` },
        maxRetries: 1,
        retryBaseDelay: "1 millis"
      })
      const error = yield* Effect.flip(model.complete("q"))
      expect(error).toMatchObject({
        _tag: "LlmTransportError",
        model: "claude-test",
        endpoint: `127.0.0.1:${port}`,
        code: "ECONNREFUSED"
      })
      const stop = LanguageModel.unrecoverable(error, "reflection")
      expect(Option.map(stop, (e) => e.message)).toEqual(
        Option.some(`the reflection model "claude-test" at 127.0.0.1:${port} is unreachable: connection refused`)
      )
    }))

  it.scopedLive("layers provide instrumented reflection and task models", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const text = `openai-compatible:${server.baseURL}#m`
      const { reflection, task } = yield* Effect.all({ reflection: ReflectionModel, task: TaskModel }).pipe(
        Effect.provide(Layer.mergeAll(
          ModelString.layerReflection(text, { env: {} }),
          ModelString.layerTask(text, { env: {} })
        ))
      )
      expect(Telemetry.isInstrumented(reflection)).toBe(true)
      expect(Telemetry.isInstrumented(task)).toBe(true)
      expect((yield* task.complete("q")).text).toBe("ok")
      const error = yield* Effect.flip(Layer.build(ModelString.layerTask("nope:m")))
      expect(error).toMatchObject({ field: "taskModel" })
    }))
})

describe("ModelString.forRole", () => {
  it.scopedLive("plain names run on the OpenAI API or the given server; model strings go through make", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const plain = yield* ModelString.forRole("task", { model: "qwen2.5:7b", baseUrl: server.baseURL, temperature: 0 }, {
        env: {}
      })
      expect(Telemetry.isInstrumented(plain)).toBe(true)
      yield* plain.complete("q")
      expect(server.requests[0]!.body).toMatchObject({ model: "qwen2.5:7b", temperature: 0 })
      expect(server.requests[0]!.headers.authorization).toBe("Bearer unused")

      const fromEnv = yield* ModelString.forRole("reflection", { model: "gpt-4.1" }, {
        env: { OPENAI_API_KEY: "sk-env-123456", OPENAI_BASE_URL: server.baseURL }
      })
      yield* fromEnv.complete("q")
      expect(server.requests[1]!.headers.authorization).toBe("Bearer sk-env-123456")

      const viaString = yield* ModelString.forRole("task", {
        model: `openai-compatible:${server.baseURL}#served`,
        maxOutputTokens: 32
      }, { env: {} })
      yield* viaString.complete("q")
      expect(server.requests[2]!.body).toMatchObject({ model: "served", max_completion_tokens: 32 })
    }))

  it.effect("errors name the role's field", () =>
    Effect.gen(function*() {
      const noKey = yield* Effect.flip(ModelString.forRole("reflection", { model: "gpt-4.1" }, { env: {} }))
      expect(noKey.message).toBe(
        "Invalid configuration \"reflectionModel\": OPENAI_API_KEY is not set: \"gpt-4.1\" runs on the OpenAI API, " +
          "which needs a key (or give a base URL for a local server, or a model string such as anthropic:gpt-4.1)"
      )
      const both = yield* Effect.flip(
        ModelString.forRole("task", { model: "anthropic:claude-x", baseUrl: "http://127.0.0.1:1/v1" }, { env: {} })
      )
      expect(both.field).toBe("taskModel.baseUrl")
      const missing = yield* Effect.flip(ModelString.forRole("task", { model: "google:gemini" }, {
        env: { GEMINI_API_KEY: "g-key-123456" },
        importer: (s) => Promise.reject(missingModule(s))
      }))
      expect(missing.message).toContain("taskModel\": install @effect/ai-google to use google: models")
      const badTemperature = yield* Effect.flip(
        ModelString.forRole("task", { model: "m", baseUrl: "http://127.0.0.1:1/v1", temperature: 7 }, { env: {} })
      )
      expect(badTemperature.field).toBe("taskModel.temperature")
    }))

  it.effect("a name:model prefix on the OpenAI API is an unknown provider; on another server a model name", () =>
    Effect.gen(function*() {
      const unknown = yield* Effect.flip(ModelString.forRole("task", { model: "mistral:large" }, { env: { OPENAI_API_KEY: "k" } }))
      expect(unknown.field).toBe("taskModel")
      expect(unknown.detail).toContain(`unknown provider "mistral" in "mistral:large"`)
      // fine-tuned OpenAI models are named ft:...
      const fineTuned = yield* ModelString.forRole("task", { model: "ft:gpt-4o-mini:org::abc" }, { env: { OPENAI_API_KEY: "k" } })
      expect(Telemetry.isInstrumented(fineTuned)).toBe(true)
      const local = yield* ModelString.forRole("task", { model: "mistral:7b" }, { env: { OPENAI_BASE_URL: "http://127.0.0.1:1/v1" } })
      expect(Telemetry.isInstrumented(local)).toBe(true)
    }))
})
