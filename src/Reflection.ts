/**
 * The default reflective proposal: show the reflection model one component's
 * current text and the reflective records of a minibatch (inputs, outputs,
 * feedback), ask for a complete improved text in a fenced code block, and
 * pull that text back out of the answer.
 *
 * Prompt templates can be replaced globally or per component. A template is
 * plain text with the placeholders `{{current_text}}` and `{{examples}}`
 * (both required) and `{{component}}` and `{{additional_instructions}}`
 * (optional). Placeholders are substituted in one pass, so a component text
 * that itself contains `{{examples}}` is left as it is.
 *
 * @since 0.1.0
 */
import { Data, Effect, Either, Option } from "effect"
import type { ReflectiveDataset, ReflectiveRecord } from "./Adapter.js"
import type { Candidate } from "./Candidate.js"
import { at } from "./internal/shared/invariant.js"
import { ConfigError, type ModelUnrecoverable } from "./Errors.js"
import { type Completion, type LanguageModel, type LlmError, unrecoverable } from "./LanguageModel.js"
import { fencedBlocks, PREAMBLE, REFUSAL } from "./internal/engine/reflection/fences.js"
import { fenced, renderValue } from "./internal/engine/reflection/markdown.js"
import * as Spans from "./internal/telemetry/spans.js"

/**
 * How reflection prompts are built.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReflectionConfig {
  /**
   * replaces the default template for every component. Only a fenced block
   * of the answer is adopted (unless `acceptUnfenced`), so a template should
   * ask for the text in one, as the default does.
   */
  readonly template?: string | undefined
  /** per component name, replaces `template` and the default */
  readonly componentTemplates?: Readonly<Record<string, string>> | undefined
  /**
   * added to every prompt: constraints on the text, services the system can
   * call, ideas worth trying. Goes where the template has
   * `{{additional_instructions}}`, or at the end when it has none.
   */
  readonly additionalInstructions?: string | undefined
  /**
   * adopt an answer without a fenced code block when it reads like a text
   * (see `extractText`). Off by default: the prompt asks for a fenced block,
   * and an answer without one is more often commentary about the text than
   * the text itself. Since 0.2.0.
   */
  readonly acceptUnfenced?: boolean | undefined
  /**
   * how many unusable answers in a row (no fenced block, cut off, refused,
   * empty; across components and proposals) stop the run with
   * `ReflectionUnusable`; default 5 (`defaultMaxUnusableAnswers`). A usable
   * answer resets the count. The state is saved, so the run resumes once the
   * prompt or the model is fixed. Since 0.3.0.
   */
  readonly maxUnusableAnswers?: number | undefined
}

/**
 * The default of `ReflectionConfig.maxUnusableAnswers`: one unusable answer
 * can be a fluke that the next proposal repairs; five in a row mean the
 * model does not follow the prompt, and the run stops before spending the
 * budget on it.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultMaxUnusableAnswers = 5

/**
 * Options of `extractText`.
 *
 * @since 0.2.0
 * @category models
 */
export interface ExtractOptions {
  /** adopt a plausible answer without a fenced block; default false */
  readonly acceptUnfenced?: boolean | undefined
}

