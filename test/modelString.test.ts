import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option } from "effect"
import * as Net from "node:net"
import { ConfigError } from "../src/Errors.js"
import * as LanguageModel from "../src/LanguageModel.js"
import { ReflectionModel, TaskModel } from "../src/LanguageModel.js"
import * as ModelString from "../src/ModelString.js"
import * as Telemetry from "../src/Telemetry.js"
import * as FakeServer from "./fixtures/openaiServer.js"

const SECRET = "sk-ant-SECRET-9876543210"

/** keys and base URLs as an app would give them: through a ConfigProvider */
const withConfig = (entries: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(entries))))

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
    // a server that needs no key says so
    expect(ModelString.parse("openai-compatible:http://localhost:11434/v1#llama3.2:3b#nokey")).toEqual(
      Either.right({ provider: "openai-compatible", model: "llama3.2:3b", baseURL: "http://localhost:11434/v1", noKey: true })
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
  it.scopedLive("openai-compatible#nokey reaches the named server with the named model, and sends no key", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.ok("pong", { usage: { prompt_tokens: 10, completion_tokens: 2 } }))
      const model = yield* ModelString.make(`openai-compatible:${server.baseURL}#local-model#nokey`, {
        price: { inputPerMillion: 1, outputPerMillion: 1 }
      }).pipe(withConfig({ OPENAI_API_KEY: "sk-not-for-this-server-123" }))
      const completion = yield* model.complete("ping")
      expect(completion.text).toBe("pong")
      expect(completion.cost).toBeCloseTo(12 / 1_000_000)
      expect(server.requests[0]!.url).toBe("/v1/chat/completions")
      expect((server.requests[0]!.body as { model: string }).model).toBe("local-model")
      expect(server.requests[0]!.headers.authorization).toBeUndefined()
      expect(JSON.stringify(server.requests[0])).not.toContain("sk-not-for-this-server")
    }))

  it.scopedLive("openai-compatible without #nokey needs a key: one line naming the variable", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const text = `openai-compatible:${server.baseURL}#local-model`
      const missing = yield* Effect.flip(ModelString.make(text, { field: "taskModel" }).pipe(withConfig({})))
      expect(missing.message).toBe(
        `Invalid configuration "taskModel": OPENAI_API_KEY is not set: ${text} needs an API key ` +
          `(for a server that needs none, end the string with #nokey)`
      )
      const model = yield* ModelString.make(text).pipe(withConfig({ OPENAI_API_KEY: "sk-compatible-123" }))
      yield* model.complete("q")
      expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-compatible-123")
    }))

  it.scopedLive("openai reads OPENAI_API_KEY and OPENAI_BASE_URL", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      const model = yield* ModelString.make("openai:gpt-4.1-mini").pipe(
        withConfig({ OPENAI_API_KEY: "sk-openai-123456", OPENAI_BASE_URL: server.baseURL })
      )
      yield* model.complete("q")
      expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-openai-123456")
      expect((server.requests[0]!.body as { model: string }).model).toBe("gpt-4.1-mini")
    }))

  it.effect("a missing key and invalid options are ConfigErrors naming the field", () =>
    Effect.gen(function*() {
      const noKey = yield* Effect.flip(ModelString.make("openai:gpt-4.1-mini", { field: "taskModel" }).pipe(withConfig({})))
      expect(noKey).toMatchObject({ field: "taskModel" })
      expect(noKey.detail).toBe("OPENAI_API_KEY is not set: openai:gpt-4.1-mini needs an API key")
      const noAnthropicKey = yield* Effect.flip(ModelString.make("anthropic:claude-x").pipe(withConfig({})))
      expect(noAnthropicKey.detail).toBe("ANTHROPIC_API_KEY is not set: anthropic:claude-x needs an API key")
      const noGeminiKey = yield* Effect.flip(ModelString.make("google:gemini-2.5-flash").pipe(withConfig({})))
      expect(noGeminiKey.detail).toBe("GEMINI_API_KEY or GOOGLE_API_KEY is not set: google:gemini-2.5-flash needs an API key")
      // the deprecated env option is read instead of the ambient provider
      const viaEnv = yield* Effect.flip(ModelString.make("openai:m", { env: {} }).pipe(withConfig({ OPENAI_API_KEY: "sk-ambient-1234" })))
      expect(viaEnv.detail).toContain("OPENAI_API_KEY is not set")
      const badTemperature = yield* Effect.flip(
        ModelString.make("openai-compatible:http://127.0.0.1:1/v1#m#nokey", { temperature: 9, field: "taskModel" })
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
      const anthropic = yield* Effect.flip(
        ModelString.make("anthropic:claude-x", { importer, field: "reflectionModel" }).pipe(withConfig({ ANTHROPIC_API_KEY: SECRET }))
      )
      expect(anthropic.message).toBe(
        "Invalid configuration \"reflectionModel\": install @effect/ai-anthropic to use anthropic: models " +
          "(npm install @effect/ai@^0.37 @effect/ai-anthropic)"
      )
      expect(requested).toEqual(["@effect/ai-anthropic"])
      // a package of the wrong shape is named too
      const wrong = yield* Effect.flip(
        ModelString.make("anthropic:claude-x", { importer: () => Promise.resolve({}) }).pipe(withConfig({ ANTHROPIC_API_KEY: SECRET }))
      )
      expect(wrong.detail).toContain("@effect/ai-anthropic has no AnthropicClient.layer or AnthropicLanguageModel.model")
    }))

  it.scopedLive("google: Gemini's OpenAI-compatible endpoint, key from GEMINI_API_KEY or GOOGLE_API_KEY, no package needed", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.make
      server.setFallback(() => FakeServer.ok("hallo", { model: "gemini-2.5-flash" }))
      const importer = (specifier: string) => Promise.reject(missingModule(specifier))
      const model = yield* ModelString.make("google:gemini-2.5-flash", { importer, temperature: 0.5, maxOutputTokens: 256 }).pipe(
        withConfig({ GEMINI_API_KEY: "g-key-1234567890abcdef", GEMINI_BASE_URL: server.baseURL })
      )
      const completion = yield* model.complete("hi")
      expect(completion).toMatchObject({ text: "hallo", model: "gemini-2.5-flash" })
      const request = server.requests[0]!
      expect(request.url).toBe("/v1/chat/completions")
      expect(request.headers.authorization).toBe("Bearer g-key-1234567890abcdef")
      expect(request.body).toMatchObject({ model: "gemini-2.5-flash", temperature: 0.5, max_completion_tokens: 256 })
      // GOOGLE_API_KEY is the fallback
      const viaGoogle = yield* ModelString.make("google:gemini-2.5-pro").pipe(
        withConfig({ GOOGLE_API_KEY: "google-key-0987654321", GEMINI_BASE_URL: server.baseURL })
      )
      yield* viaGoogle.complete("hi")
      expect(server.requests[1]!.headers.authorization).toBe("Bearer google-key-0987654321")
      expect(ModelString.geminiBaseURL).toBe("https://generativelanguage.googleapis.com/v1beta/openai")
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
        maxOutputTokens: 64,
        price: { inputPerMillion: 3, outputPerMillion: 15 }
      }).pipe(withConfig({ ANTHROPIC_API_KEY: SECRET, ANTHROPIC_BASE_URL: server.baseURL.replace(/\/v1$/, "") }))
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
      const text = `openai-compatible:${server.baseURL}#m#nokey`
      const { reflection, task } = yield* Effect.all({ reflection: ReflectionModel, task: TaskModel }).pipe(
        Effect.provide(Layer.mergeAll(
          ModelString.layerReflection(text),
          ModelString.layerTask(text)
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
      const plain = yield* ModelString.forRole("task", { model: "qwen2.5:7b#nokey", baseUrl: server.baseURL, temperature: 0 }).pipe(
        withConfig({})
      )
      expect(Telemetry.isInstrumented(plain)).toBe(true)
      yield* plain.complete("q")
      expect(server.requests[0]!.body).toMatchObject({ model: "qwen2.5:7b", temperature: 0 })
      expect(server.requests[0]!.headers.authorization).toBeUndefined()

      const fromEnv = yield* ModelString.forRole("reflection", { model: "gpt-4.1" }).pipe(
        withConfig({ OPENAI_API_KEY: "sk-env-123456", OPENAI_BASE_URL: server.baseURL })
      )
      yield* fromEnv.complete("q")
      expect(server.requests[1]!.headers.authorization).toBe("Bearer sk-env-123456")

      const viaString = yield* ModelString.forRole("task", {
        model: `openai-compatible:${server.baseURL}#served#nokey`,
        maxOutputTokens: 32
      })
      yield* viaString.complete("q")
      expect(server.requests[2]!.body).toMatchObject({ model: "served", max_completion_tokens: 32 })
    }))

  it.effect("errors name the role's field", () =>
    Effect.gen(function*() {
      const noKey = yield* Effect.flip(ModelString.forRole("reflection", { model: "gpt-4.1" }).pipe(withConfig({})))
      expect(noKey.message).toBe(
        "Invalid configuration \"reflectionModel\": OPENAI_API_KEY is not set: \"gpt-4.1\" runs on the OpenAI API, " +
          "which needs an API key (or give a base URL for a local server, or a model string such as anthropic:gpt-4.1)"
      )
      const local = yield* Effect.flip(ModelString.forRole("task", { model: "qwen", baseUrl: "http://127.0.0.1:1/v1" }).pipe(withConfig({})))
      expect(local.detail).toBe(
        `OPENAI_API_KEY is not set: "qwen" at http://127.0.0.1:1/v1 needs an API key (for a server that needs none, name the model "qwen#nokey")`
      )
      const both = yield* Effect.flip(
        ModelString.forRole("task", { model: "anthropic:claude-x", baseUrl: "http://127.0.0.1:1/v1" }, { env: {} })
      )
      expect(both.field).toBe("taskModel.baseUrl")
      const missing = yield* Effect.flip(
        ModelString.forRole("task", { model: "anthropic:claude" }, {
          importer: (s) => Promise.reject(missingModule(s))
        }).pipe(withConfig({ ANTHROPIC_API_KEY: SECRET }))
      )
      expect(missing.message).toContain("taskModel\": install @effect/ai-anthropic to use anthropic: models")
      const badTemperature = yield* Effect.flip(
        ModelString.forRole("task", { model: "m#nokey", baseUrl: "http://127.0.0.1:1/v1", temperature: 7 })
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
      const local = yield* ModelString.forRole("task", { model: "mistral:7b#nokey" }).pipe(
        withConfig({ OPENAI_BASE_URL: "http://127.0.0.1:1/v1" })
      )
      expect(Telemetry.isInstrumented(local)).toBe(true)
    }))
})
