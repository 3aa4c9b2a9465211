/**
 * The key test: a hostile server echoes the API key in every way it can
 * (200, 401, 429 and 503 bodies, JSON-escaped, split across two retried
 * failures, in the answer's text and model field), and on every provider
 * path (the OpenAI layer; the model strings openai:, openai-compatible:,
 * google: and anthropic: through the CLI; the @effect/ai OpenAI and
 * Anthropic layers wired as docs/models.md shows; the AI SDK's `@ai-sdk/openai`
 * through `AiSdkLanguageModel`) a whole run at log level
 * `all`, with OpenTelemetry spans going to an in-memory exporter, leaves
 * the key nowhere: not in stdout, stderr, log lines and their annotations,
 * spans and their events, the run's events, the run folder, the report,
 * the errors, or the requests sent to the servers (beyond the header that
 * carries it).
 *
 * Each path has its own key, and the process-wide secret registry is
 * cleared before each: a path that failed to register its key would leak.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { OpenAiClient, OpenAiLanguageModel as AiOpenAi } from "@effect/ai-openai"
import { NodeSdk } from "@effect/opentelemetry"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Cause, Config, ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Redacted } from "effect"
import * as path from "node:path"
import * as AiLanguageModel from "../src/AiLanguageModel.js"
import * as AiSdkLanguageModel from "../src/AiSdkLanguageModel.js"
import * as Cli from "../src/Cli.js"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import * as Gepa from "../src/Gepa.js"
import * as Metric from "../src/Metric.js"
import * as OpenAiLanguageModel from "../src/OpenAiLanguageModel.js"
import * as LanguageModel from "../src/LanguageModel.js"
import { scrubber } from "../src/LanguageModel.js"
import * as Report from "../src/Report.js"
import * as Secrets from "../src/Secrets.js"
import * as Hostile from "./fixtures/hostile.js"
import * as FakeServer from "./fixtures/openaiServer.js"
import { tmpDir } from "./fixtures/tmp.js"

interface Example {
  readonly q: string
  readonly a: string
}

const trainset: ReadonlyArray<Example> = ["alpha", "beta", "gamma", "delta"].map((q) => ({ q, a: q.toUpperCase() }))

/** Everything a run lets out, as text. */
class Captured {
  readonly texts: Array<{ readonly where: string; readonly text: string }> = []
  add(where: string, text: string) {
    this.texts.push({ where, text })
  }
  leaks(key: { readonly key: string; readonly core: string }): ReadonlyArray<string> {
    return this.texts.flatMap(({ text, where }) => Hostile.leaksIn(text, key).map((l) => `${where}: ${l}`))
  }
  has(where: string, pattern: RegExp): boolean {
    return this.texts.some((t) => t.where.startsWith(where) && pattern.test(t.text))
  }
}

/** Every log line, in the three renderings a collector may use (annotations included). */
const capturingLogger = (captured: Captured) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make((options) => {
      captured.add("log (json)", Logger.jsonLogger.log(options))
      captured.add("log (logfmt)", Logger.logfmtLogger.log(options))
      captured.add("log (text)", Logger.stringLogger.log(options))
    })
  )

const spanText = (span: ReadableSpan): string =>
  JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    events: span.events.map((e) => ({ name: e.name, attributes: e.attributes })),
    status: span.status,
    links: span.links
  })

/** An OTel SDK whose spans stay in memory; read them before the layer closes. */
const otel = () => {
  const exporter = new InMemorySpanExporter()
  const layer = NodeSdk.layer(() => ({
    resource: { serviceName: "gepa-secrets-test" },
    spanProcessor: new SimpleSpanProcessor(exporter)
  }))
  return { exporter, layer }
}

const collectSpans = (captured: Captured, exporter: InMemorySpanExporter) =>
  Effect.sync(() => {
    for (const span of exporter.getFinishedSpans()) captured.add(`span ${span.name}`, spanText(span))
    return exporter.getFinishedSpans()
  })

const collectServer = (captured: Captured, server: FakeServer.FakeOpenAi) => {
  for (const request of server.requests) captured.add("request", Hostile.requestText(request))
}

const collectRunDir = (captured: Captured, dir: string) => {
  for (const file of Hostile.filesUnder(dir)) captured.add(`run folder ${file.name}`, file.text)
}

