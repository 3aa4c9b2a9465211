/**
 * The call mechanics shared by the model layers: option checks for the call
 * policy, the stats a call reports to its span, a sliding-window rate
 * limiter, pricing, and the scrubbing of what a server says. Retries are in
 * `retry.ts`.
 *
 * @internal
 */
import { Cause, Clock, Duration, Effect, type FiberId, FiberRef, HashSet, Logger, Option, SynchronizedRef } from "effect"
import { globalValue } from "effect/GlobalValue"
import { ConfigError } from "../../Errors.js"
import { field } from "../shared/fields.js"
import * as Secrets from "../../Secrets.js"
import type { Usage } from "../../LanguageModel.js"

/** Prices per million tokens. */
export interface Price {
  readonly inputPerMillion: number
  readonly outputPerMillion: number
}

/** At most `requests` request starts in any window of length `interval`. */
export interface RateLimit {
  readonly requests: number
  readonly interval: Duration.DurationInput
}

/**
 * What one model call reports to its span (see `Telemetry.instrumentModel`,
 * which sets a fresh one around each call): the model layers count their
 * retries and name their provider here, so that the call has one span
 * carrying both, rather than a span of its own per layer.
 */
export interface CallStats {
  retries: number
  provider: string | undefined
}

/**
 * Where a fiber's instrumented call in progress keeps its stats: one slot
 * per fiber, made at its first instrumented call and reused by the next
 * (a fiber runs one call at a time; the fibers a call forks share its slot).
 * Setting the fiber ref around every call instead copied the fiber's refs
 * twice per call, about 10 KB.
 */
export interface CallSlot {
  readonly owner: FiberId.FiberId
  current: CallStats | undefined
}

export const currentCallStats: FiberRef.FiberRef<CallSlot | undefined> = globalValue(
  Symbol.for("effect-gepa/internal/modelCall/currentCallStats"),
  // a joined fiber's slot stays its own: the parent keeps the slot of its calls
  () => FiberRef.unsafeMake<CallSlot | undefined>(undefined, { fork: (slot) => slot, join: (parent) => parent })
)

/** The stats of the instrumented call in progress, if any. */
export const withStats = (f: (stats: CallStats) => void): Effect.Effect<void> =>
  FiberRef.getWith(currentCallStats, (slot) => {
    if (slot?.current !== undefined) f(slot.current)
    return Effect.void
  })

/** Names the provider of the call in progress (when instrumented). */
export const reportProvider = (provider: string): Effect.Effect<void> =>
  withStats((stats) => {
    stats.provider = provider
  })

/** The options every model layer shares (each layer documents its own `timeout` default). */
export interface PolicyOptions {
  /**
   * the longest one request may take (per attempt; retries get their own).
   * On expiry the request is aborted and the attempt counts as a transient
   * failure (`LlmTimeout`), which is retried.
   */
  readonly timeout?: Duration.DurationInput | undefined
  /** retries after the first attempt; default 4 */
  readonly maxRetries?: number | undefined
  /** first backoff delay, doubled on every retry; default 1 second */
  readonly retryBaseDelay?: Duration.DurationInput | undefined
  /**
   * longest wait between attempts; default 60 seconds. A `Retry-After` longer
   * than this ends the retries at once with `LlmRateLimited`.
   */
  readonly maxRetryDelay?: Duration.DurationInput | undefined
  /** requests in flight at once, across all callers; default 16 */
  readonly maxConcurrency?: number | undefined
  /** a shared request budget */
  readonly rateLimit?: RateLimit | undefined
  /** prices per million tokens, to fill `Completion.cost` */
  readonly price?: Price | undefined
  /**
   * the model's context window in tokens (prompt and answer), exposed as
   * `LanguageModel.contextWindow`: `optimizeAnything` sizes its reflection
   * prompt to it (see its `sideInfo.promptBudget`)
   */
  readonly contextWindow?: number | undefined
}

