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
import { Clock, Effect, Exit, FiberRef, LogLevel, Metric, MetricBoundaries } from "effect"
import type { EvaluationPurpose, GepaEvent } from "./Event.js"
import * as eventLog from "./internal/eventLog.js"
import type { Completion, LanguageModel, Prompt } from "./LanguageModel.js"

// ---------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------

/**
 * Examples evaluated by the adapter (the metric-call budget spent).
 *
 * @since 0.2.0
 * @category metrics
 */
export const metricCalls = Metric.counter("gepa.metric_calls", {
  description: "examples evaluated by the adapter (metric calls spent)",
  incremental: true
})

/**
 * Proposals that ended, tagged `outcome` (accepted, rejected, skipped,
 * failed) and `kind` (reflective, merge).
 *
 * @since 0.2.0
 * @category metrics
 */
export const proposals = Metric.counter("gepa.proposals", {
  description: "proposals by outcome",
  incremental: true
})

/**
 * Iterations finished.
 *
 * @since 0.2.0
 * @category metrics
 */
export const iterations = Metric.counter("gepa.iterations", { description: "iterations finished", incremental: true })

/**
 * Examples whose evaluation failed (scored with the fallback score).
 *
 * @since 0.2.0
 * @category metrics
 */
export const evaluationFailures = Metric.counter("gepa.evaluation.failures", {
  description: "examples whose evaluation failed",
  incremental: true
})

const millisBoundaries = MetricBoundaries.exponential({ start: 1, factor: 2, count: 20 })

/**
 * Wall-clock time of one evaluation (one batch of examples), in
 * milliseconds, tagged `purpose`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const evaluationDuration = Metric.histogram(
  "gepa.evaluation.duration",
  millisBoundaries,
  "time of one evaluation batch, in milliseconds"
)

/**
 * The best average validation score so far.
 *
 * @since 0.2.0
 * @category metrics
 */
export const bestScore = Metric.gauge("gepa.best_score", { description: "best average validation score" })

/**
 * Time of one model call (retries included), in milliseconds, tagged
 * `role` (reflection, task) and `model`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelDuration = Metric.histogram(
  "gepa.model.duration",
  millisBoundaries,
  "time of one language model call, in milliseconds"
)

/**
 * Model calls, tagged `role`, `model` and `outcome` (ok, error).
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelCalls = Metric.counter("gepa.model.calls", {
  description: "language model calls",
  incremental: true
})

/**
 * Tokens used by model calls, tagged `role`, `model` and `direction`
 * (input, output).
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelTokens = Metric.counter("gepa.model.tokens", {
  description: "tokens used by language model calls",
  incremental: true
})

/**
 * Cost of model calls (in the price table's currency), tagged `role` and
 * `model`; only calls with a price count.
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelCost = Metric.counter("gepa.model.cost", {
  description: "cost of language model calls",
  incremental: true
})

// ---------------------------------------------------------------------------
// recording helpers
// ---------------------------------------------------------------------------

/**
 * Records one finished evaluation: the metric calls it spent, its failed
 * examples and its duration.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordEvaluation = (args: {
  readonly purpose: EvaluationPurpose
  readonly metricCalls: number
  readonly failures: number
  readonly durationMillis?: number | undefined
}): Effect.Effect<void> =>
  Effect.all([
    args.metricCalls > 0 ? Metric.incrementBy(metricCalls, args.metricCalls) : Effect.void,
    args.failures > 0 ? Metric.incrementBy(evaluationFailures, args.failures) : Effect.void,
    args.durationMillis === undefined
      ? Effect.void
      : Metric.update(Metric.tagged(evaluationDuration, "purpose", args.purpose), args.durationMillis)
  ], { discard: true })

/**
 * Records the end of a proposal.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordProposal = (
  outcome: "accepted" | "rejected" | "skipped" | "failed",
  kind: "reflective" | "merge" = "reflective"
): Effect.Effect<void> => Metric.increment(Metric.tagged(Metric.tagged(proposals, "outcome", outcome), "kind", kind))

/**
 * Records the best average validation score.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordBestScore = (score: number): Effect.Effect<void> =>
  Number.isFinite(score) ? Metric.set(bestScore, score) : Effect.void

/**
 * Records one model call.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordModelCall = (args: {
  readonly role: ModelRole
  readonly model: string
  readonly durationMillis: number
  readonly completion: Completion | undefined
}): Effect.Effect<void> => {
  const tag = <T, I, O>(m: Metric.Metric<T, I, O>): Metric.Metric<T, I, O> =>
    Metric.tagged(Metric.tagged(m, "role", args.role), "model", args.model)
  const { completion } = args
  return Effect.all([
    Metric.update(tag(modelDuration), args.durationMillis),
    Metric.increment(Metric.tagged(tag(modelCalls), "outcome", completion === undefined ? "error" : "ok")),
    completion?.usage === undefined ? Effect.void : Effect.all([
      Metric.incrementBy(Metric.tagged(tag(modelTokens), "direction", "input"), completion.usage.inputTokens),
      Metric.incrementBy(Metric.tagged(tag(modelTokens), "direction", "output"), completion.usage.outputTokens)
    ]),
    completion?.cost === undefined ? Effect.void : Metric.incrementBy(tag(modelCost), completion.cost)
  ], { discard: true })
}

// ---------------------------------------------------------------------------
// model instrumentation
// ---------------------------------------------------------------------------

/**
 * What a model is used for.
 *
 * @since 0.2.0
 * @category models
 */