const expectNoLeak = (captured: Captured, key: { readonly key: string; readonly core: string }) => {
  expect(captured.texts.length).toBeGreaterThan(0)
  expect(captured.leaks(key)).toEqual([])
}

// ---------------------------------------------------------------------------
// the scrub itself
// ---------------------------------------------------------------------------

// keys whose every 8 characters mix letters and digits, as real keys do
const keyArb = fc.array(
  fc.tuple(fc.constantFrom(..."abcdefghijKLMNOPQRST"), fc.constantFrom(..."0123456789")),
  { minLength: 8, maxLength: 30 }
).map((pairs) => pairs.map(([a, b]) => a + b).join(""))

describe("the scrub", () => {
  it("a key split in two, each half among other text, leaves neither half", () => {
    fc.assert(
      fc.property(keyArb, fc.nat(), fc.string(), fc.string(), fc.string(), (key, at, a, b, c) => {
        const cut = fragmentCut(key, at)
        const scrub = scrubber(Redacted.make(key))
        const out = scrub(`${a}${key.slice(0, cut)}${b}${key.slice(cut)}${c}`)
        expect(out.includes(key.slice(0, cut))).toBe(false)
        expect(out.includes(key.slice(cut))).toBe(false)
      })
    )
  })

  it("the forms a server echoes: JSON-escaped once and twice, with \\/, URL-encoded", () => {
    const key = `sk-live/"quote"+plus=9f8e7d6c5b4a3210`
    const scrub = scrubber(Redacted.make(key))
    const once = JSON.stringify(key).slice(1, -1)
    for (const form of [key, once, JSON.stringify(once).slice(1, -1), once.replace(/\//g, "\\/"), encodeURIComponent(key)]) {
      expect(scrub(`before ${form} after`)).toBe("before [redacted] after")
    }
    // words are not key pieces: a key holding "anthropic" leaves the word alone
    expect(scrubber(Redacted.make("anthropic-Zq81-Xy72-Wv63"))("the anthropic provider")).toBe("the anthropic provider")
  })

  it("the registry: placeholders are not registered, log annotations are scrubbed deeply", () => {
    Secrets.unsafeClear()
    Secrets.registerSync(Redacted.make("unused"), Redacted.make("EMPTY"))
    expect(Secrets.scrub("unused EMPTY")).toBe("unused EMPTY")
    Secrets.registerSync(Redacted.make("sk-registry-Aa11Bb22Cc33Dd44"))
    expect(Secrets.scrub("key sk-registry-Aa11Bb22Cc33Dd44 here")).toBe("key [redacted] here")
    expect(Secrets.scrubUnknown({ nested: ["x sk-registry-Aa11Bb22Cc33Dd44"], n: 1 })).toEqual({ nested: ["x [redacted]"], n: 1 })
    Secrets.unsafeClear()
  })
})

describe("a key an application registers", () => {
  it.effect("is scrubbed from its own adapter's errors: events, the reflection prompt", () =>
    Effect.gen(function*() {
      Secrets.unsafeClear()
      const key = Hostile.makeKey("app")
      yield* Secrets.register(Redacted.make(key.key))
      const prompts: Array<string> = []
      const task = LanguageModel.fromPromise(() => Promise.reject(new Error(`upstream rejected ${key.key}`)), { model: "app-task" })
      const reflection = LanguageModel.fromFunction((prompt) => {
        prompts.push(LanguageModel.promptText(prompt))
        return "```\nAnswer.\n```"
      })
      const adapter = yield* DefaultAdapter.make<Example>({ model: task, input: (e) => e.q, metric: Metric.exactMatch<Example>((e) => e.a) })
      const events: Array<string> = []
      const result = yield* Effect.either(Gepa.optimize({
        seedCandidate: { system_prompt: "Answer." },
        trainset,
        adapter,
        reflectionModel: reflection,
        maxMetricCalls: 12,
        minibatchSize: 2,
        onEvent: (e) => void events.push(JSON.stringify(e))
      }))
      expect(events.some((e) => e.includes("upstream rejected [redacted]"))).toBe(true)
      const all = [...events, ...prompts, JSON.stringify(result)].join("\n")
      expect(Hostile.leaksIn(all, key)).toEqual([])
      Secrets.unsafeClear()
    }))
})

/** a cut that leaves at least 8 characters on each side */
const fragmentCut = (key: string, at: number) => 8 + (at % (key.length - 15))

// ---------------------------------------------------------------------------
// library paths: a model layer, the DefaultAdapter, Gepa.optimize
// ---------------------------------------------------------------------------

type Models = Layer.Layer<import("../src/LanguageModel.js").ReflectionModel | import("../src/LanguageModel.js").TaskModel, unknown>

const libraryRun = (options: {
  readonly captured: Captured
  readonly models: Models
  readonly config: Record<string, string>
  readonly runDir: string
}) =>
  Effect.gen(function*() {
    const { captured } = options
    const { exporter, layer } = otel()
    const run = Effect.gen(function*() {
      const adapter = DefaultAdapter.layer<Example>({ input: (e) => e.q, metric: Metric.exactMatch<Example>((e) => e.a) })
      const exit = yield* Gepa.optimize({
        seedCandidate: { system_prompt: "Answer." },
        trainset,
        maxMetricCalls: 14,
        minibatchSize: 2,
        runDir: options.runDir,
        onEvent: (event) => void captured.add(`event ${event._tag}`, JSON.stringify(event))
      }).pipe(
        Effect.provide(Layer.merge(adapter.pipe(Layer.provideMerge(options.models)), options.models)),
        Effect.exit
      )
      const spans = yield* collectSpans(captured, exporter)
      return [exit, spans] as const
    }).pipe(
      Effect.provide(layer),
      Effect.provide(capturingLogger(captured)),
      Logger.withMinimumLogLevel(LogLevel.All),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(options.config))))
    )
    const [exit, spans] = yield* run
    if (Exit.isSuccess(exit)) {
      const { bestOutputs, state, ...result } = exit.value
      captured.add("report", Report.render({ result, trace: state.trace }))
      captured.add("result", JSON.stringify({ result, bestOutputs }))
    } else {
      captured.add("error", Cause.pretty(exit.cause))
      captured.add("error (json)", JSON.stringify(Cause.failures(exit.cause)))
    }
    collectRunDir(captured, options.runDir)
    return { exit, spans }
  })

