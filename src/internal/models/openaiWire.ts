/**
 * The wire side of `OpenAiLanguageModel`: reading the chat-completions
 * API's answers and failures into completions and `LlmError`s, each error
 * detail scrubbed, on one line and carrying the server's `host:port`.
 *
 * @internal
 */
import { Effect, Option, ParseResult, Schema } from "effect"
import OpenAI from "openai"
import {
  type Completion,
  type FinishReason,
  LlmAuthenticationError,
  LlmBadRequest,
  LlmModelNotFound,
  LlmRateLimited,
  LlmResponseError,
  LlmTimeout,
  LlmTransportError,
  type Usage
} from "../../LanguageModel.js"
import { field, isRecord } from "../shared/fields.js"
import { oneLine, type Price, systemCodeOf } from "./call.js"
import { type AttemptFailure, parseRetryAfter } from "./retry.js"

/** See `OpenAiLanguageModel.retryAfterMillis`. */
export const retryAfterMillis = (
  headers: { readonly get: (name: string) => string | null } | undefined,
  nowMillis: number
): Option.Option<number> => (headers === undefined ? Option.none() : parseRetryAfter((name) => headers.get(name), nowMillis))

/** An attempt's failure, before retries are decided (shared by the model layers). */
export type { AttemptFailure }

const MAX_DETAIL = 1_000

/** What every error of one model instance carries. */
export interface Context {
  readonly model: string
  /** `host:port` of the server */
  readonly endpoint: string
  readonly timeoutMillis: number
  /** the layer's one scrub (every secret registered with `Secrets`) */
  readonly scrub: (text: string) => string
}

/**
 * A server's text made fit for an error: secrets scrubbed, on one line,
 * capped. Every detail of every error of this module goes through here.
 */
export const detailOf = (ctx: Context, text: string, max: number = MAX_DETAIL): string => oneLine(ctx.scrub, text, max)

const errorObjectOf = (body: unknown): Readonly<Record<string, unknown>> | undefined => {
  if (!isRecord(body)) return undefined
  const inner = body["error"]
  return isRecord(inner) ? inner : body
}

const errorBodyMessage = (body: unknown): string | undefined => {
  const message = errorObjectOf(body)?.message
  return typeof message === "string" ? message : undefined
}

/** An HTTP status a proxy put inside an error body sent with HTTP 200. */
const embeddedStatus = (body: unknown): number | undefined => {
  const source = errorObjectOf(body)
  if (source === undefined) return undefined
  for (const field of ["status", "code"] as const) {
    const raw = source[field]
    const n = typeof raw === "string" && /^\d{3}$/.test(raw) ? Number(raw) : raw
    if (typeof n === "number" && Number.isInteger(n) && n >= 400 && n <= 599) return n
  }
  return undefined
}

// a connection that breaks while the body is read: undici says "terminated"
const RESET_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ETIMEDOUT",
  "ECONNABORTED"
])
const isReset = (error: Error): boolean => {
  const code = systemCodeOf(error)
  return error.message === "terminated" || (code !== undefined && RESET_CODES.has(code))
}

/** The failure of an HTTP status, with the server's words as the detail. */
const fromStatus = (
  ctx: Context,
  status: number,
  message: string,
  serverCode: string | undefined,
  retryAfter: number | undefined
): AttemptFailure => {
  const { endpoint, model } = ctx
  const detail = detailOf(ctx, message)
  if (status === 401 || status === 403) {
    return { error: new LlmAuthenticationError({ model, endpoint, status, detail }), retryable: false }
  }
  if (status === 404) return { error: new LlmModelNotFound({ model, endpoint, detail }), retryable: false }
  if (status === 429) {
    return {
      error: new LlmRateLimited({
        model,
        endpoint,
        detail,
        ...(retryAfter === undefined ? {} : { retryAfterMillis: retryAfter })
      }),
      retryable: true,
      retryAfterMillis: retryAfter
    }
  }
  if (status === 408 || status === 409 || status >= 500) {
    return { error: new LlmTransportError({ model, endpoint, status, detail }), retryable: true, retryAfterMillis: retryAfter }
  }
  return {
    error: new LlmBadRequest({
      model,
      endpoint,
      status,
      detail,
      ...(serverCode === undefined ? {} : { code: detailOf(ctx, serverCode, 100) })
    }),
    retryable: false
  }
}

