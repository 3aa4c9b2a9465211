/**
 * The default adapter: optimizes the system prompt of a single-turn task.
 * The candidate has one component (default `system_prompt`) sent as the
 * system message; each example gives the user message; a `Metric` scores
 * the model's answer.
 *
 * A failed task-model call or metric is an evaluation failure, never a
 * score: the example is reported in the batch's `errors` (the engine scores
 * it the run's fallback, records the failure and never caches it), the
 * other examples' results survive, and the reflection model sees the
 * failure. A task-model failure no retry can fix (rejected key, unknown
 * model, invalid request, unreachable server) fails the call with
 * `ModelUnrecoverable`, which stops the run.
 *
 * @since 0.1.0
 */
import { Cause, Effect, Layer, Option } from "effect"
import type { Adapter, AdapterService, ReflectiveRecord } from "./Adapter.js"
import { tag as adapterTag } from "./Adapter.js"
import type { Candidate } from "./Candidate.js"
import { AdapterError, ConfigError, type ModelUnrecoverable } from "./Errors.js"
import type { Completion, LanguageModel } from "./LanguageModel.js"
import { TaskModel, unrecoverable } from "./LanguageModel.js"
import { type Metric, run as runMetric } from "./Metric.js"
import { instrumentModel } from "./Telemetry.js"

/**
 * The default component name.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultComponent = "system_prompt"

/**
 * Options of the default adapter: the component used as the system message,
 * how an example becomes a prompt and how the answer is scored.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<D, E = never> {
  /** the component used as the system message; default "system_prompt" */
  readonly component?: string | undefined
  /** the user message of an example */
  readonly input: (example: D) => string
  /** scores the model's answer to an example */
  readonly metric: Metric<D, string, E>
  /** examples evaluated at once within a batch; default 8 */
  readonly concurrency?: number | undefined
  /** what the reflection model sees as `Inputs`; default the user message */
  readonly describeInput?: ((example: D) => unknown) | undefined
}

/**
 * What was recorded for one example.
 *
 * @since 0.1.0
 * @category models
 */
export interface Trajectory<D> {
  readonly example: D
  /** the user message */
  readonly input: string
  /** the model's answer, empty when the call failed */
  readonly output: string
  /** the metric's score; 0 as a placeholder when `error` is set */
  readonly score: number
  readonly feedback?: string | undefined
  readonly completion?: Completion | undefined
  /**
   * set when the model call or the metric failed: the example is then an
   * evaluation failure (reported in the batch's `errors`), not a score
   */
  readonly error?: string | undefined
}

const describeFailure = (cause: Cause.Cause<unknown>): string => {
  // a typed failure if there is one, else the defect
  const e = Cause.squash(cause)
  if (e instanceof Error) return e.message
  return typeof e === "object" && e !== null ? JSON.stringify(e) : String(e)
}

