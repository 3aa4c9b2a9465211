/**
 * The language model service: used as the reflection model (which proposes
 * new component texts) and as the task model of the `DefaultAdapter`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { ModelUnrecoverable, type ModelRole } from "./Errors.js"
import * as simulatedInternal from "./internal/models/simulated.js"
import * as unrecoverableInternal from "./internal/models/unrecoverable.js"
import * as scrubInternal from "./internal/shared/scrub.js"

/**
 * One chat message sent to a model: its role and text.
 *
 * @since 0.1.0
 * @category models
 */
export interface Message {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

/**
 * A prompt: a single user message, or a full message list.
 *
 * @since 0.1.0
 * @category models
 */
export type Prompt = string | { readonly messages: ReadonlyArray<Message> }

/**
 * The tokens a model call consumed: input and output.
 *
 * @since 0.1.0
 * @category models
 */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
}

/**
 * Why the model stopped generating. `length` means the answer was cut off.
 *
 * @since 0.1.0
 * @category models
 */
export type FinishReason = "stop" | "length" | "content_filter" | "tool_calls" | "other"

/**
 * One model answer, with token usage and its cost when the model layer has a
 * price table.
 *
 * @since 0.1.0
 * @category models
 */
export interface Completion {
  readonly text: string
  readonly finishReason: FinishReason
  readonly usage?: Usage | undefined
  /** cost of this call in the price table's currency (USD by convention) */
  readonly cost?: number | undefined
  readonly model?: string | undefined
}

const at = (endpoint: string | undefined): string => (endpoint === undefined ? "" : ` at ${endpoint}`)

/**
 * The API key was rejected (HTTP 401/403). Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class LlmAuthenticationError extends Schema.TaggedError<LlmAuthenticationError>()("LlmAuthenticationError", {
  model: Schema.String,
  status: Schema.Number,
  detail: Schema.String,
  /** `host:port` of the server, when known (since 0.2.0) */
  endpoint: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `Authentication failed for model "${this.model}"${at(this.endpoint)} (HTTP ${this.status}): ${this.detail}`
  }
}

/**
 * The server rejected the request (HTTP 400/422). Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class LlmBadRequest extends Schema.TaggedError<LlmBadRequest>()("LlmBadRequest", {
  model: Schema.String,
  status: Schema.Number,
  detail: Schema.String,
  /** `host:port` of the server, when known (since 0.2.0) */
  endpoint: Schema.optional(Schema.String),
  /** the server's error code, e.g. "context_length_exceeded" (since 0.2.0) */
  code: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `Bad request to model "${this.model}"${at(this.endpoint)} (HTTP ${this.status}): ${this.detail}`
  }
}

/**
 * The model does not exist on the server (HTTP 404). Not retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class LlmModelNotFound extends Schema.TaggedError<LlmModelNotFound>()("LlmModelNotFound", {
  model: Schema.String,
  detail: Schema.String,
  /** `host:port` of the server, when known (since 0.2.0) */
  endpoint: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `Model "${this.model}" not found${at(this.endpoint)}: ${this.detail}`
  }
}

/**
 * Still rate limited (HTTP 429) after the retries.
 *
 * @since 0.1.0
 * @category errors
 */
export class LlmRateLimited extends Schema.TaggedError<LlmRateLimited>()("LlmRateLimited", {
  model: Schema.String,
  retryAfterMillis: Schema.optional(Schema.Number),
  detail: Schema.String,
  /** `host:port` of the server, when known (since 0.2.0) */
  endpoint: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `Rate limited by model "${this.model}"${at(this.endpoint)}: ${this.detail}`
  }
}

/**
 * A call took longer than its timeout.
 *
 * @since 0.1.0
 * @category errors
 */
export class LlmTimeout extends Schema.TaggedError<LlmTimeout>()("LlmTimeout", {
  model: Schema.String,
  millis: Schema.Number,
  /** `host:port` of the server, when known (since 0.2.0) */
  endpoint: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `Model "${this.model}"${at(this.endpoint)} did not answer within ${this.millis} ms`
  }
}

