/**
 * Any Vercel AI SDK language model (`openai("gpt-4.1")`,
 * `anthropic("claude-sonnet-4-5")`, `google(...)`, Ollama, OpenRouter, a
 * community provider, or the SDK's own `MockLanguageModelV3`) as the
 * reflection model or the task model.
 *
 * The model object is used through its specification (`LanguageModelV3` of
 * `ai` 6, `LanguageModelV4` of `ai` 7): one `doGenerate` call per attempt,
 * which has no retries of its own, so the retries are this module's, as in
 * every model layer: a per-attempt timeout, transient failures retried with
 * exponential backoff and jitter (the server's `Retry-After` honoured), a
 * concurrency cap and an optional rate limit. Interrupting the caller fires
 * the call's `abortSignal`, which cancels the provider's HTTP request.
 * Token usage and cost are counted; the provider's errors become the tagged
 * `LlmError`s with the provider's message.
 *
 * The AI SDK is an optional peer: this module imports none of it (the
 * specification is a structural type here), so it costs nothing to an app
 * that does not use it.
 *
 * Secrets: a provider reads its key itself (from `OPENAI_API_KEY`, or
 * `createOpenAI({ apiKey })`). The known key variables
 * (`Secrets.knownKeyVariables`) are read from the ambient `ConfigProvider`
 * and registered with `Secrets`; a key the application passes in code is
 * given as `secrets` (or `Secrets.register`), so that a server echoing it
 * leaks it nowhere.
 *
 * @example
 * ```ts
 * import { openai } from "@ai-sdk/openai"
 * import { AiSdkLanguageModel } from "effect-gepa"
 *
 * const Reflection = AiSdkLanguageModel.layerReflection(openai("gpt-4.1"))
 * const Task = AiSdkLanguageModel.layerTask(openai("gpt-4.1-mini"), { price: { inputPerMillion: 0.4, outputPerMillion: 1.6 } })
 * ```
 *
 * @since 0.3.0
 */
import { Clock, Duration, Effect, Layer, Redacted } from "effect"
import { ConfigError } from "./Errors.js"
import * as wire from "./internal/models/aiSdkWire.js"
import * as internal from "./internal/models/call.js"
import * as retry from "./internal/models/retry.js"
import { type Completion, type LanguageModel, type LlmError, LlmTimeout, type Prompt, ReflectionModel, TaskModel } from "./LanguageModel.js"
import * as Secrets from "./Secrets.js"
import { instrumentModel, type ModelRole } from "./Telemetry.js"

/**
 * A JSON value (provider options hold them).
 *
 * @since 0.3.0
 * @category models
 */
export type JsonValue = wire.JsonValue

/**
 * A JSON object (provider options hold them).
 *
 * @since 0.3.0
 * @category models
 */
export interface JsonObject extends wire.JsonObject {}

/**
 * The call options this module sends to `doGenerate`: the part of the
 * specification's call options it uses (the same in v3 and v4).
 *
 * @since 0.3.0
 * @category models
 */
export interface CallOptions extends wire.SpecCallOptions {}

/**
 * What this module reads of a `doGenerate` result (the same in v3 and v4).
 *
 * @since 0.3.0
 * @category models
 */
export interface GenerateResult extends wire.SpecGenerateResult {}

/**
 * An AI SDK language model, as the provider specification defines it
 * (`LanguageModelV3` of `@ai-sdk/provider` 3 and `ai` 6, `LanguageModelV4` of
 * `@ai-sdk/provider` 4 and `ai` 7): every provider's model object fits.
 * Only `doGenerate` is called.
 *
 * @since 0.3.0
 * @category models
 */
export interface Model {
  readonly specificationVersion: "v3" | "v4"
  /** e.g. "openai.chat", "anthropic.messages" */
  readonly provider: string
  /** e.g. "gpt-4.1-mini" */
  readonly modelId: string
  doGenerate(options: CallOptions): PromiseLike<GenerateResult>
}

/**
 * Prices per million tokens, used to fill `Completion.cost`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Price extends internal.Price {}

/**
 * A shared request budget: at most `requests` requests start in any window
 * of length `interval`.
 *
 * @since 0.3.0
 * @category models
 */
export interface RateLimit extends internal.RateLimit {}

