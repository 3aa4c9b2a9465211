/**
 * Optimizes the prompts of an existing app in place: the app's own async
 * function `(example, texts) => output` (one that calls `generateText` with
 * a system prompt and tools, a chain, an agent) and a metric with feedback
 * make the adapter. The function reads its prompts from `texts` (the
 * candidate: one text per component name); nothing else of the app
 * changes, and no model layer is needed for the task.
 *
 * As in the `DefaultAdapter`, a failure is never a score: a call of the
 * function or of the metric that fails (or a metric that returns a
 * non-finite score) makes that example an evaluation failure, reported in
 * the batch's `errors` with its message (secrets scrubbed), while the other
 * examples' results stand. A model failure no retry can fix, thrown by the
 * function (an AI SDK `APICallError` with HTTP 401/403/404 or an invalid
 * request, directly or as `generateText`'s `RetryError`; or one of our
 * `LlmError`s), stops the run with `ModelUnrecoverable` instead of failing
 * every example.
 *
 * @example
 * ```ts
 * import { openai } from "@ai-sdk/openai"
 * import { generateText } from "ai"
 * import { FunctionAdapter } from "effect-gepa"
 *
 * const adapter = FunctionAdapter.make({
 *   run: async (ticket: { text: string; queue: string }, texts, abortSignal) => {
 *     const { text } = await generateText({ model: openai("gpt-4.1-mini"), system: texts["system_prompt"] ?? "", prompt: ticket.text, abortSignal })
 *     return text
 *   },
 *   metric: (ticket, output) => output.trim() === ticket.queue
 *     ? { score: 1 }
 *     : { score: 0, feedback: `expected ${ticket.queue}, got ${output}` }
 * })
 * ```
 *
 * @since 0.3.0
 */
import { Cause, Effect, Layer, Option, Redacted } from "effect"
import type { Adapter, AdapterService, ReflectiveRecord } from "./Adapter.js"
import { tag as adapterTag } from "./Adapter.js"
import type { Candidate } from "./Candidate.js"
import { AdapterError, ConfigError, ModelUnrecoverable } from "./Errors.js"
import * as wire from "./internal/models/aiSdkWire.js"
import { field } from "./internal/shared/fields.js"
import { unrecoverable } from "./LanguageModel.js"
import type { MetricResult } from "./Metric.js"
import * as Secrets from "./Secrets.js"

/**
 * Scores an output for an example: directly, as a Promise (an LLM judge in
 * plain code) or as an effect.
 *
 * @since 0.3.0
 * @category models
 */
export type Metric<D, O, E = never> = (example: D, output: O) => MetricResult | PromiseLike<MetricResult> | Effect.Effect<MetricResult, E>

/**
 * What `make` and `layer` take: the app's own function and the metric that
 * scores its outputs with feedback.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options<D, O, E = never> {
  /**
   * the app's function: one example and the texts under optimization (the
   * candidate) in, the output out. The signal fires when the evaluation is
   * interrupted (a stopped run, a timeout): pass it on as `abortSignal`.
   */
  readonly run: (example: D, texts: Candidate, signal: AbortSignal) => O | PromiseLike<O>
  /** scores the output; its feedback is what the reflection model learns from */
  readonly metric: Metric<D, O, E>
  /**
   * the components `run` reads; an evaluation of a candidate that lacks one
   * fails with one line naming it (default: not checked)
   */
  readonly components?: ReadonlyArray<string> | undefined
  /** examples evaluated at once within a batch; default 8 */
  readonly concurrency?: number | undefined
  /** what the reflection model sees as `Inputs`; default the example */
  readonly describeInput?: ((example: D) => unknown) | undefined
  /** what the reflection model sees as `Generated Outputs`; default the output */
  readonly describeOutput?: ((output: O) => unknown) | undefined
  /**
   * the name of the app's model in a `ModelUnrecoverable`; default the
   * `model` of the failed request's body, else "app"
   */
  readonly model?: string | undefined
  /**
   * secrets the app uses (a key it passes in code), scrubbed from every
   * failure message; the key variables of the known providers
   * (`Secrets.knownKeyVariables`, read from the ambient `ConfigProvider`)
   * are registered without it
   */
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
}

/**
 * What was recorded for one example.
 *
 * @since 0.3.0
 * @category models
 */
export interface Trajectory<D, O> {
  readonly example: D
  /** absent when the function failed */
  readonly output?: O | undefined
  /** the metric's score; 0 as a placeholder when `error` is set */
  readonly score: number
  readonly feedback?: string | undefined
  /** set when the function or the metric failed: an evaluation failure, not a score */
  readonly error?: string | undefined
}

const messageOf = (cause: Cause.Cause<unknown>): string => {
  const e = Cause.squash(cause)
  const text = e instanceof Error ? e.message : typeof e === "object" && e !== null ? JSON.stringify(e) : String(e)
  return Secrets.scrub(text.replace(/\s+/g, " ").trim())
}

/** The failure as one no retry can fix, when the app's model call failed that way. */
const fatalOf = (cause: Cause.Cause<unknown>, name: string | undefined): Option.Option<ModelUnrecoverable> => {
  const thrown = wire.unwrapRetries(Cause.squash(cause))
  const direct = unrecoverable(thrown, "task")
  if (Option.isSome(direct)) return direct
  if (field(thrown, "name") !== "AI_APICallError") return Option.none()
  const bodyModel = field(field(thrown, "requestBodyValues"), "model")
  const model = name ?? (typeof bodyModel === "string" && bodyModel !== "" ? bodyModel : "app")
  return unrecoverable(wire.classify({ model, scrub: Secrets.scrub }, thrown, Date.now()).error, "task")
}

