/**
 * Any `@effect/ai` `LanguageModel` (OpenAI, Anthropic, Google, Bedrock,
 * OpenRouter, or your own) as the reflection model or the task model.
 *
 * The `@effect/ai` model generates the text; this module adds what the
 * optimizer relies on: token usage and finish reason mapped to a
 * `Completion` (with its cost when a price is given), `AiError`s mapped to
 * the tagged `LlmError`s, a per-attempt timeout, retries of transient
 * failures only (exponential backoff with jitter, `Retry-After` honoured), a
 * concurrency cap and an optional rate limit. Interrupting the caller
 * interrupts the provider's HTTP request.
 *
 * This is a separate entry point (`effect-gepa/AiLanguageModel`): only it
 * imports `@effect/ai`, an optional peer dependency.
 *
 * @example
 * ```ts
 * import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
 * import { FetchHttpClient } from "@effect/platform"
 * import { Config, Layer } from "effect"
 * import * as AiLanguageModel from "effect-gepa/AiLanguageModel"
 *
 * const Reflection = AiLanguageModel.layerReflection({ model: "claude-sonnet-4-5" }).pipe(
 *   Layer.provide(AnthropicLanguageModel.model("claude-sonnet-4-5")),
 *   Layer.provide(AnthropicClient.layerConfig({ apiKey: Config.redacted("ANTHROPIC_API_KEY") })),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 * ```
 *
 * @since 0.2.0
 */
import * as AiError from "@effect/ai/AiError"
import * as AiLm from "@effect/ai/LanguageModel"
import * as AiModel from "@effect/ai/Model"
import type * as AiPrompt from "@effect/ai/Prompt"
import type * as AiResponse from "@effect/ai/Response"
import { Clock, Duration, Effect, Layer, Option, Redacted } from "effect"
import { ConfigError } from "./Errors.js"
import {
  type Completion,
  type FinishReason,
  type LanguageModel,
  type LlmError,
  LlmResponseError,
  LlmTimeout,
  LlmTransportError,
  messages as promptMessages,
  type Prompt,
  ReflectionModel,
  TaskModel,
  type Usage
} from "./LanguageModel.js"
import { isRecord } from "./internal/shared/fields.js"
import * as internal from "./internal/models/call.js"
import * as retry from "./internal/models/retry.js"
import { statusFailure } from "./internal/models/statusFailure.js"
import * as Secrets from "./Secrets.js"
import { instrumentModel, type ModelRole } from "./Telemetry.js"

/**
 * Prices per million tokens, used to fill `Completion.cost`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Price extends internal.Price {}

/**
 * A shared request budget: at most `requests` requests start in any window
 * of length `interval`.
 *
 * @since 0.2.0
 * @category models
 */
export interface RateLimit extends internal.RateLimit {}

/**
 * Options of a model over `@effect/ai`. Everything is optional.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options extends internal.PolicyOptions {
  /**
   * the model's name in errors, spans and metrics; default: the provider
   * name of the `@effect/ai` model (e.g. "anthropic"), or "@effect/ai"
   */
  readonly model?: string | undefined
  /**
   * secrets replaced by "[redacted]" in every text the model hands out (and
   * registered with `Secrets`). Rarely needed: the key variables of the
   * known providers (`Secrets.knownKeyVariables`: `OPENAI_API_KEY`,
   * `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, ...) are read from the ambient
   * `ConfigProvider` and registered automatically
   */
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
  /**
   * more variables holding secrets, read from the ambient `ConfigProvider`
   * (when set) and registered like the known ones
   *
   * @since 0.3.0
   */
  readonly secretVariables?: ReadonlyArray<string> | undefined
  /** per attempt; default 120 seconds */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * The finish reason of an `@effect/ai` response in our terms.
 *
 * @since 0.2.0
 * @category mapping
 */
export const finishReasonFrom = (reason: AiResponse.FinishReason): FinishReason => {
  switch (reason) {
    case "stop":
    case "length":
      return reason
    case "content-filter":
      return "content_filter"
    case "tool-calls":
      return "tool_calls"
    default:
      return "other"
  }
}

/**
 * The token usage of an `@effect/ai` response, when the provider reported
 * both counts.
 *
 * @since 0.2.0
 * @category mapping
 */
export const usageFrom = (usage: AiResponse.Usage): Usage | undefined =>
  typeof usage.inputTokens === "number" && typeof usage.outputTokens === "number"
    ? { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }
    : undefined

const errorObjectOf = (body: string | undefined): Readonly<Record<string, unknown>> | undefined => {
  if (body === undefined || body.trim() === "") return undefined
  try {
    const parsed: unknown = JSON.parse(body)
    if (!isRecord(parsed)) return undefined
    const inner = parsed["error"]
    return isRecord(inner) ? inner : parsed
  } catch {
    return undefined
  }
}

