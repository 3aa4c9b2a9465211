/**
 * `npx tsx bench/stepWidth.ts`: the default for one component (three
 * rewrites of one minibatch's evidence per step, `Config.rewritesPerMinibatch`)
 * against the default before it (adaptive step width, `Config.stepWidth`)
 * and the GEPA loop (`proposalsPerStep: 1`)
 * on a one-component task of another shape than the concurrency bench's
 * keyword task: optimize-anything's generalization task (`anythingTask.ts`:
 * train 36, validation 20, held-out test 200), at budgets 300 / 600 / 1,200,
 * seeds 0-9 (`--seeds N`, `--budgets 300,600`).
 *
 * Per row: held-out score of the best candidate (mean, sd), metric calls
 * spent, proposals, and sequential steps (a step starts when a proposal
 * starts with none in flight: the rounds a run waits through one after the
 * other). Zero latency: the rows are deterministic. Writes
 * bench/results/step-width-anything.json.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { GepaEvent } from "../src/Event.js"
import * as OA from "../src/OptimizeAnything.js"
import * as Anything from "./anything.js"
import { defaultTaskOptions } from "./anythingTask.js"
import { mean, sd } from "./latencyQuality.js"
import { option } from "./overhead.js"

interface Row {
  readonly seed: number
  readonly test: number
  readonly spent: number
  readonly proposals: number
  readonly steps: number
}

const settings: ReadonlyArray<{ readonly label: string; readonly options: Partial<OA.EngineOptions> }> = [
  { label: "default (3 rewrites per minibatch, next step on the validated child and its minibatch)", options: {} },
  // the default before the step on a child reflected on the child's own results on its minibatch
  { label: "3 rewrites per minibatch, next step on the validated child, fresh minibatch", options: { reuseChildMinibatch: false } },
  // the default before the next step started on the child: a config that shapes the steps gets it only when it gives it
  { label: "3 rewrites per minibatch, every parent after the fold", options: { buildOnChild: false } },
  {
    label: "adaptive steps of 1 to 8 (the default before rewrites)",
    options: { proposalsPerStep: 8, proposalSampling: "independent", proposalSelection: "best", stepWidth: "adaptive", rewritesPerMinibatch: 1 }
  },
  { label: "GEPA loop (proposalsPerStep 1)", options: { proposalsPerStep: 1 } }
]

const runOne = async (budget: number, seed: number, options: Partial<OA.EngineOptions>): Promise<Row> => {
  let open = 0
  let steps = 0
  let proposals = 0
  const onEvent = (e: GepaEvent) => {
    if (e._tag === "ProposalStarted") {
      if (open === 0) steps++
      open++
      proposals++
    }
    if (e._tag === "ProposalEnded") open--
  }
  // optimize-anything's bench run, with the events counted
  const run = await Anything.runOne(defaultTaskOptions, { label: "", options: { ...options, onEvent } }, budget, seed)
  return { seed, test: run.test, spent: run.spent, proposals, steps }
}

export const main = async (argv: ReadonlyArray<string>) => {
  const seeds = Number(option(argv, "--seeds") ?? "10")
  const budgets = (option(argv, "--budgets") ?? "300,600,1200").split(",").map(Number)
  const cells: Array<Record<string, unknown>> = []
  const lines = [
    `# Step width on optimize-anything's generalization task (one component, seeds 0-${seeds - 1}, zero latency)`,
    "",
    "| budget | strategy | held-out mean ± sd | spent (mean) | proposals (mean) | sequential steps (mean) |",
    "|---|---|---|---|---|---|"
  ]
  for (const budget of budgets) {
    for (const setting of settings) {
      const rows: Array<Row> = []
      for (let seed = 0; seed < seeds; seed++) rows.push(await runOne(budget, seed, setting.options))
      const tests = rows.map((r) => r.test)
      const m = (pick: (r: Row) => number) => mean(rows.map(pick))
      cells.push({ budget, strategy: setting.label, rows })
      lines.push(
        `| ${budget} | ${setting.label} | ${mean(tests).toFixed(3)} ± ${sd(tests).toFixed(3)} | ${m((r) => r.spent).toFixed(0)} | ${
          m((r) => r.proposals).toFixed(1)
        } | ${m((r) => r.steps).toFixed(1)} |`
      )
    }
  }
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results")
  await fs.writeFile(path.join(dir, "step-width-anything.json"), JSON.stringify({ date: new Date().toISOString(), cells }, null, 2) + "\n")
  process.stdout.write(lines.join("\n") + "\n")
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main(process.argv.slice(2))
