/**
 * The wire side of `AiSdkLanguageModel`: the AI SDK's language model
 * specification (v3 of `ai` 6, v4 of `ai` 7) as structural types, our
 * prompt in its terms, its results as completions and its errors as
 * `LlmError`s, each detail scrubbed and on one line.
 *
 * Nothing here imports the AI SDK: its errors are recognised by the `name`
 * every `AISDKError` carries (`AI_APICallError`, ...), so the package stays
 * an optional peer and two copies of it in one app are read alike.
 *
 * @internal
 */
import { Effect, Option } from "effect"
import {
  type Completion,
  type FinishReason,
  LlmResponseError,
  LlmTransportError,
  messages as promptMessages,
  type Prompt,
  type Usage
} from "../../LanguageModel.js"
import { field, isRecord } from "../shared/fields.js"
import { costOf, endpointOf, oneLine, type Price, systemCodeOf } from "./call.js"
import { type AttemptFailure, parseRetryAfter } from "./retry.js"
import { statusFailure } from "./statusFailure.js"

/** A JSON value, as the specification's provider options hold them (mutable, as the specification spells it). */
export type JsonValue = null | string | number | boolean | JsonObject | Array<JsonValue>

/** A JSON object, as the specification spells it. */
export interface JsonObject {
  [key: string]: JsonValue | undefined
}

/** The prompt messages we send: system, user and assistant text. */
export type SpecMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: Array<{ type: "text"; text: string }> }
  | { role: "assistant"; content: Array<{ type: "text"; text: string }> }

/**
 * The call options we send: a subset of the specification's (v3 and v4
 * alike), so every model of either version accepts them.
 */
export interface SpecCallOptions {
  prompt: Array<SpecMessage>
  maxOutputTokens?: number
  temperature?: number
  topP?: number
  seed?: number
  stopSequences?: Array<string>
  abortSignal?: AbortSignal
  headers?: Record<string, string | undefined>
  providerOptions?: Record<string, JsonObject>
}

/** What we read of a token count: v3 and v4 report `{ total }`. */
export type SpecTokens = { readonly total?: number | undefined } | number | undefined

/** What we read of a `doGenerate` result (v3 and v4 alike). */
export interface SpecGenerateResult {
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: unknown }>
  readonly finishReason: { readonly unified: string; readonly raw?: string | undefined } | string
  readonly usage?: { readonly inputTokens?: SpecTokens; readonly outputTokens?: SpecTokens } | undefined
  readonly response?: { readonly modelId?: string | undefined } | undefined
}

/** What every failure of one model instance carries. */
export interface Context {
  readonly model: string
  /** the layer's one scrub (every secret registered with `Secrets`) */
  readonly scrub: (text: string) => string
}

/** Our prompt as the specification's messages. */
export const toSpecPrompt = (prompt: Prompt): Array<SpecMessage> =>
  promptMessages(prompt).map((m): SpecMessage =>
    m.role === "system"
      ? { role: "system", content: m.content }
      : { role: m.role, content: [{ type: "text", text: m.content }] }
  )

/** The specification's finish reason (`unified` in v3/v4) in our terms. */
export const finishReasonOf = (reason: SpecGenerateResult["finishReason"]): FinishReason => {
  switch (typeof reason === "string" ? reason : reason.unified) {
    case "stop":
      return "stop"
    case "length":
      return "length"
    case "content-filter":
      return "content_filter"
    case "tool-calls":
      return "tool_calls"
    default:
      // "error", "interrupted" (v4), "other", and whatever a later version adds
      return "other"
  }
}

const tokens = (t: SpecTokens): number | undefined => {
  const n = typeof t === "number" ? t : t?.total
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined
}

/** The token usage, when the provider reported both counts. */
export const usageOf = (usage: SpecGenerateResult["usage"]): Usage | undefined => {
  const inputTokens = tokens(usage?.inputTokens)
  const outputTokens = tokens(usage?.outputTokens)
  return inputTokens !== undefined && outputTokens !== undefined ? { inputTokens, outputTokens } : undefined
}

