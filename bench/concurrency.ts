/**
 * `npm run bench -- concurrency`: proposal strategies measured on quality
 * per budget, wall time when calls are slow, budget spent, and whether the
 * result depends on `maxConcurrency` (it must not).
 *
 * The task is the comparable task of bench/reference/ (the same synthetic
 * keyword task the reference harness ports to Python): 2 text components,
 * minibatch 3, Pareto selection, merge on, a held-out test split no run sees.
 *
 * - quality: zero latency, seeds 0-9, budgets 500 / 1000 / 2000: held-out
 *   score of the best candidate (mean, sd), metric calls spent (mean, min),
 *   runs over budget;
 * - latency: task calls 20 ms, reflection 50 ms, 16 calls in flight, budget
 *   1000: median wall time and held-out score;
 * - determinism: the same seed at maxConcurrency 1, 8 and 16 under random
 *   per-call latencies (0-2 ms): identical candidates, scores, metric calls
 *   and trace, for the default on every seed and budget, for the other
 *   strategies on 3 seeds at budget 500.
 *
 * Options: `--quick` (fewer seeds, one budget), `--only quality|latency|determinism`,
 * `--budgets 500,1000` (the quality budgets), `--latency-budget 2000` (the latency runs' budget, default 1000),
 * `--strategies "default;2 per step, best"`,
 * `--quality-seeds 10-59` (other seeds for the quality rows: a change chosen on
 * seeds 0-9 is checked on seeds it was not chosen on; the task's simulated
 * model hashes its prompt, so any change reshuffles which seeds are lucky;
 * the rows go to `concurrency[-TASK]-quality-seeds-FIRST-LAST.json`).
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Gepa from "../src/Gepa.js"
import { mean, sd } from "./latencyQuality.js"
import * as Provider from "./provider.js"
import { makeTask, type TaskOptions } from "./task.js"

/** The comparable task (bench/reference/task.py ports it). */
export const comparableTask: TaskOptions = {
  components: 2,
  keywordsPerComponent: 16,
  trainSize: 120,
  valSize: 30,
  testSize: 300,
  learnPermille: 300
}

/**
 * The tasks of `--task`: the comparable task, and the same keywords owned by
 * one component or by four (the reference ports each: `run.py --task`).
 */
export const tasks: Readonly<Record<string, TaskOptions>> = {
  "2x16": comparableTask,
  "1x32": { ...comparableTask, components: 1, keywordsPerComponent: 32 },
  "4x8": { ...comparableTask, components: 4, keywordsPerComponent: 8 },
  // the same tasks where a rewrite drops a keyword it had 15 % of the time, so
  // children regress on examples their parent solved (as a real model's do)
  "1x32r": { ...comparableTask, components: 1, keywordsPerComponent: 32, forgetPermille: 150 },
  "2x16r": { ...comparableTask, forgetPermille: 150 },
  "4x8r": { ...comparableTask, components: 4, keywordsPerComponent: 8, forgetPermille: 150 }
}

export interface Strategy {
  readonly label: string
  readonly settings: Partial<
    Pick<
      Gepa.Config<unknown>,
      | "proposalsPerStep"
      | "proposalSampling"
      | "proposalSelection"
      | "parallelProposals"
      | "earlyRejection"
      | "componentSelector"
      | "stepWidth"
      | "rewritesPerMinibatch"
      | "minibatchSize"
      | "buildOnChild"
      | "reuseChildMinibatch"
    >
  >
}

/**
 * A one-component strategy that builds on the validated child: `perStep`
 * proposals, `rewrites` of each minibatch, minibatches of `minibatch`
 * examples, on the child's own minibatch (`reuseChildMinibatch`) or a fresh one.
 */
const onChildRow = (perStep: number, rewrites: number, minibatch: number, reuse: boolean): Strategy => ({
  label: `${perStep === rewrites ? "" : `${perStep} per step, `}${rewrites} rewrites per minibatch${minibatch === 3 ? "" : ` of ${minibatch}`}, ` +
    (reuse ? "on the child and its minibatch" : "on the child, fresh minibatch"),
  settings: {
    ...(minibatch === 3 ? {} : { minibatchSize: minibatch }),
    proposalsPerStep: perStep,
    proposalSampling: "same_minibatch",
    proposalSelection: "best",
    rewritesPerMinibatch: rewrites,
    buildOnChild: true,
    reuseChildMinibatch: reuse
  }
})

