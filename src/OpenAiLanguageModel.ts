/**
 * A `LanguageModel` over the OpenAI chat completions API (or any server that
 * speaks it: vLLM, Ollama, LiteLLM, OpenRouter, ...), built on the official
 * `openai` package.
 *
 * Effect owns the call's life cycle: the SDK client is created with
 * `maxRetries: 0`, and this module adds the per-call timeout, retries with
 * exponential backoff and jitter (honouring `Retry-After`), a concurrency cap
 * and an optional rate limit shared by every caller of one instance.
 * Interrupting the calling fiber aborts the HTTP request.
 *
 * The API key is held as a `Redacted` value and registered with `Secrets`,
 * with the values of secret-looking `headers`; the scrub of every
 * registered secret removes them from every text the layer hands out:
 * error details, answers, the answer's model name, logs. Every error detail is one line, and carries the server's
 * `host:port` (`endpoint`), so that `LanguageModel.unrecoverable` can name
 * it when no retry can fix the failure.
 *
 * @since 0.1.0
 */
import { Clock, Config, Duration, Effect, Layer, Option, Redacted } from "effect"
import OpenAI from "openai"
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions"
import { ConfigError } from "./Errors.js"
import type * as modelCall from "./internal/models/call.js"
import { invalid, isNonNegativeInteger, makeRateLimiter, reportProvider, resolvePolicy } from "./internal/models/call.js"
import { makeReachability, retrySchedule } from "./internal/models/retry.js"
import * as modelConfig from "./internal/models/config.js"
import * as wire from "./internal/models/openaiWire.js"
import {
  type Completion,
  type LanguageModel,
  type LlmError,
  LlmTimeout,
  messages as promptMessages,
  type Prompt,
  ReflectionModel,
  TaskModel
} from "./LanguageModel.js"
import * as Secrets from "./Secrets.js"

/**
 * Prices per million tokens, used to fill `Completion.cost`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Price extends modelCall.Price {}

/**
 * A shared request budget: at most `requests` requests start in any window
 * of length `interval`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimit extends modelCall.RateLimit {}

/**
 * Options of an OpenAI-compatible model.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends modelCall.PolicyOptions {
  /** model name sent to the server, e.g. "gpt-4.1-mini" */
  readonly model: string
  /** servers without authentication still need some value, e.g. `Redacted.make("unused")` */
  readonly apiKey: Redacted.Redacted<string>
  /** default "https://api.openai.com/v1" */
  readonly baseURL?: string | undefined
  readonly temperature?: number | undefined
  /** cap on generated tokens */
  readonly maxOutputTokens?: number | undefined
  /**
   * the request field that carries `maxOutputTokens`: OpenAI's reasoning
   * models only accept `max_completion_tokens` (the default), some older
   * compatible servers only `max_tokens`
   */
  readonly maxTokensField?: "max_completion_tokens" | "max_tokens" | undefined
  /**
   * extra request body fields (e.g. `reasoning_effort`, `top_p`, provider
   * options); they win over the fields this module sets, except `model`,
   * `messages` and `stream`, which are rejected
   */
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined
  /**
   * the provider named in the call's span (`gen_ai.system`); default
   * "openai" for the OpenAI API, else "openai-compatible"
   *
   * @since 0.3.0
   */
  readonly provider?: string | undefined
  /**
   * extra HTTP headers sent with every request; `null` removes a header the
   * client would send (such as `authorization`, for a server that takes no
   * key)
   */
  readonly headers?: Readonly<Record<string, string | null>> | undefined
  /** per attempt; default 60 seconds. Raise it for slow reasoning models. */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * Options read by `fromEnv`: everything but the key and the base URL, which
 * come from the environment.
 *
 * @since 0.1.0
 * @category models
 */
export interface EnvOptions extends Omit<Options, "apiKey" | "baseURL"> {
  /** variable holding the API key; default "OPENAI_API_KEY" */
  readonly apiKeyVariable?: string | undefined
  /** variable holding the base URL (optional); default "OPENAI_BASE_URL" */
  readonly baseUrlVariable?: string | undefined
}