/**
 * The adapter over a task model value. Fails with a `ConfigError` when an
 * option is invalid.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <D, E = never>(
  options: Options<D, E> & { readonly model: LanguageModel }
): Effect.Effect<Adapter<D, Trajectory<D>, string>, ConfigError> =>
  Effect.gen(function*() {
    const component = options.component ?? defaultComponent
    if (typeof component !== "string" || component === "") {
      return yield* Effect.fail(new ConfigError({ field: "component", detail: "must be a non-empty string" }))
    }
    const concurrency = options.concurrency ?? 8
    if (!(Number.isInteger(concurrency) && concurrency > 0)) {
      return yield* Effect.fail(
        new ConfigError({ field: "concurrency", detail: `must be a positive integer, got ${concurrency}` })
      )
    }
    if (typeof options.input !== "function") {
      return yield* Effect.fail(new ConfigError({ field: "input", detail: "must be a function of the example" }))
    }
    if (typeof options.metric !== "function") {
      return yield* Effect.fail(new ConfigError({ field: "metric", detail: "must be a function" }))
    }
    const { metric } = options
    // a span and the model metrics per task call; a model its layer already
    // instrumented (ModelString, AiLanguageModel) is kept as is
    const model = instrumentModel(options.model, { role: "task" })

    const runOne = (systemPrompt: string, example: D): Effect.Effect<Trajectory<D>, ModelUnrecoverable> =>
      Effect.gen(function*() {
        const input = options.input(example)
        const answer = yield* Effect.exit(
          model.complete({ messages: [{ role: "system", content: systemPrompt }, { role: "user", content: input }] })
        )
        if (answer._tag === "Failure") {
          if (Cause.isInterruptedOnly(answer.cause)) return yield* Effect.interrupt
          const fatal = Option.flatMap(Cause.failureOption(answer.cause), (e) => unrecoverable(e, "task"))
          if (Option.isSome(fatal)) return yield* Effect.fail(fatal.value)
          const error = describeFailure(answer.cause)
          return {
            example,
            input,
            output: "",
            score: 0,
            feedback: `The task model call failed, so there is no output: ${error}`,
            error
          }
        }
        const completion = answer.value
        const scored = yield* Effect.exit(runMetric(metric, example, completion.text))
        // a metric that fails, or returns an unusable score, is a failure of the example, not a result
        const unscored = (error: string) => ({
          example,
          input,
          output: completion.text,
          score: 0,
          feedback: `The output could not be scored: ${error}`,
          completion,
          error
        })
        if (scored._tag === "Failure") {
          if (Cause.isInterruptedOnly(scored.cause)) return yield* Effect.interrupt
          return unscored(`the metric failed: ${describeFailure(scored.cause)}`)
        }
        const { feedback, score } = scored.value
        if (!Number.isFinite(score)) return unscored(`the metric returned a non-finite score (${score})`)
        return { example, input, output: completion.text, score, feedback, completion }
      })

    const adapter: Adapter<D, Trajectory<D>, string> = {
      evaluate: (batch, candidate: Candidate, { captureTraces }) =>
        Effect.gen(function*() {
          const systemPrompt = Object.prototype.hasOwnProperty.call(candidate, component)
            ? candidate[component]
            : undefined
          if (systemPrompt === undefined) {
            return yield* Effect.fail(
              new AdapterError({
                call: "evaluate",
                detail: `the candidate has no component "${component}" (it has ${Object.keys(candidate).map((k) => `"${k}"`).join(", ") || "none"})`
              })
            )
          }
          const trajectories = yield* Effect.forEach(batch, (example) => runOne(systemPrompt, example), {
            concurrency
          })
          return {
            outputs: trajectories.map((t) => t.output),
            scores: trajectories.map((t) => t.score),
            trajectories: captureTraces ? trajectories : undefined,
            ...(trajectories.some((t) => t.error !== undefined) ? { errors: trajectories.map((t) => t.error) } : {})
          }
        }),
      makeReflectiveDataset: (_candidate, evaluation, components) =>
        Effect.gen(function*() {
          if (evaluation.trajectories === undefined) {
            return yield* Effect.fail(
              new AdapterError({
                call: "makeReflectiveDataset",
                detail: "the evaluation has no trajectories (evaluate with captureTraces: true)"
              })
            )
          }
          const records = evaluation.trajectories.map((t): ReflectiveRecord => ({
            "Inputs": options.describeInput ? options.describeInput(t.example) : t.input,
            "Generated Outputs": t.error !== undefined && t.completion === undefined
              ? `(no output: ${t.error})`
              : t.output,
            "Feedback": t.feedback ?? `Score: ${t.score}`
          }))
          return Object.fromEntries(components.map((c) => [c, records]))
        })
    }
    return adapter
  })

/**
 * The adapter over the `TaskModel` service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTaskModel = <D, E = never>(
  options: Options<D, E>
): Effect.Effect<Adapter<D, Trajectory<D>, string>, ConfigError, TaskModel> => Effect.flatMap(TaskModel, (model) => make({ ...options, model }))

/**
 * A layer providing the adapter (under `Adapter.tag<D, Trajectory<D>,
 * string>()`), reading the task model from `TaskModel`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <D, E = never>(
  options: Options<D, E>
): Layer.Layer<AdapterService<D, Trajectory<D>, string>, ConfigError, TaskModel> => Layer.effect(adapterTag<D, Trajectory<D>, string>(), fromTaskModel(options))