interface LibraryPath {
  readonly name: string
  readonly format: Hostile.Format
  readonly models: (server: FakeServer.FakeOpenAi, key: string) => Models
  readonly config: (server: FakeServer.FakeOpenAi, key: string) => Record<string, string>
}

const libraryPaths: ReadonlyArray<LibraryPath> = [
  {
    name: "OpenAiLanguageModel layers",
    format: "chat",
    models: (server, key) => {
      const options = { apiKey: Redacted.make(key), baseURL: server.baseURL, retryBaseDelay: "1 millis", maxRetries: 4 } as const
      return Layer.merge(
        OpenAiLanguageModel.layerReflection({ ...options, model: "reflector" }),
        OpenAiLanguageModel.layerTask({ ...options, model: "tasker" })
      )
    },
    config: () => ({})
  },
  {
    name: "AI SDK models (@ai-sdk/openai, the key passed in code and given as secrets)",
    format: "chat",
    models: (server, key) => {
      const openai = createOpenAI({ baseURL: server.baseURL, apiKey: key })
      const options = { retryBaseDelay: "1 millis", maxRetries: 4, secrets: [Redacted.make(key)] } as const
      return Layer.merge(
        AiSdkLanguageModel.layerReflection(openai.chat("reflector"), options),
        AiSdkLanguageModel.layerTask(openai.chat("tasker"), options)
      )
    },
    config: () => ({})
  },
  {
    name: "@effect/ai OpenAI layers (README wiring, no secrets passed)",
    format: "responses",
    models: () => {
      const client = OpenAiClient.layerConfig({
        apiKey: Config.redacted("OPENAI_API_KEY"),
        apiUrl: Config.string("OPENAI_BASE_URL")
      }).pipe(Layer.provide(FetchHttpClient.layer))
      return Layer.merge(
        AiLanguageModel.layerReflection({ model: "gpt-reflector", retryBaseDelay: "1 millis" }).pipe(
          Layer.provide(AiOpenAi.model("gpt-reflector"))
        ),
        AiLanguageModel.layerTask({ model: "gpt-tasker", retryBaseDelay: "1 millis" }).pipe(Layer.provide(AiOpenAi.model("gpt-tasker")))
      ).pipe(Layer.provide(client))
    },
    config: (server, key) => ({ OPENAI_API_KEY: key, OPENAI_BASE_URL: server.baseURL })
  },
  {
    name: "@effect/ai Anthropic layers (README wiring, no secrets passed)",
    format: "anthropic",
    models: () => {
      const client = AnthropicClient.layerConfig({
        apiKey: Config.redacted("ANTHROPIC_API_KEY"),
        apiUrl: Config.string("ANTHROPIC_BASE_URL")
      }).pipe(Layer.provide(FetchHttpClient.layer))
      return Layer.merge(
        AiLanguageModel.layerReflection({ model: "claude-reflector", retryBaseDelay: "1 millis" }).pipe(
          Layer.provide(AnthropicLanguageModel.model("claude-reflector"))
        ),
        AiLanguageModel.layerTask({ model: "claude-tasker", retryBaseDelay: "1 millis" }).pipe(
          Layer.provide(AnthropicLanguageModel.model("claude-tasker"))
        )
      ).pipe(Layer.provide(client))
    },
    config: (server, key) => ({ ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.baseURL.replace(/\/v1$/, "") })
  }
]

