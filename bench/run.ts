/**
 * `npm run bench` (full, < 5 min on 2 cores) or `npm run bench -- --quick`
 * (< 1 min). Prints a markdown table and writes the same figures to
 * bench/results/latest.json (the quick run: latest-quick.json). See bench/README.md.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as B from "./benchmarks.js"
import * as Concurrency from "./concurrency.js"
import * as DemoTask from "./demoTask.js"
import * as LQ from "./latencyQuality.js"
import * as Overhead from "./overhead.js"
import * as Scale from "./scale.js"
import * as Work from "./work.js"

export interface Sizes {
  readonly overheadBudget: number
  readonly latency: LQ.LatencyQualityOptions
  readonly scaling: { readonly candidates: ReadonlyArray<number>; readonly examples: ReadonlyArray<number>; readonly minMs: number }
  readonly persistence: { readonly candidates: number; readonly examples: number; readonly cacheEntries: number; readonly reps: number }
  readonly faults: Parameters<typeof B.faults>[0]
}

const seeds = (n: number) => Array.from({ length: n }, (_, i) => i)
/** the rows of the latency x quality table; "c=16, default" is the recommended setting */
const latencySettings: ReadonlyArray<LQ.LatencySetting> = [
  { label: "sequential (c=1)", maxConcurrency: 1 },
  { label: "c=16, parallelProposals 1", maxConcurrency: 16, parallelProposals: 1 },
  { label: "c=16, default", maxConcurrency: 16 },
  { label: "c=16, parallelProposals 4", maxConcurrency: 16, parallelProposals: 4 },
  { label: "c=16, parallelProposals 2", maxConcurrency: 16, parallelProposals: 2 },
  { label: "c=16, parallelProposals 8", maxConcurrency: 16, parallelProposals: 8 },
  { label: "c=16, depth 4, foldOrder completion", maxConcurrency: 16, parallelProposals: 4, foldOrder: "completion" },
  { label: "1 component: sequential (c=1)", maxConcurrency: 1, components: 1 },
  { label: "1 component: c=16, default (depth 1)", maxConcurrency: 16, components: 1 },
  { label: "1 component: c=16, parallelProposals 2", maxConcurrency: 16, parallelProposals: 2, components: 1 }
]
const latencyBase = { taskLatencyMs: 20, llmLatencyMs: 50, task: LQ.latencyQualityTask }
const faultBase = { trainSize: 40, valSize: 20, failureRates: [0, 0.1, 0.3, 0.5], hangRate: 0.05, latencyMs: 2, timeoutMs: 50 }

export const fullSizes: Sizes = {
  overheadBudget: 20_000,
  latency: { ...latencyBase, budget: 1000, seeds: seeds(10), sequentialSeeds: seeds(10), settings: latencySettings },
  scaling: { candidates: [100, 1000, 5000], examples: [100, 1000, 10_000], minMs: 150 },
  persistence: { candidates: 1000, examples: 1000, cacheEntries: 200_000, reps: 3 },
  faults: { ...faultBase, budget: 300, seeds: 3 }
}

export const quickSizes: Sizes = {
  overheadBudget: 2000,
  latency: {
    ...latencyBase,
    budget: 300,
    seeds: [0],
    sequentialSeeds: [],
    settings: latencySettings.filter((x) => x.maxConcurrency === 16 && x.components === undefined && (x.parallelProposals ?? 4) <= 4)
  },
  scaling: { candidates: [100, 1000], examples: [100, 1000], minMs: 60 },
  persistence: { candidates: 1000, examples: 1000, cacheEntries: 50_000, reps: 1 },
  faults: { ...faultBase, budget: 200, seeds: 1 }
}

