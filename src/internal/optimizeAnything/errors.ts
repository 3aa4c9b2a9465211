/**
 * Errors of `optimizeAnything` (kept apart so the face and the
 * implementation both import them without a cycle).
 *
 * @internal
 */
import { Schema } from "effect"

/**
 * The reflection model gave no usable first candidate in `attempts` calls,
 * or the call itself failed.
 *
 * @internal
 */
export class SeedGenerationFailed extends Schema.TaggedError<SeedGenerationFailed>()("SeedGenerationFailed", {
  attempts: Schema.Number,
  reasons: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `No usable first candidate from the reflection model after ${this.attempts} call${this.attempts === 1 ? "" : "s"}: ` +
      this.reasons.join("; ")
  }
}