/**
 * The default reflection prompt.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultTemplate =
  `You are revising one text component of a system built on a language model. The text below, called "{{component}}", is part of what the model is given when it works on a task. Your job is to rewrite it so that the system does better on tasks like the ones shown.

# Current text of "{{component}}"

{{current_text}}

# Recent runs with this text

Each example shows what the system received, what it produced, and an assessment of the result. The assessment is the most valuable part: it tells you what a good result would have looked like.

{{examples}}

# How to revise

1. Infer the task from the inputs: what is asked, in what form the inputs arrive, and what a correct result must look like.
2. For every run that went wrong, find the cause: missing knowledge, a misread requirement, a wrong output format, a faulty approach.
3. Collect the facts, rules and conventions that the assessments reveal. The model will not see these examples again, so anything it needs must be written into the text, stated generally enough to cover unseen cases.
4. Keep what already works. If a successful run shows a useful method, describe that method in the text.
5. Write clear, direct instructions; drop anything that no longer helps.
{{additional_instructions}}
# Answer format

Reply with the complete new text of "{{component}}" (not a list of changes, not a commentary) inside one fenced code block that starts with \`\`\` and ends with \`\`\`. If the text itself contains lines starting with \`\`\`, use a longer fence such as \`\`\`\` around it. Anything outside the block is ignored.`

const PLACEHOLDER = /\{\{\s*(current_text|examples|component|additional_instructions)\s*\}\}/g
const REQUIRED = ["current_text", "examples"] as const

const placeholdersIn = (template: string): ReadonlySet<string> => new Set(Array.from(template.matchAll(PLACEHOLDER), (m) => at(m, 1)))

const checkTemplate = (field: string, template: unknown): Effect.Effect<void, ConfigError> => {
  if (typeof template !== "string") {
    return Effect.fail(new ConfigError({ field, detail: "must be a string" }))
  }
  const present = placeholdersIn(template)
  const missing = REQUIRED.filter((p) => !present.has(p))
  return missing.length === 0
    ? Effect.void
    : Effect.fail(
      new ConfigError({
        field,
        detail: `the template lacks the placeholder${missing.length > 1 ? "s" : ""} ${missing.map((p) => `{{${p}}}`).join(" and ")}`
      })
    )
}

/**
 * Checks every template for the required placeholders. Fields are named
 * `reflection.template` and `reflection.componentTemplates.<component>`.
 *
 * @since 0.1.0
 * @category validation
 */
export const validateConfig = (config: ReflectionConfig): Effect.Effect<void, ConfigError> =>
  Effect.gen(function*() {
    if (config.template !== undefined) yield* checkTemplate("reflection.template", config.template)
    for (const [component, template] of Object.entries(config.componentTemplates ?? {})) {
      yield* checkTemplate(`reflection.componentTemplates.${component}`, template)
    }
    if (config.additionalInstructions !== undefined && typeof config.additionalInstructions !== "string") {
      yield* Effect.fail(
        new ConfigError({ field: "reflection.additionalInstructions", detail: "must be a string" })
      )
    }
    if (config.acceptUnfenced !== undefined && typeof config.acceptUnfenced !== "boolean") {
      yield* Effect.fail(new ConfigError({ field: "reflection.acceptUnfenced", detail: "must be true or false" }))
    }
    const limit = config.maxUnusableAnswers
    if (limit !== undefined && !(typeof limit === "number" && Number.isInteger(limit) && limit > 0)) {
      yield* Effect.fail(
        new ConfigError({ field: "reflection.maxUnusableAnswers", detail: `must be a positive integer, got ${String(limit)}` })
      )
    }
  })

/**
 * The records as markdown: one `## Example n` section per record, a `###`
 * heading per field, nested objects and lists as deeper headings and
 * bullets. Strings are kept whole; multi-line strings go in a fenced block
 * (with a fence longer than any inside) so they cannot break the structure.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderRecords = (records: ReadonlyArray<ReflectiveRecord>): string =>
  records.length === 0
    ? "(no examples)"
    : records.map((record, i) => `## Example ${i + 1}\n\n${renderValue(record, 3)}`).join("\n\n")

/**
 * The template used for `component`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const templateFor = (component: string, config: ReflectionConfig): string => config.componentTemplates?.[component] ?? config.template ?? defaultTemplate

/**
 * The reflection prompt for one component. The current text is fenced;
 * additional instructions go where the template has
 * `{{additional_instructions}}`, or at the end.
 *
 * @since 0.1.0
 * @category rendering
 */
