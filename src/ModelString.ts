/**
 * Models named by one string, for the CLI and for config files:
 *
 * - `openai:gpt-4.1-mini`: the OpenAI API through `OpenAiLanguageModel`
 *   (key from `OPENAI_API_KEY`, base URL from `OPENAI_BASE_URL` when set)
 * - `openai-compatible:http://127.0.0.1:8000/v1#my-model`: any server that
 *   speaks the chat-completions API (vLLM, Ollama, LiteLLM), with the key
 *   from `OPENAI_API_KEY`. A server that needs no key says so:
 *   `openai-compatible:http://127.0.0.1:11434/v1#qwen2.5:7b#nokey` sends no
 *   key at all (not even the one that is set); without `#nokey` a missing
 *   key is an error, never a silent placeholder
 * - `anthropic:claude-sonnet-4-5`: through `@effect/ai-anthropic` (key from
 *   `ANTHROPIC_API_KEY`, base URL from `ANTHROPIC_BASE_URL` when set)
 * - `google:gemini-2.5-flash`: Gemini through its OpenAI-compatible
 *   endpoint (`https://generativelanguage.googleapis.com/v1beta/openai`,
 *   or `GEMINI_BASE_URL` when set), key from `GEMINI_API_KEY` or
 *   `GOOGLE_API_KEY`. No provider package is needed: `@effect/ai-google`
 *   has no release that installs beside `@effect/ai` 0.37.
 *
 * Keys are read with `Config.redacted` and base URLs with `Config.string`
 * from the ambient `ConfigProvider`: the environment unless the
 * application provides another (a secrets manager, `ConfigProvider.fromMap`
 * in tests). Every key read is registered with `Secrets`, so that it is
 * scrubbed from every text the model hands out. A missing key is one
 * `ConfigError` naming the variable, raised when the model is built, before
 * the run writes anything.
 *
 * The `@effect/ai` providers are optional peer dependencies, loaded with a
 * dynamic import only when a string names them; a missing package is one
 * `ConfigError` saying what to install.
 *
 * @since 0.2.0
 */
import { ConfigProvider, Duration, Effect, Either, Layer, Redacted } from "effect"
import { ConfigError } from "./Errors.js"
import { type LanguageModel, ReflectionModel, TaskModel } from "./LanguageModel.js"
import * as Anthropic from "./internal/models/anthropic.js"
import * as modelConfig from "./internal/models/config.js"
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
 * One of the providers a model string may name.
 *
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
  /**
   * an `openai-compatible` server that needs no key (`#nokey`): none is
   * read or sent
   *
   * @since 0.3.0
   */
  readonly noKey?: boolean | undefined
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
  /**
   * @deprecated Provide a `ConfigProvider` instead (for example
   * `Effect.withConfigProvider(ConfigProvider.fromMap(...))`); when given,
   * keys and base URLs are read from this map rather than from the ambient
   * `ConfigProvider`. Removed in 0.4.0.
   */
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
   * the model's context window in tokens, when known: `optimizeAnything`
   * sizes its reflection prompt to it (`LanguageModel.contextWindow`).
   * Since 0.3.0.
   */
  readonly contextWindow?: number | undefined
  /**
   * loads a provider package by name; default the runtime's dynamic
   * `import`. Tests inject one.
   */
  readonly importer?: ((specifier: string) => Promise<unknown>) | undefined
}

const fail = (field: string, detail: string) => Either.left(new ConfigError({ field, detail }))

