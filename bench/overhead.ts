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
 * `gc` PerformanceObserver); the table gives that share's median over runs
 * and its value over all runs pooled. `--telemetry off` runs with `telemetry: false`
 * (the default keeps Effect's spans and metrics on). Options: `--seeds N`
 * (seeds 0..N-1, default 5), `--budget N` (default 2000), `--json FILE`,
 * `--steady N` (default 20, 0 to skip), `--processes N` (default 1).
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
 * `--processes N` repeats all of it in N fresh processes, one after the
 * other, and reports the medians over every run with each process's own
 * median beside them: one process's figure is one draw.
 *
 * Why the draws differ: a run's cost per call depends on where the process
 * is in its garbage collector's cycle. Each run leaves its state behind in
 * V8's old generation; right after a full (mark-compact) collection the
 * runs are fastest, and as the old generation fills again (and V8 marks it
 * while the engine runs) the same run costs up to about twice as much, until
 * the next full collection. `--cycles N` shows it: N consecutive runs of
 * each task (its seeds in turn), the engine µs per call of each, a `*` after
 * a run during which a full collection happened, and the medians over the
 * first and the second half of each complete cycle.
 *
 * For a profile, run it under Node's profiler:
 * `node --cpu-prof --cpu-prof-dir=prof --import tsx bench/run.ts overhead --task 2x16 --seeds 1`.
 */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { constants as perf, PerformanceObserver } from "node:perf_hooks"
import * as Gepa from "../src/Gepa.js"
import { median, tasks } from "./concurrency.js"
import { makeTask, type Task } from "./task.js"

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
  /**
   * the scavenges' share of the wall (young-generation collections, the
   * part of `gcShare` that grows with what the run keeps alive across one);
   * absent in rows recorded before it was measured
   */
  readonly scavengeShare?: number
  /** full (mark-compact) collections that happened during the run */
  readonly majorGcs?: number
  readonly test: number
  /** which of `--processes` ran it (0 when there is one) */
  readonly process?: number
}

/** A run of `task` with the default strategy and nothing but `maxConcurrency: 16` set (merge on, as in the strategies bench). */
export const optimizeTask = (task: Task, seed: number, budget: number, telemetry = true) =>
  Gepa.optimize({
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
  })

export const measure = async (
  taskName: string,
  seed: number,
  budget: number,
  telemetry: boolean
): Promise<OverheadRow> => {
  const options = tasks[taskName]
  if (options === undefined) throw new Error(`--task: expected one of ${Object.keys(tasks).join(", ")}, got ${taskName}`)
  const task = makeTask(options)
  const gc = { ms: 0, major: 0, minorMs: 0 }
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.ms += e.duration
      const kind = (e as { readonly detail?: { readonly kind?: number } }).detail?.kind
      if (kind === perf.NODE_PERFORMANCE_GC_MAJOR) gc.major++
      if (kind === perf.NODE_PERFORMANCE_GC_MINOR) gc.minorMs += e.duration
    }
  })
  observer.observe({ entryTypes: ["gc"] })
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const result = await Effect.runPromise(optimizeTask(task, seed, budget, telemetry))
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
    scavengeShare: gc.minorMs / wallMs,
    majorGcs: gc.major,
    test: task.testScore(result.bestCandidate)
  }
}

/** The value after `name` in a bench's arguments. */
export const option = (argv: ReadonlyArray<string>, name: string): string | undefined => {
  const at = argv.indexOf(name)
  return at >= 0 ? argv[at + 1] : undefined
}

/** Runs this bench with `argv` in a fresh process of the same Node and loader, and reads its rows back. */
const inChild = async (argv: ReadonlyArray<string>, index: number): Promise<ReadonlyArray<OverheadRow>> => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "gepa-overhead-"))
  const file = path.join(dir, "rows.json")
  try {
    const script = process.argv[1]
    if (script === undefined) throw new Error("--processes: cannot tell which script to run again")
    await new Promise<void>((resolve, reject) =>
      execFile(
        process.execPath,
        [...process.execArgv, script, ...argv, "--json", file],
        { maxBuffer: 1 << 24 },
        (error, _out, err) =>
          error === null ? resolve() : reject(new Error(`--processes: process ${index} failed: ${err.trim().split("\n").at(-1) ?? error.message}`))
      )
    )
    const rows = (JSON.parse(await fs.readFile(file, "utf8")) as { rows: ReadonlyArray<OverheadRow> }).rows
    return rows.map((r) => ({ ...r, process: index }))
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

/** The arguments without `--processes N` and `--json FILE` (the parent writes its own). */
const childArgs = (argv: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--processes" || argv[i] === "--json") i++
    else out.push(argv[i]!)
  }
  return out
}

