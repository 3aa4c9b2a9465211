/**
 * `npx tsx bench/sideInfo.ts [--task anything|manifest] [--quick]`: how much
 * side information the reflection prompt shows, measured on two tasks of
 * different shape:
 *
 * - `anything` (`anythingTask.ts`): short hints in a long trace, per example;
 * - `manifest` (`manifestTask.ts`): a manifest of 100 files per example, the
 *   side information a summary line and a record per file (about 40
 *   failing at the start), several fields each.
 *
 * Modes: the defaults (side information whole within a 100,000-character
 * prompt budget, trimmed over it); whole (no budget); the old cut (the 0.2
 * defaults: stored strings 2,000, lists 25, records 8,000; in the prompt
 * strings 400 and each evaluation 1,000 characters of JSON); prompt budgets
 * of 30,000 and 12,000 characters (a model with a small context window:
 * what the trimming keeps). On the manifest task also each other engine
 * default changed alone (frontier, cache, skipping perfect minibatches), so
 * that every default of `optimizeAnything` is measured on both tasks.
 *
 * Generalization mode (train / validation / held-out test manifests or
 * examples), seeds 0-9 (`--seeds N` for 0..N-1; `--modes defaults,old` for
 * the modes whose label starts so); the held-out score of the best candidate (mean, sd),
 * metric calls spent, prompt size (mean, max characters). The manifest task
 * also runs single-task mode (one manifest, minibatch 1) at budget 30, scored
 * on that manifest. Writes bench/results/side-info[-<task>].json.
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as LanguageModel from "../src/LanguageModel.js"
import * as OA from "../src/OptimizeAnything.js"
import { defaultTaskOptions, makeAnythingTask } from "./anythingTask.js"
import { mean, sd } from "./latencyQuality.js"
import { defaultManifestOptions, makeManifestTask } from "./manifestTask.js"

type Options = Partial<OA.EngineOptions> & { readonly sideInfo?: OA.SideInfoLimits }

/** the 0.2 defaults, before the prompt budget */
export const oldCut: OA.SideInfoLimits = {
  maxStringLength: 2_000,
  maxListItems: 25,
  maxDepth: 6,
  maxRecordLength: 8_000,
  promptStringLength: 400,
  promptRecordLength: 1_000
}

export interface Mode {
  readonly label: string
  readonly options: Options
  /** only on these tasks */
  readonly tasks?: ReadonlyArray<TaskName>
}

export const modes: ReadonlyArray<Mode> = [
  { label: "defaults (whole within 100k)", options: {} },
  { label: "whole (no budget)", options: { sideInfo: { promptBudget: 1_000_000_000 } } },
  { label: "old cut (0.2 defaults)", options: { sideInfo: oldCut } },
  { label: "prompt budget 30k", options: { sideInfo: { promptBudget: 30_000 } } },
  { label: "prompt budget 12k", options: { sideInfo: { promptBudget: 12_000 } } },
  { label: "frontierType hybrid", options: { frontierType: "hybrid" }, tasks: ["manifest"] },
  { label: "cache off", options: { cache: false }, tasks: ["manifest"] },
  { label: "skipPerfectScore false", options: { skipPerfectScore: false }, tasks: ["manifest"] }
]

export type TaskName = "anything" | "manifest"

interface Task {
  readonly seedText: string
  readonly dataset: ReadonlyArray<unknown>
  readonly valset: ReadonlyArray<unknown>
  readonly evaluate: (text: string, example: never) => Effect.Effect<OA.EvaluatorResult>
  readonly reflectionModel: LanguageModel.LanguageModel
  readonly testScore: (text: string) => number
}

const makeTask = (name: TaskName, small: boolean): Task =>
  name === "anything"
    ? makeAnythingTask(small ? { ...defaultTaskOptions, trainSize: 6, valSize: 4, testSize: 10 } : defaultTaskOptions) as unknown as Task
    : makeManifestTask(small ? { ...defaultManifestOptions, trainSize: 4, valSize: 3, testSize: 4 } : defaultManifestOptions) as unknown as Task

export interface Run {
  readonly seed: number
  readonly test: number
  readonly spent: number
  readonly promptChars: ReadonlyArray<number>
}

