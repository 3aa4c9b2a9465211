/**
 * `npm run bench -- work`: what the engine does per metric call, counted
 * instead of timed, on the tasks of `npm run bench -- concurrency` with the
 * default strategy and nothing but `maxConcurrency: 16` set (merge on, zero
 * latency, as `npm run bench -- overhead`). Counts move by about 1 % from
 * run to run (a call over a millisecond changes how its evaluation runs),
 * not with the machine's load or the garbage collector's cycle, so they
 * compare two versions of the engine where wall times need many
 * interleaved processes:
 *
 * - Effect operations: every instruction the run's fibers execute, as an
 *   op supervisor sees them (`RuntimeFlags.enableOpSupervision`);
 * - fibers started;
 * - bytes allocated: the sampling heap profiler's estimate, objects the
 *   collector reclaimed included (V8's `HeapProfiler.startSampling` with
 *   both `includeObjectsCollectedBy...` flags), over runs made after the
 *   counted ones, so that counting does not allocate into them.
 *
 * Options: `--task 1x32,2x16,4x8` (default all three), `--seeds N` (seeds
 * 1..N after an untimed run of seed 0, default 3), `--budget N` (default
 * 2000), `--telemetry off` (runs with `telemetry: false`, as `overhead`
 * does: the default keeps Effect's spans and metrics on), `--json FILE`.
 */
import { Effect, Layer, RuntimeFlags, Supervisor } from "effect"
import * as fs from "node:fs/promises"
import { Session } from "node:inspector/promises"
import { tasks } from "./concurrency.js"
import { optimizeTask, option } from "./overhead.js"
import { makeTask } from "./task.js"

export interface WorkRow {
  readonly task: string
  readonly seeds: number
  readonly budget: number
  readonly telemetry: boolean
  readonly metricCalls: number
  readonly opsPerCall: number
  readonly fibersPerCall: number
  readonly bytesPerCall: number
}

class Counter extends Supervisor.AbstractSupervisor<void> {
  ops = 0
  fibers = 0
  counting = false
  readonly value = Effect.void
  override onStart() {
    if (this.counting) this.fibers++
  }
  override onEffect() {
    if (this.counting) this.ops++
  }
}

const run = (taskName: string, seed: number, budget: number, telemetry: boolean, layer?: Layer.Layer<never>) => {
  const optimize = optimizeTask(makeTask(tasks[taskName]!), seed, budget, telemetry)
  return Effect.runPromise(layer === undefined ? optimize : Effect.provide(optimize, layer))
}

interface SamplingNode {
  readonly selfSize: number
  readonly children: ReadonlyArray<SamplingNode>
}
const totalSize = (node: SamplingNode): number => node.children.reduce((sum, child) => sum + totalSize(child), node.selfSize)

export const measureWork = async (taskName: string, seeds: number, budget: number, telemetry = true): Promise<WorkRow> => {
  const counter = new Counter()
  const layer = Layer.merge(Supervisor.addSupervisor(counter), RuntimeFlags.enableOpSupervision)
  await run(taskName, 0, budget, telemetry, layer)
  counter.counting = true
  let calls = 0
  for (let seed = 1; seed <= seeds; seed++) calls += (await run(taskName, seed, budget, telemetry, layer)).totalMetricCalls
  counter.counting = false
  const session = new Session()
  session.connect()
  try {
    await session.post("HeapProfiler.enable")
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true
    })
    let sampledCalls = 0
    for (let seed = 1; seed <= seeds; seed++) sampledCalls += (await run(taskName, seed, budget, telemetry)).totalMetricCalls
    const { profile } = await session.post("HeapProfiler.stopSampling")
    return {
      task: taskName,
      seeds,
      budget,
      telemetry,
      metricCalls: calls,
      opsPerCall: counter.ops / calls,
      fibersPerCall: counter.fibers / calls,
      bytesPerCall: totalSize(profile.head) / sampledCalls
    }
  } finally {
    session.disconnect()
  }
}

export const main = async (argv: ReadonlyArray<string>) => {
  const taskNames = (option(argv, "--task") ?? "1x32,2x16,4x8").split(",")
  for (const name of taskNames) {
    if (tasks[name] === undefined) throw new Error(`--task: expected one of ${Object.keys(tasks).join(", ")}, got ${name}`)
  }
  const seeds = Number(option(argv, "--seeds") ?? "3")
  if (!(Number.isInteger(seeds) && seeds >= 1)) throw new Error(`--seeds: expected a whole number of at least 1, got ${option(argv, "--seeds")}`)
  const budget = Number(option(argv, "--budget") ?? "2000")
  if (!(Number.isInteger(budget) && budget >= 100)) throw new Error(`--budget: expected a whole number of at least 100, got ${option(argv, "--budget")}`)
  const telemetry = option(argv, "--telemetry") ?? "on"
  if (telemetry !== "on" && telemetry !== "off") throw new Error(`--telemetry: expected on or off, got ${telemetry}`)
  const rows: Array<WorkRow> = []
  for (const name of taskNames) rows.push(await measureWork(name, seeds, budget, telemetry === "on"))
  const json = option(argv, "--json")
  if (json !== undefined) await fs.writeFile(json, JSON.stringify({ date: new Date().toISOString(), rows }, null, 2) + "\n")
  const lines = [
    `# Engine work per metric call (defaults, maxConcurrency 16, budget ${budget}, seeds 1-${seeds}, zero latency, telemetry ${telemetry})`,
    "",
    "| task | metric calls | Effect operations per call | fibers per call | KB allocated per call |",
    "|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.task} | ${r.metricCalls} | ${r.opsPerCall.toFixed(1)} | ${r.fibersPerCall.toFixed(3)} | ${(r.bytesPerCall / 1024).toFixed(1)} |`),
    ""
  ]
  process.stdout.write(lines.join("\n") + "\n")
}
