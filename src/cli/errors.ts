/**
 * The CLI's input error and exit codes.
 *
 * @since 0.1.0
 */
import { Effect, Either, Schema } from "effect"

/**
 * A problem with what the user gave the CLI: a file, a line of a data file,
 * a config field or a flag. The message names which; the exit code is 2.
 *
 * @since 0.1.0
 * @category errors
 */
export class CliInputError extends Schema.TaggedError<CliInputError>()("CliInputError", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

/**
 * Exit codes of the CLI.
 *
 * @since 0.1.0
 * @category constants
 */
export const ExitCode = {
  ok: 0,
  /** the run failed once started (model errors, persistence errors, ...); its state is saved */
  failure: 1,
  /** the input was invalid; nothing was written */
  input: 2
} as const

/** @internal */
export const inputError = (detail: string): CliInputError => new CliInputError({ detail })

/** @internal */
export const fromEither = <A>(either: Either.Either<A, CliInputError>): Effect.Effect<A, CliInputError> =>
  Either.isLeft(either) ? Effect.fail(either.left) : Effect.succeed(either.right)

/** Quotes strings so that an empty or blank value is visible in a message. @internal */
export const show = (value: unknown): string => JSON.stringify(value) ?? String(value)

/** @internal */
export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))