export const strategies: ReadonlyArray<Strategy> = [
  { label: "default", settings: {} },
  // the one-component default before the step on a child reflected on the child's own minibatch (bench/RESULTS.md)
  { label: "default, fresh minibatch on the child", settings: { reuseChildMinibatch: false } },
  // the default on minibatches of two examples: better on 1x32, worse on 1x32r at 1,000 and 2,000 (bench/RESULTS.md)
  { label: "default, minibatch 2", settings: { minibatchSize: 2 } },
  // the one-component default's neighbours, building on the child with a fresh minibatch, as the default did before
  // `reuseChildMinibatch` (bench/RESULTS.md, eighteenth session): fewer calls per step is more steps, better per
  // budget and slower; more is fewer steps, faster and worse per budget
  onChildRow(2, 2, 2, false),
  onChildRow(2, 2, 3, false),
  onChildRow(4, 4, 3, false),
  onChildRow(4, 4, 2, false),
  onChildRow(4, 2, 2, false),
  // the first with the default's reuse of the child's minibatch
  onChildRow(2, 2, 2, true),
  {
    label: "3 rewrites per minibatch of 2",
    settings: { minibatchSize: 2, proposalsPerStep: 3, proposalSampling: "same_minibatch", proposalSelection: "best", rewritesPerMinibatch: 3 }
  },
  // the default before 0.3's shape-dependent one: the GEPA loop with reuseMinibatch
  { label: "1 per step, reuse (0.2 default)", settings: { proposalsPerStep: 1, proposalSampling: "independent", proposalSelection: "best" } },
  { label: "1 per step (GEPA loop)", settings: { proposalsPerStep: 1 } },
  { label: "2 per step, best", settings: { proposalsPerStep: 2, proposalSelection: "best" } },
  { label: "3 per step, best", settings: { proposalsPerStep: 3, proposalSelection: "best" } },
  { label: "4 per step, best", settings: { proposalsPerStep: 4, proposalSelection: "best" } },
  { label: "4 per step, all", settings: { proposalsPerStep: 4, proposalSelection: "all" } },
  { label: "2 per step, same parent, best", settings: { proposalsPerStep: 2, proposalSampling: "same_parent" } },
  { label: "1 per step, depth 2", settings: { proposalsPerStep: 1, parallelProposals: 2 } },
  { label: "2 per step, best, depth 2", settings: { proposalsPerStep: 2, parallelProposals: 2 } },
  { label: "4 per step, best, depth 2", settings: { proposalsPerStep: 4, parallelProposals: 2 } },
  { label: "1 per step, depth 3", settings: { proposalsPerStep: 1, parallelProposals: 3 } },
  { label: "1 per step, depth 4", settings: { proposalsPerStep: 1, parallelProposals: 4 } },
  { label: "1 per step, no early rejection", settings: { proposalsPerStep: 1, earlyRejection: false } },
  { label: "4 per step, best, no early rejection", settings: { proposalsPerStep: 4, earlyRejection: false } },
  { label: "1 per step, depth 2, no early rejection", settings: { proposalsPerStep: 1, parallelProposals: 2, earlyRejection: false } },
  // every component rewritten by each proposal (one reflection call per component): the reference offers the same
  { label: "all components", settings: { componentSelector: "all" } },
  { label: "all components, 2 per step, best", settings: { componentSelector: "all", proposalsPerStep: 2, proposalSelection: "best" } },
  { label: "all components, depth 2", settings: { componentSelector: "all", parallelProposals: 2 } },
  // proposals of a step on shared minibatches: every component side by side on one parent's evidence, paid once
  { label: "4 per step, same minibatch, best", settings: { proposalsPerStep: 4, proposalSampling: "same_minibatch" } },
  { label: "2 per step, same minibatch, combine", settings: { proposalsPerStep: 2, proposalSampling: "same_minibatch", proposalSelection: "combine" } },
  { label: "4 per step, same minibatch, combine", settings: { proposalsPerStep: 4, proposalSampling: "same_minibatch", proposalSelection: "combine" } },
  { label: "6 per step, same minibatch, combine", settings: { proposalsPerStep: 6, proposalSampling: "same_minibatch", proposalSelection: "combine" } },
  { label: "8 per step, same minibatch, combine", settings: { proposalsPerStep: 8, proposalSampling: "same_minibatch", proposalSelection: "combine" } },
  // one minibatch's evidence rewritten several times over (the one-component default: 3)
  {
    label: "2 rewrites per minibatch",
    settings: { proposalsPerStep: 2, proposalSampling: "same_minibatch", proposalSelection: "best", rewritesPerMinibatch: 2 }
  },
  {
    label: "3 rewrites per minibatch",
    settings: { proposalsPerStep: 3, proposalSampling: "same_minibatch", proposalSelection: "best", rewritesPerMinibatch: 3 }
  },
  {
    label: "4 rewrites per minibatch",
    settings: { proposalsPerStep: 4, proposalSampling: "same_minibatch", proposalSelection: "best", rewritesPerMinibatch: 4 }
  },
  {
    label: "3 rewrites per minibatch, no early rejection",
    settings: { proposalsPerStep: 3, proposalSampling: "same_minibatch", proposalSelection: "best", rewritesPerMinibatch: 3, earlyRejection: false }
  },
  {
    label: "6 rewrites per minibatch",
    settings: { proposalsPerStep: 6, proposalSampling: "same_minibatch", proposalSelection: "best", rewritesPerMinibatch: 6 }
  },
  // two minibatches of three rewrites each, on one parent: half the steps of three rewrites
  {
    label: "6 per step, 3 rewrites per minibatch",
    settings: { proposalsPerStep: 6, proposalSampling: "same_minibatch", proposalSelection: "best", rewritesPerMinibatch: 3 }
  },
  // the one-component default before rewrites: the GEPA loop, wider steps once few proposals pass
  {
    label: "1 to 8 per step, adaptive (one-component default before rewrites)",
    settings: { proposalsPerStep: 8, proposalSampling: "independent", proposalSelection: "best", stepWidth: "adaptive", rewritesPerMinibatch: 1 }
  },
  { label: "12 per step, same minibatch, combine", settings: { proposalsPerStep: 12, proposalSampling: "same_minibatch", proposalSelection: "combine" } }
]

