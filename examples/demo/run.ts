/**
 * The demo run, separate from the `npm start` entry so tests can import it
 * without starting a run: optimizes the two ticket-routing components of
 * `./task.ts`, then writes the HTML report into the run directory.
 *
 * Offline by default (simulated task and reflection models). With
 * `OPENAI_API_KEY` set, `modelsFromEnv` picks real OpenAI-compatible models
 * instead (`OPENAI_BASE_URL`, `GEPA_TASK_MODEL`, `GEPA_REFLECTION_MODEL`).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Candidate } from "effect-gepa/Candidate"
import type { Config } from "effect-gepa/Config"
import { type ConfigError, PersistenceError } from "effect-gepa/Errors"
import type { GepaEvent } from "effect-gepa/Event"
import * as Gepa from "effect-gepa/Gepa"
import type { LanguageModel } from "effect-gepa/LanguageModel"
import * as OpenAiLanguageModel from "effect-gepa/OpenAiLanguageModel"
import * as Report from "effect-gepa/Report"
import * as StopCondition from "effect-gepa/StopCondition"
import * as Task from "./task.js"

/**
 * The models a demo run uses, and where they come from.
 *
 * @since 0.1.0
 * @category models
 */
export interface DemoModels {
  readonly kind: "simulated" | "openai"
  readonly description: string
  readonly taskModel: LanguageModel
  readonly reflectionModel: LanguageModel
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DemoOptions {
  /** metric-call budget; default 2000 */
  readonly maxMetricCalls?: number | undefined
  /** seed of the optimizer and of the simulated models; default 0 */
  readonly seed?: number | undefined
  /** where the run is kept; default `.gepa-runs/demo-<timestamp>` */
  readonly runDir?: string | undefined
  /** the models; default the simulated ones */
  readonly models?: DemoModels | undefined
  /** receives every event of the run (progress display) */
  readonly onEvent?: ((event: GepaEvent) => void) | undefined
  /** write `report.html` into the run directory; default true */
  readonly writeReport?: boolean | undefined
  /**
   * the proposal strategy; default the engine's for the candidate's shape
   * (three rounds of both components per step, their changes combined). One
   * proposal per step leaves lineages that improved different components for
   * merges to combine.
   */
  readonly strategy?: Pick<Config<unknown, unknown, unknown>, "proposalsPerStep" | "proposalSampling" | "proposalSelection" | "parallelProposals"> | undefined
  /** the stop conditions besides the budget; default a perfect validation score and `patience` iterations without a new best */
  readonly stop?: ReadonlyArray<StopCondition.StopCondition> | undefined
}

/**
 * What a demo run returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface DemoResult {
  readonly result: Gepa.OptimizeResult<string>
  readonly runDir: string
  /** absent when `writeReport` was false */
  readonly reportPath: string | undefined
  readonly elapsedMillis: number
  readonly models: DemoModels
}

/**
 * The default budget: enough for the simulated run to learn most of the
 * hidden policy in a few seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxMetricCalls = 2000

/**
 * The demo stops early when it can no longer improve: at a perfect
 * validation score, or after this many iterations without a new best. An
 * iteration is one proposal, and a step of the default plans six for the
 * demo's two components: 120 iterations are 20 steps.
 *
 * @since 0.2.0
 * @category constants
 */
export const patience = 120

/**
 * The deterministic offline models of the demo task.
 *
 * @since 0.1.0
 * @category models
 */
export const simulatedModels = (seed = 0): DemoModels => ({
  kind: "simulated",
  description: "simulated task and reflection models (offline)",
  taskModel: Task.makeTaskModel(seed),
  reflectionModel: Task.makeReflectionModel(seed)
})

/**
 * Real models when `OPENAI_API_KEY` is set, else `undefined`. The task model
 * is `GEPA_TASK_MODEL` (default "gpt-4.1-mini"), the reflection model
 * `GEPA_REFLECTION_MODEL` (default "gpt-4.1"), both at `OPENAI_BASE_URL`
 * when set.
 *
 * @since 0.1.0
 * @category models
 */
export const modelsFromEnv = (
  env: NodeJS.ProcessEnv = process.env
): Effect.Effect<DemoModels | undefined, ConfigError> =>
  Effect.gen(function*() {
    const key = env["OPENAI_API_KEY"]
    if (key === undefined || key.trim() === "") return undefined
    const taskName = env["GEPA_TASK_MODEL"]?.trim() || "gpt-4.1-mini"
    const reflectionName = env["GEPA_REFLECTION_MODEL"]?.trim() || "gpt-4.1"
    // read through Effect's Config so the key stays redacted end to end
    const taskModel = yield* OpenAiLanguageModel.fromEnv({ model: taskName, temperature: 0 })
    const reflectionModel = yield* OpenAiLanguageModel.fromEnv({ model: reflectionName })
    const base = env["OPENAI_BASE_URL"]?.trim() || OpenAiLanguageModel.defaults.baseURL
    return {
      kind: "openai",
      description: `task model ${taskName}, reflection model ${reflectionName} at ${base}`,
      taskModel,
      reflectionModel
    }
  })

const timestamp = (date: Date): string => date.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")

const writeFile = (file: string, text: string): Effect.Effect<void, PersistenceError> =>
  Effect.try({
    try: () => {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, text)
    },
    catch: (e) => new PersistenceError({ path: file, operation: "write", detail: e instanceof Error ? e.message : String(e) })
  })

/**
 * Runs the demo: GEPA with Pareto selection, merges, the default strategy
 * (six proposals per step for the task's two components) and eight
 * evaluations in flight, on the ticket-routing task.
 *
 * @since 0.1.0
 * @category running
 */