describe("the API key never leaves the library (library paths)", () => {
  for (const p of libraryPaths) {
    it.scopedLive(`${p.name}: a whole run against a hostile server, then a 401 that echoes the key`, () =>
      Effect.gen(function*() {
        Secrets.unsafeClear()
        const key = Hostile.makeKey(p.format)
        const server = yield* FakeServer.make
        server.setFallback(Hostile.script(p.format, key.key))
        const captured = new Captured()
        const { exit, spans } = yield* libraryRun({
          captured,
          models: p.models(server, key.key),
          config: p.config(server, key.key),
          runDir: path.join(tmpDir("gepa-secrets-"), "run")
        })
        if (Exit.isFailure(exit)) expect.fail(Cause.pretty(exit.cause))
        // one span per model call, ours, carrying its retries; no provider span
        const calls = spans.filter((s) => s.name === "gepa.model")
        expect(calls.length).toBeGreaterThan(0)
        expect(spans.every((s) => s.name.startsWith("gepa.") || s.name.startsWith("Reflection."))).toBe(true)
        expect(calls.some((s) => s.attributes["gepa.model.role"] === "reflection" && s.attributes["gepa.model.retries"] === 2)).toBe(true)
        // the server did its worst: retried failures and answers, all echoing the key
        const reflections = server.requests.filter(Hostile.isReflection)
        expect(reflections.length).toBeGreaterThanOrEqual(3)
        expect(server.requests.length - reflections.length).toBeGreaterThan(trainset.length)
        // the key went where it belongs, and only there
        expect(server.requests.every((r) => (r.headers["authorization"] ?? r.headers["x-api-key"])?.includes(key.key))).toBe(true)
        // the echoes were seen and scrubbed (retry lines name the scrubbed errors)
        collectServer(captured, server)
        expectNoLeak(captured, key)
        expect(captured.has("log", /retrying model call/)).toBe(true)
        expect(captured.has("", /\[redacted\]/)).toBe(true)

        // a 401 that echoes the key stops the run with one line
        server.setFallback(() => Hostile.failure(p.format, 401, `invalid api key ${key.key} (${JSON.stringify(key.key)})`))
        const rejected = new Captured()
        const { exit: failed } = yield* libraryRun({
          captured: rejected,
          models: p.models(server, key.key),
          config: p.config(server, key.key),
          runDir: path.join(tmpDir("gepa-secrets-"), "run")
        })
        expect(Exit.isFailure(failed)).toBe(true)
        expect(rejected.has("error", /rejected the API key \(HTTP 401\)/)).toBe(true)
        collectServer(rejected, server)

        expectNoLeak(captured, key)
        expectNoLeak(rejected, key)
      }), 60_000)
  }
})

// ---------------------------------------------------------------------------
// model strings, through the CLI: stdout, stderr (JSON logs), run folder, report
// ---------------------------------------------------------------------------

interface CliPath {
  readonly name: string
  readonly format: Hostile.Format
  readonly taskModel: (server: FakeServer.FakeOpenAi) => string
  readonly reflectionModel: string
  readonly env: (server: FakeServer.FakeOpenAi, key: string) => Record<string, string>
}