interface RunOptions {
  readonly budget: number
  readonly seed: number
  readonly maxConcurrency: number
  readonly taskLatencyMs: number
  readonly llmLatencyMs: number
  /** random extra latency per call (ms): for the determinism check */
  readonly jitterMs?: number
  readonly latencySeed?: number
  /** the task (default the comparable task) */
  readonly task?: TaskOptions
  /** a simulated provider instead of fixed latencies (`taskLatencyMs`, `llmLatencyMs` are then ignored) */
  readonly profile?: Provider.Profile
}

export const runOnce = async (strategy: Strategy, o: RunOptions) => {
  const task = makeTask(o.task ?? comparableTask)
  const provider = o.profile === undefined ? undefined : Provider.make(o.profile, o.latencySeed ?? o.seed)
  const slow = provider !== undefined
    ? provider.adapter(task.adapter)
    : o.taskLatencyMs === 0 && o.jitterMs === undefined
    ? task.adapter
    : FaultInjection.adapter(task.adapter, {
      latency: `${o.taskLatencyMs} millis`,
      ...(o.jitterMs === undefined ? {} : { jitter: `${o.jitterMs} millis` }),
      seed: (o.latencySeed ?? o.seed) + 1
    }).adapter
  const model = provider !== undefined
    ? provider.model(task.reflectionModel)
    : o.llmLatencyMs === 0 && o.jitterMs === undefined
    ? task.reflectionModel
    : FaultInjection.languageModel(task.reflectionModel, {
      latency: `${o.llmLatencyMs} millis`,
      ...(o.jitterMs === undefined ? {} : { jitter: `${o.jitterMs} millis` }),
      seed: (o.latencySeed ?? o.seed) + 2
    }).model
  const t0 = performance.now()
  const result = await Effect.runPromise(Gepa.optimize({
    seedCandidate: task.seedCandidate,
    trainset: task.trainset,
    valset: task.valset,
    adapter: slow,
    reflectionModel: model,
    maxMetricCalls: o.budget,
    maxConcurrency: o.maxConcurrency,
    merge: true,
    seed: o.seed,
    telemetry: false,
    ...strategy.settings
  }))
  const wallMs = performance.now() - t0
  return {
    wallMs,
    test: task.testScore(result.bestCandidate),
    metricCalls: result.totalMetricCalls,
    adapterCalls: task.timers.adapterCalls,
    candidates: result.candidates.length,
    reflections: task.timers.modelCalls,
    criticalReflections: provider?.criticalReflections(),
    profileSeconds: provider?.seconds(wallMs),
    fingerprint: JSON.stringify({
      candidates: result.candidates,
      valScores: result.valScores,
      parents: result.parents,
      metricCalls: result.totalMetricCalls,
      trace: result.state.trace,
      best: result.bestIndex
    })
  }
}