/**
 * The defaults applied by `make`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  baseURL: "https://api.openai.com/v1",
  timeoutMillis: 60_000,
  maxRetries: 4,
  retryBaseDelayMillis: 1_000,
  maxRetryDelayMillis: 60_000,
  maxConcurrency: 16
} as const

/** The checked options: the shared call policy (its price is unused here), and what this model sends. */
interface Resolved extends Omit<modelCall.Policy, "price"> {
  readonly model: string
  readonly apiKey: Redacted.Redacted<string>
  readonly baseURL: string
  readonly body: Readonly<Record<string, unknown>>
}

const resolve = (options: Options): Effect.Effect<Resolved, ConfigError> =>
  Effect.gen(function*() {
    if (typeof options.model !== "string" || options.model.trim() === "") {
      return yield* invalid("model", "a model name is required")
    }
    if (!Redacted.isRedacted(options.apiKey)) {
      return yield* invalid("apiKey", "must be a Redacted value (Redacted.make or Config.redacted)")
    }
    const key: unknown = Redacted.value(options.apiKey)
    if (typeof key !== "string" || key.trim() === "") {
      return yield* invalid("apiKey", "must be a non-empty string (use any placeholder for servers without auth)")
    }
    const baseURL = options.baseURL ?? defaults.baseURL
    const url = URL.canParse(baseURL) ? new URL(baseURL) : undefined
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return yield* invalid("baseURL", `not an http(s) URL: ${baseURL}`)
    }
    if (url.username !== "" || url.password !== "") {
      // fetch refuses such URLs on every request, and the message would
      // carry the password; the detail names neither
      return yield* invalid("baseURL", "must not hold credentials (user:password@); pass the key as apiKey")
    }
    const { temperature, maxOutputTokens } = options
    if (temperature !== undefined && !(Number.isFinite(temperature) && temperature >= 0 && temperature <= 2)) {
      return yield* invalid("temperature", `must be between 0 and 2, got ${temperature}`)
    }
    if (maxOutputTokens !== undefined && !(isNonNegativeInteger(maxOutputTokens) && maxOutputTokens > 0)) {
      return yield* invalid("maxOutputTokens", `must be a positive integer, got ${maxOutputTokens}`)
    }
    const maxTokensField = options.maxTokensField ?? "max_completion_tokens"
    if (maxTokensField !== "max_completion_tokens" && maxTokensField !== "max_tokens") {
      return yield* invalid("maxTokensField", `must be "max_completion_tokens" or "max_tokens"`)
    }
    const extraBody = options.extraBody ?? {}
    if (typeof extraBody !== "object" || extraBody === null || Array.isArray(extraBody)) {
      return yield* invalid("extraBody", "must be an object of request fields")
    }
    for (const reserved of ["model", "messages", "stream"]) {
      if (Object.prototype.hasOwnProperty.call(extraBody, reserved)) {
        return yield* invalid(`extraBody.${reserved}`, "is set by the model itself and cannot be overridden")
      }
    }
    // timeout, retries, concurrency, rate limit and price: checked as for every model layer
    const { contextWindow, timeoutMillis, maxRetries, retryBaseDelayMillis, maxRetryDelayMillis, maxConcurrency, rateLimit } = yield* resolvePolicy(
      options,
      defaults
    )
    const body: Record<string, unknown> = {}
    if (temperature !== undefined) body.temperature = temperature
    if (maxOutputTokens !== undefined) body[maxTokensField] = maxOutputTokens
    return {
      model: options.model,
      apiKey: options.apiKey,
      baseURL,
      timeoutMillis,
      maxRetries,
      retryBaseDelayMillis,
      maxRetryDelayMillis,
      maxConcurrency,
      rateLimit,
      contextWindow,
      body: { ...body, ...extraBody }
    }
  })

/**
 * The wait a response asks for before the next attempt, from the
 * `retry-after-ms` header (milliseconds) or `Retry-After` (seconds or an
 * HTTP date). `None` when absent or unreadable.
 *
 * @since 0.1.0
 * @category utils
 */
export const retryAfterMillis: (
  headers: { readonly get: (name: string) => string | null } | undefined,
  nowMillis: number
) => Option.Option<number> = wire.retryAfterMillis