export type ModelRole = "reflection" | "task"

const InstrumentedId: unique symbol = Symbol.for("effect-gepa/Telemetry/instrumented")

/**
 * Whether `instrumentModel` already wrapped this model.
 *
 * @since 0.2.0
 * @category model instrumentation
 */
export const isInstrumented = (model: LanguageModel): boolean => InstrumentedId in model

/**
 * Wraps a model so that every call runs in a `gepa.model` span (kind
 * client) carrying the GenAI attributes (`gen_ai.request.model`,
 * `gen_ai.response.model`, `gen_ai.usage.input_tokens`,
 * `gen_ai.usage.output_tokens`, `gen_ai.response.finish_reasons`) plus
 * `gepa.model.role` and `gepa.model.cost`, and updates the model metrics.
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
  }
): LanguageModel => {
  if (isInstrumented(model)) return model
  const complete = (prompt: Prompt) =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const exit = yield* Effect.exit(model.complete(prompt))
      const end = yield* Clock.currentTimeMillis
      const completion = Exit.isSuccess(exit) ? exit.value : undefined
      const name = options.model ?? completion?.model ?? "unknown"
      if (options.model === undefined) yield* Effect.annotateCurrentSpan("gen_ai.request.model", name)
      yield* recordModelCall({ role: options.role, model: name, durationMillis: end - start, completion })
      if (completion !== undefined) {
        yield* Effect.annotateCurrentSpan({
          // Effect exports arrays as JSON text, so the one reason goes as a string
          "gen_ai.response.finish_reasons": completion.finishReason,
          ...(completion.model === undefined ? {} : { "gen_ai.response.model": completion.model }),
          ...(completion.usage === undefined ? {} : {
            "gen_ai.usage.input_tokens": completion.usage.inputTokens,
            "gen_ai.usage.output_tokens": completion.usage.outputTokens
          }),
          ...(completion.cost === undefined ? {} : { "gepa.model.cost": completion.cost })
        })
      }
      return yield* exit
    }).pipe(
      Effect.withSpan("gepa.model", {
        kind: "client",
        captureStackTrace: false,
        attributes: {
          "gepa.model.role": options.role,
          ...(options.model === undefined ? {} : { "gen_ai.request.model": options.model })
        }
      })
    )
  return { complete, [InstrumentedId]: true } as LanguageModel
}

// ---------------------------------------------------------------------------
// the event observer: metrics, span attributes and logs from events
// ---------------------------------------------------------------------------

/**
 * Options of `observer`.
 *
 * @since 0.2.0
 * @category observer
 */
export interface ObserverOptions {
  /** update the metrics (default true) */
  readonly metrics?: boolean | undefined
  /** log iteration summaries and details (default true) */
  readonly logs?: boolean | undefined
  /**
   * the level of the run's start and end and of the iteration summaries
   * (default "info"); details are always at debug, errors at warning. The
   * engine's own observer (`Gepa.Config.telemetry`) defaults to "debug", so
   * that a library run under Effect's default logger prints nothing.
   *
   * @since 0.2.0
   */
  readonly summaryLevel?: "info" | "debug" | undefined
  /**
   * annotate the spans the events are emitted in (default true):
   * `gepa.examples`, `gepa.failures` and `gepa.cache_hits` on each
   * `gepa.evaluate`, and the run's totals (`gepa.iterations`,
   * `gepa.metric_calls`, `gepa.candidates`, `gepa.best_candidate`,
   * `gepa.best_score`, `gepa.stop_reason`) on `gepa.optimize`
   */
  readonly spanAttributes?: boolean | undefined
}

/**
 * The log line of an event, and its level: iteration summaries and the
 * start and end of a run at info, errors at warning, the rest at debug.
 *
 * @since 0.2.0
 * @category observer
 */
export const describeEvent: (
  event: GepaEvent,
  best: { readonly score: number; readonly candidate: number } | undefined
) => { readonly level: "info" | "debug" | "warning"; readonly message: string } = eventLog.describeEvent