export const classify = (ctx: Context, cause: unknown, nowMillis: number): AttemptFailure => {
  const { endpoint, model } = ctx
  // order matters: the timeout and abort errors are subclasses of the
  // connection error, which is a subclass of APIError
  if (cause instanceof OpenAI.APIConnectionTimeoutError) {
    return { error: new LlmTimeout({ model, endpoint, millis: ctx.timeoutMillis }), retryable: true }
  }
  if (cause instanceof OpenAI.APIUserAbortError) {
    return { error: new LlmTransportError({ model, endpoint, detail: "request aborted" }), retryable: false }
  }
  if (cause instanceof OpenAI.APIConnectionError) {
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : ""
    const code = systemCodeOf(cause.cause)
    return {
      error: new LlmTransportError({
        model,
        endpoint,
        detail: detailOf(ctx, `${cause.message}${inner}${code === undefined || inner.includes(code) ? "" : ` (${code})`}`),
        ...(code === undefined ? {} : { code })
      }),
      retryable: true
    }
  }
  if (cause instanceof OpenAI.APIError) {
    const status = typeof cause.status === "number" ? cause.status : undefined
    // the SDK's own message prefixes the status; the server's message alone reads better
    const message = errorBodyMessage(cause.error) ?? cause.message
    if (status === undefined) {
      return { error: new LlmTransportError({ model, endpoint, detail: detailOf(ctx, message) }), retryable: true }
    }
    const serverCode = typeof cause.code === "string" ? cause.code : undefined
    return fromStatus(ctx, status, message, serverCode, Option.getOrUndefined(retryAfterMillis(cause.headers, nowMillis)))
  }
  if (cause instanceof SyntaxError) {
    return {
      error: new LlmResponseError({ model, endpoint, detail: detailOf(ctx, `response body is not valid JSON: ${cause.message}`) }),
      retryable: false
    }
  }
  if (cause instanceof Error && isReset(cause)) {
    // the connection broke while the body was read: as transient as a
    // reset before the headers
    const code = systemCodeOf(cause)
    return {
      error: new LlmTransportError({
        model,
        endpoint,
        detail: detailOf(ctx, `the connection broke while the response was read (${code ?? cause.message})`),
        ...(code === undefined ? {} : { code })
      }),
      retryable: true
    }
  }
  const text = cause instanceof Error ? cause.message : String(cause)
  return { error: new LlmTransportError({ model, endpoint, detail: detailOf(ctx, text) }), retryable: false }
}

const ChatResponse = Schema.Struct({
  model: Schema.optional(Schema.NullOr(Schema.String)),
  choices: Schema.NonEmptyArray(
    Schema.Struct({
      message: Schema.Struct({
        content: Schema.optional(Schema.NullOr(Schema.String)),
        refusal: Schema.optional(Schema.NullOr(Schema.String))
      }),
      finish_reason: Schema.optional(Schema.NullOr(Schema.String))
    })
  ),
  // read leniently: a server with odd usage accounting still answers
  usage: Schema.optional(Schema.Unknown)
})

const finishReasonOf = (raw: string | null | undefined): FinishReason => {
  switch (raw) {
    case "stop":
    case "length":
    case "content_filter":
    case "tool_calls":
      return raw
    case "function_call":
      return "tool_calls"
    default:
      return "other"
  }
}

const usageOf = (raw: unknown): Usage | undefined => {
  const prompt_tokens = field(raw, "prompt_tokens")
  const completion_tokens = field(raw, "completion_tokens")
  return typeof prompt_tokens === "number" && typeof completion_tokens === "number"
    ? { inputTokens: prompt_tokens, outputTokens: completion_tokens }
    : undefined
}

/** The first problem of a body that is not a completion, on one line. */
const shapeProblem = (body: unknown, error: ParseResult.ParseError): string => {
  const choices = field(body, "choices")
  if (Array.isArray(choices) && choices.length === 0) return "the response has no choices"
  const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (first === undefined) return "not a chat completion"
  const path = first.path.length === 0 ? "the body" : first.path.map(String).join(".")
  return `not a chat completion: at ${path}: ${first.message}`
}

export const toCompletion = (
  ctx: Context,
  price: Price | undefined,
  body: unknown
): Effect.Effect<Completion, AttemptFailure> => {
  const { endpoint, model } = ctx
  const decoded = Schema.decodeUnknownEither(ChatResponse)(body)
  if (decoded._tag === "Left") {
    if (typeof body === "string") {
      return Effect.fail({
        error: new LlmResponseError({ model, endpoint, detail: `expected a JSON completion, got text: ${detailOf(ctx, body, 200)}` }),
        retryable: false
      })
    }
    const serverMessage = errorBodyMessage(body)
    if (serverMessage !== undefined) {
      // an error sent with HTTP 200 (some proxies do): read as the status it carries
      const status = embeddedStatus(body)
      if (status !== undefined) {
        const code = errorObjectOf(body)?.type
        return Effect.fail(fromStatus(ctx, status, serverMessage, typeof code === "string" ? code : undefined, undefined))
      }
      return Effect.fail({
        error: new LlmResponseError({
          model,
          endpoint,
          detail: `no completion in the response; the server says: ${detailOf(ctx, serverMessage)}`
        }),
        retryable: false
      })
    }
    return Effect.fail({
      error: new LlmResponseError({ model, endpoint, detail: detailOf(ctx, shapeProblem(body, decoded.left)) }),
      retryable: false
    })
  }
  const response = decoded.right
  const choice = response.choices[0]
  // the answer leaves the model layer too: scrubbed like every other text
  const text = ctx.scrub(choice.message.content ?? "")
  const refused = text === "" && typeof choice.message.refusal === "string" && choice.message.refusal !== ""
  const usage = usageOf(response.usage)
  const cost = usage !== undefined && price !== undefined
    ? (usage.inputTokens * price.inputPerMillion + usage.outputTokens * price.outputPerMillion) / 1_000_000
    : undefined
  return Effect.succeed({
    text,
    finishReason: refused ? "content_filter" : finishReasonOf(choice.finish_reason),
    usage,
    cost,
    model: ctx.scrub(response.model ?? model)
  })
}