/** the median of a non-empty list (the mean of the two middle values for an even length) */
export const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

export interface QualityRow {
  readonly strategy: string
  readonly budget: number
  readonly seeds: number
  readonly testMean: number
  readonly testSd: number
  readonly testScores: ReadonlyArray<number>
  readonly spentMean: number
  readonly spentMin: number
  readonly overBudget: number
  readonly candidatesMean: number
}

export interface LatencyRow {
  readonly strategy: string
  readonly seeds: number
  /** the run's budget of metric calls (1,000 unless `--latency-budget`) */
  readonly budget: number
  /** "20/50 ms", or a provider profile's label */
  readonly profile: string
  readonly medianWallMs: number
  /** a provider profile's wall, in its seconds */
  readonly medianProfileSeconds?: number
  /** reflection calls per run, and those that started with no other in flight */
  readonly reflectionsMean: number
  readonly criticalReflectionsMean?: number
  readonly testMean: number
  readonly testSd: number
  readonly spentMean: number
}

export interface DeterminismRow {
  readonly strategy: string
  readonly budget: number
  readonly seeds: number
  /** seeds whose runs at maxConcurrency 1, 8 and 16 were identical */
  readonly identical: number
}

export const quality = async (
  list: ReadonlyArray<Strategy>,
  budgets: ReadonlyArray<number>,
  seeds: ReadonlyArray<number>,
  log: (line: string) => void,
  task: TaskOptions = comparableTask
): Promise<Array<QualityRow>> => {
  const rows: Array<QualityRow> = []
  for (const budget of budgets) {
    for (const strategy of list) {
      const runs = []
      for (const seed of seeds) runs.push(await runOnce(strategy, { budget, seed, maxConcurrency: 8, taskLatencyMs: 0, llmLatencyMs: 0, task }))
      const row: QualityRow = {
        strategy: strategy.label,
        budget,
        seeds: seeds.length,
        testMean: mean(runs.map((r) => r.test)),
        testSd: sd(runs.map((r) => r.test)),
        testScores: runs.map((r) => r.test),
        spentMean: mean(runs.map((r) => r.metricCalls)),
        spentMin: Math.min(...runs.map((r) => r.metricCalls)),
        overBudget: runs.filter((r) => r.metricCalls > budget || r.adapterCalls > budget).length,
        candidatesMean: mean(runs.map((r) => r.candidates))
      }
      log(
        `  quality ${budget} ${row.strategy}: held-out ${row.testMean.toFixed(3)} ± ${row.testSd.toFixed(3)}, spent ${
          row.spentMean.toFixed(0)
        } (min ${row.spentMin}), over ${row.overBudget}`
      )
      rows.push(row)
    }
  }
  return rows
}