/**
 * The collector's share of the wall over all `rows` together: their GC time
 * over their wall time. Steadier than the median of each run's share, which
 * swings with whether a run of 2,000 calls happened to hold one scavenge
 * more or less (on Node 24 a run often holds none).
 */
export const pooledGcShare = (rows: ReadonlyArray<Pick<OverheadRow, "gcShare" | "wallUsPerCall" | "metricCalls">>): number => {
  let gc = 0
  let wall = 0
  for (const r of rows) {
    const runWall = r.wallUsPerCall * r.metricCalls
    gc += r.gcShare * runWall
    wall += runWall
  }
  return wall === 0 ? 0 : gc / wall
}

/** The markdown table of `rows`: medians with their range over runs, the pooled GC share, and each process's median when there are several. */
export const table = (
  rows: ReadonlyArray<OverheadRow>,
  heading: { readonly budget: number; readonly seeds: number; readonly telemetry: boolean; readonly steady: number; readonly processes: number }
): string => {
  const f = (x: number, d = 1) => x.toFixed(d)
  const several = heading.processes > 1
  const lines = [
    `# Engine overhead at zero latency (defaults, maxConcurrency 16, budget ${heading.budget}, seeds 0-${heading.seeds - 1}, telemetry ${
      heading.telemetry ? "on" : "off"
    }${several ? `, ${heading.processes} processes` : ""})`,
    "",
    `| task | phase | wall µs per metric call | engine µs per call | CPU µs per call | GC share of wall | of which scavenges | GC share, all runs pooled | runs |${
      several ? " engine µs per call, median of each process |" : ""
    }`,
    `|---|---|---|---|---|---|---|---|---|${several ? "---|" : ""}`
  ]
  const tasksSeen = [...new Set(rows.map((r) => r.task))]
  for (const name of tasksSeen) {
    for (const phase of ["first runs", "steady"] as const) {
      const r = rows.filter((x) => x.task === name && x.phase === phase)
      if (r.length === 0) continue
      const range = (pick: (x: OverheadRow) => number, d = 1) =>
        `${f(median(r.map(pick)), d)} (${f(Math.min(...r.map(pick)), d)}-${f(Math.max(...r.map(pick)), d)})`
      const perProcess = several
        ? ` ${
          Array.from({ length: heading.processes }, (_, p) => r.filter((x) => x.process === p))
            .filter((x) => x.length > 0)
            .map((x) => f(median(x.map((y) => y.engineUsPerCall))))
            .join(" / ")
        } |`
        : ""
      lines.push(
        `| ${name} | ${phase === "steady" ? `steady (after ${heading.steady} runs)` : phase} | ${range((x) => x.wallUsPerCall)} | ${
          range((x) => x.engineUsPerCall)
        } | ${range((x) => x.cpuUsPerCall)} | ${range((x) => x.gcShare * 100)}% | ${
          r.every((x) => x.scavengeShare !== undefined) ? `${range((x) => (x.scavengeShare ?? 0) * 100)}%` : "–"
        } | ${f(pooledGcShare(r) * 100)}% | ${r.length} |${perProcess}`
      )
    }
  }
  lines.push("", several ? "Medians over every run of every process, with their range in parentheses." : "Medians, with the range over seeds in parentheses.")
  return lines.join("\n") + "\n"
}

/**
 * The runs of one process in order, split by where each falls in its
 * garbage collector's cycle: a cycle runs from a run with a full collection
 * to the next; its first half is `early` (the old generation nearly empty),
 * the rest `late`. Runs before the first full collection and after the last
 * belong to no complete cycle and are left out.
 */
export const cycleHalves = (runs: ReadonlyArray<Pick<OverheadRow, "engineUsPerCall" | "majorGcs">>): {
  readonly early: ReadonlyArray<number>
  readonly late: ReadonlyArray<number>
} => {
  const marks = runs.flatMap((r, i) => ((r.majorGcs ?? 0) > 0 ? [i] : []))
  const early: Array<number> = []
  const late: Array<number> = []
  for (let k = 0; k + 1 < marks.length; k++) {
    // the runs after a full collection, up to and including the one with the next
    const cycle = runs.slice(marks[k]! + 1, marks[k + 1]! + 1).map((r) => r.engineUsPerCall)
    const half = Math.floor(cycle.length / 2)
    early.push(...cycle.slice(0, half))
    late.push(...cycle.slice(half))
  }
  return { early, late }
}