/** The server's message in an error body (JSON `{ error: { message } }` or text). */
const bodyMessage = (body: string | undefined): string | undefined => {
  const message = errorObjectOf(body)?.message
  if (typeof message === "string") return message
  return body === undefined || body.trim() === "" ? undefined : body
}

/** The server's error code (`context_length_exceeded`, `invalid_request_error`, ...). */
const bodyCode = (body: string | undefined): string | undefined => {
  const source = errorObjectOf(body)
  for (const field of ["code", "type"] as const) {
    const value = source?.[field]
    if (typeof value === "string" && value !== "") return value
  }
  return undefined
}

interface ClassifyContext {
  readonly model: string
  readonly scrub: (text: string) => string
}

const classify = (ctx: ClassifyContext, error: AiError.AiError, nowMillis: number): retry.AttemptFailure => {
  const { model } = ctx
  const detailOf = (text: string) => internal.oneLine(ctx.scrub, text)
  switch (error._tag) {
    case "HttpRequestError": {
      const endpoint = internal.endpointOf(error.request.url)
      const code = internal.systemCodeOf(error.cause)
      const detail = detailOf(
        `${error.reason}: ${error.description ?? "the request failed"}${code === undefined ? "" : ` (${code})`}`
      )
      // a transport failure (connection refused or reset) is transient; a
      // request that cannot be encoded or sent to a bad URL is not
      return {
        error: new LlmTransportError({
          model,
          detail,
          ...(endpoint === undefined ? {} : { endpoint }),
          ...(code === undefined ? {} : { code })
        }),
        retryable: error.reason === "Transport"
      }
    }
    case "HttpResponseError": {
      const status = error.response.status
      const endpoint = internal.endpointOf(error.request.url)
      const at = endpoint === undefined ? {} : { endpoint }
      const detail = detailOf(bodyMessage(error.body) ?? error.description ?? `${error.reason} (HTTP ${status})`)
      if (error.reason !== "StatusCode" && status < 400) {
        return {
          error: new LlmResponseError({ model, ...at, detail: detailOf(`${error.reason}: ${error.description ?? detail}`) }),
          retryable: false
        }
      }
      const headers = error.response.headers
      const after = Option.getOrUndefined(retry.parseRetryAfter((name) => headers[name] ?? null, nowMillis))
      const code = bodyCode(error.body)
      return statusFailure({
        model,
        endpoint,
        status,
        detail,
        code: code === undefined ? undefined : detailOf(code).slice(0, 100),
        retryAfter: after
      })
    }
    case "MalformedOutput":
      return {
        error: new LlmResponseError({ model, detail: detailOf(error.description ?? "the response could not be decoded") }),
        retryable: false
      }
    case "MalformedInput":
      return {
        error: new LlmTransportError({
          model,
          detail: detailOf(`the prompt could not be encoded: ${error.description ?? "malformed input"}`)
        }),
        retryable: false
      }
    case "UnknownError":
      return {
        error: new LlmTransportError({ model, detail: detailOf(error.description ?? error.message) }),
        retryable: false
      }
  }
}

/**
 * The tagged error for an `@effect/ai` `AiError`: HTTP 401/403 is
 * `LlmAuthenticationError`, 404 `LlmModelNotFound`, 429 `LlmRateLimited`
 * (with the server's `Retry-After`), 408/409/5xx and transport failures
 * `LlmTransportError` (these four are the ones retried), other 4xx
 * `LlmBadRequest`, undecodable responses `LlmResponseError`.
 *
 * @since 0.2.0
 * @category mapping
 */
export const fromAiError = (
  error: AiError.AiError,
  options: { readonly model: string; readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined }
): LlmError => classify({ model: options.model, scrub: Secrets.scrubberWith(...(options.secrets ?? [])) }, error, Date.now()).error

const toAiPrompt = (prompt: Prompt): AiPrompt.RawInput => promptMessages(prompt).map((m) => ({ role: m.role, content: m.content }))

const responseModel = (content: ReadonlyArray<AiResponse.AnyPart>): string | undefined => {
  for (const part of content) {
    if (part.type === "response-metadata" && Option.isSome(part.modelId)) return part.modelId.value
  }
  return undefined
}

