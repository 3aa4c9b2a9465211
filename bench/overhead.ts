/**
 * `npm run bench -- overhead`: what the engine costs per metric call when the
 * calls themselves cost nothing, on the tasks of `npm run bench -- concurrency`
 * (`--task 1x32|2x16|4x8`, default all three), with the default strategy and
 * nothing but `maxConcurrency: 16` set (merge on, as there).
 *
 * Per run: wall time per metric call (everything: the simulated adapter and
 * model are a few µs of string work each), the engine's share of it (wall
 * minus the adapter's and the model's own time, as the task's timers count
 * them), CPU time per metric call (user + system: GC threads included), and
 * garbage collection's share of the wall time (the pauses Node reports to a
 * `gc` PerformanceObserver). `--telemetry off` runs with `telemetry: false`
 * (the default keeps Effect's spans and metrics on). Options: `--seeds N`
 * (seeds 0..N-1, default 5), `--budget N` (default 2000), `--json FILE`,
 * `--steady N` (default 20, 0 to skip).
 *
 * Each task is measured twice in the same process. "first runs": its seeds
 * after one short untimed run (module loading done, most of the engine's
 * code still unoptimized by V8: a run of 2,000 calls lasts a few tenths of
 * a second, about what a fresh process's first run costs per call). "steady":
 * the same seeds again after `--steady` more untimed runs of the task, when
 * V8 has optimized the code these runs take: what each call costs a
 * long-lived process (an Effect app that optimizes more than once, or a run
 * longer than these).
 *
 * For a profile, run it under Node's profiler:
 * `node --cpu-prof --cpu-prof-dir=prof --import tsx bench/run.ts overhead --task 2x16 --seeds 1`.
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import { PerformanceObserver } from "node:perf_hooks"
import * as Gepa from "../src/Gepa.js"
import { median, tasks } from "./concurrency.js"
import { makeTask } from "./task.js"

export interface OverheadRow {
  readonly task: string
  /** "first runs", or "steady" after the untimed runs of `--steady` */
  readonly phase?: "first runs" | "steady" | undefined
  readonly telemetry: boolean
  readonly seed: number
  readonly budget: number
  readonly metricCalls: number
  readonly wallUsPerCall: number
  readonly engineUsPerCall: number
  readonly cpuUsPerCall: number
  readonly gcShare: number
  readonly test: number
}

export const measure = async (
  taskName: string,
  seed: number,
  budget: number,
  telemetry: boolean
): Promise<OverheadRow> => {
  const options = tasks[taskName]
  if (options === undefined) throw new Error(`--task: expected one of ${Object.keys(tasks).join(", ")}, got ${taskName}`)
  const task = makeTask(options)
  const gc = { ms: 0 }
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gc.ms += e.duration
  })
  observer.observe({ entryTypes: ["gc"] })
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const result = await Effect.runPromise(Gepa.optimize({
    seedCandidate: task.seedCandidate,
    trainset: task.trainset,
    valset: task.valset,
    adapter: task.adapter,
    reflectionModel: task.reflectionModel,
    maxMetricCalls: budget,
    maxConcurrency: 16,
    merge: true,
    seed,
    ...(telemetry ? {} : { telemetry: false })
  }))
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  // entries of the last collections arrive on a later tick
  await new Promise((resolve) => setTimeout(resolve, 0))
  observer.disconnect()
  const calls = Math.max(1, result.totalMetricCalls)
  return {
    task: taskName,
    telemetry,
    seed,
    budget,
    metricCalls: result.totalMetricCalls,
    wallUsPerCall: (wallMs * 1000) / calls,
    engineUsPerCall: ((wallMs - task.timers.adapterMs - task.timers.modelMs) * 1000) / calls,
    cpuUsPerCall: (cpu.user + cpu.system) / calls,
    gcShare: gc.ms / wallMs,
    test: task.testScore(result.bestCandidate)
  }
}

/** The value after `name` in a bench's arguments. */
export const option = (argv: ReadonlyArray<string>, name: string): string | undefined => {
  const at = argv.indexOf(name)
  return at >= 0 ? argv[at + 1] : undefined
}

export const main = async (argv: ReadonlyArray<string>) => {
  const taskNames = (option(argv, "--task") ?? "1x32,2x16,4x8").split(",")
  const seeds = Number(option(argv, "--seeds") ?? "5")
  const budget = Number(option(argv, "--budget") ?? "2000")
  const telemetry = option(argv, "--telemetry") !== "off"
  const json = option(argv, "--json")
  const steady = Number(option(argv, "--steady") ?? "20")
  if (!(Number.isInteger(steady) && steady >= 0)) throw new Error(`--steady: expected a whole number of runs, got ${option(argv, "--steady")}`)
  // one untimed run first: module loading and the JIT's first compilations are not the engine's cost
  await measure(taskNames[0]!, 0, 200, telemetry)
  const rows: Array<OverheadRow> = []
  for (const name of taskNames) {
    for (let seed = 0; seed < seeds; seed++) rows.push({ ...(await measure(name, seed, budget, telemetry)), phase: "first runs" })
    if (steady === 0) continue
    // untimed runs on other seeds, until V8 has optimized what this task's runs execute
    for (let i = 0; i < steady; i++) await measure(name, 1000 + i, budget, telemetry)
    for (let seed = 0; seed < seeds; seed++) rows.push({ ...(await measure(name, seed, budget, telemetry)), phase: "steady" })
  }
  const f = (x: number, d = 1) => x.toFixed(d)
  const lines = [
    `# Engine overhead at zero latency (defaults, maxConcurrency 16, budget ${budget}, seeds 0-${seeds - 1}, telemetry ${telemetry ? "on" : "off"})`,
    "",
    "| task | phase | wall µs per metric call | engine µs per call | CPU µs per call | GC share of wall | runs |",
    "|---|---|---|---|---|---|---|"
  ]
  for (const name of taskNames) {
    for (const phase of ["first runs", "steady"] as const) {
      const r = rows.filter((x) => x.task === name && x.phase === phase)
      if (r.length === 0) continue
      const range = (pick: (x: OverheadRow) => number, d = 1) =>
        `${f(median(r.map(pick)), d)} (${f(Math.min(...r.map(pick)), d)}-${f(Math.max(...r.map(pick)), d)})`
      lines.push(
        `| ${name} | ${phase === "steady" ? `steady (after ${steady} runs)` : phase} | ${range((x) => x.wallUsPerCall)} | ${
          range((x) => x.engineUsPerCall)
        } | ${range((x) => x.cpuUsPerCall)} | ${range((x) => x.gcShare * 100)}% | ${r.length} |`
      )
    }
  }
  lines.push("", "Medians, with the range over seeds in parentheses.")
  if (json !== undefined) await fs.writeFile(json, JSON.stringify({ date: new Date().toISOString(), rows }, null, 2) + "\n")
  process.stdout.write(lines.join("\n") + "\n")
}
