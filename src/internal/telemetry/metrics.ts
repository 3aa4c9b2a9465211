/**
 * The run's metrics and their recording (see `Telemetry`, which documents
 * each): the metric definitions, metrics with their tags fixed once, and
 * the synchronous updates the events and model calls feed.
 *
 * @internal
 */
import { Effect, FiberRef, Metric, MetricBoundaries, MetricKey, type MetricKeyType, MetricLabel } from "effect"
import type { EvaluationPurpose } from "../../Event.js"
import type { Completion } from "../../LanguageModel.js"

// ---------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------

export const metricCalls = Metric.fromMetricKey(MetricKey.counter("gepa.metric_calls", {
  description: "examples evaluated by the adapter (metric calls spent)",
  incremental: true
}))

const proposalsKey = MetricKey.counter("gepa.proposals", { description: "proposals by outcome", incremental: true })

export const proposals = Metric.fromMetricKey(proposalsKey)

export const iterations = Metric.counter("gepa.iterations", { description: "iterations finished", incremental: true })

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

export const evaluationDuration = Metric.fromMetricKey(evaluationDurationKey)

export const bestScore = Metric.gauge("gepa.best_score", { description: "best average validation score" })

const modelDurationKey = MetricKey.histogram(
  "gepa.model.duration",
  millisBoundaries,
  "time of one language model call, in milliseconds"
)

export const modelDuration = Metric.fromMetricKey(modelDurationKey)

const modelCallsKey = MetricKey.counter("gepa.model.calls", { description: "language model calls", incremental: true })

export const modelCalls = Metric.fromMetricKey(modelCallsKey)

const modelTokensKey = MetricKey.counter("gepa.model.tokens", {
  description: "tokens used by language model calls",
  incremental: true
})

export const modelTokens = Metric.fromMetricKey(modelTokensKey)

const modelCostKey = MetricKey.counter("gepa.model.cost", { description: "cost of language model calls", incremental: true })

export const modelCost = Metric.fromMetricKey(modelCostKey)

// ---------------------------------------------------------------------------
// recording helpers
// ---------------------------------------------------------------------------

export type Labels = ReadonlyArray<MetricLabel.MetricLabel>

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

export const evaluationSync = (
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
export const proposalSync = (outcome: ProposalOutcome, kind: "reflective" | "merge", labels: Labels) => {
  const byOutcome = proposalMetrics[kind]
  let metric = byOutcome.get(outcome)
  if (metric === undefined) {
    metric = proposalTagged(outcome, kind)
    byOutcome.set(outcome, metric)
  }
  metric.unsafeUpdate(1, labels)
}

export const recordEvaluation = (args: {
  readonly purpose: EvaluationPurpose
  readonly metricCalls: number
  readonly failures: number
  readonly durationMillis?: number | undefined
}): Effect.Effect<void> => withLabels((labels) => evaluationSync(args, labels))

export type ProposalOutcome = "accepted" | "rejected" | "skipped" | "failed"

export const recordProposal = (outcome: ProposalOutcome, kind: "reflective" | "merge" = "reflective"): Effect.Effect<void> =>
  withLabels((labels) => proposalSync(outcome, kind, labels))

export const recordBestScore = (score: number): Effect.Effect<void> =>
  Number.isFinite(score) ? withLabels((labels) => bestScore.unsafeUpdate(score, labels)) : Effect.void

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

export const recordModelCallSync = (
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

export type ModelRole = "reflection" | "task"