/**
 * The connection failed, or the server kept answering 5xx. `code` is the
 * system error code of a connection failure (e.g. "ECONNREFUSED").
 *
 * @since 0.1.0
 * @category errors
 */
export class LlmTransportError extends Schema.TaggedError<LlmTransportError>()("LlmTransportError", {
  model: Schema.String,
  status: Schema.optional(Schema.Number),
  detail: Schema.String,
  /** `host:port` of the server, when known (since 0.2.0) */
  endpoint: Schema.optional(Schema.String),
  /** system error code of a connection failure, e.g. "ECONNREFUSED" (since 0.2.0) */
  code: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `Transport error calling model "${this.model}"${at(this.endpoint)}${this.status === undefined ? "" : ` (HTTP ${this.status})`}: ${this.detail}`
  }
}

/**
 * The server answered with a body that is not a valid completion.
 *
 * @since 0.1.0
 * @category errors
 */
export class LlmResponseError extends Schema.TaggedError<LlmResponseError>()("LlmResponseError", {
  model: Schema.String,
  detail: Schema.String,
  /** `host:port` of the server, when known (since 0.2.0) */
  endpoint: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `Malformed response from model "${this.model}"${at(this.endpoint)}: ${this.detail}`
  }
}

/**
 * Every failure of a language model call.
 *
 * @since 0.1.0
 * @category errors
 */
export type LlmError =
  | LlmAuthenticationError
  | LlmBadRequest
  | LlmModelNotFound
  | LlmRateLimited
  | LlmTimeout
  | LlmTransportError
  | LlmResponseError

/**
 * The service shape.
 *
 * @since 0.1.0
 * @category models
 */
export interface LanguageModel {
  readonly complete: (prompt: Prompt) => Effect.Effect<Completion, LlmError>
  /**
   * the model's context window in tokens (prompt and answer), when its layer
   * knows it (the `contextWindow` option of the model layers): the
   * reflection prompt of `optimizeAnything` is sized to it. Since 0.3.0.
   */
  readonly contextWindow?: number | undefined
}

/**
 * The model that reflects on feedback and proposes new component texts.
 *
 * @since 0.1.0
 * @category tags
 */
export class ReflectionModel extends Context.Tag("effect-gepa/ReflectionModel")<ReflectionModel, LanguageModel>() {}

/**
 * The model that runs the user's task in the `DefaultAdapter`.
 *
 * @since 0.1.0
 * @category tags
 */
export class TaskModel extends Context.Tag("effect-gepa/TaskModel")<TaskModel, LanguageModel>() {}

/**
 * The prompt's messages.
 *
 * @since 0.1.0
 * @category utils
 */
export const messages = (prompt: Prompt): ReadonlyArray<Message> => typeof prompt === "string" ? [{ role: "user", content: prompt }] : prompt.messages

/**
 * The prompt as one text (system and user messages joined), for models that
 * take plain text.
 *
 * @since 0.1.0
 * @category utils
 */
export const promptText = (prompt: Prompt): string => typeof prompt === "string" ? prompt : prompt.messages.map((m) => m.content).join("\n\n")