/**
 * Our model over an `@effect/ai` `LanguageModel` service. Fails with a
 * `ConfigError` naming the field when an option is invalid.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromService = (
  service: AiLm.Service,
  options: Options = {}
): Effect.Effect<LanguageModel, ConfigError> =>
  Effect.gen(function*() {
    const policy = yield* internal.resolvePolicy(options)
    const model = options.model ?? "@effect/ai"
    if (typeof model !== "string" || model.trim() === "") {
      return yield* Effect.fail(new ConfigError({ field: "model", detail: "must be a non-empty string" }))
    }
    const secrets: ReadonlyArray<Redacted.Redacted<string>> = options.secrets ?? []
    if (!Array.isArray(secrets) || secrets.some((s) => !Redacted.isRedacted(s))) {
      return yield* Effect.fail(new ConfigError({ field: "secrets", detail: "must be a list of Redacted values" }))
    }
    const variables = options.secretVariables ?? []
    if (!Array.isArray(variables) || variables.some((v) => typeof v !== "string" || v.trim() === "")) {
      return yield* Effect.fail(new ConfigError({ field: "secretVariables", detail: "must be a list of variable names" }))
    }
    // the provider client read its key from the same ConfigProvider: the
    // known key variables are registered without any user action
    yield* Secrets.registerVariables([...Secrets.knownKeyVariables, ...variables])
    // the one scrub of the layer (every secret of the process): error
    // details, answers, the provider's log lines alike
    const scrub = Secrets.scrubberWith(...secrets)
    const provider = yield* Effect.serviceOption(AiModel.ProviderName).pipe(
      Effect.map(Option.getOrElse(() => "@effect/ai"))
    )
    const ctx: ClassifyContext = { model, scrub }
    const semaphore = yield* Effect.makeSemaphore(policy.maxConcurrency)
    const awaitSlot = policy.rateLimit === undefined
      ? Effect.void
      : yield* internal.makeRateLimiter(policy.rateLimit.requests, policy.rateLimit.intervalMillis)
    const { timeoutMillis } = policy

    const attempt = (prompt: Prompt): Effect.Effect<Completion, retry.AttemptFailure> => {
      const call = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        // the provider's spans and logs would carry the server's words as they are
        internal.sealed(service.generateText({ prompt: toAiPrompt(prompt) })).pipe(
          Effect.mapError((error) => classify(ctx, error, now))
        )).pipe(
          // interruption (the timeout's, or the caller's) reaches the
          // provider's HTTP client, which aborts the request
          Effect.timeoutFail({
            duration: Duration.millis(timeoutMillis),
            onTimeout: (): retry.AttemptFailure => ({
              error: new LlmTimeout({ model, millis: timeoutMillis }),
              retryable: true
            })
          }),
          Effect.map((response): Completion => {
            const usage = usageFrom(response.usage)
            return {
              // a server may echo a secret in its answer too
              text: scrub(response.text),
              finishReason: finishReasonFrom(response.finishReason),
              usage,
              cost: internal.costOf(usage, policy.price),
              model: scrub(responseModel(response.content) ?? model)
            }
          })
        )
      // the slot is taken under the permit so that requests start right
      // after their reserved slot, which keeps the rate window exact
      return semaphore.withPermits(1)(Effect.zipRight(awaitSlot, call))
    }

    const schedule = retry.retrySchedule(policy, model)
    const complete = (prompt: Prompt): Effect.Effect<Completion, LlmError> =>
      // no span of its own: the call's one span is `gepa.model` (see
      // `Telemetry.instrumentModel`), which reads the retries and provider
      Effect.zipRight(internal.reportProvider(provider), Effect.retry(attempt(prompt), schedule)).pipe(
        Effect.mapError((failure) => failure.error)
      )

    return policy.contextWindow === undefined ? { complete } : { complete, contextWindow: policy.contextWindow }
  })

/**
 * Our model over the `@effect/ai` `LanguageModel` in the context (for
 * example provided by `AnthropicLanguageModel.model("claude-...")`). The
 * model name defaults to the `@effect/ai` provider name.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<LanguageModel, ConfigError, AiLm.LanguageModel> =>
  Effect.flatMap(named(options), ([service, resolved]) => fromService(service, resolved))

const named = (options: Options) =>
  Effect.gen(function*() {
    const service = yield* AiLm.LanguageModel
    const provider = yield* Effect.serviceOption(AiModel.ProviderName)
    const model = options.model ?? Option.getOrElse(provider, () => "@effect/ai")
    return [service, { ...options, model }] as const
  })

const instrumented = (role: ModelRole, options: Options) =>
  Effect.flatMap(
    named(options),
    ([service, resolved]) => Effect.map(fromService(service, resolved), (model) => instrumentModel(model, { role, model: resolved.model }))
  )

/**
 * The `@effect/ai` model in the context as the `ReflectionModel`; calls are
 * instrumented (see `Telemetry.instrumentModel`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerReflection = (
  options: Options = {}
): Layer.Layer<ReflectionModel, ConfigError, AiLm.LanguageModel> => Layer.effect(ReflectionModel, instrumented("reflection", options))

/**
 * The `@effect/ai` model in the context as the `TaskModel`; calls are
 * instrumented (see `Telemetry.instrumentModel`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerTask = (options: Options = {}): Layer.Layer<TaskModel, ConfigError, AiLm.LanguageModel> =>
  Layer.effect(TaskModel, instrumented("task", options))