export const latency = async (
  list: ReadonlyArray<Strategy>,
  seeds: ReadonlyArray<number>,
  log: (line: string) => void,
  task: TaskOptions = comparableTask,
  profile?: Provider.Profile,
  budget = 1000
): Promise<Array<LatencyRow>> => {
  const rows: Array<LatencyRow> = []
  for (const strategy of list) {
    const runs = []
    for (const seed of seeds) {
      runs.push(
        await runOnce(strategy, {
          budget,
          seed,
          maxConcurrency: 16,
          taskLatencyMs: 20,
          llmLatencyMs: 50,
          task,
          ...(profile === undefined ? {} : { profile })
        })
      )
    }
    const critical = runs.flatMap((r) => (r.criticalReflections === undefined ? [] : [r.criticalReflections]))
    const profileWalls = runs.flatMap((r) => (r.profileSeconds === undefined ? [] : [r.profileSeconds]))
    const row: LatencyRow = {
      strategy: strategy.label,
      seeds: seeds.length,
      budget,
      profile: profile?.label ?? "20/50 ms",
      medianWallMs: median(runs.map((r) => r.wallMs)),
      ...(profileWalls.length === 0 ? {} : { medianProfileSeconds: median(profileWalls) }),
      reflectionsMean: mean(runs.map((r) => r.reflections)),
      ...(critical.length === 0 ? {} : { criticalReflectionsMean: mean(critical) }),
      testMean: mean(runs.map((r) => r.test)),
      testSd: sd(runs.map((r) => r.test)),
      spentMean: mean(runs.map((r) => r.metricCalls))
    }
    log(
      `  latency ${row.profile} ${row.strategy} at ${budget}: wall ${(row.medianWallMs / 1000).toFixed(2)} s` +
        (row.medianProfileSeconds === undefined ? "" : ` (${row.medianProfileSeconds.toFixed(0)} profile s)`) +
        `, held-out ${row.testMean.toFixed(3)} ± ${row.testSd.toFixed(3)}, reflections ${row.reflectionsMean.toFixed(0)}` +
        (row.criticalReflectionsMean === undefined ? "" : ` (${row.criticalReflectionsMean.toFixed(0)} on the critical path)`)
    )
    rows.push(row)
  }
  return rows
}

export const determinism = async (
  strategy: Strategy,
  budgets: ReadonlyArray<number>,
  seeds: ReadonlyArray<number>,
  log: (line: string) => void,
  task: TaskOptions = comparableTask
): Promise<Array<DeterminismRow>> => {
  const rows: Array<DeterminismRow> = []
  for (const budget of budgets) {
    let identical = 0
    for (const seed of seeds) {
      const prints = await Promise.all(
        [1, 8, 16].map((maxConcurrency, i) =>
          runOnce(strategy, { budget, seed, maxConcurrency, taskLatencyMs: 0, llmLatencyMs: 0, jitterMs: 2, latencySeed: 1000 * i + seed, task })
        )
      )
      if (prints.every((p) => p.fingerprint === prints[0]!.fingerprint)) identical++
    }
    log(`  determinism ${budget} ${strategy.label}: ${identical}/${seeds.length} seeds identical at maxConcurrency 1, 8, 16`)
    rows.push({ strategy: strategy.label, budget, seeds: seeds.length, identical })
  }
  return rows
}

const ReferenceRow = Schema.Struct({
  seeds: Schema.Array(Schema.Number),
  testMean: Schema.Number,
  testSd: Schema.Number,
  metricCallsMean: Schema.Number,
  metricCallsMax: Schema.Number,
  wallMedianSeconds: Schema.optional(Schema.Number)
})
const ReferenceRecord = Schema.Struct({
  referenceCommit: Schema.String,
  task: Schema.Struct({
    components: Schema.Number,
    keywordsPerComponent: Schema.Number,
    valSize: Schema.Number,
    // absent in records made before the tasks that forget
    forgetPermille: Schema.optional(Schema.Number)
  }),
  quality: Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: ReferenceRow }) }),
  latencyBound: Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: ReferenceRow }) })
})

/** The reference's recorded runs on the same task (bench/reference/, `run.py`), printed beside ours. */
export type Reference = typeof ReferenceRecord.Type

/**
 * Reads `bench/results/reference.json` when it is there and is this task's;
 * `undefined` otherwise (the reference needs Python: bench/reference/README.md).
 * A file that is there but malformed fails with one line naming it.
 */
export const readReference = async (file: string, task: TaskOptions = comparableTask): Promise<Reference | undefined> => {
  let text: string
  try {
    text = await fs.readFile(file, "utf8")
  } catch (e) {
    // absent: not recorded here; any other failure to read it is one line naming it
    if (typeof e === "object" && e !== null && "code" in e && e.code === "ENOENT") return undefined
    throw new Error(`${file}: cannot read the reference record: ${String(e)}`)
  }
  const decoded = Schema.decodeUnknownEither(Schema.parseJson(ReferenceRecord))(text)
  if (Either.isLeft(decoded)) throw new Error(`${file}: not a reference record: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left).split("\n")[0]}`)
  const t = decoded.right.task
  const same = t.components === task.components && t.keywordsPerComponent === task.keywordsPerComponent &&
    t.valSize === task.valSize && (t.forgetPermille ?? 0) === (task.forgetPermille ?? 0)
  return same ? decoded.right : undefined
}

