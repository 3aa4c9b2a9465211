/**
 * `npx tsx bench/anything.ts` (or `npm run bench:anything`): the defaults of
 * `optimizeAnything` that differ from the reference's optimize_anything,
 * measured on the generalization task of `anythingTask.ts` (train 36,
 * validation 20, held-out test 200) at budget 150 (and 300), seeds 0-9.
 *
 * For each setting: held-out score of the best candidate (mean, sd),
 * validation score, metric calls spent (mean, min, max), runs over budget,
 * and the reflection prompt's size (mean, max bytes). Rows:
 *
 * - the library's defaults (instance frontier, cache on, skip perfect
 *   minibatches);
 * - each default changed alone to the reference's (hybrid frontier, cache
 *   off, no skipping);
 * - all of them as the reference has them;
 * - the side information cut as the 0.2 defaults cut it (strings 400
 *   characters and each evaluation 1,000 characters of JSON in the prompt;
 *   the defaults now show it whole within the prompt budget);
 * - the same in multi-task mode (the dataset alone, learned from and ranked
 *   on), where the cache matters: a parent's minibatch examples are
 *   validation examples it was already scored on.
 *
 * Writes bench/results/anything.json. Options: `--quick` (3 seeds, budget
 * 150 only).
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as LanguageModel from "../src/LanguageModel.js"
import * as OA from "../src/OptimizeAnything.js"
import { type AnythingTaskOptions, defaultTaskOptions, makeAnythingTask } from "./anythingTask.js"
import { mean, sd } from "./latencyQuality.js"

export interface Setting {
  readonly label: string
  /** multi-task: the dataset is learned from and ranked on (no valset); default generalization */
  readonly mode?: "multi-task"
  readonly options: Partial<OA.EngineOptions> & { readonly sideInfo?: OA.SideInfoLimits }
}

export const settings: ReadonlyArray<Setting> = [
  { label: "defaults (instance frontier, cache on, skip perfect)", options: {} },
  { label: "frontierType hybrid", options: { frontierType: "hybrid" } },
  { label: "cache off", options: { cache: false } },
  { label: "skipPerfectScore false", options: { skipPerfectScore: false } },
  { label: "reference's defaults (hybrid, cache off, no skip)", options: { frontierType: "hybrid", cache: false, skipPerfectScore: false } },
  // the 0.2 defaults: side information cut per evaluation in the prompt (strings 400, 1,000 characters of JSON)
  {
    label: "defaults, side information cut as in 0.2",
    options: { sideInfo: { maxStringLength: 2_000, maxListItems: 25, maxDepth: 6, maxRecordLength: 8_000, promptStringLength: 400, promptRecordLength: 1_000 } }
  },
  // multi-task: the parent's minibatch examples are validation examples too, so the cache matters here
  { label: "multi-task: defaults", mode: "multi-task", options: {} },
  { label: "multi-task: frontierType hybrid", mode: "multi-task", options: { frontierType: "hybrid" } },
  { label: "multi-task: cache off", mode: "multi-task", options: { cache: false } },
  { label: "multi-task: skipPerfectScore false", mode: "multi-task", options: { skipPerfectScore: false } },
  { label: "multi-task: reference's defaults", mode: "multi-task", options: { frontierType: "hybrid", cache: false, skipPerfectScore: false } }
]

export interface Run {
  readonly seed: number
  readonly test: number
  readonly val: number
  readonly spent: number
  readonly promptBytes: ReadonlyArray<number>
}

export const runOne = (task: AnythingTaskOptions, setting: Setting, budget: number, seed: number): Promise<Run> => {
  const t = makeAnythingTask(task)
  const promptBytes: Array<number> = []
  const model = LanguageModel.fromFunction((prompt) => {
    promptBytes.push(Buffer.byteLength(LanguageModel.promptText(prompt)))
    return Effect.runSync(t.reflectionModel.complete(prompt)).text
  })
  return Effect.runPromise(OA.optimizeAnything({
    ...setting.options,
    seedCandidate: t.seedText,
    evaluator: t.evaluate,
    dataset: t.dataset,
    ...(setting.mode === "multi-task" ? {} : { valset: t.valset }),
    reflectionModel: model,
    maxMetricCalls: budget,
    seed
  })).then((r) => ({ seed, test: t.testScore(r.bestCandidate), val: r.bestScore ?? 0, spent: r.totalMetricCalls, promptBytes }))
}

export interface Cell {
  readonly label: string
  readonly budget: number
  readonly runs: number
  readonly testMean: number
  readonly testSd: number
  readonly valMean: number
  readonly spentMean: number
  readonly spentMin: number
  readonly spentMax: number
  readonly over: number
  readonly promptMeanBytes: number
  readonly promptMaxBytes: number
}

export const measure = async (budgets: ReadonlyArray<number>, seeds: ReadonlyArray<number>, task = defaultTaskOptions) => {
  const cells: Array<Cell> = []
  for (const budget of budgets) {
    for (const setting of settings) {
      const runs: Array<Run> = []
      for (const seed of seeds) runs.push(await runOne(task, setting, budget, seed))
      const prompts = runs.flatMap((r) => r.promptBytes)
      const spent = runs.map((r) => r.spent)
      cells.push({
        label: setting.label,
        budget,
        runs: runs.length,
        testMean: mean(runs.map((r) => r.test)),
        testSd: sd(runs.map((r) => r.test)),
        valMean: mean(runs.map((r) => r.val)),
        spentMean: mean(spent),
        spentMin: Math.min(...spent),
        spentMax: Math.max(...spent),
        over: spent.filter((s) => s > budget).length,
        promptMeanBytes: Math.round(mean(prompts)),
        promptMaxBytes: Math.max(...prompts)
      })
    }
  }
  return cells
}

export const table = (cells: ReadonlyArray<Cell>): string =>
  [
    "| budget | setting | held-out (mean ± sd) | validation | spent (mean, min-max) | over | prompt bytes (mean, max) |",
    "|---:|---|---:|---:|---:|---:|---:|",
    ...cells.map((c) =>
      `| ${c.budget} | ${c.label} | ${c.testMean.toFixed(3)} ± ${c.testSd.toFixed(3)} | ${c.valMean.toFixed(3)} | ` +
      `${c.spentMean.toFixed(1)} (${c.spentMin}-${c.spentMax}) | ${c.over} | ${c.promptMeanBytes}, ${c.promptMaxBytes} |`
    )
  ].join("\n")

const main = async () => {
  const quick = process.argv.includes("--quick")
  const budgets = quick ? [150] : [150, 300]
  const seeds = quick ? [0, 1, 2] : [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
  const cells = await measure(budgets, seeds)
  console.log(table(cells))
  if (!quick) {
    const file = path.join(path.dirname(fileURLToPath(import.meta.url)), "results", "anything.json")
    await fs.writeFile(file, JSON.stringify({ task: defaultTaskOptions, seeds, budgets, cells }, null, 2) + "\n")
    console.log(`\nwritten to ${file}`)
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
}