export const runDemo = (
  options: DemoOptions = {}
): Effect.Effect<DemoResult, Gepa.OptimizeError | PersistenceError> =>
  Effect.gen(function*() {
    const seed = options.seed ?? 0
    const models = options.models ?? simulatedModels(seed)
    const runDir = path.resolve(options.runDir ?? path.join(".gepa-runs", `demo-${timestamp(new Date())}`))
    yield* Effect.try({
      try: () => fs.mkdirSync(runDir, { recursive: true }),
      catch: (e) => new PersistenceError({ path: runDir, operation: "create", detail: e instanceof Error ? e.message : String(e) })
    })
    const config = {
      seedCandidate: Task.seedCandidate,
      trainset: Task.train,
      valset: Task.validation,
      adapter: Task.makeAdapter(models.taskModel),
      reflectionModel: models.reflectionModel,
      maxMetricCalls: options.maxMetricCalls ?? defaultMaxMetricCalls,
      // the budget is an upper bound: nothing is gained by spending it after
      // the validation score is perfect, or once it has stopped moving
      stop: options.stop ?? [StopCondition.scoreThreshold(1), StopCondition.noImprovement(patience)],
      seed,
      candidateSelector: "pareto" as const,
      merge: true,
      maxConcurrency: 8,
      ...options.strategy,
      // the run directory keeps state, events and the best candidate, so a
      // stopped demo can be inspected with `gepa show <dir>`
      runDir,
      ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent })
    }
    const started = Date.now()
    const result = yield* Gepa.optimize(config)
    const elapsedMillis = Date.now() - started
    let reportPath: string | undefined
    if (options.writeReport !== false) {
      reportPath = path.join(runDir, "report.html")
      yield* writeFile(
        reportPath,
        Report.render({
          result,
          trace: result.state.trace,
          seedCandidate: Task.seedCandidate,
          title: "GEPA demo: routing support tickets",
          generatedAt: new Date().toISOString()
        })
      )
    }
    return { result, runDir, reportPath, elapsedMillis, models }
  })

/**
 * Why a demo run stopped, in words: the perfect score, a pass over the
 * training set with nothing to learn, the patience running out, or the
 * budget.
 *
 * @since 0.2.0
 * @category running
 */
export const stopExplanation = (result: Gepa.OptimizeResult<unknown>): string => {
  const { state } = result
  if (result.bestScore !== null && result.bestScore >= 1) {
    return "early: the validation score is perfect, nothing left to improve"
  }
  if (result.stopReason.startsWith("nothing left to learn")) {
    return "early: a pass over the training set found nothing to improve, nothing left to learn"
  }
  if (state.iteration - state.lastImprovementIteration >= patience) {
    return `early: no new best in the last ${patience} iterations, it can no longer improve`
  }
  return `the budget is spent (${result.totalMetricCalls} metric calls)`
}

/**
 * The fraction of `tickets` a candidate routes correctly with `model`, for
 * comparing the seed and the best candidate on the held-out test split.
 *
 * @since 0.1.0
 * @category running
 */
export const accuracy = (
  model: LanguageModel,
  candidate: Candidate,
  tickets: ReadonlyArray<Task.Ticket> = Task.test
): Effect.Effect<number> =>
  Task.makeAdapter(model).evaluate(tickets, candidate, { captureTraces: false }).pipe(
    Effect.map((batch) => batch.scores.reduce((a, b) => a + b, 0) / Math.max(1, tickets.length)),
    Effect.orElseSucceed(() => 0)
  )

const fmt = (score: number | null | undefined) => (score === null || score === undefined ? "n/a" : score.toFixed(3))

/**
 * The summary `npm start` prints after a run (the README quotes it, and a
 * test checks the quote against a fresh run): scores on validation and on
 * the held-out test split, candidates, merges, calls, time and why the run
 * stopped.
 *
 * @since 0.2.0
 * @category running
 */
export const summarize = (demo: DemoResult): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    const { models, result } = demo
    const [seedTest, bestTest] = yield* Effect.all([
      accuracy(models.taskModel, Task.seedCandidate),
      accuracy(models.taskModel, result.bestCandidate)
    ], { concurrency: 2 })
    const merged = result.parents.flatMap((ps, i) => (ps.length === 2 ? [[i, ...ps] as const] : []))
    // a merge can reproduce one parent (when that parent changed every
    // component since the common ancestor); only the others are new
    // combinations of two lineages
    const crossovers = merged.filter(([child, ...ps]) =>
      ps.every((p) => Task.componentNames.some((n) => result.candidates[child]![n] !== result.candidates[p]![n]))
    ).length
    return [
      "Summary",
      `  validation score   seed ${fmt(result.seedScore)}  ->  best ${fmt(result.bestScore)} (candidate ${result.bestIndex})`,
      `  held-out test      seed ${fmt(seedTest)}  ->  best ${fmt(bestTest)} (${Task.test.length} tickets)`,
      `  candidates         ${result.candidates.length} (${result.acceptedProposals} accepted, ${result.rejectedProposals} rejected proposals, ` +
      `${merged.length} from merges)`,
      `  merges             ${result.mergesAttempted} attempted, ${result.mergesAccepted} accepted ` +
      `(${crossovers} combining both parents' components)`,
      `  iterations         ${result.iterations}`,
      `  metric calls       ${result.totalMetricCalls}`,
      `  reflection calls   ${result.reflectionCalls}`,
      `  time               ${(demo.elapsedMillis / 1000).toFixed(1)} s`,
      `  stopped            ${stopExplanation(result)}`
    ]
  })