/**
 * The result as a completion: its text parts joined (reasoning, tool calls
 * and files are not the answer), scrubbed like every text the layer hands
 * out.
 */
export const toCompletion = (
  ctx: Context,
  price: Price | undefined,
  result: unknown
): Effect.Effect<Completion, AttemptFailure> => {
  const content = field(result, "content")
  const finish = field(result, "finishReason")
  if (!Array.isArray(content) || !(typeof finish === "string" || typeof field(finish, "unified") === "string")) {
    return Effect.fail({
      error: new LlmResponseError({
        model: ctx.model,
        detail: "the model's doGenerate returned no content or finish reason (is it an AI SDK language model of specification v3 or v4?)"
      }),
      retryable: false
    })
  }
  // read field by field: a provider outside the specification must not crash the call
  const text = content.flatMap((part) => {
    const t = field(part, "text")
    return field(part, "type") === "text" && typeof t === "string" ? [t] : []
  }).join("")
  const usage = usageOf({
    inputTokens: tokensOf(field(field(result, "usage"), "inputTokens")),
    outputTokens: tokensOf(field(field(result, "usage"), "outputTokens"))
  })
  const responseModel = field(field(result, "response"), "modelId")
  return Effect.succeed({
    text: ctx.scrub(text),
    finishReason: finishReasonOf(typeof finish === "string" ? finish : { unified: String(field(finish, "unified")) }),
    usage,
    cost: costOf(usage, price),
    model: ctx.scrub(typeof responseModel === "string" && responseModel !== "" ? responseModel : ctx.model)
  })
}

/** A token count as the specification gives it (`{ total }`, or a number), else nothing. */
const tokensOf = (
  value: unknown
): SpecTokens => (typeof value === "number" ? value : { total: typeof field(value, "total") === "number" ? Number(field(value, "total")) : undefined })

/**
 * The error a `generateText` call threw, seen through the AI SDK's own
 * retries: a `RetryError` stands for its last attempt's error.
 */
export const unwrapRetries = (cause: unknown): unknown => {
  let current = cause
  for (let depth = 0; depth < 4 && field(current, "name") === "AI_RetryError"; depth++) {
    const last = field(current, "lastError")
    if (last === undefined) break
    current = last
  }
  return current
}

const errorObjectOf = (body: unknown): Readonly<Record<string, unknown>> | undefined => {
  let parsed: unknown = body
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body)
    } catch {
      return undefined
    }
  }
  if (!isRecord(parsed)) return undefined
  const inner = parsed["error"]
  return isRecord(inner) ? inner : parsed
}

/** The server's error code (`context_length_exceeded`, ...) in the parsed data or the raw body. */
const serverCode = (data: unknown, body: unknown): string | undefined => {
  for (const source of [errorObjectOf(data), errorObjectOf(body)]) {
    for (const key of ["code", "type"] as const) {
      const value = source?.[key]
      if (typeof value === "string" && value !== "") return value
    }
  }
  return undefined
}

/** An HTTP status a proxy put inside an error body sent with HTTP 200. */
const embeddedStatus = (body: unknown): number | undefined => {
  const source = errorObjectOf(body)
  for (const key of ["status", "code"] as const) {
    const raw = source?.[key]
    const n = typeof raw === "string" && /^\d{3}$/.test(raw) ? Number(raw) : raw
    if (typeof n === "number" && Number.isInteger(n) && n >= 400 && n <= 599) return n
  }
  return undefined
}

// a connection that breaks while the body is read: undici says "terminated"
const RESET_CODES: ReadonlySet<string> = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED", "ETIMEDOUT", "ECONNABORTED"])

// the AI SDK's errors of an answer it could not read
const RESPONSE_ERRORS: ReadonlySet<string> = new Set([
  "AI_EmptyResponseBodyError",
  "AI_JSONParseError",
  "AI_TypeValidationError",
  "AI_InvalidResponseDataError",
  "AI_NoContentGeneratedError"
])

