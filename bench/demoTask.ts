/**
 * `npm run bench -- demo`: the demo's ticket-routing task (`examples/demo`,
 * two text components, simulated models) with a strategy, on seeds
 * 0..N-1, stopping only at a perfect validation score or on the budget (the
 * demo's patience is left out: it counts iterations, which a wider step
 * spends faster). Per strategy: how many seeds reach a perfect validation
 * score, the mean best validation score, the mean metric calls spent, the
 * mean held-out accuracy (the task's 16 test tickets). A second task of
 * another shape than the keyword task, for the default strategy's choice.
 *
 * Options: `--seeds N` (default 10), `--budget N` (default 2000),
 * `--strategies default,one-round,one-per-step`, `--json FILE`.
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { accuracy, runDemo } from "../examples/demo/run.js"
import * as Strategy from "../src/Strategy.js"
import * as StopCondition from "../src/StopCondition.js"
import { mean, sd } from "./latencyQuality.js"
import { option } from "./overhead.js"

const strategies = {
  default: {},
  // the default of two components with one round per step (the default before three rounds)
  "one-round": { ...Strategy.defaultFor(2), proposalsPerStep: 2 },
  // the GEPA loop: one proposal per step
  "one-per-step": { proposalsPerStep: 1, proposalSampling: "independent", proposalSelection: "best" }
} as const

export interface DemoRow {
  readonly strategy: string
  readonly seed: number
  readonly best: number
  readonly metricCalls: number
  readonly test: number
}

export const measure = (strategy: keyof typeof strategies, seed: number, budget: number): Promise<DemoRow> =>
  Effect.runPromise(Effect.gen(function*() {
    const runDir = path.join(os.tmpdir(), `gepa-bench-demo-${process.pid}-${strategy}-${seed}`)
    const { models, result } = yield* runDemo({
      seed,
      runDir,
      writeReport: false,
      maxMetricCalls: budget,
      strategy: strategies[strategy],
      stop: [StopCondition.scoreThreshold(1)]
    })
    const test = yield* accuracy(models.taskModel, result.bestCandidate)
    yield* Effect.promise(() => fs.rm(runDir, { recursive: true, force: true }))
    return { strategy, seed, best: result.bestScore ?? 0, metricCalls: result.totalMetricCalls, test }
  }))

export const main = async (argv: ReadonlyArray<string>) => {
  const seeds = Number(option(argv, "--seeds") ?? "10")
  const budget = Number(option(argv, "--budget") ?? "2000")
  const names = (option(argv, "--strategies") ?? "default,one-round,one-per-step").split(",")
  const json = option(argv, "--json")
  const rows: Array<DemoRow> = []
  for (const name of names) {
    if (!(name in strategies)) throw new Error(`--strategies: expected some of ${Object.keys(strategies).join(", ")}, got ${name}`)
    for (let seed = 0; seed < seeds; seed++) rows.push(await measure(name as keyof typeof strategies, seed, budget))
  }
  const lines = [
    `# The demo's task (two components), seeds 0-${seeds - 1}, budget ${budget}, stopping at a perfect validation score`,
    "",
    "| strategy | perfect | best validation | metric calls | held-out accuracy |",
    "|---|---|---|---|---|"
  ]
  for (const name of names) {
    const r = rows.filter((x) => x.strategy === name)
    const calls = r.map((x) => x.metricCalls)
    lines.push(
      `| ${name} | ${r.filter((x) => x.best >= 1).length} of ${r.length} | ${mean(r.map((x) => x.best)).toFixed(3)} | ${mean(calls).toFixed(0)} ± ${
        sd(calls).toFixed(0)
      } | ${mean(r.map((x) => x.test)).toFixed(3)} ± ${sd(r.map((x) => x.test)).toFixed(3)} |`
    )
  }
  if (json !== undefined) await fs.writeFile(json, JSON.stringify({ date: new Date().toISOString(), rows }, null, 2) + "\n")
  process.stdout.write(lines.join("\n") + "\n")
}
