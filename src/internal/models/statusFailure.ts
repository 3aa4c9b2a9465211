/**
 * The failure of an HTTP error status, as every model layer reads it: 401/403
 * a rejected key and 404 an unknown model (no retry fixes either), 429 rate
 * limited and 408/409/5xx transient (retried, honouring `Retry-After`), any
 * other status a bad request. One place, so the layers cannot drift apart.
 *
 * @internal
 */
import { LlmAuthenticationError, LlmBadRequest, LlmModelNotFound, LlmRateLimited, LlmTransportError } from "../../LanguageModel.js"
import type { AttemptFailure } from "./retry.js"

/**
 * `detail` and `code` are already scrubbed and cut by the caller; `retryAfter`
 * is the server's `Retry-After` in milliseconds, when it sent one.
 *
 * @internal
 */
export const statusFailure = (options: {
  readonly model: string
  readonly endpoint: string | undefined
  readonly status: number
  readonly detail: string
  readonly code: string | undefined
  readonly retryAfter: number | undefined
}): AttemptFailure => {
  const { code, detail, model, retryAfter, status } = options
  const at = options.endpoint === undefined ? {} : { endpoint: options.endpoint }
  if (status === 401 || status === 403) return { error: new LlmAuthenticationError({ model, ...at, status, detail }), retryable: false }
  if (status === 404) return { error: new LlmModelNotFound({ model, ...at, detail }), retryable: false }
  if (status === 429) {
    return {
      error: new LlmRateLimited({ model, ...at, detail, ...(retryAfter === undefined ? {} : { retryAfterMillis: retryAfter }) }),
      retryable: true,
      retryAfterMillis: retryAfter
    }
  }
  if (status === 408 || status === 409 || status >= 500) {
    return { error: new LlmTransportError({ model, ...at, status, detail }), retryable: true, retryAfterMillis: retryAfter }
  }
  return { error: new LlmBadRequest({ model, ...at, status, detail, ...(code === undefined ? {} : { code }) }), retryable: false }
}
