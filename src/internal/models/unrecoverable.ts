/**
 * Which model failures no retry can fix (`LanguageModel.unrecoverable`): a
 * rejected key, an unknown model, a request the server will never accept, a
 * server that cannot be reached. They stop the run at once; every other
 * failure is transient or concerns one input only.
 *
 * @internal
 */
import { Option } from "effect"
import { ModelUnrecoverable, type ModelRole } from "../../Errors.js"

// `LanguageModel.ts` owns the error classes and imports this module, so this
// module cannot import them back (imports only go down:
// test/imports.test.ts). A failure as far as it decides, by `_tag`; the
// compiler checks there that every `LlmError` is one.
type Failure =
  & { readonly model: string; readonly endpoint?: string | undefined }
  & (
    | { readonly _tag: "LlmAuthenticationError"; readonly status: number; readonly detail: string }
    | { readonly _tag: "LlmBadRequest"; readonly status: number; readonly detail: string; readonly code?: string | undefined }
    | { readonly _tag: "LlmModelNotFound"; readonly detail: string }
    | { readonly _tag: "LlmTransportError"; readonly status?: number | undefined; readonly detail: string; readonly code?: string | undefined }
    | { readonly _tag: "LlmRateLimited" | "LlmTimeout" | "LlmResponseError" }
  )

// 400s that concern one input only (too long, filtered): the next input may
// pass, so they fail the example, not the run
const PER_INPUT_CODES: ReadonlySet<string> = new Set([
  "context_length_exceeded",
  "string_above_max_length",
  "content_policy_violation",
  "content_filter",
  "invalid_prompt"
])
const PER_INPUT_TEXT = /context length|context window|maximum context|too many tokens|too long|content (?:policy|filter|management)/i

/**
 * The failure of a model call as a `ModelUnrecoverable` of `role` when no
 * retry can fix it, `None` otherwise (see `LanguageModel.unrecoverable`).
 *
 * @internal
 */
export const unrecoverable = (error: Failure, role: ModelRole): Option.Option<ModelUnrecoverable> => {
  const base = {
    role,
    model: error.model,
    ...(error.endpoint === undefined ? {} : { endpoint: error.endpoint })
  }
  switch (error._tag) {
    case "LlmAuthenticationError":
      return Option.some(
        new ModelUnrecoverable({
          ...base,
          reason: error.status === 403 ? "permission" : "authentication",
          status: error.status,
          detail: error.detail
        })
      )
    case "LlmModelNotFound":
      return Option.some(new ModelUnrecoverable({ ...base, reason: "model-not-found", status: 404, detail: error.detail }))
    case "LlmBadRequest": {
      if (error.code !== undefined && PER_INPUT_CODES.has(error.code)) return Option.none()
      if (PER_INPUT_TEXT.test(error.detail)) return Option.none()
      return Option.some(
        new ModelUnrecoverable({ ...base, reason: "bad-request", status: error.status, detail: error.detail })
      )
    }
    case "LlmTransportError":
      if (error.status !== undefined) return Option.none()
      if (error.code === "ECONNREFUSED") {
        return Option.some(new ModelUnrecoverable({ ...base, reason: "connection-refused", detail: error.detail }))
      }
      if (error.code === "ENOTFOUND") {
        return Option.some(new ModelUnrecoverable({ ...base, reason: "host-not-found", detail: error.detail }))
      }
      return Option.none()
    default:
      return Option.none()
  }
}