const cliPaths: ReadonlyArray<CliPath> = [
  {
    name: "openai: and openai-compatible: model strings",
    format: "chat",
    taskModel: (server) => `openai-compatible:${server.baseURL}#tasker`,
    reflectionModel: "openai:gpt-reflector",
    env: (server, key) => ({ OPENAI_API_KEY: key, OPENAI_BASE_URL: server.baseURL })
  },
  {
    name: "google: model strings (Gemini's OpenAI-compatible endpoint)",
    format: "chat",
    taskModel: () => "google:gemini-tasker",
    reflectionModel: "google:gemini-reflector",
    env: (server, key) => ({ GEMINI_API_KEY: key, GEMINI_BASE_URL: server.baseURL })
  },
  {
    name: "anthropic: model strings",
    format: "anthropic",
    taskModel: () => "anthropic:claude-tasker",
    reflectionModel: "anthropic:claude-reflector",
    env: (server, key) => ({ ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.baseURL.replace(/\/v1$/, "") })
  }
]

const cli = (options: {
  readonly dir: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly captured: Captured
}) =>
  Effect.gen(function*() {
    const out: Array<string> = []
    const err: Array<string> = []
    const environment: Cli.Environment = {
      cwd: options.dir,
      stdout: (text) => out.push(text),
      stderr: (text) => err.push(text),
      // keys come from this map only, through a ConfigProvider
      makeModel: Cli.openAiModel(options.env)
    }
    const { exporter, layer } = otel()
    const code = yield* Cli.run(["node", "gepa", ...options.args], environment).pipe(
      Effect.tap(() => collectSpans(options.captured, exporter)),
      Effect.provide(layer)
    )
    options.captured.add(`stdout ${options.args[0]}`, out.join(""))
    options.captured.add(`stderr ${options.args[0]}`, err.join(""))
    return { code, out: out.join(""), err: err.join("") }
  })

describe("the API key never leaves the library (model strings through the CLI)", () => {
  for (const p of cliPaths) {
    it.scopedLive(`${p.name}: optimize at --log-level all --log-format json, report, then a 401`, () =>
      Effect.gen(function*() {
        Secrets.unsafeClear()
        const key = Hostile.makeKey(p.format)
        const server = yield* FakeServer.make
        server.setFallback(Hostile.script(p.format, key.key))
        const dir = tmpDir("gepa-secrets-cli-")
        const fs = yield* Effect.promise(() => import("node:fs"))
        fs.writeFileSync(path.join(dir, "train.jsonl"), trainset.map((e) => JSON.stringify({ input: e.q, expected: e.a })).join("\n"))
        const captured = new Captured()
        const common = [
          "--train",
          "train.jsonl",
          "--seed-prompt",
          "Answer.",
          "--task-model",
          p.taskModel(server),
          "--reflection-model",
          p.reflectionModel,
          "--max-metric-calls",
          "14",
          "--minibatch-size",
          "2",
          "--log-level",
          "all",
          "--log-format",
          "json"
        ]
        const optimized = yield* cli({ dir, args: ["optimize", ...common, "--run-dir", "run"], env: p.env(server, key.key), captured })
        expect(optimized.code, optimized.err).toBe(0)
        // one JSON object per line, with the run's annotations
        const lines = optimized.err.trim().split("\n").map((l) => JSON.parse(l) as { annotations: Record<string, unknown> })
        const annotated = lines.filter((l) => typeof l.annotations["iteration"] === "number")
        expect(annotated.length, optimized.err.slice(0, 2000)).toBeGreaterThan(0)
        expect(annotated.every((l) => String(l.annotations["run"]).endsWith("run"))).toBe(true)
        expect(server.requests.filter(Hostile.isReflection).length).toBeGreaterThanOrEqual(3)
        const report = yield* cli({ dir, args: ["report", "run"], env: p.env(server, key.key), captured })
        expect(report.code).toBe(0)
        collectRunDir(captured, path.join(dir, "run"))

        server.setFallback(() => Hostile.failure(p.format, 401, `invalid api key ${key.key}`))
        const rejected = yield* cli({ dir, args: ["optimize", ...common, "--run-dir", "run2"], env: p.env(server, key.key), captured })
        expect(rejected.code).toBe(1)
        expect(rejected.err).toMatch(/^gepa: the task model "[^"]+" at 127\.0\.0\.1:\d+ rejected the API key \(HTTP 401\)/m)
        collectRunDir(captured, path.join(dir, "run2"))
        collectServer(captured, server)
        expectNoLeak(captured, key)
      }), 60_000)
  }
})
