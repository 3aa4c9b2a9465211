/**
 * A CLI run of several text components (`"components"` in the config file):
 * an agent's planner prompt, responder prompt, tool description, ... The
 * CLI cannot know how the texts are put together, so the metric module runs
 * the program itself: it receives the example, every component's text and
 * the run's task model, and returns the score with its feedback.
 *
 * ```ts
 * import type { Cli } from "effect-gepa"
 *
 * export const metric: Cli.ComponentsMetric = async (example, texts, { generate }) => {
 *   const plan = await generate({ messages: [{ role: "system", content: texts.planner }, { role: "user", content: example.input }] })
 *   const answer = await generate({ messages: [{ role: "system", content: texts.responder }, { role: "user", content: plan }] })
 *   return answer === example.expected ? { score: 1, output: answer } : { score: 0, output: answer, feedback: `expected ${example.expected}` }
 * }
 * ```
 *
 * @since 0.3.0
 */
import { Cause, Effect, Exit, Option, Runtime } from "effect"
import type { Adapter, ReflectiveRecord } from "../Adapter.js"
import type { Candidate } from "../Candidate.js"
import type { Trajectory } from "../DefaultAdapter.js"
import { AdapterError, type ModelUnrecoverable } from "../Errors.js"
import * as LanguageModel from "../LanguageModel.js"
import { instrumentModel } from "../Telemetry.js"
import type { Example } from "./data.js"
import { inputError } from "./errors.js"
import type { CliInputError } from "./errors.js"
import { exportedFunction, importModule } from "./metric.js"

/**
 * What a components metric receives besides the example and the texts.
 *
 * @since 0.3.0
 * @category models
 */
export interface ComponentsContext {
  /**
   * one call of the run's task model (`taskModel` in the config): its
   * answer's text. Counted, retried, timed out and scrubbed like every task
   * call of the CLI; a call that fails after its retries rejects (and stops
   * the run when no retry can fix it: a rejected key, an unknown model).
   */
  readonly generate: (prompt: LanguageModel.Prompt) => Promise<string>
  /** fires when the evaluation is interrupted (a stopped run, a timeout) */
  readonly signal: AbortSignal
}

/**
 * What a components metric returns: a score, or the score with the
 * feedback the reflection model reads and the program's output it shows
 * next to it (default: the task model's answers of this example, in order).
 *
 * @since 0.3.0
 * @category models
 */
export type ComponentsScore = number | {
  readonly score: number
  readonly feedback?: string | undefined
  readonly output?: string | undefined
}

/**
 * The function a metric module exports (as `metric` or default) for a run
 * with `"components"`: runs the program on one example with the
 * candidate's `texts` (one entry per component of the config) and scores
 * it. It may return the score, a Promise of it, or an Effect without
 * requirements. A thrown error or a rejection is a failed evaluation of the
 * example (reported as such, never a score).
 *
 * @since 0.3.0
 * @category models
 */
export type ComponentsMetric<D = Example> = (
  example: D,
  texts: Readonly<Record<string, string>>,
  context: ComponentsContext
) => ComponentsScore | PromiseLike<ComponentsScore> | Effect.Effect<ComponentsScore, unknown>

/**
 * A loaded components metric: the module's function, whatever it returns.
 *
 * @since 0.3.0
 * @category models
 */
export type LoadedComponentsMetric = (
  example: Example,
  texts: Readonly<Record<string, string>>,
  context: ComponentsContext
) => unknown

const errorText = (e: unknown): string => e instanceof Error ? e.message : typeof e === "object" && e !== null ? JSON.stringify(e) : String(e)

const asScore = (value: unknown): { score: number; feedback?: string | undefined; output?: string | undefined } | string => {
  if (typeof value === "number") return Number.isFinite(value) ? { score: value } : `the metric returned a non-finite score (${value})`
  if (value !== null && typeof value === "object" && "score" in value && typeof value.score === "number") {
    if (!Number.isFinite(value.score)) return `the metric returned a non-finite score (${value.score})`
    const feedback = "feedback" in value && typeof value.feedback === "string" ? value.feedback : undefined
    const output = "output" in value && typeof value.output === "string" ? value.output : undefined
    return { score: value.score, feedback, output }
  }
  return `the metric returned ${JSON.stringify(value) ?? String(value)}, expected a number or { score, feedback, output }`
}

/**
 * Loads a components metric module: its `metric` or default export.
 *
 * @since 0.3.0
 * @category metrics
 */
