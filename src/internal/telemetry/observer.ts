/**
 * The event observer (see `Telemetry.observer`): metrics, span attributes
 * and logs from a run's events.
 *
 * @internal
 */
import { Clock, Context, Effect, type Fiber, FiberRef, LogLevel } from "effect"
import type { GepaEvent } from "../../Event.js"
import * as eventLog from "./eventLog.js"
import { isRecord } from "../shared/fields.js"
import * as Ledger from "../engine/ledger.js"
import { bestScore, evaluationSync, iterations, type Labels, metricCalls, type ProposalOutcome, proposalSync } from "./metrics.js"

// ---------------------------------------------------------------------------
// the event observer: metrics, span attributes and logs from events
// ---------------------------------------------------------------------------

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

export const describeEvent: (
  event: GepaEvent,
  best: { readonly score: number; readonly candidate: number } | undefined
) => { readonly level: "info" | "debug" | "warning"; readonly message: string } = eventLog.describeEvent

const levelOf = {
  info: LogLevel.Info,
  debug: LogLevel.Debug,
  warning: LogLevel.Warning
} as const

/** An event's tag. */
export type EventTag = GepaEvent["_tag"]

// the events whose handling below does something with the given options,
// whatever the log level: metrics, span attributes, the best score
const metricTags: ReadonlyArray<EventTag> = [
  "OptimizationStarted",
  "IterationStarted",
  "BudgetUpdated",
  "EvaluationStarted",
  "EvaluationEnded",
  "ProposalEnded",
  "MergeAccepted",
  "MergeRejected",
  "ValsetEvaluated",
  "IterationEnded",
  "OptimizationEnded"
]
const spanTags: ReadonlyArray<EventTag> = ["BudgetUpdated", "EvaluationEnded", "OptimizationEnded"]
// the best score so far: annotates every log line and names the best in the summaries
const bestTags: ReadonlyArray<EventTag> = ["ValsetEvaluated", "IterationEnded", "OptimizationEnded"]
const summaryTags: ReadonlyArray<EventTag> = ["SeedGenerated", "OptimizationStarted", "OptimizationEnded", "IterationEnded"]

/**
 * The events an observer with these options reads when the fiber's minimum
 * log level is `minimum`: "all" when its debug lines (which can describe any
 * event) pass; else those its metrics, span attributes, summaries (at
 * `summaryLevel`) and warnings need. An event of another tag would change
 * nothing: the run need not build it for the observer.
 */
export const tagsWanted = (options: ObserverOptions, minimum: LogLevel.LogLevel): ReadonlySet<EventTag> | "all" => {
  const logs = options.logs ?? true
  // Effect's `FiberRuntime.log` drops a line whose level is below the fiber's minimum
  const passes = (level: LogLevel.LogLevel) => logs && !LogLevel.lessThan(level, minimum)
  if (passes(LogLevel.Debug)) return "all"
  const tags = new Set<EventTag>()
  const add = (list: ReadonlyArray<EventTag>) => {
    for (const tag of list) tags.add(tag)
  }
  if (options.metrics ?? true) add(metricTags)
  if (options.spanAttributes ?? true) add(spanTags)
  if (passes(levelOf[options.summaryLevel ?? "info"])) add(summaryTags)
  if (passes(LogLevel.Warning)) add(["Error"])
  if (passes(LogLevel.Warning) || passes(levelOf[options.summaryLevel ?? "info"])) add(bestTags)
  return tags
}

/**
 * The observer with the events it reads (see `tagsWanted`), for the fiber's
 * minimum log level now: a run's fibers inherit it, so it holds for the run.
 */
export const observe = (
  options: ObserverOptions = {}
): Effect.Effect<{ readonly handle: Handle; readonly wants: (tag: EventTag) => boolean }> =>
  Effect.map(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) => {
    const tags = tagsWanted(options, minimum)
    return { handle: handler(options), wants: tags === "all" ? () => true : (tag) => tags.has(tag) }
  })

/**
 * Handles an event synchronously in the emitting fiber (its metric labels,
 * clock, span and log level); returns the log line to write, if one passes
 * the fiber's minimum level.
 */
export type Handle = (event: GepaEvent, fiber: Fiber.RuntimeFiber<unknown, unknown>) => Effect.Effect<void> | undefined

export const observer = (
  options: ObserverOptions = {}
): Effect.Effect<(event: GepaEvent) => Effect.Effect<void>> =>
  Effect.sync(() => {
    const handle = handler(options)
    return (event: GepaEvent) => Effect.withFiberRuntime<void>((fiber) => handle(event, fiber) ?? Effect.void)
  })

const handler = (options: ObserverOptions): Handle => {
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

  return (event, fiber) => {
    update(event, fiber, fiber.getFiberRef(FiberRef.currentMetricLabels))
    if (!logs) return undefined
    // the line is built only when its level passes the minimum
    const kind = kindOf(event)
    const level = kind === "summary" ? summaryLevel : levelOf[kind]
    return LogLevel.lessThan(level, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))
      ? undefined
      : Effect.annotateLogs(Effect.logWithLevel(level, describeEvent(event, best).message), annotationsOf(event, best))
  }
}

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
