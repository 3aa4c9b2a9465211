/**
 * Metrics score one output of the user's system against its example and
 * explain the score in words. The explanation is what the reflection model
 * learns from, so the built-ins say what was expected and what came out.
 *
 * @since 0.1.0
 */
import { Effect, Either } from "effect"
import { field } from "./internal/shared/fields.js"
import { at } from "./internal/shared/invariant.js"

/**
 * A score (higher is better, typically in [0, 1]) with optional feedback.
 *
 * @since 0.1.0
 * @category models
 */
export interface MetricResult {
  readonly score: number
  readonly feedback?: string | undefined
}

/**
 * Scores an output for an example, directly or as an effect (for example an
 * LLM judge).
 *
 * @since 0.1.0
 * @category models
 */
export type Metric<D, O, E = never> = (
  example: D,
  output: O
) => MetricResult | Effect.Effect<MetricResult, E>

/**
 * A metric that scores directly. The built-ins are of this kind, so their
 * results can be read without running an effect; every `SyncMetric` is a
 * `Metric`.
 *
 * @since 0.1.0
 * @category models
 */
export type SyncMetric<D, O> = (example: D, output: O) => MetricResult

/**
 * Runs a metric as an effect. A metric that throws dies with the thrown
 * value as a defect.
 *
 * @since 0.1.0
 * @category utils
 */
export const run = <D, O, E>(metric: Metric<D, O, E>, example: D, output: O): Effect.Effect<MetricResult, E> =>
  Effect.suspend(() => {
    const result = metric(example, output)
    return Effect.isEffect(result) ? result : Effect.succeed(result)
  })

/**
 * How texts are compared. Both sides are always trimmed.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextOptions {
  /** compare without regard to letter case; default false */
  readonly ignoreCase?: boolean | undefined
  /** treat every run of white space as one space; default false */
  readonly ignoreWhitespace?: boolean | undefined
}

const normalize = (text: string, options: TextOptions | undefined): string => {
  let out = text.trim()
  if (options?.ignoreWhitespace === true) out = out.replace(/\s+/g, " ")
  if (options?.ignoreCase === true) out = out.toLowerCase()
  return out
}

const MAX_QUOTE = 500

const quote = (text: string): string => JSON.stringify(text.length > MAX_QUOTE ? `${text.slice(0, MAX_QUOTE)}… (${text.length} characters)` : text)

const asList = (value: string | ReadonlyArray<string>): ReadonlyArray<string> => typeof value === "string" ? [value] : value

const oneOf = (xs: ReadonlyArray<string>): string => {
  const [only] = xs
  return only !== undefined && xs.length === 1 ? quote(only) : `one of ${xs.map(quote).join(", ")}`
}

/**
 * Score 1 when the output equals the expected answer (or one of several
 * accepted answers), else 0.
 *
 * @since 0.1.0
 * @category constructors
 */
export const exactMatch = <D>(
  expected: (example: D) => string | ReadonlyArray<string>,
  options?: TextOptions
): SyncMetric<D, string> =>
(example, output) => {
  const accepted = asList(expected(example))
  const got = normalize(output, options)
  const hit = accepted.find((a) => normalize(a, options) === got)
  if (hit !== undefined) return { score: 1, feedback: `Correct: the output is ${quote(hit)} as expected.` }
  return { score: 0, feedback: `Expected ${oneOf(accepted)} but got ${quote(output.trim())}.` }
}

/**
 * Whether the output contains the expected substrings. With `mode: "all"`
 * (the default) the score is the fraction found; with `mode: "any"` it is 1
 * when at least one is found.
 *
 * @since 0.1.0
 * @category constructors
 */
export const contains = <D>(
  expected: (example: D) => string | ReadonlyArray<string>,
  options?: TextOptions & { readonly mode?: "all" | "any" | undefined }
): SyncMetric<D, string> =>
(example, output) => {
  const wanted = asList(expected(example))
  if (wanted.length === 0) return { score: 1, feedback: "Nothing was required in the output." }
  const text = normalize(output, options)
  const found = wanted.filter((w) => text.includes(normalize(w, options)))
  const missing = wanted.filter((w) => !found.includes(w))
  if (options?.mode === "any") {
    const first = found[0]
    return first !== undefined
      ? { score: 1, feedback: `Correct: the output contains ${quote(first)}.` }
      : {
        score: 0,
        feedback: `Expected the output to contain ${oneOf(wanted)} but got ${quote(output.trim())}.`
      }
  }
  return missing.length === 0
    ? { score: 1, feedback: `Correct: the output contains ${found.map(quote).join(", ")}.` }
    : {
      score: found.length / wanted.length,
      feedback: `Expected the output to contain ${missing.map(quote).join(", ")} but it does not${
        found.length > 0 ? ` (it does contain ${found.map(quote).join(", ")})` : ""
      }. Output: ${quote(output.trim())}.`
    }
}