export const buildPrompt = (args: {
  readonly component: string
  readonly currentText: string
  readonly records: ReadonlyArray<ReflectiveRecord>
  readonly config: ReflectionConfig
}): string => {
  const template = templateFor(args.component, args.config)
  const extra = args.config.additionalInstructions?.trim() ?? ""
  const extraSection = extra === "" ? "" : `\n# Additional instructions\n\n${extra}\n`
  const values: Record<string, string> = {
    current_text: fenced(args.currentText),
    examples: renderRecords(args.records),
    component: args.component,
    additional_instructions: extraSection
  }
  const prompt = template.replace(PLACEHOLDER, (_match, name: string) => values[name] ?? "")
  return extraSection !== "" && !placeholdersIn(template).has("additional_instructions")
    ? `${prompt.trimEnd()}\n${extraSection}`
    : prompt
}

/**
 * Unfenced answers shorter than this (after trimming) are taken for chatter
 * rather than a component text.
 *
 * @since 0.1.0
 * @category constants
 */
export const minUnfencedLength = 20

/**
 * The proposed text in a reflection answer (`Right`), or why the answer is
 * not adopted (`Left`).
 *
 * The rules, in order:
 * 1. finish reason `length` (cut off) or `content_filter`: not adopted;
 * 2. an empty answer: not adopted;
 * 3. with fenced blocks (``` or ~~~, with or without a language tag, text
 *    around them ignored): the content of the longest closed top-level
 *    block, which is the complete text when the model also quoted snippets
 *    or examples (ties go to the first). A block that is empty after
 *    trimming is not adopted. A fence that is never closed means the answer
 *    is unreliable (cut off or malformed): not adopted;
 * 4. without any fence: not adopted, since the prompt asks for a fenced
 *    block. With `acceptUnfenced` (opt-in), adopted when it reads like a
 *    text, that is at least `minUnfencedLength` characters long and not
 *    opening with a refusal ("I'm sorry", "I can't", ...) or a
 *    conversational preamble ("Sure", "Here is", ...) that would otherwise
 *    end up inside the component.
 *
 * Adopted texts are trimmed of surrounding blank space.
 *
 * @since 0.1.0
 * @category extraction
 */
export const extractText = (completion: Completion, options: ExtractOptions = {}): Either.Either<string, string> => {
  if (completion.finishReason === "length") {
    return Either.left("the answer was cut off (finish reason \"length\"); raise the output token limit")
  }
  if (completion.finishReason === "content_filter") {
    return Either.left("the answer was stopped by the provider's content filter")
  }
  const answer = completion.text.trim()
  if (answer === "") return Either.left("the answer is empty")
  const blocks = fencedBlocks(answer)
  if (blocks.length > 0) {
    const closed = blocks.filter((b) => b.closed)
    if (closed.length < blocks.length) {
      return Either.left("the answer has a code fence that is never closed")
    }
    // the longest block, the first of equals
    const text = closed.reduce((best, b) => (b.content.trim().length > best.length ? b.content.trim() : best), "")
    return text === "" ? Either.left("the fenced block in the answer is empty") : Either.right(text)
  }
  if (REFUSAL.test(answer)) return Either.left(`the model declined: ${answer.slice(0, 120).replace(/\s+/g, " ")}`)
  if (options.acceptUnfenced !== true) {
    return Either.left(
      "the answer has no fenced code block, as the prompt asks (set reflection.acceptUnfenced to adopt such answers)"
    )
  }
  if (answer.length < minUnfencedLength) {
    return Either.left(`the answer has no fenced block and is too short to be a text: ${JSON.stringify(answer)}`)
  }
  if (PREAMBLE.test(answer)) {
    return Either.left("the answer has no fenced block and opens with conversation rather than the text")
  }
  return Either.right(answer)
}

/**
 * The outcome of proposing a new text for one component.
 *
 * @since 0.1.0
 * @category models
 */
export type ComponentProposal = Data.TaggedEnum<{
  Proposed: { readonly component: string; readonly text: string; readonly completion: Completion }
  /** nothing to propose: no records, no such component, or the text unchanged */
  Skipped: { readonly component: string; readonly reason: string; readonly completion?: Completion | undefined }
  /**
   * the model answered, but the answer cannot be adopted (no fenced block,
   * cut off, refused, empty): a failed proposal, with the reason. Since 0.2.0.
   */
  Unusable: { readonly component: string; readonly reason: string; readonly completion: Completion }
}>

