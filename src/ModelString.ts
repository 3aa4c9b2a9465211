/**
 * Models named by one string, for the CLI and for config files:
 *
 * - `openai:gpt-4.1-mini`: the OpenAI API through `OpenAiLanguageModel`
 *   (key from `OPENAI_API_KEY`, base URL from `OPENAI_BASE_URL` when set)
 * - `openai-compatible:http://127.0.0.1:8000/v1#my-model`: any server that
 *   speaks the chat-completions API (vLLM, Ollama, LiteLLM); the key from
 *   `OPENAI_API_KEY` when set, else none
 * - `anthropic:claude-sonnet-4-5`: through `@effect/ai-anthropic` (key from
 *   `ANTHROPIC_API_KEY`, base URL from `ANTHROPIC_BASE_URL` when set)
 * - `google:gemini-2.5-flash`: through `@effect/ai-google` (key from
 *   `GEMINI_API_KEY` or `GOOGLE_API_KEY`)
 *
 * The `@effect/ai` providers are optional peer dependencies, loaded with a
 * dynamic import only when a string names them; a missing package is one
 * `ConfigError` saying what to install.
 *
 * @since 0.2.0
 */
import type * as AiLm from "@effect/ai/LanguageModel"
import { Duration, Effect, Either, Layer, Redacted } from "effect"
import { ConfigError } from "./Errors.js"
import { type LanguageModel, ReflectionModel, TaskModel } from "./LanguageModel.js"
import * as OpenAiLanguageModel from "./OpenAiLanguageModel.js"
import { instrumentModel } from "./Telemetry.js"

/**
 * The providers a model string may name.
 *
 * @since 0.2.0
 * @category constants
 */
export const providers = ["openai", "openai-compatible", "anthropic", "google"] as const

/**
 * @since 0.2.0
 * @category models
 */
export type Provider = typeof providers[number]

/**
 * A parsed model string.
 *
 * @since 0.2.0
 * @category models
 */
export interface Spec {
  readonly provider: Provider
  readonly model: string
  /** the server of an `openai-compatible` model */
  readonly baseURL?: string | undefined
}

/**
 * Options applied to the model a string names.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** the option or flag the string came from, named in errors; default "model" */
  readonly field?: string | undefined
  /** where API keys and base URLs are read; default `process.env` */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly temperature?: number | undefined
  readonly maxOutputTokens?: number | undefined
  /** per attempt; default 120 seconds */
  readonly timeout?: Duration.DurationInput | undefined
  /** retries of transient failures; default 4 */
  readonly maxRetries?: number | undefined
  readonly retryBaseDelay?: Duration.DurationInput | undefined
  readonly maxRetryDelay?: Duration.DurationInput | undefined
  readonly maxConcurrency?: number | undefined
  readonly rateLimit?: OpenAiLanguageModel.RateLimit | undefined
  readonly price?: OpenAiLanguageModel.Price | undefined
  /**
   * loads a provider package by name; default the runtime's dynamic
   * `import`. Tests inject one.
   */
  readonly importer?: ((specifier: string) => Promise<unknown>) | undefined
}

const fail = (field: string, detail: string) => Either.left(new ConfigError({ field, detail }))

/**
 * Parses a model string. Fails with a `ConfigError` naming `field` for a
 * string without a provider, an unknown provider, an empty model name or an
 * `openai-compatible` string without a valid URL and `#model`.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parse = (text: string, field = "model"): Either.Either<Spec, ConfigError> => {
  if (typeof text !== "string" || text.trim() === "") return fail(field, "a model string is required, e.g. openai:gpt-4.1-mini")
  const trimmed = text.trim()
  const colon = trimmed.indexOf(":")
  if (colon <= 0) {
    return fail(field, `"${trimmed}" names no provider; write provider:model, e.g. openai:${trimmed} (providers: ${providers.join(", ")})`)
  }
  const provider = trimmed.slice(0, colon).toLowerCase()
  const rest = trimmed.slice(colon + 1).trim()
  if (!(providers as ReadonlyArray<string>).includes(provider)) {
    return fail(field, `unknown provider "${provider}" in "${trimmed}" (providers: ${providers.join(", ")})`)
  }
  if (provider === "openai-compatible") {
    const hash = rest.lastIndexOf("#")
    const url = hash < 0 ? rest : rest.slice(0, hash)
    const model = hash < 0 ? "" : rest.slice(hash + 1).trim()
    const parsed = URL.canParse(url) ? new URL(url) : undefined
    if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      return fail(field, `"${trimmed}": expected openai-compatible:<http(s) URL>#<model>, e.g. openai-compatible:http://127.0.0.1:8000/v1#my-model`)
    }
    if (model === "") return fail(field, `"${trimmed}": the model name after "#" is missing`)
    return Either.right({ provider, model, baseURL: url })
  }
  if (rest === "") return fail(field, `"${trimmed}": the model name after "${provider}:" is missing`)
  return Either.right({ provider: provider as Provider, model: rest })
}

/**
 * Whether `text` starts with a known provider prefix (`openai:`,
 * `openai-compatible:`, `anthropic:`, `google:`). A caller that also
 * accepts plain model names (such as `gpt-4.1-mini`, or Ollama's
 * `qwen2.5:7b`) uses this to tell the two apart.
 *
 * @since 0.2.0
 * @category parsing
 */
