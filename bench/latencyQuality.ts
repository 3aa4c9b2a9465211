/**
 * Latency x quality: the same latency-bound task (every task call sleeps
 * `taskLatencyMs`, every reflection `llmLatencyMs`) under several pipeline
 * settings and seeds, measuring wall time AND the best candidate's score on a
 * held-out test split no run sees. A faster setting that finds worse
 * candidates is not faster, so both columns are reported together.
 *
 * The utilization bound is budget x task latency / maxConcurrency: the wall
 * time if every evaluation slot were busy all the time.
 */
import { Effect } from "effect"
import type { GepaEvent } from "../src/Event.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Gepa from "../src/Gepa.js"
import { makeTask, type TaskOptions } from "./task.js"

export interface LatencyQualityOptions {
  readonly budget: number
  readonly taskLatencyMs: number
  readonly llmLatencyMs: number
  readonly seeds: ReadonlyArray<number>
  /** seeds for the slow sequential (c=1) row, whose quality equals the c=16, depth 1 row by construction */
  readonly sequentialSeeds: ReadonlyArray<number>
  readonly task: TaskOptions
  readonly settings: ReadonlyArray<LatencySetting>
}

export interface LatencySetting {
  readonly label: string
  readonly maxConcurrency: number
  readonly parallelProposals?: number
  readonly foldOrder?: "plan" | "completion"
  /** components of the candidate (default: the task's); the categories stay the same */
  readonly components?: number
}

export interface LatencyQualityRow {
  readonly label: string
  readonly components: number
  readonly maxConcurrency: number
  readonly parallelProposals: number | "default"
  readonly foldOrder: "plan" | "completion"
  readonly runs: number
  readonly medianWallMs: number
  readonly boundMs: number
  readonly wallOverBound: number
  readonly testMean: number
  readonly testSd: number
  /** per seed, in the order of the seeds: for paired comparisons between rows */
  readonly testScores: ReadonlyArray<number>
  readonly seeds: ReadonlyArray<number>
  readonly valMean: number
  readonly metricCallsMean: number
  /** minibatch calls of proposals whose accepted child was never validated */
  readonly wastedCallsMean: number
  readonly acceptedMean: number
}

export const latencyQualityTask: TaskOptions = {
  components: 4,
  keywordsPerComponent: 8,
  trainSize: 120,
  valSize: 30,
  testSize: 300,
  learnPermille: 300
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
export const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
export const sd = (xs: ReadonlyArray<number>) => {
  const m = mean(xs)
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / Math.max(1, xs.length - 1))
}

const taskOf = (options: LatencyQualityOptions, s: LatencySetting): TaskOptions => {
  const components = s.components ?? options.task.components
  const categories = options.task.components * options.task.keywordsPerComponent
  return { ...options.task, components, keywordsPerComponent: Math.ceil(categories / components) }
}

const runOnce = async (options: LatencyQualityOptions, s: LatencySetting, seed: number) => {
  const task = makeTask(taskOf(options, s))
  const slow = FaultInjection.adapter(task.adapter, { latency: `${options.taskLatencyMs} millis`, seed: seed + 1 })
  const model = FaultInjection.languageModel(task.reflectionModel, { latency: `${options.llmLatencyMs} millis`, seed: seed + 2 })
  let wasted = 0
  const minibatchCalls = new Map<number, number>()
  const t0 = performance.now()
  const result = await Effect.runPromise(Gepa.optimize({
    seedCandidate: task.seedCandidate,
    trainset: task.trainset,
    valset: task.valset,
    adapter: slow.adapter,
    reflectionModel: model.model,
    maxMetricCalls: options.budget,
    maxConcurrency: s.maxConcurrency,
    ...(s.parallelProposals === undefined ? {} : { parallelProposals: s.parallelProposals }),
    ...(s.foldOrder === undefined ? {} : { foldOrder: s.foldOrder }),
    seed,
    onEvent: (e: GepaEvent) => {
      if (e._tag === "EvaluationEnded" && (e.purpose === "parent-minibatch" || e.purpose === "child-minibatch")) {
        minibatchCalls.set(e.iteration, (minibatchCalls.get(e.iteration) ?? 0) + e.scores.length - e.cacheHits)
      } else if (e._tag === "ProposalEnded" && e.reason?.includes("before validation") === true) {
        wasted += minibatchCalls.get(e.iteration) ?? 0
      }
    }
  }))
  const wallMs = performance.now() - t0
  return {
    wallMs,
    test: task.testScore(result.bestCandidate),
    val: task.trueScore(result.bestCandidate),
    metricCalls: result.totalMetricCalls,
    accepted: result.acceptedProposals,
    wasted
  }
}

export const latencyQuality = async (
  options: LatencyQualityOptions,
  log: (line: string) => void = () => {}
): Promise<ReadonlyArray<LatencyQualityRow>> => {
  const rows: Array<LatencyQualityRow> = []
  for (const s of options.settings) {
    const seeds = s.maxConcurrency === 1 ? options.sequentialSeeds : options.seeds
    // the c=1 row is slow (every call in turn); its seeds run side by side,
    // which changes nothing for a run that holds one slot at a time
    const runs = s.maxConcurrency === 1
      ? await Promise.all(seeds.map((seed) => runOnce(options, s, seed)))
      : await seeds.reduce<Promise<Array<Awaited<ReturnType<typeof runOnce>>>>>(
        async (acc, seed) => [...(await acc), await runOnce(options, s, seed)],
        Promise.resolve([])
      )
    const boundMs = options.budget * options.taskLatencyMs / s.maxConcurrency
    const row: LatencyQualityRow = {
      label: s.label,
      components: taskOf(options, s).components,
      maxConcurrency: s.maxConcurrency,
      parallelProposals: s.parallelProposals ?? "default",
      foldOrder: s.foldOrder ?? "plan",
      runs: runs.length,
      medianWallMs: median(runs.map((r) => r.wallMs)),
      boundMs,
      wallOverBound: median(runs.map((r) => r.wallMs)) / boundMs,
      testMean: mean(runs.map((r) => r.test)),
      testSd: sd(runs.map((r) => r.test)),
      testScores: runs.map((r) => r.test),
      seeds,
      valMean: mean(runs.map((r) => r.val)),
      metricCallsMean: mean(runs.map((r) => r.metricCalls)),
      wastedCallsMean: mean(runs.map((r) => r.wasted)),
      acceptedMean: mean(runs.map((r) => r.accepted))
    }
    log(
      `  ${row.label}: wall ${row.medianWallMs.toFixed(0)} ms (${row.wallOverBound.toFixed(2)}x bound), test ${row.testMean.toFixed(3)} ± ${
        row.testSd.toFixed(3)
      }, calls ${row.metricCallsMean.toFixed(0)}, accepted ${row.acceptedMean.toFixed(1)}`
    )
    rows.push(row)
  }
  return rows
}