const levelOf = {
  info: LogLevel.Info,
  debug: LogLevel.Debug,
  warning: LogLevel.Warning
} as const

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
export const observer = (
  options: ObserverOptions = {}
): Effect.Effect<(event: GepaEvent) => Effect.Effect<void>> =>
  Effect.sync(() => {
    const metrics = options.metrics ?? true
    const logs = options.logs ?? true
    const spans = options.spanAttributes ?? true
    const summaryLevel = options.summaryLevel ?? "info"
    let counted: number | undefined = 0
    let best: { score: number; candidate: number } | undefined
    const started = new Map<string, Array<number>>()

    const countTo = (total: number): Effect.Effect<void> => {
      if (counted === undefined) {
        // a resumed run: what the saved state already spent is not ours
        counted = total
        return Effect.void
      }
      const delta = total - counted
      counted = Math.max(counted, total)
      return delta > 0 && metrics ? Metric.incrementBy(metricCalls, delta) : Effect.void
    }
    const improve = (score: number, candidate: number): Effect.Effect<void> => {
      if (!Number.isFinite(score) || (best !== undefined && score <= best.score)) return Effect.void
      best = { score, candidate }
      return metrics ? recordBestScore(score) : Effect.void
    }
    const annotate = (attributes: Record<string, unknown>) =>
      spans ? Effect.annotateCurrentSpan(attributes) : Effect.void

    const update = (event: GepaEvent): Effect.Effect<void> => {
      switch (event._tag) {
        case "OptimizationStarted":
          counted = event.resumed ? undefined : 0
          return Effect.void
        case "IterationStarted":
          return countTo(event.metricCalls)
        case "BudgetUpdated":
          // emitted between iterations: the current span is the run's
          return Effect.zipRight(countTo(event.metricCalls), annotate({ "gepa.metric_calls": event.metricCalls }))
        case "EvaluationStarted":
          return Effect.map(Clock.currentTimeMillis, (now) => {
            const key = `${event.iteration}/${event.purpose}`
            const queue = started.get(key) ?? []
            queue.push(now)
            started.set(key, queue)
          })
        case "EvaluationEnded":
          return Effect.gen(function*() {
            const key = `${event.iteration}/${event.purpose}`
            const queue = started.get(key)
            const start = queue?.shift()
            if (queue !== undefined && queue.length === 0) started.delete(key)
            const now = yield* Clock.currentTimeMillis
            if (metrics) {
              yield* recordEvaluation({
                purpose: event.purpose,
                metricCalls: 0, // counted from the spent totals
                failures: event.failures,
                durationMillis: start === undefined ? undefined : now - start
              })
            }
            yield* annotate({
              "gepa.examples": event.scores.length,
              "gepa.failures": event.failures,
              "gepa.cache_hits": event.cacheHits
            })
          })
        case "ProposalEnded":
          return metrics ? recordProposal(outcomeOf(event.outcome)) : Effect.void
        case "MergeAccepted":
          return metrics ? recordProposal("accepted", "merge") : Effect.void
        case "MergeRejected":
          return metrics ? recordProposal("rejected", "merge") : Effect.void
        case "ValsetEvaluated":
          return improve(event.score, event.candidate)
        case "IterationEnded": {
          const averages = event.state.valAverages
          let top = -1
          for (let i = 0; i < averages.length; i++) if (top < 0 || averages[i]! > averages[top]!) top = i
          return Effect.zipRight(
            top < 0 ? Effect.void : improve(averages[top]!, top),
            metrics ? Metric.increment(iterations) : Effect.void
          )
        }
        case "OptimizationEnded":
          return Effect.zipRight(
            event.result.bestScore === null ? Effect.void : improve(event.result.bestScore, event.result.bestIndex),
            annotate({
              "gepa.iterations": event.result.iterations,
              "gepa.metric_calls": event.result.totalMetricCalls,
              "gepa.candidates": event.result.candidates.length,
              "gepa.best_candidate": event.result.bestIndex,
              ...(event.result.bestScore === null ? {} : { "gepa.best_score": event.result.bestScore }),
              "gepa.stop_reason": event.result.stopReason
            })
          )
        default:
          return Effect.void
      }
    }

    // the line is built only when its level passes the minimum: most runs
    // log nothing, and the observer runs for every event
    const log = (event: GepaEvent): Effect.Effect<void> =>
      Effect.flatMap(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) => {
        const kind = kindOf(event)
        const level = kind === "summary" ? levelOf[summaryLevel] : levelOf[kind]
        return LogLevel.lessThan(level, minimum)
          ? Effect.void
          : Effect.logWithLevel(level, describeEvent(event, best).message)
      })

    return (event: GepaEvent) => logs ? Effect.zipRight(update(event), log(event)) : update(event)
  })

// the level of an event's line before it is built (see `describeEvent`)
const kindOf = (event: GepaEvent): "summary" | "warning" | "debug" => {
  switch (event._tag) {
    case "SeedGenerated":
    case "OptimizationStarted":
    case "OptimizationEnded":
    case "IterationEnded":
      return "summary"
    case "Error":
      return "warning"
    default:
      return "debug"
  }
}

const outcomeOf = (outcome: string): "accepted" | "rejected" | "skipped" | "failed" =>
  outcome === "accepted" || outcome === "rejected" || outcome === "skipped" ? outcome : "failed"