const isProvider = (name: string): name is Provider => providers.some((p) => p === name)

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
  if (!isProvider(provider)) {
    return fail(field, `unknown provider "${provider}" in "${trimmed}" (providers: ${providers.join(", ")})`)
  }
  if (provider === "openai-compatible") {
    // <url>#<model>[#nokey]: a URL's own fragment means nothing to a server
    const parts = rest.split("#")
    const url = parts[0] ?? ""
    const noKey = parts.length > 2 && parts.at(-1)?.trim().toLowerCase() === "nokey"
    const model = (noKey ? parts.slice(1, -1) : parts.slice(1)).join("#").trim()
    const parsed = URL.canParse(url) ? new URL(url) : undefined
    if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      return fail(field, `"${trimmed}": expected openai-compatible:<http(s) URL>#<model>, e.g. openai-compatible:http://127.0.0.1:8000/v1#my-model`)
    }
    if (model === "") return fail(field, `"${trimmed}": the model name after "#" is missing`)
    return Either.right({ provider, model, baseURL: url, ...(noKey ? { noKey } : {}) })
  }
  if (rest === "") return fail(field, `"${trimmed}": the model name after "${provider}:" is missing`)
  return Either.right({ provider, model: rest })
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
  return colon > 0 && isProvider(text.slice(0, colon).trim().toLowerCase())
}

const defaultImporter = (specifier: string): Promise<unknown> => import(specifier)

/**
 * Gemini's OpenAI-compatible endpoint, used for `google:` models.
 *
 * @since 0.3.0
 * @category constants
 */
export const geminiBaseURL = "https://generativelanguage.googleapis.com/v1beta/openai"

const policyOf = (options: Options) => ({
  timeout: options.timeout,
  maxRetries: options.maxRetries,
  retryBaseDelay: options.retryBaseDelay,
  maxRetryDelay: options.maxRetryDelay,
  maxConcurrency: options.maxConcurrency,
  rateLimit: options.rateLimit,
  price: options.price,
  contextWindow: options.contextWindow
})

// the deprecated `env` option: a map read instead of the ambient provider
const withEnv = <A, E, R>(options: Options, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  if (options.env === undefined) return effect
  const map = new Map<string, string>()
  for (const [k, v] of Object.entries(options.env)) if (typeof v === "string") map.set(k, v)
  return Effect.withConfigProvider(effect, ConfigProvider.fromMap(map))
}

const viaOpenAi = (
  field: string,
  options: Options,
  args: {
    readonly model: string
    readonly apiKey: Redacted.Redacted<string> | undefined
    readonly baseURL: string | undefined
    readonly provider: string
  }
) =>
  OpenAiLanguageModel.make({
    ...policyOf(options),
    model: args.model,
    // a server that needs no key (`#nokey`) gets a placeholder the SDK
    // requires; the Authorization header is dropped below
    apiKey: args.apiKey ?? Redacted.make("unused"),
    ...(args.apiKey === undefined ? { headers: { authorization: null } } : {}),
    baseURL: args.baseURL,
    provider: args.provider,
    temperature: options.temperature,
    maxOutputTokens: options.maxOutputTokens
  }).pipe(Effect.mapError((e) => new ConfigError({ field: `${field}.${e.field}`, detail: e.detail })))