export const policyDefaults = {
  timeoutMillis: 120_000,
  maxRetries: 4,
  retryBaseDelayMillis: 1_000,
  maxRetryDelayMillis: 60_000,
  maxConcurrency: 16
} as const

/** The checked policy, in milliseconds. */
export interface Policy {
  readonly timeoutMillis: number
  readonly maxRetries: number
  readonly retryBaseDelayMillis: number
  readonly maxRetryDelayMillis: number
  readonly maxConcurrency: number
  readonly rateLimit: { readonly requests: number; readonly intervalMillis: number } | undefined
  readonly price: Price | undefined
  readonly contextWindow: number | undefined
}

/** A bad option: one line naming the field. @internal */
export const invalid = (field: string, detail: string) => Effect.fail(new ConfigError({ field, detail }))

export const isNonNegativeInteger = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0

/** A duration option in milliseconds; negative numbers are refused rather than clamped. */
export const millisOf = (
  field: string,
  input: Duration.DurationInput | undefined,
  fallback: number,
  allowZero: boolean
): Effect.Effect<number, ConfigError> => {
  if (input === undefined) return Effect.succeed(fallback)
  // Duration clamps negative numbers to zero, which would hide the mistake
  if (typeof input === "number" && input < 0) return invalid(field, `must not be negative, got ${input}`)
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return invalid(field, `not a duration: ${String(input)}`)
  const millis = Duration.toMillis(decoded.value)
  if (!Number.isFinite(millis)) return invalid(field, "must be finite")
  if (allowZero ? millis < 0 : millis <= 0) return invalid(field, `must be ${allowZero ? "at least 0" : "positive"}`)
  return Effect.succeed(millis)
}

/** Checks the shared options; a `ConfigError` names the first bad field. */
export const resolvePolicy = (
  options: PolicyOptions,
  defaults: Omit<Policy, "rateLimit" | "price" | "contextWindow"> = policyDefaults
): Effect.Effect<Policy, ConfigError> =>
  Effect.gen(function*() {
    const timeoutMillis = yield* millisOf("timeout", options.timeout, defaults.timeoutMillis, false)
    const maxRetries = options.maxRetries ?? defaults.maxRetries
    if (!isNonNegativeInteger(maxRetries)) {
      return yield* invalid("maxRetries", `must be a non-negative integer, got ${maxRetries}`)
    }
    const retryBaseDelayMillis = yield* millisOf(
      "retryBaseDelay",
      options.retryBaseDelay,
      defaults.retryBaseDelayMillis,
      true
    )
    const maxRetryDelayMillis = yield* millisOf(
      "maxRetryDelay",
      options.maxRetryDelay,
      defaults.maxRetryDelayMillis,
      true
    )
    const maxConcurrency = options.maxConcurrency ?? defaults.maxConcurrency
    if (!(isNonNegativeInteger(maxConcurrency) && maxConcurrency > 0)) {
      return yield* invalid("maxConcurrency", `must be a positive integer, got ${maxConcurrency}`)
    }
    let rateLimit: Policy["rateLimit"] = undefined
    if (options.rateLimit !== undefined) {
      const { interval, requests } = options.rateLimit
      if (!(isNonNegativeInteger(requests) && requests > 0)) {
        return yield* invalid("rateLimit.requests", `must be a positive integer, got ${requests}`)
      }
      rateLimit = { requests, intervalMillis: yield* millisOf("rateLimit.interval", interval, 0, false) }
    }
    if (options.price !== undefined) {
      for (const field of ["inputPerMillion", "outputPerMillion"] as const) {
        const p = options.price[field]
        if (!(typeof p === "number" && Number.isFinite(p) && p >= 0)) {
          return yield* invalid(`price.${field}`, `must be a non-negative number, got ${p}`)
        }
      }
    }
    const contextWindow = options.contextWindow
    if (contextWindow !== undefined && !(isNonNegativeInteger(contextWindow) && contextWindow > 0)) {
      return yield* invalid("contextWindow", `must be a positive integer (tokens), got ${contextWindow}`)
    }
    return {
      timeoutMillis,
      maxRetries,
      retryBaseDelayMillis,
      maxRetryDelayMillis,
      maxConcurrency,
      rateLimit,
      price: options.price,
      contextWindow
    }
  })