/** A header of the response, whatever the case of its name. */
const headerOf = (headers: unknown) => (name: string): string | undefined => {
  if (!isRecord(headers)) return undefined
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && typeof value === "string") return value
  }
  return undefined
}

/**
 * The failure of an HTTP status, with the provider's message as the detail:
 * the same statuses as every model layer (401/403, 404, 429, 408/409/5xx
 * retried, other 4xx not).
 */
const fromStatus = (
  ctx: Context,
  status: number,
  detail: string,
  endpoint: string | undefined,
  code: string | undefined,
  retryAfter: number | undefined
): AttemptFailure =>
  statusFailure({ model: ctx.model, endpoint, status, detail, code: code === undefined ? undefined : oneLine(ctx.scrub, code, 100), retryAfter })

/**
 * The failure of a `doGenerate` rejection: an `APICallError` with a status
 * by that status (its `Retry-After` honoured), one without (the connection
 * failed) as a retried transport error naming the system code, an answer
 * the SDK could not read as `LlmResponseError`, anything else (a missing
 * key, an unsupported setting) as a transport error that is not retried.
 */
export const classify = (ctx: Context, cause: unknown, nowMillis: number): AttemptFailure => {
  const { model } = ctx
  const detailOf = (text: string) => oneLine(ctx.scrub, text)
  const name = field(cause, "name")
  const message = cause instanceof Error ? cause.message : typeof field(cause, "message") === "string" ? String(field(cause, "message")) : String(cause)
  if (name === "AI_APICallError") {
    const url = field(cause, "url")
    const endpoint = typeof url === "string" ? endpointOf(url) : undefined
    const status = field(cause, "statusCode")
    if (typeof status === "number") {
      const after = Option.getOrUndefined(parseRetryAfter(headerOf(field(cause, "responseHeaders")), nowMillis))
      const body = field(cause, "responseBody")
      const code = serverCode(field(cause, "data"), body)
      if (status >= 400) return fromStatus(ctx, status, detailOf(message), endpoint, code, after)
      // an answer the SDK could not read ("Invalid JSON response"): an
      // error a proxy sent with HTTP 200 is read as the status it carries
      const embedded = embeddedStatus(body)
      const serverMessage = field(errorObjectOf(body), "message")
      if (embedded !== undefined) {
        return fromStatus(ctx, embedded, detailOf(typeof serverMessage === "string" ? serverMessage : message), endpoint, code, after)
      }
      return {
        error: new LlmResponseError({
          model,
          ...(endpoint === undefined ? {} : { endpoint }),
          detail: detailOf(typeof serverMessage === "string" ? `${message}; the server says: ${serverMessage}` : message)
        }),
        retryable: false
      }
    }
    // no status: the request never got an answer (refused, reset, DNS)
    const code = systemCodeOf(field(cause, "cause"))
    const inner = field(field(cause, "cause"), "message")
    const text = `${message}${typeof inner === "string" && !message.includes(inner) ? `: ${inner}` : ""}`
    return {
      error: new LlmTransportError({
        model,
        detail: detailOf(`${text}${code === undefined || text.includes(code) ? "" : ` (${code})`}`),
        ...(endpoint === undefined ? {} : { endpoint }),
        ...(code === undefined ? {} : { code })
      }),
      retryable: field(cause, "isRetryable") !== false
    }
  }
  if (typeof name === "string" && RESPONSE_ERRORS.has(name)) {
    return { error: new LlmResponseError({ model, detail: detailOf(message) }), retryable: false }
  }
  const code = systemCodeOf(cause)
  if (cause instanceof Error && (message === "terminated" || (code !== undefined && RESET_CODES.has(code)))) {
    return {
      error: new LlmTransportError({
        model,
        detail: detailOf(`the connection broke while the response was read (${code ?? message})`),
        ...(code === undefined ? {} : { code })
      }),
      retryable: true
    }
  }
  return {
    error: new LlmTransportError({ model, detail: detailOf(typeof name === "string" && name.startsWith("AI_") ? `${name}: ${message}` : message) }),
    retryable: false
  }
}