/**
 * The model a string names. Every failure is a `ConfigError` naming
 * `options.field`: a malformed string, an unknown provider, a missing API
 * key (naming its variable), a provider package that is not installed, an
 * invalid option.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (text: string, options: Options = {}): Effect.Effect<LanguageModel, ConfigError> =>
  withEnv(
    options,
    Effect.gen(function*() {
      const field = options.field ?? "model"
      const spec = yield* parse(text, field)
      switch (spec.provider) {
        case "openai": {
          const apiKey = yield* modelConfig.requiredKey(field, ["OPENAI_API_KEY"], `openai:${spec.model}`)
          const baseURL = yield* modelConfig.optionalUrl(field, "OPENAI_BASE_URL")
          return yield* viaOpenAi(field, options, { model: spec.model, apiKey, baseURL, provider: "openai" })
        }
        case "openai-compatible": {
          const apiKey = spec.noKey === true
            ? undefined
            : yield* modelConfig.requiredKey(
              field,
              ["OPENAI_API_KEY"],
              `openai-compatible:${spec.baseURL}#${spec.model}`,
              "for a server that needs none, end the string with #nokey"
            )
          return yield* viaOpenAi(field, options, { model: spec.model, apiKey, baseURL: spec.baseURL, provider: "openai-compatible" })
        }
        case "google": {
          const apiKey = yield* modelConfig.requiredKey(field, ["GEMINI_API_KEY", "GOOGLE_API_KEY"], `google:${spec.model}`)
          const baseURL = (yield* modelConfig.optionalUrl(field, "GEMINI_BASE_URL")) ?? geminiBaseURL
          return yield* viaOpenAi(field, options, { model: spec.model, apiKey, baseURL, provider: "google" })
        }
        case "anthropic":
          return yield* Anthropic.viaAnthropic(field, spec.model, {
            importer: options.importer ?? defaultImporter,
            maxOutputTokens: options.maxOutputTokens,
            temperature: options.temperature,
            policy: policyOf(options)
          })
      }
    })
  )

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
 * unless `baseUrl` or `OPENAI_BASE_URL` names another server; either way
 * the key comes from `OPENAI_API_KEY`, and a missing key is an error naming
 * it, unless the name ends with `#nokey` (a server that needs none, e.g.
 * `qwen2.5:7b#nokey` with Ollama's base URL).
 *
 * @since 0.2.0
 * @category constructors
 */
export const forRole = (
  role: "task" | "reflection",
  spec: ModelSpec,
  options: Omit<Options, "field" | "temperature" | "maxOutputTokens"> = {}
): Effect.Effect<LanguageModel, ConfigError> =>
  withEnv(
    options,
    Effect.gen(function*() {
      const field = `${role}Model`
      const tuning = { temperature: spec.temperature, maxOutputTokens: spec.maxOutputTokens }
      if (typeof spec.model !== "string" || spec.model.trim() === "") {
        return yield* Effect.fail(new ConfigError({ field, detail: "a model name or model string is required" }))
      }
      const text = spec.model.trim()
      const { env: _env, ...ambient } = options
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
        const model = yield* make(text, { ...ambient, ...tuning, field })
        return instrumentModel(model, { role, model: `${parsed.provider}:${parsed.model}` })
      }
      const noKey = /#\s*nokey\s*$/i.test(text)
      const name = noKey ? text.replace(/#\s*nokey\s*$/i, "").trim() : text
      if (name === "") return yield* Effect.fail(new ConfigError({ field, detail: `"${text}": the model name before "#nokey" is missing` }))
      const baseURL = spec.baseUrl ?? (yield* modelConfig.optionalUrl(field, "OPENAI_BASE_URL"))
      // On the OpenAI API a `name:` prefix is a provider we do not know (its
      // only own prefix is `ft:`); on another server it may be the model's name
      // (Ollama's `mistral:7b`), so it passes there.
      const prefix = /^([A-Za-z][\w.-]*):/.exec(name)?.[1]
      if (baseURL === undefined && prefix !== undefined && prefix !== "ft") {
        return yield* Effect.fail(
          new ConfigError({
            field,
            detail: `unknown provider "${prefix}" in "${name}" (providers: ${providers.join(", ")}); ` +
              `a model of a local server named with a colon needs its base URL`
          })
        )
      }
      const apiKey = noKey ? undefined : yield* modelConfig.requiredKey(
        field,
        ["OPENAI_API_KEY"],
        baseURL === undefined ? `"${name}" runs on the OpenAI API, which` : `"${name}" at ${baseURL}`,
        baseURL === undefined
          ? `or give a base URL for a local server, or a model string such as anthropic:${name}`
          : `for a server that needs none, name the model "${name}#nokey"`
      )
      const model = yield* viaOpenAi(field, { ...ambient, ...tuning }, {
        model: name,
        apiKey,
        baseURL,
        provider: baseURL === undefined ? "openai" : "openai-compatible"
      })
      return instrumentModel(model, { role, model: name })
    })
  )