/** The cost of a call, when both the usage and a price are known. */
export const costOf = (usage: Usage | undefined, price: Price | undefined): number | undefined =>
  usage !== undefined && price !== undefined
    ? (usage.inputTokens * price.inputPerMillion + usage.outputTokens * price.outputPerMillion) / 1_000_000
    : undefined

/**
 * A sliding-window limiter: each acquisition reserves the earliest start
 * time that keeps at most `requests` starts in any `intervalMillis` window,
 * then sleeps until it. Reservations are handed out in order, so the window
 * holds even when many fibers wait at once.
 *
 * Effect's `RateLimiter` is not used: its token bucket lets up to twice
 * `requests` start within one window (a full bucket plus the refills), its
 * fixed window does the same across a window boundary, and it needs a
 * `Scope`, which would change the type of every model constructor.
 */
export const makeRateLimiter = (
  requests: number,
  intervalMillis: number
): Effect.Effect<Effect.Effect<void>> =>
  Effect.map(SynchronizedRef.make<ReadonlyArray<number>>([]), (ref) =>
    Effect.flatMap(
      SynchronizedRef.modifyEffect(ref, (starts) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const recent = starts.filter((t) => t > now - intervalMillis)
          const nth = recent.at(-requests)
          const slot = recent.length < requests || nth === undefined ? now : nth + intervalMillis
          return [slot - now, [...recent, slot]] as const
        })),
      (wait) => (wait > 0 ? Effect.sleep(Duration.millis(wait)) : Effect.void)
    ))

const MAX_DETAIL = 1_000

/**
 * A server's text made fit for an error: secrets scrubbed (with the
 * layer's one scrub, see `Secrets`), on one line, capped.
 */
export const oneLine = (scrub: (text: string) => string, text: string, max: number = MAX_DETAIL): string => {
  const clean = scrub(text).replace(/\s+/g, " ").trim()
  return clean.length > max ? `${clean.slice(0, max)}…` : clean
}

/** `host:port` of a URL (the default port of its scheme when absent); `undefined` when it does not parse. */
export const endpointOf = (url: string): string | undefined => {
  if (!URL.canParse(url)) return undefined
  const u = new URL(url)
  return `${u.hostname}:${u.port === "" ? (u.protocol === "https:" ? "443" : "80") : u.port}`
}

/**
 * The system error code (e.g. "ECONNREFUSED") of a connection failure.
 * Clients nest it: an API error, a TypeError "fetch failed", then an Error
 * with the code (or an AggregateError of them).
 */
export const systemCodeOf = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth++) {
    const code = field(current, "code")
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]+$/.test(code)) return code
    const nested = field(current, "errors")
    current = Array.isArray(nested) && nested.length > 0 ? nested[0] : field(current, "cause")
  }
  return undefined
}

const scrubMessage = (message: unknown): unknown => Array.isArray(message) ? message.map(Secrets.scrubUnknown) : Secrets.scrubUnknown(message)

/**
 * Runs a provider's own code (an `@effect/ai` client) so that nothing it
 * emits can carry a secret past us: its spans are not recorded (the call's
 * one span is ours, see `Telemetry.instrumentModel`; a provider span would
 * carry the server's error body), and its log lines, their annotations and
 * causes go through the scrub of every registered secret.
 */
export const sealed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  effect.pipe(
    Effect.withTracerEnabled(false),
    Effect.locallyWith(FiberRef.currentLoggers, (loggers) =>
      HashSet.map(loggers, (logger) =>
        Logger.mapInputOptions(logger, (options) => ({
          ...options,
          message: scrubMessage(options.message),
          annotations: Secrets.scrubAnnotations(options.annotations),
          cause: Cause.isEmpty(options.cause) ? options.cause : Cause.die(Secrets.scrub(Cause.pretty(options.cause)))
        }))))
  )