export const isModelString = (text: string): boolean => {
  const colon = text.indexOf(":")
  return colon > 0 && (providers as ReadonlyArray<string>).includes(text.slice(0, colon).trim().toLowerCase())
}

const defaultImporter = (specifier: string): Promise<unknown> => import(specifier)

const packageOf: Record<"anthropic" | "google", string> = {
  anthropic: "@effect/ai-anthropic",
  google: "@effect/ai-google"
}

const isMissing = (error: unknown): boolean =>
  typeof error === "object" && error !== null &&
  ((error as { readonly code?: unknown }).code === "ERR_MODULE_NOT_FOUND" ||
    (error as { readonly code?: unknown }).code === "MODULE_NOT_FOUND")

const load = (field: string, provider: "anthropic" | "google", specifier: string, importer: (s: string) => Promise<unknown>) =>
  Effect.tryPromise({
    try: () => importer(specifier),
    catch: (error) =>
      new ConfigError({
        field,
        detail: isMissing(error)
          ? `install ${packageOf[provider]} to use ${provider}: models (npm install @effect/ai@^0.37 ${packageOf[provider]})`
          : `could not load ${specifier} for ${provider}: models: ${error instanceof Error ? error.message : String(error)}`
      })
  })

type AnyLayer = Layer.Layer<unknown, unknown, unknown>

interface ProviderModule {
  readonly client: (options: { readonly apiKey: Redacted.Redacted<string>; readonly apiUrl?: string }) => AnyLayer
  readonly model: (name: string, config: Record<string, unknown>) => AnyLayer
}

const providerModule = (
  field: string,
  provider: "anthropic" | "google",
  mod: unknown
): Effect.Effect<ProviderModule, ConfigError> => {
  const [clientName, modelName] = provider === "anthropic"
    ? ["AnthropicClient", "AnthropicLanguageModel"]
    : ["GoogleClient", "GoogleLanguageModel"]
  const m = mod as Record<string, { readonly layer?: unknown; readonly model?: unknown } | undefined>
  const layer = m[clientName]?.layer
  const model = m[modelName]?.model
  if (typeof layer !== "function" || typeof model !== "function") {
    return Effect.fail(
      new ConfigError({
        field,
        detail: `${packageOf[provider]} has no ${clientName}.layer or ${modelName}.model; install a version matching @effect/ai 0.37`
      })
    )
  }
  return Effect.succeed({ client: layer as ProviderModule["client"], model: model as ProviderModule["model"] })
}

const keyFrom = (env: Readonly<Record<string, string | undefined>>, names: ReadonlyArray<string>) => {
  for (const name of names) {
    const value = env[name]?.trim()
    if (value !== undefined && value !== "") return Redacted.make(value)
  }
  return undefined
}

const policyOf = (options: Options) => ({
  timeout: options.timeout,
  maxRetries: options.maxRetries,
  retryBaseDelay: options.retryBaseDelay,
  maxRetryDelay: options.maxRetryDelay,
  maxConcurrency: options.maxConcurrency,
  rateLimit: options.rateLimit,
  price: options.price
})