/**
 * Score 1 when the output matches the pattern (fixed, or per example),
 * else 0. `description` says in words what the pattern requires, for the
 * feedback.
 *
 * @since 0.1.0
 * @category constructors
 */
export const regex = <D>(
  pattern: RegExp | ((example: D) => RegExp),
  options?: { readonly description?: string | undefined }
): SyncMetric<D, string> =>
(example, output) => {
  const given = typeof pattern === "function" ? pattern(example) : pattern
  // a global or sticky pattern keeps state between calls; a fresh copy doesn't
  const re = new RegExp(given.source, given.flags.replace(/[gy]/g, ""))
  const what = options?.description ?? `the pattern ${String(given)}`
  return re.test(output)
    ? { score: 1, feedback: `Correct: the output matches ${what}.` }
    : { score: 0, feedback: `Expected the output to match ${what} but got ${quote(output.trim())}.` }
}

/**
 * The JSON value in a model output: the whole output, else the content of
 * its first fenced block (with or without a `json` tag), else the span from
 * the first `{` or `[` to the last matching `}` or `]`. `Left` holds why
 * nothing parsed.
 *
 * @since 0.1.0
 * @category utils
 */
export const parseJson = (output: string): Either.Either<unknown, string> => {
  const attempts: Array<string> = [output.trim()]
  const block = /^ {0,3}(`{3,}|~{3,})[^\n]*\n([\s\S]*?)\n {0,3}\1[ \t]*$/m.exec(output)
  if (block !== null) attempts.push(at(block, 2).trim())
  for (const [open, close] of [["{", "}"], ["[", "]"]] as const) {
    const start = output.indexOf(open)
    const end = output.lastIndexOf(close)
    if (start !== -1 && end > start) attempts.push(output.slice(start, end + 1))
  }
  let firstError = "the output is empty"
  for (const candidate of attempts) {
    if (candidate === "") continue
    try {
      const value: unknown = JSON.parse(candidate)
      return Either.right(value)
    } catch (e) {
      if (firstError === "the output is empty") firstError = e instanceof Error ? e.message : String(e)
    }
  }
  return Either.left(firstError)
}

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v) ?? "undefined"

const pathSegments = (path: string | ReadonlyArray<string | number>): ReadonlyArray<string | number> =>
  typeof path === "string" ? (path === "" ? [] : path.split(".")) : path

const pathText = (segments: ReadonlyArray<string | number>): string => segments.length === 0 ? "the output" : `field "${segments.join(".")}"`

/**
 * Parses the output as JSON (see `parseJson`) and compares the value at
 * `path` (dotted, e.g. "answer.items.0", or a list of keys; empty for the
 * whole value) with the expected value, structurally (key order ignored).
 * Score 1 on equality, else 0. `ignoreCase` applies when both are strings.
 *
 * @since 0.1.0
 * @category constructors
 */
export const jsonField = <D>(
  path: string | ReadonlyArray<string | number>,
  expected: (example: D) => unknown,
  options?: { readonly ignoreCase?: boolean | undefined }
): SyncMetric<D, string> =>
(example, output) => {
  const segments = pathSegments(path)
  const where = pathText(segments)
  const parsed = parseJson(output)
  if (Either.isLeft(parsed)) {
    return { score: 0, feedback: `The output is not valid JSON (${parsed.left}): ${quote(output.trim())}.` }
  }
  let value: unknown = parsed.right
  for (const [i, segment] of segments.entries()) {
    const key = String(segment)
    if (value === null || typeof value !== "object" || !Object.prototype.hasOwnProperty.call(value, key)) {
      return {
        score: 0,
        feedback: `The output JSON has no ${pathText(segments.slice(0, i + 1))}; expected ${where} to be ${canonical(expected(example))}. Output: ${
          quote(output.trim())
        }.`
      }
    }
    value = field(value, key)
  }
  const want = expected(example)
  const equal = options?.ignoreCase === true && typeof want === "string" && typeof value === "string"
    ? want.trim().toLowerCase() === value.trim().toLowerCase()
    : canonical(want) === canonical(value)
  return equal
    ? { score: 1, feedback: `Correct: ${where} is ${canonical(value)}.` }
    : { score: 0, feedback: `Expected ${where} to be ${canonical(want)} but got ${canonical(value)}.` }
}