export const loadComponentsMetric = (file: string): Effect.Effect<LoadedComponentsMetric, CliInputError> =>
  Effect.flatMap(importModule(file), (mod) => {
    const user = exportedFunction(mod)
    if (user === undefined) {
      return Effect.fail(inputError(
        `${file}: the module must export a function named "metric" (or a default export) taking (example, texts, { generate })`
      ))
    }
    return Effect.succeed<LoadedComponentsMetric>((example, texts, context) => Reflect.apply(user, undefined, [example, texts, context]))
  })

/**
 * The adapter of a components run: each example runs the metric module with
 * the candidate's texts and the task model. A task call that no retry can
 * fix stops the run (even when the module caught its rejection); any other
 * failure of the module is a failed evaluation of that example. The
 * reflective dataset shows, per example, the input, the output and the
 * feedback, for every component.
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeAdapter = (options: {
  readonly metric: LoadedComponentsMetric
  readonly model: LanguageModel.LanguageModel
  readonly components: ReadonlyArray<string>
  readonly concurrency: number
}): Effect.Effect<Adapter<Example, Trajectory<Example>, string>> =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    const model = instrumentModel(options.model, { role: "task" })
    const runOne = (example: Example, texts: Readonly<Record<string, string>>): Effect.Effect<Trajectory<Example>, ModelUnrecoverable> =>
      Effect.gen(function*() {
        const answers: Array<string> = []
        let fatal: ModelUnrecoverable | undefined
        const outcome = yield* Effect.exit(Effect.tryPromise({
          try: async (signal) => {
            const generate = async (prompt: LanguageModel.Prompt): Promise<string> => {
              const exit = await Runtime.runPromiseExit(runtime)(model.complete(prompt), { signal })
              if (Exit.isSuccess(exit)) {
                answers.push(exit.value.text)
                return exit.value.text
              }
              const failure = Cause.failureOption(exit.cause)
              const stop = Option.flatMap(failure, (e) => LanguageModel.unrecoverable(e, "task"))
              if (Option.isSome(stop)) fatal ??= stop.value
              throw Option.getOrElse(failure, () => Cause.squash(exit.cause))
            }
            const out: unknown = options.metric(example, texts, { generate, signal })
            return Effect.isEffect(out)
              ? await Runtime.runPromise(runtime)(out as Effect.Effect<unknown, unknown>, { signal })
              : await out
          },
          catch: (e) => e
        }))
        if (fatal !== undefined) return yield* Effect.fail(fatal)
        const output = answers.join("\n\n")
        if (Exit.isFailure(outcome)) {
          if (Cause.isInterruptedOnly(outcome.cause)) return yield* Effect.interrupt
          const error = `the metric module failed: ${errorText(Cause.squash(outcome.cause))}`
          return { example, input: example.input, output, score: 0, feedback: `The program failed: ${error}`, error }
        }
        const scored = asScore(outcome.value)
        if (typeof scored === "string") {
          return { example, input: example.input, output, score: 0, feedback: `The output could not be scored: ${scored}`, error: scored }
        }
        return { example, input: example.input, output: scored.output ?? output, score: scored.score, feedback: scored.feedback }
      })
    const adapter: Adapter<Example, Trajectory<Example>, string> = {
      evaluate: (batch, candidate: Candidate, { captureTraces }) =>
        Effect.gen(function*() {
          const missing = options.components.filter((c) => !Object.prototype.hasOwnProperty.call(candidate, c))
          if (missing.length > 0) {
            return yield* Effect.fail(
              new AdapterError({ call: "evaluate", detail: `the candidate has no component ${missing.map((c) => `"${c}"`).join(", ")}` })
            )
          }
          const traces = yield* Effect.forEach(batch, (example) => runOne(example, candidate), { concurrency: options.concurrency })
          return {
            outputs: traces.map((t) => t.output),
            scores: traces.map((t) => t.score),
            trajectories: captureTraces ? traces : undefined,
            ...(traces.some((t) => t.error !== undefined) ? { errors: traces.map((t) => t.error) } : {})
          }
        }),
      makeReflectiveDataset: (_candidate, evaluation, components) =>
        Effect.gen(function*() {
          if (evaluation.trajectories === undefined) {
            return yield* Effect.fail(
              new AdapterError({ call: "makeReflectiveDataset", detail: "the evaluation has no trajectories (evaluate with captureTraces: true)" })
            )
          }
          const records = evaluation.trajectories.map((t): ReflectiveRecord => ({
            "Inputs": t.example.input,
            "Generated Outputs": t.error !== undefined && t.output === "" ? `(no output: ${t.error})` : t.output,
            "Feedback": t.feedback ?? `Score: ${t.score}`
          }))
          return Object.fromEntries(components.map((c) => [c, records]))
        })
    }
    return adapter
  })