/**
 * A model from a function of the prompt text, answering with finish reason
 * `stop`. Handy for deterministic simulated models.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFunction: (f: (prompt: Prompt) => string | Effect.Effect<string, LlmError>) => LanguageModel = simulatedInternal.fromFunction

/**
 * A model for code that does not use Effect: `complete` receives the prompt
 * and an `AbortSignal` (fired when the call is interrupted) and returns the
 * answer's text or a Promise of it. A thrown error or a rejection becomes an
 * `LlmTransportError` naming `model` (default "custom").
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromPromise = (
  complete: (prompt: Prompt, signal: AbortSignal) => string | PromiseLike<string>,
  options?: { readonly model?: string }
): LanguageModel => ({
  complete: (prompt) =>
    Effect.tryPromise({
      // async turns a thrown error into a rejection and a plain value into a Promise
      try: async (signal) => await complete(prompt, signal),
      catch: (cause) =>
        new LlmTransportError({
          model: options?.model ?? "custom",
          detail: cause instanceof Error ? cause.message : String(cause)
        })
    }).pipe(Effect.map((text): Completion => ({ text, finishReason: "stop" })))
})

/**
 * A model that answers with the given completions in order, then repeats the
 * last one. For tests.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scripted: (answers: ReadonlyArray<string | Completion>) => Effect.Effect<LanguageModel> = simulatedInternal.scripted

/**
 * A layer providing `model` as the reflection model.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerReflection = (model: LanguageModel): Layer.Layer<ReflectionModel> => Layer.succeed(ReflectionModel, model)

/**
 * A layer providing `model` as the task model.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerTask = (model: LanguageModel): Layer.Layer<TaskModel> => Layer.succeed(TaskModel, model)

/**
 * The old name of `layerReflection`.
 *
 * @deprecated Use `layerReflection` (same function); removed in 0.4.0.
 * @since 0.1.0
 * @category layers
 */
export const reflectionLayer: (model: LanguageModel) => Layer.Layer<ReflectionModel> = layerReflection

/**
 * The old name of `layerTask`.
 *
 * @deprecated Use `layerTask` (same function); removed in 0.4.0.
 * @since 0.1.0
 * @category layers
 */
export const taskLayer: (model: LanguageModel) => Layer.Layer<TaskModel> = layerTask

/**
 * The shortest secret that is scrubbed: shorter values are placeholders
 * ("unused", "x") for servers without authentication, and replacing them
 * would mangle every message.
 *
 * @since 0.2.0
 * @category constants
 */
export const minScrubbedSecretLength = scrubInternal.minSecretLength

/**
 * A scrub of exactly these secrets: a function that replaces every
 * occurrence of them in a text with `[redacted]`, in the forms a server may
 * echo them (as is, JSON-escaped, URL-encoded), and every run of 8+
 * characters of a secret of 16+ characters (a key split across messages).
 * The model layers scrub with every secret of the process instead (see
 * `Secrets`), and register their own keys there.
 *
 * @since 0.2.0
 * @category utils
 */
export const scrubber = (...secrets: ReadonlyArray<Redacted.Redacted<string>>): (text: string) => string =>
  scrubInternal.compile(secrets.map((s) => Redacted.value(s))).scrub

const isLlmError = (u: unknown): u is LlmError =>
  typeof u === "object" && u !== null && "_tag" in u &&
  (u instanceof LlmAuthenticationError || u instanceof LlmBadRequest || u instanceof LlmModelNotFound ||
    u instanceof LlmRateLimited || u instanceof LlmTimeout || u instanceof LlmTransportError ||
    u instanceof LlmResponseError)

/**
 * The failure as a `ModelUnrecoverable` of `role` when no retry can fix it,
 * `None` when it is transient or concerns one input only:
 *
 * - HTTP 401 (`authentication`) and 403 (`permission`);
 * - HTTP 404 (`model-not-found`);
 * - HTTP 400/422 (`bad-request`), except those that concern one input only
 *   (context length exceeded, content filtered), which fail that example;
 * - a connection refused (`connection-refused`) or a host name that does
 *   not resolve (`host-not-found`), as reported after the retries.
 *
 * Rate limits, timeouts, 5xx, resets and malformed bodies are transient.
 * A `ModelUnrecoverable` given in is returned as it is.
 *
 * @since 0.2.0
 * @category errors
 */
export const unrecoverable = (error: unknown, role: ModelRole): Option.Option<ModelUnrecoverable> => {
  if (error instanceof ModelUnrecoverable) return Option.some(error)
  return isLlmError(error) ? unrecoverableInternal.unrecoverable(error, role) : Option.none()
}

/**
 * Whether no retry can fix the failure (see `unrecoverable`).
 *
 * @since 0.2.0
 * @category errors
 */
export const isUnrecoverable = (error: unknown): boolean => Option.isSome(unrecoverable(error, "task"))