export interface Report {
  readonly mode: string
  readonly machine: { readonly node: string; readonly cpus: number; readonly cpuModel: string; readonly platform: string }
  readonly date: string
  readonly totalSeconds: number
  readonly overhead: B.OverheadResult
  readonly latency: ReadonlyArray<LQ.LatencyQualityRow>
  readonly scaling: B.ScalingResult
  readonly persistence: B.PersistenceResult
  readonly faults: ReadonlyArray<B.FaultRow>
  readonly memory: { readonly peakRssMb: number; readonly peakRssAfterScalingMb: number; readonly largestScalingCase: string }
  readonly goals: ReadonlyArray<Goal>
}

export interface Goal {
  readonly name: string
  readonly target: string
  readonly actual: string
  readonly met: boolean
}

/** Mean ± sd over the seeds both rows ran of (a - b), the rows' held-out scores. */
const pairedDifference = (a: LQ.LatencyQualityRow, b: LQ.LatencyQualityRow): string => {
  const diffs = a.seeds.flatMap((seed, i) => {
    const j = b.seeds.indexOf(seed)
    return j < 0 ? [] : [a.testScores[i]! - b.testScores[j]!]
  })
  return diffs.length === 0 ? "n/a" : `${LQ.mean(diffs) >= 0 ? "+" : ""}${LQ.mean(diffs).toFixed(3)} ± ${LQ.sd(diffs).toFixed(3)} over ${diffs.length} seeds`
}

export const runAll = async (sizes: Sizes, mode: string, log: (line: string) => void = () => {}): Promise<Report> => {
  const start = performance.now()
  log("1/5 engine overhead")
  // a short warm-up so the measured run is not dominated by JIT compilation
  await B.engineOverhead({ budget: Math.min(1000, sizes.overheadBudget) })
  const overhead = await B.engineOverhead({ budget: sizes.overheadBudget })
  log("2/5 latency x quality")
  const latency = await LQ.latencyQuality(sizes.latency, log)
  log("3/5 scaling")
  const scaling = B.scaling(sizes.scaling)
  const peakRssAfterScalingMb = process.resourceUsage().maxRSS / 1024
  log("4/5 persistence")
  const persistence = await B.persistence(sizes.persistence)
  log("5/5 fault injection")
  const faults = await B.faults(sizes.faults)

  const at = (n: number, m: number) => scaling.cells.find((c) => c.candidates === n && c.examples === m)
  const cell1k = at(1000, 1000)
  const recommended = latency.find((r) => r.label.startsWith("c=16, default"))
  const sequential = latency.find((r) => r.label === "sequential (c=1)") ?? latency.find((r) => r.label === "c=16, parallelProposals 1")
  const linear = 1.15
  const goals: Array<Goal> = [
    ...(recommended === undefined ? [] : [
      {
        name: `${recommended.label}: median wall / utilization bound`,
        target: "<= 1.3",
        actual: recommended.wallOverBound.toFixed(2),
        met: recommended.wallOverBound <= 1.3
      },
      ...(sequential === undefined || sequential === recommended ? [] : [{
        name: `${recommended.label}: mean held-out score vs ${sequential.label}`,
        target: `>= ${(sequential.testMean - 0.01).toFixed(3)} (sequential - 0.01)`,
        actual: `${recommended.testMean.toFixed(3)} (paired difference ${pairedDifference(recommended, sequential)})`,
        met: recommended.testMean >= sequential.testMean - 0.01
      }]),
      {
        name: "calls wasted (minibatches of children never validated)",
        target: "0",
        actual: f(recommended.wastedCallsMean, 1),
        met: recommended.wastedCallsMean === 0
      }
    ]),
    ...Object.entries(scaling.exponents).map(([fn, e]) => ({
      name: `${fn}: growth exponent (candidates, examples)`,
      target: `<= ${linear} each (linear; 0.15 for noise)`,
      actual: `${e.candidates.toFixed(2)}, ${e.examples.toFixed(2)}`,
      met: e.candidates <= linear && e.examples <= linear
    })),
    ...(cell1k === undefined ? [] : [{
      name: "parent selection at 1,000 x 1,000",
      target: "< 10 ms",
      actual: `${cell1k.selectMs.toFixed(1)} ms`,
      met: cell1k.selectMs < 10
    }]),
    {
      name: "state save at 1,000 x 1,000 (RunDir)",
      target: "< 100 ms",
      actual: `${persistence.runDirSaveMs.toFixed(0)} ms`,
      met: persistence.runDirSaveMs < 100
    },
    {
      name: "budget never exceeded under faults",
      target: "all rows OK",
      actual: faults.every((f) => f.budgetOk) ? "OK" : "FAIL",
      met: faults.every((f) => f.budgetOk)
    }
  ]
  const largest = scaling.cells.reduce((a, b) => (b.candidates * b.examples > a.candidates * a.examples ? b : a))
  return {
    mode,
    machine: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? "unknown", platform: `${os.platform()} ${os.arch()}` },
    date: new Date().toISOString(),
    totalSeconds: (performance.now() - start) / 1000,
    overhead,
    latency,
    scaling,
    persistence,
    faults,
    memory: {
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      peakRssAfterScalingMb,
      largestScalingCase: `${largest.candidates} candidates x ${largest.examples} examples`
    },
    goals
  }
}

