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
import {
  Cause,
  Clock,
  Context,
  Effect,
  Exit,
  type Fiber,
  FiberRef,
  LogLevel,
  Metric,
  MetricBoundaries,
  MetricKey,
  type MetricKeyType,
  MetricLabel
} from "effect"

import type { EvaluationPurpose, GepaEvent } from "./Event.js"
import * as eventLog from "./internal/eventLog.js"
import { isRecord } from "./internal/fields.js"
import * as Ledger from "./internal/ledger.js"
import * as modelCall from "./internal/modelCall.js"
import * as Spans from "./internal/spans.js"
import type { Completion, LanguageModel, LlmError, Prompt } from "./LanguageModel.js"

// ---------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------

/**
 * Examples evaluated by the adapter (the metric-call budget spent).
 *
 * @since 0.2.0
 * @category metrics
 */
export const metricCalls = Metric.fromMetricKey(MetricKey.counter("gepa.metric_calls", {
  description: "examples evaluated by the adapter (metric calls spent)",
  incremental: true
}))

const proposalsKey = MetricKey.counter("gepa.proposals", { description: "proposals by outcome", incremental: true })

/**
 * Proposals that ended, tagged `outcome` (accepted, rejected, skipped,
 * failed) and `kind` (reflective, merge).
 *
 * @since 0.2.0
 * @category metrics
 */
export const proposals = Metric.fromMetricKey(proposalsKey)

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

const evaluationDurationKey = MetricKey.histogram(
  "gepa.evaluation.duration",
  millisBoundaries,
  "time of one evaluation batch, in milliseconds"
)

/**
 * Wall-clock time of one evaluation (one batch of examples), in
 * milliseconds, tagged `purpose`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const evaluationDuration = Metric.fromMetricKey(evaluationDurationKey)

/**
 * The best average validation score so far.
 *
 * @since 0.2.0
 * @category metrics
 */
export const bestScore = Metric.gauge("gepa.best_score", { description: "best average validation score" })

const modelDurationKey = MetricKey.histogram(
  "gepa.model.duration",
  millisBoundaries,
  "time of one language model call, in milliseconds"
)

/**
 * Time of one model call (retries included), in milliseconds, tagged
 * `role` (reflection, task) and `model`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelDuration = Metric.fromMetricKey(modelDurationKey)

const modelCallsKey = MetricKey.counter("gepa.model.calls", { description: "language model calls", incremental: true })

/**
 * Model calls, tagged `role`, `model` and `outcome` (ok, error).
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelCalls = Metric.fromMetricKey(modelCallsKey)

const modelTokensKey = MetricKey.counter("gepa.model.tokens", {
  description: "tokens used by language model calls",
  incremental: true
})

/**
 * Tokens used by model calls, tagged `role`, `model` and `direction`
 * (input, output).
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelTokens = Metric.fromMetricKey(modelTokensKey)

const modelCostKey = MetricKey.counter("gepa.model.cost", { description: "cost of language model calls", incremental: true })

/**
 * Cost of model calls (in the price table's currency), tagged `role` and
 * `model`; only calls with a price count.
 *
 * @since 0.2.0
 * @category metrics
 */
export const modelCost = Metric.fromMetricKey(modelCostKey)

// ---------------------------------------------------------------------------
// recording helpers
// ---------------------------------------------------------------------------

type Labels = ReadonlyArray<MetricLabel.MetricLabel>

// Metrics with their tags fixed once. `Metric.tagged` builds a new key (and
// hashes it) on every update; these find their hook at once, which matters
// for the task model's calls and the run's events.
// one map for metrics of every key type (counters, histograms, gauges): Metric is invariant in them
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
const fixedTags = new Map<string, Metric.Metric<any, any, any>>()
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any key type, as Metric.tagged accepts
const tagged = <Type extends MetricKeyType.MetricKeyType<any, any>>(
  key: MetricKey.MetricKey<Type>,
  tags: ReadonlyArray<readonly [string, string]>
): Metric.Metric<Type, MetricKeyType.MetricKeyType.InType<Type>, MetricKeyType.MetricKeyType.OutType<Type>> => {
  const id = `${key.name}\u0000${tags.map(([k, v]) => `${k}\u0000${v}`).join("\u0000")}`
  let metric = fixedTags.get(id)
  if (metric === undefined) {
    metric = Metric.fromMetricKey(MetricKey.taggedWithLabels(key, tags.map(([k, v]) => MetricLabel.make(k, v))))
    fixedTags.set(id, metric)
  }
  return metric
}