/**
 * A chat-completions model. Fails with a `ConfigError` naming the field
 * when an option is invalid.
 *
 * Each call is one request of up to `timeout` (aborted on expiry),
 * retried up to `maxRetries` times on HTTP 408/409/429/5xx, connection
 * errors (refused, reset before the headers or in the middle of the body)
 * and timeouts, with exponential backoff (base `retryBaseDelay`, doubling,
 * capped at `maxRetryDelay`, jittered between half and all of it) or the
 * server's `Retry-After`. HTTP 400/401/403/404/422 and malformed bodies
 * fail at once; an error body sent with HTTP 200 that carries a status is
 * read as that status. Backoff jitter uses `Math.random`, never the Effect `Random`
 * service, so model calls leave the optimizer's seeded stream untouched.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<LanguageModel, ConfigError> =>
  Effect.gen(function*() {
    const config = yield* resolve(options)
    const key = Redacted.value(config.apiKey)
    const url = new URL(config.baseURL)
    // servers sometimes echo the key (in error messages, even in answers);
    // every text this layer hands out goes through this one scrub
    // registered for every scrub of the process (see `Secrets`): a key
    // echoed by this server must not leave through another model either
    const scrub = Secrets.scrubberWith(
      config.apiKey,
      // credentials some servers take in their own header (Azure's "api-key")
      ...Object.entries(options.headers ?? {}).flatMap(([name, value]) =>
        typeof value === "string" && /auth|key|token|secret|cookie/i.test(name)
          ? [Redacted.make(value.replace(/^(Bearer|Basic)\s+/i, ""))]
          : []
      )
    )
    const provider = options.provider ?? (url.hostname === "api.openai.com" ? "openai" : "openai-compatible")
    const ctx: wire.Context = {
      model: config.model,
      endpoint: `${url.hostname}:${url.port === "" ? (url.protocol === "https:" ? "443" : "80") : url.port}`,
      timeoutMillis: config.timeoutMillis,
      scrub
    }
    const client = new OpenAI({
      apiKey: key,
      baseURL: config.baseURL,
      maxRetries: 0,
      // Effect enforces the timeout (and aborts the request); the SDK's own
      // is only a backstop
      timeout: config.timeoutMillis + 5_000,
      logLevel: "off",
      ...(options.headers === undefined ? {} : { defaultHeaders: { ...options.headers } })
    })
    const semaphore = yield* Effect.makeSemaphore(config.maxConcurrency)
    const awaitSlot = config.rateLimit === undefined
      ? Effect.void
      : yield* makeRateLimiter(config.rateLimit.requests, config.rateLimit.intervalMillis)
    const { model, timeoutMillis } = config
    // a server that never answered and refuses connections is not retried for long
    const reachability = makeReachability()

    const attempt = (prompt: Prompt): Effect.Effect<Completion, wire.AttemptFailure> => {
      // the user's extra body fields (config.body) are passed through unchecked, as the SDK does
      const request = Object.assign(
        {},
        config.body,
        { model, messages: promptMessages(prompt).map((m) => ({ role: m.role, content: m.content })) }
      ) as ChatCompletionCreateParamsNonStreaming
      const call = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.tryPromise({
          // the signal aborts the HTTP request when the fiber is interrupted
          // (including by the timeout below); the body is read inside, so a
          // connection that breaks mid-body is classified here too
          try: (signal) =>
            client.chat.completions.create(request, { signal }).then((r): unknown => {
              reachability.answered()
              return r
            }),
          catch: (cause) => reachability.mark(wire.classify(ctx, cause, now))
        })).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(timeoutMillis),
            onTimeout: (): wire.AttemptFailure => ({
              error: new LlmTimeout({ model, endpoint: ctx.endpoint, millis: timeoutMillis }),
              retryable: true
            })
          }),
          Effect.flatMap((body) => wire.toCompletion(ctx, options.price, body))
        )
      // the slot is taken under the permit so that requests start right
      // after their reserved slot, which keeps the rate window exact
      return semaphore.withPermits(1)(Effect.zipRight(awaitSlot, call))
    }

    // the retry policy as a Schedule over the attempts' failures (shared
    // with AiLanguageModel): transient failures only, the server's
    // Retry-After or exponential backoff jittered with Math.random (never the
    // Effect Random service, so model calls leave the optimizer's seeded
    // stream untouched); a Retry-After beyond maxRetryDelay ends the retries
    const retryPolicy = retrySchedule(config, model, scrub(config.baseURL))

    const complete = (prompt: Prompt): Effect.Effect<Completion, LlmError> =>
      // no span of its own: the call's one span is `gepa.model` (see
      // `Telemetry.instrumentModel`), which reads the retries and provider
      Effect.zipRight(
        reportProvider(provider),
        Effect.retry(Effect.suspend(() => attempt(prompt)), retryPolicy)
      ).pipe(Effect.mapError((failure) => failure.error))

    return config.contextWindow === undefined ? { complete } : { complete, contextWindow: config.contextWindow }
  })

/**
 * The options as an Effect `Config`: the API key from `OPENAI_API_KEY`
 * (read as a redacted value) and the base URL from `OPENAI_BASE_URL` when
 * set; the model name and the rest come from the caller.
 *
 * @since 0.1.0
 * @category config
 */