/** The lines of `--cycles`: each task's runs in order (`*` after a full collection) and the medians of the two halves of its cycles. */
export const cyclesReport = (rows: ReadonlyArray<OverheadRow>): string => {
  const lines = ["# Engine µs per metric call, run after run, over the garbage collector's cycles", ""]
  for (const name of [...new Set(rows.map((r) => r.task))]) {
    const runs = rows.filter((r) => r.task === name)
    const { early, late } = cycleHalves(runs)
    const f = (xs: ReadonlyArray<number>) => (xs.length === 0 ? "–" : `${median(xs).toFixed(1)} (${xs.length} runs)`)
    lines.push(
      `${name}: ${runs.map((r) => `${r.engineUsPerCall.toFixed(0)}${(r.majorGcs ?? 0) > 0 ? "*" : ""}`).join(" ")}`,
      `${name}: first half of each cycle ${f(early)}, second half ${f(late)}`,
      ""
    )
  }
  return lines.join("\n")
}

/** Writes the rows to `--json FILE`, when given. */
const keep = (json: string | undefined, rows: ReadonlyArray<OverheadRow>): Promise<void> =>
  json === undefined ? Promise.resolve() : fs.writeFile(json, JSON.stringify({ date: new Date().toISOString(), rows }, null, 2) + "\n")

export const main = async (argv: ReadonlyArray<string>) => {
  const taskNames = (option(argv, "--task") ?? "1x32,2x16,4x8").split(",")
  for (const name of taskNames) {
    if (tasks[name] === undefined) throw new Error(`--task: expected one of ${Object.keys(tasks).join(", ")}, got ${name}`)
  }
  const seeds = Number(option(argv, "--seeds") ?? "5")
  const budget = Number(option(argv, "--budget") ?? "2000")
  const telemetry = option(argv, "--telemetry") !== "off"
  const json = option(argv, "--json")
  const steady = Number(option(argv, "--steady") ?? "20")
  if (!(Number.isInteger(steady) && steady >= 0)) throw new Error(`--steady: expected a whole number of runs, got ${option(argv, "--steady")}`)
  const processes = Number(option(argv, "--processes") ?? "1")
  if (!(Number.isInteger(processes) && processes >= 1)) {
    throw new Error(`--processes: expected a whole number of at least 1, got ${option(argv, "--processes")}`)
  }
  const cycles = option(argv, "--cycles")
  if (cycles !== undefined) {
    const n = Number(cycles)
    if (!(Number.isInteger(n) && n >= 1)) throw new Error(`--cycles: expected a whole number of runs, got ${cycles}`)
    const rows: Array<OverheadRow> = []
    await measure(taskNames[0]!, 0, 200, telemetry)
    for (const name of taskNames) {
      for (let i = 0; i < n; i++) rows.push({ ...(await measure(name, i % seeds, budget, telemetry)), phase: "steady" })
    }
    await keep(json, rows)
    process.stdout.write(cyclesReport(rows))
    return
  }
  const rows: Array<OverheadRow> = []
  if (processes > 1) {
    // one after the other: processes measured side by side would share the cores
    for (let p = 0; p < processes; p++) rows.push(...(await inChild(childArgs(argv), p)))
  } else {
    // one untimed run first: module loading and the JIT's first compilations are not the engine's cost
    await measure(taskNames[0]!, 0, 200, telemetry)
    for (const name of taskNames) {
      for (let seed = 0; seed < seeds; seed++) rows.push({ ...(await measure(name, seed, budget, telemetry)), phase: "first runs" })
      if (steady === 0) continue
      // untimed runs on other seeds, until V8 has optimized what this task's runs execute
      for (let i = 0; i < steady; i++) await measure(name, 1000 + i, budget, telemetry)
      for (let seed = 0; seed < seeds; seed++) rows.push({ ...(await measure(name, seed, budget, telemetry)), phase: "steady" })
    }
  }
  await keep(json, rows)
  process.stdout.write(table(rows, { budget, seeds, telemetry, steady, processes }))
}