// the fiber's metric labels (`Metric.withMetricLabels` and friends)
const withLabels = (f: (labels: Labels) => void): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    f(fiber.getFiberRef(FiberRef.currentMetricLabels))
    return Effect.void
  })

const evaluationSync = (
  args: { readonly purpose: EvaluationPurpose; readonly metricCalls: number; readonly failures: number; readonly durationMillis?: number | undefined },
  labels: Labels
) => {
  if (args.metricCalls > 0) metricCalls.unsafeUpdate(args.metricCalls, labels)
  if (args.failures > 0) evaluationFailures.unsafeUpdate(args.failures, labels)
  if (args.durationMillis !== undefined) {
    durationOf(args.purpose).unsafeUpdate(args.durationMillis, labels)
  }
}

// the metrics updated on every evaluation and proposal, found without building their id (`tagged`)
const durations = new Map<EvaluationPurpose, ReturnType<typeof durationTagged>>()
const durationTagged = (purpose: EvaluationPurpose) => tagged(evaluationDurationKey, [["purpose", purpose]])
const durationOf = (purpose: EvaluationPurpose) => {
  let metric = durations.get(purpose)
  if (metric === undefined) {
    metric = durationTagged(purpose)
    durations.set(purpose, metric)
  }
  return metric
}
const proposalTagged = (outcome: ProposalOutcome, kind: "reflective" | "merge") => tagged(proposalsKey, [["outcome", outcome], ["kind", kind]])
const proposalMetrics = {
  reflective: new Map<ProposalOutcome, ReturnType<typeof proposalTagged>>(),
  merge: new Map<ProposalOutcome, ReturnType<typeof proposalTagged>>()
}
const proposalSync = (outcome: ProposalOutcome, kind: "reflective" | "merge", labels: Labels) => {
  const byOutcome = proposalMetrics[kind]
  let metric = byOutcome.get(outcome)
  if (metric === undefined) {
    metric = proposalTagged(outcome, kind)
    byOutcome.set(outcome, metric)
  }
  metric.unsafeUpdate(1, labels)
}

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
}): Effect.Effect<void> => withLabels((labels) => evaluationSync(args, labels))

/**
 * @since 0.2.0
 * @category recording
 */
export type ProposalOutcome = "accepted" | "rejected" | "skipped" | "failed"

/**
 * Records the end of a proposal.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordProposal = (outcome: ProposalOutcome, kind: "reflective" | "merge" = "reflective"): Effect.Effect<void> =>
  withLabels((labels) => proposalSync(outcome, kind, labels))

/**
 * Records the best average validation score.
 *
 * @since 0.2.0
 * @category recording
 */
export const recordBestScore = (score: number): Effect.Effect<void> =>
  Number.isFinite(score) ? withLabels((labels) => bestScore.unsafeUpdate(score, labels)) : Effect.void

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
}): Effect.Effect<void> => withLabels((labels) => recordModelCallSync(args, labels))

// the model metrics of one role and model, tagged once
const modelMetrics = new Map<string, {
  readonly duration: Metric.Metric.Histogram<number>
  readonly ok: Metric.Metric.Counter<number>
  readonly error: Metric.Metric.Counter<number>
  readonly input: Metric.Metric.Counter<number>
  readonly output: Metric.Metric.Counter<number>
  readonly cost: Metric.Metric.Counter<number>
}>()
const metricsOf = (role: ModelRole, model: string) => {
  const id = `${role}\u0000${model}`
  let found = modelMetrics.get(id)
  if (found === undefined) {
    const tags = [["role", role], ["model", model]] as const
    found = {
      duration: tagged(modelDurationKey, tags),
      ok: tagged(modelCallsKey, [...tags, ["outcome", "ok"]]),
      error: tagged(modelCallsKey, [...tags, ["outcome", "error"]]),
      input: tagged(modelTokensKey, [...tags, ["direction", "input"]]),
      output: tagged(modelTokensKey, [...tags, ["direction", "output"]]),
      cost: tagged(modelCostKey, tags)
    }
    modelMetrics.set(id, found)
  }
  return found
}