const f = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : "n/a")
const pct = (x: number) => `${(x * 100).toFixed(1)}%`

export const markdown = (r: Report): string => {
  const lines: Array<string> = []
  const o = r.overhead
  lines.push(`# effect-gepa benchmarks (${r.mode})`, "")
  lines.push(
    `Machine: node ${r.machine.node}, ${r.machine.cpus} CPUs (${r.machine.cpuModel}), ${r.machine.platform}. ${r.date}, ${f(r.totalSeconds)} s total.`,
    ""
  )
  lines.push("## 1. Engine overhead (zero-latency adapter and model)", "")
  lines.push(
    "| metric calls (budget) | iterations | accepted | wall ms | adapter ms | model ms | engine us / iteration | engine us / metric call | share outside adapter | engine share |"
  )
  lines.push("|---|---|---|---|---|---|---|---|---|---|")
  lines.push(
    `| ${o.metricCalls} (${o.budget}) | ${o.iterations} | ${o.accepted} | ${f(o.wallMs, 0)} | ${f(o.adapterMs, 0)} | ${f(o.modelMs, 0)} | ${
      f(o.engineUsPerIteration, 0)
    } | ${f(o.engineUsPerMetricCall, 0)} | ${pct(o.shareOutsideAdapter)} | ${pct(o.shareEngine)} |`,
    ""
  )
  lines.push("## 2. Latency x quality (task call 20 ms, reflection 50 ms)", "")
  lines.push(
    "| setting | components | runs | median wall s | wall / utilization bound | held-out score mean ± sd | validation score mean | metric calls | calls wasted | accepted |"
  )
  lines.push("|---|---|---|---|---|---|---|---|---|---|")
  for (const c of r.latency) {
    lines.push(
      `| ${c.label} | ${c.components} | ${c.runs} | ${f(c.medianWallMs / 1000, 2)} | ${f(c.wallOverBound, 2)} | ` +
        `${f(c.testMean, 3)} ± ${f(c.testSd, 3)} | ${f(c.valMean, 3)} | ${f(c.metricCallsMean, 0)} | ${f(c.wastedCallsMean, 1)} | ${f(c.acceptedMean, 1)} |`
    )
  }
  lines.push("", "## 3. Scaling (median ms per call)", "")
  lines.push("| candidates | examples | front entries | select (pareto) | Frontier.updateTable | State.addCandidate | State.bestIndex |")
  lines.push("|---|---|---|---|---|---|---|")
  for (const c of r.scaling.cells) {
    lines.push(
      `| ${c.candidates} | ${c.examples} | ${c.frontEntries} | ${f(c.selectMs, 3)} | ${f(c.updateTableMs, 3)} | ${f(c.addCandidateMs, 3)} | ${
        f(c.bestIndexMs, 4)
      } |`
    )
  }
  lines.push("", "| function | exponent in candidates | exponent in examples |", "|---|---|---|")
  for (const [fn, e] of Object.entries(r.scaling.exponents)) lines.push(`| ${fn} | ${f(e.candidates, 2)} | ${f(e.examples, 2)} |`)
  const p = r.persistence
  lines.push("", `## 4. Persistence (${p.candidates} candidates x ${p.examples} examples)`, "")
  lines.push(`Method: ${p.method}. For comparison, a plain write: Schema.encode + JSON.stringify + writeFile/rename, and the same without Schema.encode.`, "")
  lines.push(
    "| RunDir save per iteration ms | RunDir first save ms | RunDir load ms | head MB | candidates.jsonl MB | plain save ms | plain save without Schema.encode ms | plain load ms | round trip |",
    "|---|---|---|---|---|---|---|---|---|"
  )
  lines.push(
    `| ${f(p.runDirSaveMs, 1)} | ${f(p.runDirFirstSaveMs, 0)} | ${f(p.runDirLoadMs, 0)} | ${f(p.runDirFileMb, 2)} | ${f(p.runDirCandidatesMb, 2)} | ${
      f(p.saveMs, 0)
    } | ${f(p.saveWithoutSchemaMs, 0)} | ${f(p.loadMs, 0)} | ${p.roundTripOk ? "OK" : "FAIL"} |`,
    ""
  )
  lines.push("| cache | entries | appends / s | lookups / s |", "|---|---|---|---|")
  for (const c of p.cache) lines.push(`| ${c.name} | ${c.entries} | ${f(c.appendPerSec, 0)} | ${f(c.lookupPerSec, 0)} |`)
  lines.push("", "## 5. Fault injection", "")
  lines.push(
    "| setting | runs completed | max metric calls / budget | max adapter examples / budget | budget | best score vs fault-free | injected failures, hangs |"
  )
  lines.push("|---|---|---|---|---|---|---|")
  for (const x of r.faults) {
    lines.push(
      `| ${x.label} | ${x.completed}/${x.runs} | ${x.maxMetricCalls}/${x.budget} | ${x.maxAdapterExamples}/${x.budget} | ${x.budgetOk ? "OK" : "FAIL"} | ${
        f(x.relativeBestScore, 2)
      } | ${x.injected.failures}, ${x.injected.hangs} |`
    )
  }
  lines.push("", "## 6. Memory", "")
  lines.push(
    `Peak RSS after the scaling benchmark (largest case ${r.memory.largestScalingCase}): ${f(r.memory.peakRssAfterScalingMb, 0)} MB; process peak: ${
      f(r.memory.peakRssMb, 0)
    } MB.`,
    ""
  )
  lines.push("## Goals", "", "| goal | target | actual | met |", "|---|---|---|---|")
  for (const g of r.goals) lines.push(`| ${g.name} | ${g.target} | ${g.actual} | ${g.met ? "yes" : "**NO**"} |`)
  return lines.join("\n") + "\n"
}

const main = async () => {
  if (process.argv.includes("concurrency")) return Concurrency.main(process.argv.slice(2))
  if (process.argv.includes("scale")) return Scale.main(process.argv.slice(2))
  if (process.argv.includes("overhead")) return Overhead.main(process.argv.slice(2))
  if (process.argv.includes("work")) return Work.main(process.argv.slice(2))
  if (process.argv.includes("demo")) return DemoTask.main(process.argv.slice(2))
  const quick = process.argv.includes("--quick")
  const report = await runAll(quick ? quickSizes : fullSizes, quick ? "quick" : "full", (line) => console.error(`[bench] ${line}`))
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results")
  await fs.mkdir(dir, { recursive: true })
  // the quick run (CI's) must not replace the recorded full figures
  await fs.writeFile(path.join(dir, quick ? "latest-quick.json" : "latest.json"), JSON.stringify(report, null, 2) + "\n")
  process.stdout.write(markdown(report))
}

// run only as a script, so the test can import runAll and markdown
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    console.error(e)
    process.exit(1)
  })
}