export const config = (options: EnvOptions): Config.Config<Options> => {
  const { apiKeyVariable, baseUrlVariable, ...rest } = options
  return Config.all({
    apiKey: Config.redacted(apiKeyVariable ?? "OPENAI_API_KEY"),
    baseURL: Config.option(Config.string(baseUrlVariable ?? "OPENAI_BASE_URL"))
  }).pipe(
    Config.map(({ apiKey, baseURL }): Options => ({
      ...rest,
      apiKey,
      ...(Option.isSome(baseURL) && baseURL.value.trim() !== "" ? { baseURL: baseURL.value } : {})
    }))
  )
}

/**
 * A model configured through Effect `Config` (see `config`): the key with
 * `Config.redacted` and the base URL with `Config.string`, from the ambient
 * `ConfigProvider` (the environment unless the application provides
 * another). A missing key is a `ConfigError` naming the variable.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromEnv = (options: EnvOptions): Effect.Effect<LanguageModel, ConfigError> =>
  Effect.gen(function*() {
    const { apiKeyVariable, baseUrlVariable, ...rest } = options
    const keyName = apiKeyVariable ?? "OPENAI_API_KEY"
    const apiKey = yield* modelConfig.requiredKey(keyName, [keyName], `the model "${String(options.model)}"`)
    const baseURL = yield* modelConfig.optionalUrl(baseUrlVariable ?? "OPENAI_BASE_URL", baseUrlVariable ?? "OPENAI_BASE_URL")
    return yield* make({ ...rest, apiKey, ...(baseURL === undefined ? {} : { baseURL }) })
  })

/**
 * The model as the `ReflectionModel` service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerReflection = (options: Options): Layer.Layer<ReflectionModel, ConfigError> => Layer.effect(ReflectionModel, make(options))

/**
 * The model as the `TaskModel` service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTask = (options: Options): Layer.Layer<TaskModel, ConfigError> => Layer.effect(TaskModel, make(options))

/**
 * The model configured through `config` (key and base URL from the ambient
 * `ConfigProvider`, see `fromEnv`) as the `ReflectionModel`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerReflectionConfig = (options: EnvOptions): Layer.Layer<ReflectionModel, ConfigError> => Layer.effect(ReflectionModel, fromEnv(options))

/**
 * The model configured through `config` (key and base URL from the ambient
 * `ConfigProvider`, see `fromEnv`) as the `TaskModel`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerTaskConfig = (options: EnvOptions): Layer.Layer<TaskModel, ConfigError> => Layer.effect(TaskModel, fromEnv(options))

/**
 * The reflection model from environment variables (the key, the base URL, the
 * model).
 *
 * @deprecated Use `layerReflectionConfig` (same function); removed in 0.4.0.
 * @since 0.1.0
 * @category layers
 */
export const layerReflectionFromEnv: (options: EnvOptions) => Layer.Layer<ReflectionModel, ConfigError> = layerReflectionConfig

/**
 * The task model from environment variables (the key, the base URL, the
 * model).
 *
 * @deprecated Use `layerTaskConfig` (same function); removed in 0.4.0.
 * @since 0.1.0
 * @category layers
 */
export const layerTaskFromEnv: (options: EnvOptions) => Layer.Layer<TaskModel, ConfigError> = layerTaskConfig