/**
 * The adapter over the app's function. Fails with a `ConfigError` when an
 * option is invalid.
 *
 * The adapter's outputs are `undefined` for the examples whose function
 * call failed (those are in the batch's `errors`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = <D, O, E = never>(options: Options<D, O, E>): Effect.Effect<Adapter<D, Trajectory<D, O>, O | undefined>, ConfigError> =>
  Effect.gen(function*() {
    if (typeof options.run !== "function") return yield* new ConfigError({ field: "run", detail: "must be a function of the example and the texts" })
    if (typeof options.metric !== "function") return yield* new ConfigError({ field: "metric", detail: "must be a function of the example and the output" })
    const concurrency = options.concurrency ?? 8
    if (!(Number.isInteger(concurrency) && concurrency > 0)) {
      return yield* new ConfigError({ field: "concurrency", detail: `must be a positive integer, got ${concurrency}` })
    }
    const components = options.components ?? []
    if (!Array.isArray(components) || components.some((c) => typeof c !== "string" || c === "")) {
      return yield* new ConfigError({ field: "components", detail: "must be a list of component names" })
    }
    const secrets = options.secrets ?? []
    if (!Array.isArray(secrets) || secrets.some((v) => !Redacted.isRedacted(v))) {
      return yield* new ConfigError({ field: "secrets", detail: "must be a list of Redacted values" })
    }
    // the app's provider reads its key from the environment: a server
    // echoing it in an error must not carry it into the run's records
    yield* Secrets.registerVariables(Secrets.knownKeyVariables)
    yield* Secrets.register(...secrets)
    const { metric, run } = options

    const runOne = (example: D, texts: Candidate): Effect.Effect<Trajectory<D, O>, ModelUnrecoverable> =>
      Effect.gen(function*() {
        const produced = yield* Effect.exit(Effect.tryPromise({
          // async turns a thrown error into a rejection and a plain value into a Promise
          try: async (signal) => await run(example, texts, signal),
          catch: (cause) => cause
        }))
        if (produced._tag === "Failure") {
          if (Cause.isInterruptedOnly(produced.cause)) return yield* Effect.interrupt
          const fatal = fatalOf(produced.cause, options.model)
          if (Option.isSome(fatal)) return yield* Effect.fail(fatal.value)
          const error = `the app failed: ${messageOf(produced.cause)}`
          return { example, score: 0, feedback: `The app failed on this input, so there is no output: ${error}`, error }
        }
        const output = produced.value
        const scored = yield* Effect.exit(Effect.suspend(() => {
          const result = metric(example, output)
          return Effect.isEffect(result) ? result : Effect.tryPromise({ try: async () => await result, catch: (cause) => cause })
        }))
        const unscored = (error: string): Trajectory<D, O> => ({ example, output, score: 0, feedback: `The output could not be scored: ${error}`, error })
        if (scored._tag === "Failure") {
          if (Cause.isInterruptedOnly(scored.cause)) return yield* Effect.interrupt
          return unscored(`the metric failed: ${messageOf(scored.cause)}`)
        }
        const { feedback, score } = scored.value
        if (typeof score !== "number" || !Number.isFinite(score)) return unscored(`the metric returned a non-finite score (${String(score)})`)
        return { example, output, score, feedback }
      })

    const adapter: Adapter<D, Trajectory<D, O>, O | undefined> = {
      evaluate: (batch, candidate, { captureTraces }) =>
        Effect.gen(function*() {
          const missing = components.filter((c) => !Object.prototype.hasOwnProperty.call(candidate, c))
          if (missing.length > 0) {
            return yield* new AdapterError({
              call: "evaluate",
              detail: `the candidate has no component ${missing.map((c) => `"${c}"`).join(", ")} (it has ${
                Object.keys(candidate).map((k) => `"${k}"`).join(", ") || "none"
              })`
            })
          }
          const trajectories = yield* Effect.forEach(batch, (example) => runOne(example, candidate), { concurrency })
          return {
            // a failed example has no output (it is in `errors`)
            outputs: trajectories.map((t) => t.output),
            scores: trajectories.map((t) => t.score),
            trajectories: captureTraces ? trajectories : undefined,
            ...(trajectories.some((t) => t.error !== undefined) ? { errors: trajectories.map((t) => t.error) } : {})
          }
        }),
      makeReflectiveDataset: (_candidate, evaluation, names) =>
        Effect.gen(function*() {
          if (evaluation.trajectories === undefined) {
            return yield* new AdapterError({
              call: "makeReflectiveDataset",
              detail: "the evaluation has no trajectories (evaluate with captureTraces: true)"
            })
          }
          const records = evaluation.trajectories.map((t): ReflectiveRecord => ({
            "Inputs": options.describeInput ? options.describeInput(t.example) : t.example,
            "Generated Outputs": t.output === undefined
              ? `(no output: ${t.error ?? "the app returned nothing"})`
              : options.describeOutput
              ? options.describeOutput(t.output)
              : t.output,
            "Feedback": t.feedback ?? `Score: ${t.score}`
          }))
          return Object.fromEntries(names.map((c) => [c, records]))
        })
    }
    return adapter
  })

/**
 * A layer providing the adapter: it meets the adapter requirement of
 * `Gepa.optimize` over the same examples.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = <D, O, E = never>(options: Options<D, O, E>): Layer.Layer<AdapterService<D, Trajectory<D, O>, O | undefined>, ConfigError> =>
  Layer.effect(adapterTag<D, Trajectory<D, O>, O | undefined>(), make(options))
