/**
 * Metrics, span attributes and logs of a run, in Effect's own terms: the
 * metrics are Effect `Metric`s (exported by `@effect/opentelemetry` or read
 * with `Metric.value`), the logs go through Effect's `Logger` (iteration
 * summaries at info, details at debug), and model calls get a `gepa.model`
 * span with the OpenTelemetry GenAI attributes.
 *
 * Everything here is fed by the run's events: `observer` builds a handler
 * for the `onEvent` option, and `instrumentModel` wraps a `LanguageModel`.
 * Nothing here needs an OpenTelemetry package.
 *
 * @since 0.2.0
 */
import { Cause, Clock, Context, Effect, Exit, FiberRef } from "effect"
import * as modelCall from "./internal/models/call.js"
import * as Spans from "./internal/telemetry/spans.js"
import * as Metrics from "./internal/telemetry/metrics.js"
import * as Observer from "./internal/telemetry/observer.js"
import type { Completion, LanguageModel, LlmError, Prompt } from "./LanguageModel.js"

// ---------------------------------------------------------------------------
// metrics and recording (src/internal/telemetry/metrics.ts)
// ---------------------------------------------------------------------------

/**
 * Examples evaluated by the adapter (the metric-call budget spent).
 *
 * @since 0.2.0
 * @category metrics
 */
export const metricCalls = Metrics.metricCalls

/**
 * Proposals that ended, tagged `outcome` (accepted, rejected, skipped,
 * failed) and `kind` (reflective, merge).
 *
 * @since 0.2.0
 * @category metrics
 */
export const proposals = Metrics.proposals

/**
 * Iterations finished.
 *
 * @since 0.2.0
 * @category metrics
 */
export const iterations = Metrics.iterations

/**
 * Examples whose evaluation failed (scored with the fallback score).
 *
 * @since 0.2.0
 * @category metrics
 */
export const evaluationFailures = Metrics.evaluationFailures

/**
 * Wall-clock time of one evaluation (one batch of examples), in
 * milliseconds, tagged `purpose`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const evaluationDuration = Metrics.evaluationDuration

/**
 * The best average validation score so far.
 *
 * @since 0.2.0
 * @category metrics
 */
export const bestScore = Metrics.bestScore

/**
 * Time of one model call (retries included), in milliseconds, tagged
 * `role` (reflection, task) and `model`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelDuration = Metrics.modelDuration

/**
 * Model calls, tagged `role`, `model` and `outcome` (ok, error).
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelCalls = Metrics.modelCalls

/**
 * Tokens used by model calls, tagged `role`, `model` and `direction`
 * (input, output).
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelTokens = Metrics.modelTokens

/**
 * Cost of model calls (in the price table's currency), tagged `role` and
 * `model`; only calls with a price count.
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelCost = Metrics.modelCost

/**
 * Records one finished evaluation: the metric calls it spent, its failed
 * examples and its duration.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordEvaluation = Metrics.recordEvaluation

/**
 * How a proposal ended, as counted by the proposals metric.
 *
 * @since 0.2.0
 * @category recording
 */
export type ProposalOutcome = Metrics.ProposalOutcome

/**
 * Records the end of a proposal.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordProposal = Metrics.recordProposal

/**
 * Records the best average validation score.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordBestScore = Metrics.recordBestScore

/**
 * Records one model call.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordModelCall = Metrics.recordModelCall

/**
 * What a model is used for.
 *
 * @since 0.2.0
 * @category models
 */
export type ModelRole = Metrics.ModelRole

// ---------------------------------------------------------------------------
// model instrumentation
// ---------------------------------------------------------------------------

const InstrumentedId: unique symbol = Symbol.for("effect-gepa/Telemetry/instrumented")

const ModelNameId: unique symbol = Symbol.for("effect-gepa/Telemetry/modelName")

/**
 * The name an instrumented model was given (see `instrumentModel`), for
 * messages; `undefined` for a model without one.
 *
 * @since 0.3.0
 * @category model instrumentation
 */
export const nameOf = (model: LanguageModel): string | undefined => {
  const name = ModelNameId in model ? model[ModelNameId] : undefined
  return typeof name === "string" ? name : undefined
}

/**
 * Whether `instrumentModel` already wrapped this model.
 *
 * @since 0.2.0
 * @category model instrumentation
 */
export const isInstrumented = (model: LanguageModel): boolean => InstrumentedId in model

/**
 * Wraps a model so that every call runs in one `gepa.model` span (kind
 * client; the library's model layers open none of their own, and an
 * `@effect/ai` provider's spans are not recorded) carrying the GenAI
 * attributes (`gen_ai.system`, `gen_ai.request.model`,
 * `gen_ai.response.model`, `gen_ai.usage.input_tokens`,
 * `gen_ai.usage.output_tokens`, `gen_ai.response.finish_reasons`) plus
 * `gepa.model.role`, `gepa.model.cost` and `gepa.model.retries`, and
 * updates the model metrics.
 * Wrapping an instrumented model again returns it unchanged, so layers and
 * the engine may both instrument without counting a call twice.
 *
 * @since 0.2.0
 * @category model instrumentation
 */
