/**
 * The one rule for secrets: every API key the library reads (a model
 * layer's `apiKey`, a model string's key variable, the key variables of an
 * `@effect/ai` provider) is registered here, and every text that leaves a
 * model layer (answers, error details, log lines and their annotations,
 * span attributes) is scrubbed of every registered secret.
 *
 * The registry is process-wide on purpose: a server may echo any key it has
 * seen, and a key echoed by one model's server must not leave through
 * another model's answer (as the next candidate's text, a report, a request
 * to the task model's server). Registering is automatic for the library's
 * own model layers; `register` is for keys an application reads itself.
 *
 * A secret is replaced by `[redacted]` as is, JSON-escaped (once or twice,
 * with or without `\/`) and URL-encoded; for keys of 16+ characters, every
 * run of 8+ characters of the key is replaced too, so a key split across two
 * messages leaves neither half. Values shorter than 8 characters are not
 * registered: they are the placeholders servers without authentication are
 * given ("unused", "EMPTY", "ollama"), and scrubbing those words from every
 * text would mangle it; real API keys are far longer.
 *
 * @since 0.3.0
 */
import { Config, Effect, HashMap, Option, Redacted } from "effect"
import { globalValue } from "effect/GlobalValue"
import * as internal from "./internal/shared/scrub.js"

interface Registry {
  readonly values: Set<string>
  compiled: internal.Compiled
}

const registry = globalValue(Symbol.for("effect-gepa/Secrets/registry"), (): Registry => ({
  values: new Set(),
  compiled: internal.compile([])
}))

/**
 * The shortest value `register` accepts (see the module's docs).
 *
 * @since 0.3.0
 * @category constants
 */
export const minRegisteredLength = 8

/**
 * Registers secrets for every scrub of the process. Idempotent; values
 * shorter than `minRegisteredLength` are ignored.
 *
 * @since 0.3.0
 * @category registry
 */
export const registerSync = (...secrets: ReadonlyArray<Redacted.Redacted<string> | undefined>): void => {
  let changed = false
  for (const secret of secrets) {
    if (secret === undefined || !Redacted.isRedacted(secret)) continue
    const value: unknown = Redacted.value(secret)
    if (typeof value !== "string" || value.trim().length < minRegisteredLength) continue
    for (const v of new Set([value, value.trim()])) {
      if (!registry.values.has(v)) {
        registry.values.add(v)
        changed = true
      }
    }
  }
  if (changed) registry.compiled = internal.compile(registry.values)
}

/**
 * Registers secrets (see `registerSync`).
 *
 * @since 0.3.0
 * @category registry
 */
export const register = (...secrets: ReadonlyArray<Redacted.Redacted<string> | undefined>): Effect.Effect<void> => Effect.sync(() => registerSync(...secrets))

/**
 * The text without any registered secret.
 *
 * @since 0.3.0
 * @category scrubbing
 */
export const scrub = (text: string): string => registry.compiled.size === 0 ? text : registry.compiled.scrub(text)

/**
 * A value with every string inside (deeply: arrays, plain objects) scrubbed;
 * other values are returned as they are.
 *
 * @since 0.3.0
 * @category scrubbing
 */
export const scrubUnknown = (value: unknown): unknown => {
  if (registry.compiled.size === 0) return value
  const go = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return scrub(v)
    if (depth > 8 || typeof v !== "object" || v === null) return v
    if (Array.isArray(v)) return v.map((x) => go(x, depth + 1))
    if (Redacted.isRedacted(v)) return v
    if (Object.getPrototypeOf(v) !== Object.prototype) return v instanceof Error ? scrub(v.message) : v
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) out[k] = go(x, depth + 1)
    return out
  }
  return go(value, 0)
}

/**
 * A scrub of exactly these secrets plus every registered one; the given
 * secrets are registered too.
 *
 * @since 0.3.0
 * @category scrubbing
 */
export const scrubberWith = (...secrets: ReadonlyArray<Redacted.Redacted<string>>): (text: string) => string => {
  registerSync(...secrets)
  return scrub
}

/**
 * Log annotations scrubbed (see `scrubUnknown`), for a logger that prints
 * them.
 *
 * @since 0.3.0
 * @category scrubbing
 */
export const scrubAnnotations = (annotations: HashMap.HashMap<string, unknown>): HashMap.HashMap<string, unknown> =>
  registry.compiled.size === 0 ? annotations : HashMap.map(annotations, scrubUnknown)

/**
 * The API key variables of the providers the library knows, read (when
 * set) and registered by every `@effect/ai` model layer: the key a provider
 * client reads from the same `ConfigProvider` is then scrubbed without any
 * user action.
 *
 * @since 0.3.0
 * @category constants
 */
export const knownKeyVariables: ReadonlyArray<string> = [
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "OPENROUTER_API_KEY",
  "AZURE_OPENAI_API_KEY",
  "MISTRAL_API_KEY",
  "GROQ_API_KEY",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN"
]

/**
 * Reads the variables from the ambient `ConfigProvider` as redacted values
 * and registers those that are set. Never fails: an unset or unreadable
 * variable is skipped.
 *
 * @since 0.3.0
 * @category registry
 */
export const registerVariables = (names: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>> =>
  Effect.forEach(names, (name) =>
    Config.option(Config.redacted(name)).pipe(
      Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>())
    )).pipe(
      Effect.map((found) => found.flatMap((o) => (Option.isSome(o) ? [o.value] : []))),
      Effect.tap((found) => register(...found))
    )

/**
 * Forgets every registered secret. For tests.
 *
 * @since 0.3.0
 * @category registry
 */
export const unsafeClear = (): void => {
  registry.values.clear()
  registry.compiled = internal.compile([])
}