const recordModelCallSync = (
  args: {
    readonly role: ModelRole
    readonly model: string
    readonly durationMillis: number
    readonly completion: Completion | undefined
  },
  labels: Labels
): void => {
  const { completion } = args
  const m = metricsOf(args.role, args.model)
  m.duration.unsafeUpdate(args.durationMillis, labels)
  ;(completion === undefined ? m.error : m.ok).unsafeUpdate(1, labels)
  if (completion?.usage !== undefined) {
    m.input.unsafeUpdate(completion.usage.inputTokens, labels)
    m.output.unsafeUpdate(completion.usage.outputTokens, labels)
  }
  if (completion?.cost !== undefined) m.cost.unsafeUpdate(completion.cost, labels)
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
      const call = Effect.locally(model.complete(prompt), modelCall.currentCallStats, stats)
      return Effect.onExit(call, (exit) =>
        Effect.withFiberRuntime((after) => {
          // a call cut short (a timeout, a stopped run) neither failed nor answered
          if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) return Effect.void
          const completion = Exit.isSuccess(exit) ? exit.value : undefined
          const name = options.model ?? completion?.model ?? "unknown"
          recordModelCallSync({
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
  const instrumented: LanguageModel = Object.assign({ complete }, { [InstrumentedId]: true, [ModelNameId]: options.model })
  return instrumented
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
    const summaryLevel = levelOf[options.summaryLevel ?? "info"]
    // the run's running total of metric calls, followed as the ledger reports it
    const calls = Ledger.follower()
    let best: { score: number; candidate: number } | undefined
    // candidates whose average `IterationEnded` has already read
    let scanned = 0
    const started = new Map<string, Array<number>>()

    // Everything below is synchronous and runs in one step of the emitting
    // fiber (its metric labels, clock, span and log level): the observer
    // sees every event of the run, so it must cost little per event.
    const countTo = (total: number, labels: Labels): void => {
      const delta = calls.to(total)
      if (delta > 0 && metrics) metricCalls.unsafeUpdate(delta, labels)
    }
    const improve = (score: number, candidate: number, labels: Labels): void => {
      if (!Number.isFinite(score) || (best !== undefined && score <= best.score)) return
      best = { score, candidate }
      if (metrics) bestScore.unsafeUpdate(score, labels)
    }
    const annotate = (fiber: Fiber.RuntimeFiber<unknown, unknown>, attributes: Record<string, unknown>): void => {
      const span = spans ? fiber.currentSpan : undefined
      if (span?._tag !== "Span") return
      for (const [key, value] of Object.entries(attributes)) span.attribute(key, value)
    }
    const now = (fiber: Fiber.RuntimeFiber<unknown, unknown>): number => Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()

    const update = (event: GepaEvent, fiber: Fiber.RuntimeFiber<unknown, unknown>, labels: Labels): void => {
      switch (event._tag) {
        case "OptimizationStarted":
          return calls.start(event.resumed)
        case "IterationStarted":
          return countTo(event.metricCalls, labels)
        case "BudgetUpdated":
          countTo(event.metricCalls, labels)
          // emitted between iterations: the current span is the run's
          return annotate(fiber, { "gepa.metric_calls": event.metricCalls })
        case "EvaluationStarted": {
          const key = `${event.iteration}/${event.purpose}`
          const queue = started.get(key)
          if (queue === undefined) started.set(key, [now(fiber)])
          else queue.push(now(fiber))
          return
        }
        case "EvaluationEnded": {
          const key = `${event.iteration}/${event.purpose}`
          const queue = started.get(key)
          const start = queue?.shift()
          if (queue !== undefined && queue.length === 0) started.delete(key)
          if (metrics) {
            evaluationSync({
              purpose: event.purpose,
              metricCalls: 0, // counted from the spent totals
              failures: event.failures,
              durationMillis: start === undefined ? undefined : now(fiber) - start
            }, labels)
          }
          return annotate(fiber, {
            "gepa.examples": event.scores.length,
            "gepa.failures": event.failures,
            "gepa.cache_hits": event.cacheHits
          })
        }
        case "ProposalEnded":
          if (metrics) proposalSync(outcomeOf(event.outcome), "reflective", labels)
          return
        case "MergeAccepted":
          if (metrics) proposalSync("accepted", "merge", labels)
          return
        case "MergeRejected":
          if (metrics) proposalSync("rejected", "merge", labels)
          return
        case "ValsetEvaluated":
          return improve(event.score, event.candidate, labels)
        case "IterationEnded": {
          // a candidate's average never changes once added: only the ones
          // added since the last look are read (reading all of them on every
          // iteration made a long run quadratic, and boxed every score)
          const averages = event.state.valAverages
          if (averages.length < scanned) scanned = 0
          let top = -1
          let topScore = -Infinity
          for (let i = scanned; i < averages.length; i++) {
            const score = averages[i] ?? Number.NaN
            if (Number.isFinite(score) && (top < 0 || score > topScore)) {
              top = i
              topScore = score
            }
          }
          scanned = averages.length
          if (top >= 0) improve(topScore, top, labels)
          if (metrics) iterations.unsafeUpdate(1, labels)
          return
        }
        case "OptimizationEnded":
          if (event.result.bestScore !== null) improve(event.result.bestScore, event.result.bestIndex, labels)
          return annotate(fiber, {
            "gepa.iterations": event.result.iterations,
            "gepa.metric_calls": event.result.totalMetricCalls,
            "gepa.candidates": event.result.candidates.length,
            "gepa.best_candidate": event.result.bestIndex,
            ...(event.result.bestScore === null ? {} : { "gepa.best_score": event.result.bestScore }),
            "gepa.stop_reason": event.result.stopReason
          })
      }
    }

    return (event: GepaEvent) =>
      Effect.withFiberRuntime<void>((fiber) => {
        update(event, fiber, fiber.getFiberRef(FiberRef.currentMetricLabels))
        if (!logs) return Effect.void
        // the line is built only when its level passes the minimum
        const kind = kindOf(event)
        const level = kind === "summary" ? summaryLevel : levelOf[kind]
        return LogLevel.lessThan(level, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))
          ? Effect.void
          : Effect.annotateLogs(Effect.logWithLevel(level, describeEvent(event, best).message), annotationsOf(event, best))
      })
  })

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
export const annotationsOf = (
  event: GepaEvent,
  best?: { readonly score: number; readonly candidate: number } | undefined
): Record<string, string | number | boolean> => {
  const out: Record<string, string | number | boolean> = { event: event._tag }
  // the fields that some kinds of event have, read by name (an event is always an object)
  const e: Readonly<Record<string, unknown>> = isRecord(event) ? event : {}
  const put = (key: string, value: unknown) => {
    if ((typeof value === "number" && Number.isFinite(value)) || typeof value === "string" || typeof value === "boolean") out[key] = value
  }
  put("iteration", e["iteration"])
  put("candidate", e["candidate"])
  put("parent", e["parent"])
  const parents = e["parents"]
  if (Array.isArray(parents)) put("parent", parents.join(","))
  put("score", e["score"])
  put("metricCalls", e["metricCalls"])
  put("purpose", e["purpose"])
  put("outcome", e["outcome"])
  if ("budget" in e) put("budget", e["budget"] ?? "unlimited")
  switch (event._tag) {
    case "CandidateRejected":
      put("score", event.after)
      break
    case "IterationEnded":
      put("metricCalls", event.state.metricCalls)
      put("accepted", event.accepted)
      break
    case "OptimizationEnded":
      put("metricCalls", event.result.totalMetricCalls)
      put("iteration", event.result.iterations)
      put("candidate", event.result.bestIndex)
      if (event.result.bestScore !== null) put("score", event.result.bestScore)
      break
    case "SeedGenerated":
      put("attempts", event.attempts)
      break
  }
  if (best !== undefined && event._tag !== "OptimizationEnded") {
    put("bestScore", best.score)
    put("bestCandidate", best.candidate)
  }
  return out
}

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

const outcomeOf = (outcome: string): ProposalOutcome => outcome === "accepted" || outcome === "rejected" || outcome === "skipped" ? outcome : "failed"