/**
 * Options of a model over the AI SDK. Everything is optional.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options extends internal.PolicyOptions {
  /** the model's name in errors, spans and metrics; default its `modelId` */
  readonly model?: string | undefined
  readonly temperature?: number | undefined
  /** cap on generated tokens */
  readonly maxOutputTokens?: number | undefined
  readonly topP?: number | undefined
  readonly seed?: number | undefined
  readonly stopSequences?: ReadonlyArray<string> | undefined
  /** passed to the provider as they are, e.g. `{ openai: { reasoningEffort: "low" } }` */
  readonly providerOptions?: Readonly<Record<string, JsonObject>> | undefined
  /** extra HTTP headers; the values of secret-looking ones (auth, key, token) are registered with `Secrets` */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * secrets replaced by "[redacted]" in every text the model hands out (and
   * registered with `Secrets`): the key given to the provider in code, e.g.
   * `createOpenAI({ apiKey })`. Keys in the known variables
   * (`Secrets.knownKeyVariables`) are registered without it
   */
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
  /** more variables holding secrets, read from the ambient `ConfigProvider` and registered */
  readonly secretVariables?: ReadonlyArray<string> | undefined
  /** per attempt; default 120 seconds */
  readonly timeout?: Duration.DurationInput | undefined
}

const invalid = (field: string, detail: string) => Effect.fail(new ConfigError({ field, detail }))

/** Why a value is not a model this module can call, or `undefined` when it is. */
const problemOf = (model: unknown): string | undefined => {
  if (typeof model === "string") {
    return `got the model id "${model}"; pass a model object such as openai("${model}") (AI Gateway ids are resolved by the ai package, not here)`
  }
  if (typeof model !== "object" || model === null) return `expected an AI SDK language model object, got ${model === null ? "null" : typeof model}`
  const version: unknown = Reflect.get(model, "specificationVersion")
  if (typeof Reflect.get(model, "doGenerate") !== "function") return "expected an AI SDK language model: it has no doGenerate function"
  if (version !== "v3" && version !== "v4") {
    return `the model implements specification ${String(version)}${version === "v2" ? " (ai 5)" : ""}; supported are v3 (ai 6) and v4 (ai 7)`
  }
  return undefined
}

const isNumberIn = (n: unknown, min: number, max: number): boolean => typeof n === "number" && Number.isFinite(n) && n >= min && n <= max

