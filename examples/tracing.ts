/**
 * Traces, metrics and logs of a run through OpenTelemetry
 * (`npx tsx examples/tracing.ts`, offline: the models are simulated).
 *
 * Spans go to the console exporter, the metrics are read once at the end
 * with a pull reader, and the iteration summaries are logged at info.
 * Needs the optional peers `@effect/opentelemetry` and the OpenTelemetry
 * SDK packages (`@opentelemetry/sdk-trace-base`, `@opentelemetry/sdk-metrics`
 * and their peers).
 *
 * @since 0.2.0
 */
import { NodeSdk } from "@effect/opentelemetry"
import { AggregationTemporality, MetricReader } from "@opentelemetry/sdk-metrics"
import { ConsoleSpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Logger, LogLevel } from "effect"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import * as Gepa from "../src/Gepa.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as Metric from "../src/Metric.js"
import * as Telemetry from "../src/Telemetry.js"

/** A reader that exports only when asked: `collect()` at the end of the run. */
class OnDemandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }
  protected onShutdown() {
    return Promise.resolve()
  }
  protected onForceFlush() {
    return Promise.resolve()
  }
}
const reader = new OnDemandReader()

const Otel = NodeSdk.layer(() => ({
  resource: { serviceName: "gepa-example" },
  spanProcessor: new SimpleSpanProcessor(new ConsoleSpanExporter()),
  metricReader: reader
}))

// simulated models: the task shouts when told to, the reflection tells it to
const task = Telemetry.instrumentModel(
  LanguageModel.fromFunction((prompt) => {
    const [system, user] = LanguageModel.messages(prompt)
    return /upper case/i.test(system?.content ?? "") ? (user?.content ?? "").toUpperCase() : user?.content ?? ""
  }),
  { role: "task", model: "simulated-task" }
)
const reflection = Telemetry.instrumentModel(
  LanguageModel.fromFunction(() => "```\nRepeat the text in upper case.\n```"),
  { role: "reflection", model: "simulated-reflection" }
)

const program = Effect.gen(function*() {
  const adapter = yield* DefaultAdapter.make<string>({
    model: task,
    input: (text) => text,
    metric: Metric.exactMatch((text) => text.toUpperCase())
  })
  const result = yield* Gepa.optimize({
    seedCandidate: { system_prompt: "Repeat the text." },
    trainset: ["hello", "ship it", "pareto", "effect"],
    adapter,
    reflectionModel: reflection,
    maxMetricCalls: 30,
    // the engine records the metrics itself; its summaries at info, not debug
    telemetry: { summaryLevel: "info" }
  })
  const { resourceMetrics } = yield* Effect.promise(() => reader.collect())
  for (const metric of resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)) {
    if (!metric.descriptor.name.startsWith("gepa.")) continue
    for (const point of metric.dataPoints) {
      console.log(metric.descriptor.name, JSON.stringify(point.attributes), JSON.stringify(point.value))
    }
  }
  return result
})

Effect.runPromise(program.pipe(Effect.provide(Otel), Logger.withMinimumLogLevel(LogLevel.Info))).then(
  (result) => console.log(`best score ${result.bestScore}: ${result.bestCandidate["system_prompt"]}`),
  (error) => {
    console.error(error)
    process.exitCode = 1
  }
)