const viaEffectAi = (spec: Spec & { readonly provider: "anthropic" | "google" }, options: Options, field: string) =>
  Effect.gen(function*() {
    const env = options.env ?? process.env
    const importer = options.importer ?? defaultImporter
    const keyNames = spec.provider === "anthropic" ? ["ANTHROPIC_API_KEY"] : ["GEMINI_API_KEY", "GOOGLE_API_KEY"]
    const apiKey = keyFrom(env, keyNames)
    if (apiKey === undefined) {
      return yield* Effect.fail(
        new ConfigError({ field, detail: `${keyNames.join(" or ")} is not set: ${spec.provider}:${spec.model} needs an API key` })
      )
    }
    const provider = yield* providerModule(field, spec.provider, yield* load(field, spec.provider, packageOf[spec.provider], importer))
    // loaded only now: the module imports @effect/ai, an optional peer
    const Ai = yield* Effect.tryPromise({
      try: () => import("./AiLanguageModel.js"),
      catch: (error) =>
        new ConfigError({
          field,
          detail: isMissing(error)
            ? `install @effect/ai to use ${spec.provider}: models (npm install @effect/ai@^0.37 ${packageOf[spec.provider]})`
            : `could not load effect-gepa/AiLanguageModel: ${error instanceof Error ? error.message : String(error)}`
        })
    })
    const Fetch = yield* Effect.promise(() => import("@effect/platform/FetchHttpClient"))
    const baseURL = spec.provider === "anthropic" ? env["ANTHROPIC_BASE_URL"]?.trim() : undefined
    const config: Record<string, unknown> = spec.provider === "anthropic"
      ? {
        ...(options.maxOutputTokens === undefined ? {} : { max_tokens: options.maxOutputTokens }),
        ...(options.temperature === undefined ? {} : { temperature: options.temperature })
      }
      : {
        generationConfig: {
          ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
          ...(options.temperature === undefined ? {} : { temperature: options.temperature })
        }
      }
    const modelLayer = provider.model(spec.model, config).pipe(
      Layer.provide(provider.client({ apiKey, ...(baseURL ? { apiUrl: baseURL } : {}) })),
      Layer.provide(Fetch.layer)
    ) as Layer.Layer<AiLm.LanguageModel>
    // the provider layers hold no resources (no finalizers), so the model
    // stays usable after this local build
    return yield* Ai.make({ ...policyOf(options), model: spec.model, secrets: [apiKey] }).pipe(
      Effect.provide(modelLayer),
      Effect.mapError((e) => new ConfigError({ field: `${field}.${e.field}`, detail: e.detail }))
    )
  })

/**
 * The model a string names. Every failure is a `ConfigError` naming
 * `options.field`: a malformed string, an unknown provider, a missing API
 * key, a provider package that is not installed, an invalid option.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (text: string, options: Options = {}): Effect.Effect<LanguageModel, ConfigError> =>
  Effect.gen(function*() {
    const field = options.field ?? "model"
    const spec = yield* parse(text, field)
    const env = options.env ?? process.env
    switch (spec.provider) {
      case "openai":
      case "openai-compatible": {
        const key = keyFrom(env, ["OPENAI_API_KEY"])
        if (spec.provider === "openai" && key === undefined) {
          return yield* Effect.fail(
            new ConfigError({ field, detail: `OPENAI_API_KEY is not set: openai:${spec.model} needs an API key` })
          )
        }
        const baseURL = spec.provider === "openai" ? env["OPENAI_BASE_URL"]?.trim() || undefined : spec.baseURL
        return yield* OpenAiLanguageModel.make({
          ...policyOf(options),
          model: spec.model,
          // local servers (vLLM, Ollama) accept any key
          apiKey: key ?? Redacted.make("unused"),
          baseURL,
          temperature: options.temperature,
          maxOutputTokens: options.maxOutputTokens
        }).pipe(Effect.mapError((e) => new ConfigError({ field: `${field}.${e.field}`, detail: e.detail })))
      }
      case "anthropic":
      case "google":
        return yield* viaEffectAi({ ...spec, provider: spec.provider }, options, field)
    }
  })

const instrumented = (text: string, role: "reflection" | "task", options: Options) =>
  Effect.gen(function*() {
    const spec = yield* parse(text, options.field)
    const model = yield* make(text, options)
    return instrumentModel(model, { role, model: `${spec.provider}:${spec.model}` })
  })

/**
 * The model a string names as the `ReflectionModel`, instrumented (see
 * `Telemetry.instrumentModel`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerReflection = (text: string, options: Options = {}): Layer.Layer<ReflectionModel, ConfigError> =>
  Layer.effect(ReflectionModel, instrumented(text, "reflection", { field: "reflectionModel", ...options }))

/**
 * The model a string names as the `TaskModel`, instrumented (see
 * `Telemetry.instrumentModel`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerTask = (text: string, options: Options = {}): Layer.Layer<TaskModel, ConfigError> =>
  Layer.effect(TaskModel, instrumented(text, "task", { field: "taskModel", ...options }))

/**
 * A model as the CLI and config files describe it: a model string
 * (`anthropic:claude-sonnet-4-5`), or a plain model name for the OpenAI API
 * or, with `baseUrl`, for an OpenAI-compatible server (Ollama's
 * `qwen2.5:7b` is a plain name).
 *
 * @since 0.2.0
 * @category models
 */