/**
 * Our model over an AI SDK language model object. Fails with a
 * `ConfigError` naming the field when the model or an option is invalid.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (model: Model, options: Options = {}): Effect.Effect<LanguageModel, ConfigError> =>
  Effect.gen(function*() {
    const problem = problemOf(model)
    if (problem !== undefined) return yield* invalid("model", problem)
    const policy = yield* internal.resolvePolicy(options)
    const name = options.model ?? model.modelId
    if (typeof name !== "string" || name.trim() === "") return yield* invalid("model", "the model name must be a non-empty string")
    const { maxOutputTokens, temperature, topP, seed } = options
    if (temperature !== undefined && !isNumberIn(temperature, 0, 2)) return yield* invalid("temperature", `must be between 0 and 2, got ${temperature}`)
    if (topP !== undefined && !isNumberIn(topP, 0, 1)) return yield* invalid("topP", `must be between 0 and 1, got ${topP}`)
    if (maxOutputTokens !== undefined && !(internal.isNonNegativeInteger(maxOutputTokens) && maxOutputTokens > 0)) {
      return yield* invalid("maxOutputTokens", `must be a positive integer, got ${maxOutputTokens}`)
    }
    if (seed !== undefined && !Number.isInteger(seed)) return yield* invalid("seed", `must be an integer, got ${seed}`)
    const secrets = options.secrets ?? []
    if (!Array.isArray(secrets) || secrets.some((s) => !Redacted.isRedacted(s))) {
      return yield* invalid("secrets", "must be a list of Redacted values")
    }
    const variables = options.secretVariables ?? []
    if (!Array.isArray(variables) || variables.some((v) => typeof v !== "string" || v.trim() === "")) {
      return yield* invalid("secretVariables", "must be a list of variable names")
    }
    // the provider read its key from the environment: the known key
    // variables are registered without any user action
    yield* Secrets.registerVariables([...Secrets.knownKeyVariables, ...variables])
    const scrub = Secrets.scrubberWith(
      ...secrets,
      ...Object.entries(options.headers ?? {}).flatMap(([header, value]) =>
        /auth|key|token|secret|cookie/i.test(header) ? [Redacted.make(value.replace(/^(Bearer|Basic)\s+/i, ""))] : []
      )
    )
    const ctx: wire.Context = { model: name, scrub }
    const settings: Omit<CallOptions, "prompt" | "abortSignal"> = {
      ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
      ...(temperature === undefined ? {} : { temperature }),
      ...(topP === undefined ? {} : { topP }),
      ...(seed === undefined ? {} : { seed }),
      ...(options.stopSequences === undefined ? {} : { stopSequences: [...options.stopSequences] }),
      ...(options.headers === undefined ? {} : { headers: { ...options.headers } }),
      ...(options.providerOptions === undefined ? {} : { providerOptions: { ...options.providerOptions } })
    }
    const semaphore = yield* Effect.makeSemaphore(policy.maxConcurrency)
    const awaitSlot = policy.rateLimit === undefined
      ? Effect.void
      : yield* internal.makeRateLimiter(policy.rateLimit.requests, policy.rateLimit.intervalMillis)
    const { timeoutMillis } = policy
    // a server that never answered and refuses connections is not retried for long
    const reachability = retry.makeReachability()

    const attempt = (prompt: Prompt): Effect.Effect<Completion, retry.AttemptFailure> => {
      const call = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.tryPromise({
          // doGenerate has no retries of its own; the signal fires when the
          // fiber is interrupted (the caller's interruption or the timeout
          // below), which cancels the provider's HTTP request
          try: (signal) =>
            Promise.resolve(model.doGenerate({ ...settings, prompt: wire.toSpecPrompt(prompt), abortSignal: signal })).then((r) => {
              reachability.answered()
              return r
            }),
          catch: (cause) => reachability.mark(wire.classify(ctx, cause, now))
        })).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(timeoutMillis),
            onTimeout: (): retry.AttemptFailure => ({ error: new LlmTimeout({ model: name, millis: timeoutMillis }), retryable: true })
          }),
          Effect.flatMap((result) => wire.toCompletion(ctx, policy.price, result))
        )
      // the slot is taken under the permit so that requests start right
      // after their reserved slot, which keeps the rate window exact
      return semaphore.withPermits(1)(Effect.zipRight(awaitSlot, call))
    }

    const schedule = retry.retrySchedule(policy, name)
    const complete = (prompt: Prompt): Effect.Effect<Completion, LlmError> =>
      // no span of its own: the call's one span is `gepa.model` (see
      // `Telemetry.instrumentModel`), which reads the retries and provider
      Effect.zipRight(internal.reportProvider(model.provider), Effect.retry(Effect.suspend(() => attempt(prompt)), schedule)).pipe(
        Effect.mapError((failure) => failure.error)
      )
    return policy.contextWindow === undefined ? { complete } : { complete, contextWindow: policy.contextWindow }
  })

/**
 * The tagged error for an error the AI SDK threw (from `doGenerate`, or
 * from `generateText`, whose `RetryError` stands for its last attempt):
 * an `APICallError`'s HTTP 401/403 is `LlmAuthenticationError`, 404
 * `LlmModelNotFound`, 429 `LlmRateLimited` (with the server's
 * `Retry-After`), 408/409/5xx and connection failures `LlmTransportError`,
 * other 4xx `LlmBadRequest`; an answer the SDK could not read is
 * `LlmResponseError`. The detail is the provider's message, one line,
 * secrets scrubbed.
 *
 * @since 0.3.0
 * @category mapping
 */
export const fromAiSdkError = (
  error: unknown,
  options: { readonly model: string; readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined }
): LlmError => wire.classify({ model: options.model, scrub: Secrets.scrubberWith(...(options.secrets ?? [])) }, wire.unwrapRetries(error), Date.now()).error

const instrumented = (role: ModelRole, model: Model, options: Options) =>
  Effect.map(make(model, options), (made) =>
    instrumentModel(made, {
      role,
      model: options.model ?? (typeof model === "object" && model !== null ? model.modelId : undefined)
    }))

/**
 * The AI SDK model as the `ReflectionModel`; calls are instrumented (see
 * `Telemetry.instrumentModel`).
 *
 * @since 0.3.0
 * @category layers
 */
export const layerReflection = (model: Model, options: Options = {}): Layer.Layer<ReflectionModel, ConfigError> =>
  Layer.effect(ReflectionModel, instrumented("reflection", model, options))

/**
 * The AI SDK model as the `TaskModel`; calls are instrumented (see
 * `Telemetry.instrumentModel`).
 *
 * @since 0.3.0
 * @category layers
 */
export const layerTask = (model: Model, options: Options = {}): Layer.Layer<TaskModel, ConfigError> =>
  Layer.effect(TaskModel, instrumented("task", model, options))
