/**
 * Seedless start: the reflection model writes the first candidate from the
 * objective, the background and a few sample inputs. An answer that cannot
 * be used (no complete fenced text, cut off, a refusal, empty) is asked for
 * again, telling the model why, up to a bounded number of attempts.
 *
 * @internal
 */
import { Effect, Either } from "effect"
import type { LanguageModel, LlmError } from "../../LanguageModel.js"
import { extractText } from "../../Reflection.js"
import { budget, type Limits, toJsonLike } from "./sideInfo.js"

/** @internal */
export interface SeedRequest {
  readonly objective: string
  readonly background: string | undefined
  /** up to a few examples the candidate will be evaluated on */
  readonly samples: ReadonlyArray<unknown>
  readonly limits: Limits
}

/**
 * The prompt asking for a first candidate.
 *
 * @internal
 */
export const seedPrompt = (request: SeedRequest, rejected: ReadonlyArray<string>): string => {
  const sections = [
    "Write the first version of a text artifact that an optimizer will then improve step by step. " +
    "The artifact may be code, a configuration, a prompt, a policy or any other text; an evaluator will score it " +
    "and report what went wrong, and later revisions will build on what you write now.",
    `# Objective\n\n${request.objective.trim()}`
  ]
  if (request.background !== undefined && request.background.trim() !== "") {
    sections.push(`# Background\n\n${request.background.trim()}`)
  }
  if (request.samples.length > 0) {
    const lines = request.samples.map((s, i) => {
      const value = budget(toJsonLike(s), { ...request.limits, maxRecordLength: 1_500 })
      return `## Sample ${i + 1}\n\n${typeof value === "string" ? value : JSON.stringify(value, null, 2)}`
    })
    sections.push(`# Inputs it will be evaluated on (samples)\n\n${lines.join("\n\n")}`)
  }
  if (rejected.length > 0) {
    sections.push(
      `# Your previous answer could not be used\n\n${rejected[rejected.length - 1]}. ` +
        "Give the complete artifact this time."
    )
  }
  sections.push(
    "# Answer format\n\nReply with the complete artifact inside one fenced code block (``` on the lines before and after). " +
      "Anything outside the block is ignored; do not leave placeholders to fill in."
  )
  return sections.join("\n\n")
}

/** @internal */
export interface SeedOutcome {
  readonly text: string
  readonly attempts: number
  readonly rejected: ReadonlyArray<string>
}

/**
 * Asks `model` for a first candidate, at most `attempts` times. Fails with
 * the reasons when no answer could be used; a failing model call fails at
 * once (the model layer has its own retries).
 *
 * @internal
 */
export const generate = (
  model: LanguageModel,
  request: SeedRequest,
  attempts: number
): Effect.Effect<SeedOutcome, { readonly _tag: "Unusable"; readonly rejected: ReadonlyArray<string> } | LlmError> =>
  Effect.gen(function*() {
    const rejected: Array<string> = []
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const completion = yield* model.complete(seedPrompt(request, rejected))
      const text = extractText(completion)
      if (Either.isRight(text)) return { text: text.right, attempts: attempt, rejected }
      rejected.push(text.left)
    }
    return yield* Effect.fail({ _tag: "Unusable" as const, rejected })
  }).pipe(Effect.withSpan("gepa.optimizeAnything.seed"))