export const markdown = (
  q: ReadonlyArray<QualityRow>,
  l: ReadonlyArray<LatencyRow>,
  d: ReadonlyArray<DeterminismRow>,
  reference?: Reference
): string => {
  const lines: Array<string> = ["# Proposal strategies: quality per budget, wall time, determinism", ""]
  if (q.length > 0) {
    const budgets = [...new Set(q.map((r) => r.budget))]
    lines.push("## Held-out score per budget (zero latency, maxConcurrency 8)", "")
    lines.push(`| strategy | ${budgets.map((b) => `budget ${b}: held-out mean ± sd | spent mean (min)`).join(" | ")} | runs over budget |`)
    lines.push(`|---|${budgets.map(() => "---|---").join("|")}|---|`)
    for (const s of [...new Set(q.map((r) => r.strategy))]) {
      const cells = budgets.map((b) => {
        const r = q.find((x) => x.strategy === s && x.budget === b)
        return r === undefined ? "n/a | n/a" : `${r.testMean.toFixed(3)} ± ${r.testSd.toFixed(3)} | ${r.spentMean.toFixed(0)} (${r.spentMin})`
      })
      const over = q.filter((x) => x.strategy === s).reduce((n, x) => n + x.overBudget, 0)
      lines.push(`| ${s} | ${cells.join(" | ")} | ${over} |`)
    }
    for (const [setting, rows] of Object.entries(reference?.quality ?? {})) {
      const cells = budgets.map((b) => {
        const r = rows[String(b)]
        return r === undefined ? "n/a | n/a" : `${r.testMean.toFixed(3)} ± ${r.testSd.toFixed(3)} | ${r.metricCallsMean.toFixed(0)} (max ${r.metricCallsMax})`
      })
      lines.push(`| reference: ${setting} | ${cells.join(" | ")} | (not strict) |`)
    }
    lines.push("")
    if (reference !== undefined) lines.push(`Reference rows: gepa-ai/gepa at ${reference.referenceCommit.slice(0, 7)}, recorded by bench/reference/run.py.`, "")
  }
  if (l.length > 0) {
    lines.push(
      "## Latency-bound (16 in flight; 20/50 ms: task 20 ms, reflection 50 ms; realistic: see bench/provider.ts, wall in its seconds)",
      ""
    )
    lines.push(
      "| strategy | profile | budget | seeds | median wall s | profile wall s | held-out mean ± sd | spent mean | reflections (on the critical path) |",
      "|---|---|---|---|---|---|---|---|---|"
    )
    for (const r of l) {
      lines.push(
        `| ${r.strategy} | ${r.profile} | ${r.budget} | ${r.seeds} | ${(r.medianWallMs / 1000).toFixed(2)} | ${r.medianProfileSeconds?.toFixed(0) ?? "–"} | ${
          r.testMean.toFixed(3)
        } ± ${r.testSd.toFixed(3)} | ${r.spentMean.toFixed(0)} | ${r.reflectionsMean.toFixed(0)}${
          r.criticalReflectionsMean === undefined ? "" : ` (${r.criticalReflectionsMean.toFixed(0)})`
        } |`
      )
    }
    // the reference's rows at each budget our rows were run at
    const budgets = [...new Set(l.map((x) => x.budget))]
    for (const [setting, rows] of Object.entries(reference?.latencyBound ?? {})) {
      for (const budget of budgets) {
        const r = rows[String(budget)]
        if (r?.wallMedianSeconds === undefined) continue
        lines.push(
          `| reference: ${setting} | 20/50 ms | ${budget} | ${r.seeds.length} | ${r.wallMedianSeconds.toFixed(2)} | – | ${r.testMean.toFixed(3)} ± ${
            r.testSd.toFixed(3)
          } | ${r.metricCallsMean.toFixed(0)} | |`
        )
      }
    }
    lines.push("")
  }
  if (d.length > 0) {
    lines.push("## Determinism (same seed at maxConcurrency 1, 8, 16, random latencies 0-2 ms per call)", "")
    lines.push("| strategy | budget | seeds identical |", "|---|---|---|")
    for (const r of d) lines.push(`| ${r.strategy} | ${r.budget} | ${r.identical}/${r.seeds} |`)
    lines.push("")
  }
  return lines.join("\n")
}