export const runOne = (
  name: TaskName,
  mode: Mode,
  budget: number,
  seed: number,
  shape: "generalization" | "single-task",
  small = false
): Promise<Run> => {
  const t = makeTask(name, small)
  const promptChars: Array<number> = []
  const model = LanguageModel.fromFunction((prompt) => {
    promptChars.push(LanguageModel.promptText(prompt).length)
    return Effect.runSync(t.reflectionModel.complete(prompt)).text
  })
  const evaluator = t.evaluate as (text: string, example: unknown) => Effect.Effect<OA.EvaluatorResult>
  if (shape === "single-task") {
    const only = t.dataset[0]
    return Effect.runPromise(OA.optimizeAnything({
      ...mode.options,
      seedCandidate: t.seedText,
      evaluator: (text: string) => evaluator(text, only),
      reflectionModel: model,
      maxMetricCalls: budget,
      seed
    })).then((r) => ({ seed, test: r.bestScore ?? 0, spent: r.totalMetricCalls, promptChars }))
  }
  return Effect.runPromise(OA.optimizeAnything({
    ...mode.options,
    seedCandidate: t.seedText,
    evaluator,
    dataset: t.dataset,
    valset: t.valset,
    reflectionModel: model,
    maxMetricCalls: budget,
    seed
  })).then((r) => ({ seed, test: t.testScore(r.bestCandidate), spent: r.totalMetricCalls, promptChars }))
}

export interface Cell {
  readonly task: TaskName
  readonly shape: "generalization" | "single-task"
  readonly budget: number
  readonly mode: string
  readonly runs: number
  readonly testMean: number
  readonly testSd: number
  readonly spentMean: number
  readonly over: number
  readonly promptMeanChars: number
  readonly promptMaxChars: number
  readonly scores: ReadonlyArray<number>
}

export const plan = (task: TaskName, quick: boolean) => {
  const generalization = task === "anything" ? (quick ? [150] : [150, 300]) : (quick ? [60] : [60, 150, 300])
  const cases: Array<{ shape: "generalization" | "single-task"; budget: number }> = generalization.map((budget) => ({
    shape: "generalization" as const,
    budget
  }))
  if (task === "manifest") cases.push({ shape: "single-task", budget: 30 })
  return cases
}

export const measure = async (
  task: TaskName,
  seeds: ReadonlyArray<number>,
  quick: boolean,
  small = false,
  only?: ReadonlyArray<string>
) => {
  const cells: Array<Cell> = []
  for (const { budget, shape } of plan(task, quick)) {
    for (const mode of modes) {
      if (mode.tasks !== undefined && !mode.tasks.includes(task)) continue
      if (only !== undefined && !only.some((prefix) => mode.label.startsWith(prefix))) continue
      const runs: Array<Run> = []
      for (const seed of seeds) runs.push(await runOne(task, mode, budget, seed, shape, small))
      const prompts = runs.flatMap((r) => r.promptChars)
      const scores = runs.map((r) => r.test)
      cells.push({
        task,
        shape,
        budget,
        mode: mode.label,
        runs: runs.length,
        testMean: mean(scores),
        testSd: sd(scores),
        spentMean: mean(runs.map((r) => r.spent)),
        over: runs.filter((r) => r.spent > budget).length,
        promptMeanChars: Math.round(mean(prompts)),
        promptMaxChars: prompts.length === 0 ? 0 : Math.max(...prompts),
        scores
      })
      console.error(`${task} ${shape} ${budget} ${mode.label}: ${mean(scores).toFixed(3)}`)
    }
  }
  return cells
}

export const table = (cells: ReadonlyArray<Cell>): string =>
  [
    "| task | mode | budget | side information | score (mean ± sd) | spent | prompt chars (mean, max) |",
    "|---|---|---:|---|---:|---:|---:|",
    ...cells.map((c) =>
      `| ${c.task} | ${c.shape === "single-task" ? "single-task" : "held-out"} | ${c.budget} | ${c.mode} | ` +
      `${c.testMean.toFixed(3)} ± ${c.testSd.toFixed(3)} | ${c.spentMean.toFixed(1)} | ${c.promptMeanChars}, ${c.promptMaxChars} |`
    )
  ].join("\n")

const main = async () => {
  const quick = process.argv.includes("--quick")
  const at = process.argv.indexOf("--task")
  const tasks: ReadonlyArray<TaskName> = at >= 0 ? [process.argv[at + 1] as TaskName] : ["anything", "manifest"]
  const n = process.argv.indexOf("--seeds")
  const count = n >= 0 ? Number(process.argv[n + 1]) : quick ? 3 : 10
  const seeds = Array.from({ length: count }, (_, i) => i)
  const m = process.argv.indexOf("--modes")
  const only = m >= 0 ? process.argv[m + 1]!.split(",") : undefined
  for (const task of tasks) {
    const cells = await measure(task, seeds, quick, false, only)
    console.log(table(cells))
    if (!quick) {
      const suffix = only === undefined ? "" : `-${count}-seeds`
      const file = path.join(path.dirname(fileURLToPath(import.meta.url)), "results", `side-info-${task}${suffix}.json`)
      await fs.writeFile(
        file,
        JSON.stringify({ task, options: task === "anything" ? defaultTaskOptions : defaultManifestOptions, seeds, cells }, null, 2) + "\n"
      )
      console.log(`\nwritten to ${file}`)
    }
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
}