const ComponentProposalEnum = Data.taggedEnum<ComponentProposal>()

/**
 * A component proposal with a new text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Proposed = ComponentProposalEnum.Proposed

/**
 * Nothing to propose for the component: no records, no such component, or
 * the text unchanged.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Skipped = ComponentProposalEnum.Skipped

/**
 * The model answered, but the answer cannot be adopted (no fenced block, cut
 * off, refused, empty): a failed proposal, with the reason.
 *
 * @since 0.2.0
 * @category constructors
 */
export const Unusable = ComponentProposalEnum.Unusable

/**
 * Pattern matching and type guards over `ComponentProposal`.
 *
 * @since 0.1.0
 * @category utils
 */
export const { $is, $match } = ComponentProposalEnum

/**
 * The reflection model's failure: a `ModelUnrecoverable` (role
 * "reflection") when no retry can fix it, so the engine can stop the run,
 * else the model's own error (transient: the proposal fails, the run goes
 * on).
 */
const reflectionFailure = (error: LlmError): LlmError | ModelUnrecoverable =>
  Option.getOrElse(unrecoverable(error, "reflection"), (): LlmError | ModelUnrecoverable => error)

/**
 * Asks the model for a new text of one component. An answer that cannot be
 * adopted (see `extractText`, with `config.acceptUnfenced`) gives `Unusable`
 * with the reason, one that repeats the current text `Skipped`. Only the
 * model call itself can fail: with `ModelUnrecoverable` when no retry can
 * fix the failure (rejected key, unknown model, invalid request,
 * unreachable server), else with the model's `LlmError`.
 *
 * @since 0.1.0
 * @category proposal
 */
export const proposeComponent = (
  model: LanguageModel,
  args: {
    readonly component: string
    readonly currentText: string
    readonly records: ReadonlyArray<ReflectiveRecord>
    readonly config: ReflectionConfig
  }
): Effect.Effect<ComponentProposal, LlmError | ModelUnrecoverable> =>
  Effect.suspend(() => model.complete(buildPrompt(args))).pipe(
    Effect.mapError(reflectionFailure),
    Effect.map((completion) =>
      Either.match(extractText(completion, { acceptUnfenced: args.config.acceptUnfenced }), {
        onLeft: (reason) => Unusable({ component: args.component, reason, completion }),
        onRight: (text) =>
          text === args.currentText.trim()
            ? Skipped({ component: args.component, reason: "the proposed text is the current text", completion })
            : Proposed({ component: args.component, text, completion })
      })
    ),
    Spans.withSpan("Reflection.proposeComponent", { attributes: { component: args.component }, captureStackTrace: false })
  )

/**
 * Proposes new texts for `components`, concurrently (the model's own
 * concurrency cap applies). Components absent from the candidate or without
 * records are `Skipped` without a model call. Results are in the order of
 * `components`. Fails like `proposeComponent`; a `ModelUnrecoverable`
 * interrupts the other components' calls and should stop the run.
 *
 * @since 0.1.0
 * @category proposal
 */
export const proposeAll = (
  model: LanguageModel,
  candidate: Candidate,
  dataset: ReflectiveDataset,
  components: ReadonlyArray<string>,
  config: ReflectionConfig
): Effect.Effect<ReadonlyArray<ComponentProposal>, LlmError | ModelUnrecoverable> =>
  Effect.forEach(
    components,
    (component): Effect.Effect<ComponentProposal, LlmError | ModelUnrecoverable> => {
      const currentText = Object.prototype.hasOwnProperty.call(candidate, component) ? candidate[component] : undefined
      if (currentText === undefined) {
        return Effect.succeed(Skipped({ component, reason: "the candidate has no such component" }))
      }
      const records = dataset[component] ?? []
      if (records.length === 0) {
        return Effect.succeed(Skipped({ component, reason: "the reflective dataset has no records for it" }))
      }
      return proposeComponent(model, { component, currentText, records, config })
    },
    // one component (the default round-robin) needs no fiber of its own
    { concurrency: components.length > 1 ? "unbounded" : 1 }
  )