export const main = async (argv: ReadonlyArray<string>) => {
  const quick = argv.includes("--quick")
  const onlyAt = argv.indexOf("--only")
  const only = onlyAt >= 0 ? argv[onlyAt + 1] : undefined
  const pick = argv.indexOf("--strategies")
  const chosen = pick >= 0 ? strategies.filter((s) => argv[pick + 1]!.split(";").includes(s.label)) : strategies
  const log = (line: string) => console.error(`[bench concurrency] ${line}`)
  const taskAt = argv.indexOf("--task")
  const taskName = taskAt >= 0 ? argv[taskAt + 1]! : "2x16"
  const task = tasks[taskName]
  if (task === undefined) throw new Error(`--task: expected one of ${Object.keys(tasks).join(", ")}, got ${taskName}`)
  const profileAt = argv.indexOf("--profile")
  const profileName = profileAt >= 0 ? argv[profileAt + 1] : undefined
  if (profileName !== undefined && profileName !== Provider.realistic.label) throw new Error(`--profile: expected realistic, got ${profileName}`)
  const profile = profileName === undefined ? undefined : Provider.realistic
  const seeds = Array.from({ length: quick ? 2 : 10 }, (_, i) => i)
  const budgetsAt = argv.indexOf("--budgets")
  const budgets = budgetsAt >= 0 ? argv[budgetsAt + 1]!.split(",").map(Number) : quick ? [500] : [500, 1000, 2000]
  const rangeAt = argv.indexOf("--quality-seeds")
  const range = rangeAt >= 0 ? /^(\d+)-(\d+)$/.exec(argv[rangeAt + 1] ?? "") : null
  if (rangeAt >= 0 && range === null) throw new Error(`--quality-seeds: expected FIRST-LAST (e.g. 10-59), got ${argv[rangeAt + 1]}`)
  const qualitySeeds = range === null ? seeds : Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i)
  const latencyBudgetAt = argv.indexOf("--latency-budget")
  const latencyBudget = latencyBudgetAt >= 0 ? Number(argv[latencyBudgetAt + 1]) : 1000
  if (!(Number.isInteger(latencyBudget) && latencyBudget > 0)) {
    throw new Error(`--latency-budget: expected a positive whole number of metric calls, got ${argv[latencyBudgetAt + 1]}`)
  }
  const q = only === undefined || only === "quality" ? await quality(chosen, budgets, qualitySeeds, log, task) : []
  const seedsAt = argv.indexOf("--seeds")
  const latencySeeds = quick ? [0] : seedsAt >= 0 ? seeds.slice(0, Number(argv[seedsAt + 1])) : seeds
  const l = only === undefined || only === "latency" ? await latency(chosen, latencySeeds, log, task, profile, latencyBudget) : []
  const d: Array<DeterminismRow> = []
  if (only === undefined || only === "determinism") {
    for (const s of chosen) {
      d.push(...(await determinism(s, s.label === "default" ? budgets : [budgets[0]!], s.label === "default" ? seeds : seeds.slice(0, 3), log, task)))
    }
  }
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results")
  await fs.mkdir(dir, { recursive: true })
  const suffix = `${taskName === "2x16" ? "" : `-${taskName}`}${profile === undefined ? "" : `-${profile.label}`}`
  // a run at another latency budget never overwrites the recorded figures at 1,000
  // and quality rows on other seeds never overwrite those on seeds 0-9, on any task
  const name = latencyBudgetAt >= 0
    ? `concurrency${suffix}${only === undefined ? "" : `-${only}`}-${latencyBudget}.json`
    : range !== null && !quick
    ? `concurrency${suffix}-quality-seeds-${range[1]}-${range[2]}.json`
    : suffix !== "" && !quick
    ? `concurrency${suffix}${only === undefined ? "" : `-${only}`}.json`
    : quick
    ? "concurrency-quick.json"
    : only === undefined
    ? "concurrency.json"
    : `concurrency-${only}.json`
  await fs.writeFile(path.join(dir, name), JSON.stringify({ date: new Date().toISOString(), quality: q, latency: l, determinism: d }, null, 2) + "\n")
  process.stdout.write(markdown(q, l, d, await readReference(path.join(dir, "reference.json"), task)))
}