export const instrumentModel = (
  model: LanguageModel,
  options: {
    readonly role: ModelRole
    /** the model's name in attributes and metric tags; default the name the answer reports, else "unknown" */
    readonly model?: string | undefined
    /**
     * the provider in `gen_ai.system`; default the one the model layer
     * reports (the library's layers do), else none
     *
     * @since 0.3.0
     */
    readonly provider?: string | undefined
  }
): LanguageModel => {
  if (isInstrumented(model)) return model
  const spanOptions = {
    kind: "client",
    captureStackTrace: false,
    attributes: {
      "gepa.model.role": options.role,
      ...(options.model === undefined ? {} : { "gen_ai.request.model": options.model })
    }
  } as const
  // Every call of the task model goes through here: the bookkeeping after
  // the call is one synchronous step of the fiber (its clock, span and
  // metric labels), not a chain of effects.
  const complete = (prompt: Prompt) =>
    Effect.withFiberRuntime<Completion, LlmError>((fiber) => {
      const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
      const start = clock.unsafeCurrentTimeMillis()
      // the model layers count their retries and name their provider here
      const stats: modelCall.CallStats = { retries: 0, provider: options.provider }
      // the fiber's slot for them, made at its first call (see `modelCall.CallSlot`)
      const found = fiber.getFiberRef(modelCall.currentCallStats)
      const owned = found !== undefined && found.owner === fiber.id()
      const callSlot: modelCall.CallSlot = owned ? found : { owner: fiber.id(), current: undefined }
      // a call inside another (a model wrapping an instrumented one) gives the slot back when it ends
      const outer = callSlot.current
      callSlot.current = stats
      const call = owned ? model.complete(prompt) : Effect.zipRight(FiberRef.set(modelCall.currentCallStats, callSlot), model.complete(prompt))
      return Effect.onExit(call, (exit) =>
        Effect.withFiberRuntime((after) => {
          callSlot.current = outer
          // a call cut short (a timeout, a stopped run) neither failed nor answered
          if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) return Effect.void
          const completion = Exit.isSuccess(exit) ? exit.value : undefined
          const name = options.model ?? completion?.model ?? "unknown"
          Metrics.recordModelCallSync({
            role: options.role,
            model: name,
            durationMillis: clock.unsafeCurrentTimeMillis() - start,
            completion
          }, after.getFiberRef(FiberRef.currentMetricLabels))
          const span = after.currentSpan
          if (span?._tag === "Span") {
            if (options.model === undefined) span.attribute("gen_ai.request.model", name)
            if (stats.provider !== undefined) span.attribute("gen_ai.system", stats.provider)
            span.attribute("gepa.model.retries", stats.retries)
            if (completion !== undefined) {
              // Effect exports arrays as JSON text, so the one reason goes as a string
              span.attribute("gen_ai.response.finish_reasons", completion.finishReason)
              if (completion.model !== undefined) span.attribute("gen_ai.response.model", completion.model)
              if (completion.usage !== undefined) {
                span.attribute("gen_ai.usage.input_tokens", completion.usage.inputTokens)
                span.attribute("gen_ai.usage.output_tokens", completion.usage.outputTokens)
              }
              if (completion.cost !== undefined) span.attribute("gepa.model.cost", completion.cost)
            }
          }
          return Effect.void
        }))
    }).pipe(Spans.withSpan("gepa.model", spanOptions))
  const instrumented: LanguageModel = Object.assign(
    model.contextWindow === undefined ? { complete } : { complete, contextWindow: model.contextWindow },
    { [InstrumentedId]: true, [ModelNameId]: options.model }
  )
  return instrumented
}

// ---------------------------------------------------------------------------
// the event observer (src/internal/telemetry/observer.ts)
// ---------------------------------------------------------------------------

/**
 * Options of `observer`.
 *
 * @since 0.2.0
 * @category observer
 */
export type ObserverOptions = Observer.ObserverOptions

/**
 * The log line of an event, and its level: iteration summaries and the
 * start and end of a run at info, errors at warning, the rest at debug.
 *
 * @since 0.2.0
 * @category observer
 */
export const describeEvent = Observer.describeEvent

/**
 * A handler for the `onEvent` option (or for the engine's own event
 * emission) that turns a run's events into metrics, span attributes and
 * logs. Build one per run: it keeps the run's best score, the metric calls
 * already counted and the start times of evaluations in progress.
 *
 * Metric calls are counted from the spent totals of `BudgetUpdated` and
 * `IterationStarted`, so a resumed run counts only what it spends itself.
 * Evaluation durations pair `EvaluationStarted` and `EvaluationEnded` of
 * the same iteration and purpose, first in first out. Span attributes are
 * set only from events whose span is fixed by construction (see
 * `ObserverOptions.spanAttributes`); the others would land on whatever span
 * the engine happens to emit them in.
 *
 * @since 0.2.0
 * @category observer
 */
export const observer = Observer.observer

/**
 * The log annotations of an event's line (besides the run's own `run`
 * annotation and `gepa.run` log span, see `Gepa.optimize`): `event` (its
 * tag) and, where they apply, `iteration`, `candidate`, `parent` (one
 * parent, or the parents joined with commas), `score`, `metricCalls`,
 * `budget`, `purpose`, `outcome`, `bestScore` and `bestCandidate`.
 *
 * @since 0.3.0
 * @category observer
 */
export const annotationsOf = Observer.annotationsOf