export interface ModelSpec {
  readonly model: string
  /** for plain model names only; default `OPENAI_BASE_URL`, else the OpenAI API */
  readonly baseUrl?: string | undefined
  readonly temperature?: number | undefined
  readonly maxOutputTokens?: number | undefined
}

/**
 * The instrumented model of a role from a `ModelSpec`; errors name
 * `taskModel` or `reflectionModel`. A plain name runs on the OpenAI API
 * (key from `OPENAI_API_KEY`) unless `baseUrl` or `OPENAI_BASE_URL` names
 * another server, where the key is optional.
 *
 * @since 0.2.0
 * @category constructors
 */
export const forRole = (
  role: "task" | "reflection",
  spec: ModelSpec,
  options: Omit<Options, "field" | "temperature" | "maxOutputTokens"> = {}
): Effect.Effect<LanguageModel, ConfigError> =>
  Effect.gen(function*() {
    const field = `${role}Model`
    const env = options.env ?? process.env
    const tuning = { temperature: spec.temperature, maxOutputTokens: spec.maxOutputTokens }
    if (typeof spec.model !== "string" || spec.model.trim() === "") {
      return yield* Effect.fail(new ConfigError({ field, detail: "a model name or model string is required" }))
    }
    const text = spec.model.trim()
    if (isModelString(text)) {
      if (spec.baseUrl !== undefined) {
        return yield* Effect.fail(
          new ConfigError({
            field: `${field}.baseUrl`,
            detail: `applies to plain model names only; write openai-compatible:<URL>#<model> instead of "${text}" with a base URL`
          })
        )
      }
      const parsed = yield* parse(text, field)
      const model = yield* make(text, { ...options, ...tuning, field })
      return instrumentModel(model, { role, model: `${parsed.provider}:${parsed.model}` })
    }
    const baseURL = spec.baseUrl ?? (env["OPENAI_BASE_URL"]?.trim() || undefined)
    // On the OpenAI API a `name:` prefix is a provider we do not know (its
    // only own prefix is `ft:`); on another server it may be the model's name
    // (Ollama's `mistral:7b`), so it passes there.
    const prefix = /^([A-Za-z][\w.-]*):/.exec(text)?.[1]
    if (baseURL === undefined && prefix !== undefined && prefix !== "ft") {
      return yield* Effect.fail(
        new ConfigError({
          field,
          detail: `unknown provider "${prefix}" in "${text}" (providers: ${providers.join(", ")}); ` +
            `a model of a local server named with a colon needs its base URL`
        })
      )
    }
    const key = keyFrom(env, ["OPENAI_API_KEY"])
    if (key === undefined && baseURL === undefined) {
      return yield* Effect.fail(
        new ConfigError({
          field,
          detail: `OPENAI_API_KEY is not set: "${text}" runs on the OpenAI API, which needs a key ` +
            `(or give a base URL for a local server, or a model string such as anthropic:${text})`
        })
      )
    }
    const model = yield* OpenAiLanguageModel.make({
      ...policyOf(options),
      ...tuning,
      model: text,
      // local servers (vLLM, Ollama) accept any key
      apiKey: key ?? Redacted.make("unused"),
      baseURL
    }).pipe(Effect.mapError((e) => new ConfigError({ field: `${field}.${e.field}`, detail: e.detail })))
    return instrumentModel(model, { role, model: text })
  })

