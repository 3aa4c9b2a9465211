/**
 * The Schemas of single settings (a non-empty text, a positive integer, a
 * duration...). Each decodes with a one-line message naming what was
 * expected and what came; the config file's fields and the flags use the
 * same ones.
 *
 * @since 0.2.0
 */
import { Duration, ParseResult, Schema } from "effect"
import { errorText, show } from "./errors.js"

/** One-line messages naming what was expected and what came. @internal */
export const expecting = (what: string, override = true) => ({
  message: (issue: ParseResult.ParseIssue) => ({ message: `expected ${what}, got ${show(issue.actual)}`, override })
})

/**
 * Parses a duration: a number of seconds, or a number followed by ms, s, m
 * or h. `undefined` when it is not one.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseDuration = (value: string | number): Duration.Duration | undefined => {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? Duration.seconds(value) : undefined
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?|h|hours?)?\s*$/i.exec(value)
  if (m === null) return undefined
  const n = Number(m[1])
  if (!(n > 0)) return undefined
  const unit = (m[2] ?? "s").toLowerCase()
  if (unit === "ms") return Duration.millis(n)
  if (unit.startsWith("h")) return Duration.hours(n)
  if (unit === "m" || unit.startsWith("min")) return Duration.minutes(n)
  return Duration.seconds(n)
}

/**
 * The text of a duration as `parseDuration` reads it back ("90s", "250ms").
 *
 * @since 0.2.0
 * @category parsing
 */
export const formatDuration = (duration: Duration.Duration): string => {
  const millis = Duration.toMillis(duration)
  return millis % 1000 === 0 ? `${millis / 1000}s` : `${millis}ms`
}

const durationMessage = `a duration such as "90s", "15m" or "2h"`

/**
 * A duration written as text ("90s", "15m", "2h") or a number of seconds.
 *
 * @since 0.2.0
 * @category schemas
 */
export const DurationText = Schema.transformOrFail(
  Schema.Union(Schema.String, Schema.Number).annotations(expecting(durationMessage)),
  Schema.DurationFromSelf,
  {
    strict: true,
    decode: (value, _, ast) => {
      const duration = parseDuration(value)
      return duration === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, value, `expected ${durationMessage}, got ${show(value)}`))
        : ParseResult.succeed(duration)
    },
    encode: (duration) => ParseResult.succeed(formatDuration(duration))
  }
)

/** @since 0.2.0 @category schemas */
export const Text = Schema.String.pipe(Schema.minLength(1)).annotations(expecting("a non-empty string"))
/** @since 0.2.0 @category schemas */
export const PositiveInt = Schema.Number.pipe(Schema.int(), Schema.positive()).annotations(expecting("a positive integer"))
/** @since 0.2.0 @category schemas */
export const Int = Schema.Number.pipe(Schema.int()).annotations(expecting("an integer"))
/** @internal */
export const NonNegativeInt = Schema.Number.pipe(Schema.int(), Schema.nonNegative()).annotations(
  expecting("an integer of 0 or more")
)
/** @since 0.2.0 @category schemas */
export const Num = Schema.Number.pipe(Schema.finite()).annotations(expecting("a number"))
/** @since 0.2.0 @category schemas */
export const Bool = Schema.Boolean.annotations(expecting("true or false"))
/** @since 0.2.0 @category schemas */
export const Pattern = Text.pipe(Schema.filter((s) => {
  try {
    new RegExp(s)
    return true
  } catch (e) {
    return `invalid regular expression: ${errorText(e)}`
  }
}))
