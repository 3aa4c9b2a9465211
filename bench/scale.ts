/**
 * `npm run bench -- scale`: one long run on a fast synthetic task (1,000,000
 * metric calls by default, a few minutes), to show that memory and the cost
 * per metric call stay flat as the run grows. Not part of `npm test`.
 *
 * Prints resident memory at each tenth of the budget and at the end, the
 * engine's time per metric call in each tenth (wall time less the adapter's
 * and the model's own time), the share of the run spent in parent selection,
 * garbage collection's share of wall time, and the candidates found.
 *
 *   npm run bench -- scale [--calls N] [--cache off] [--run-dir DIR] [--json FILE]
 *
 * With `--run-dir` the run saves to that folder (emptied first) and the
 * bench also prints the bytes the process wrote in each tenth (Linux's
 * `/proc/self/io`), the time per save in each tenth, and the folder's final
 * size against everything written.
 *
 * The task: every candidate's score on an example is a fixed pseudo-random
 * draw from {0, .25, .5, .75, 1} keyed by its texts, so about half of the
 * children beat their parent on the minibatch and the pool keeps growing
 * (about 9,000 candidates at 1M calls), and every example's front keeps
 * collecting the candidates that tie at the top: the worst case for the
 * evaluation cache and for Pareto selection.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { PerformanceObserver } from "node:perf_hooks"
import type { Adapter } from "../src/Adapter.js"
import * as CandidateSelector from "../src/CandidateSelector.js"
import * as Gepa from "../src/Gepa.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as RunDir from "../src/RunDir.js"
import type { GepaState } from "../src/State.js"
import { fnv } from "./task.js"

interface Example {
  readonly id: number
}

interface Trace {
  readonly id: number
  readonly score: number
}

export interface ScaleOptions {
  readonly calls: number
  readonly cache: boolean
  readonly trainSize: number
  readonly valSize: number
  /** a run folder to save to (removed first); none by default */
  readonly runDir?: string | undefined
}

export interface ScaleResult {
  readonly options: ScaleOptions
  readonly metricCalls: number
  readonly iterations: number
  readonly candidates: number
  readonly wallSeconds: number
  /** RSS (MB) when the adapter had run each tenth of the budget */
  readonly rssMbAtDecile: ReadonlyArray<number>
  readonly rssMbEnd: number
  readonly peakRssMb: number
  readonly heapUsedMbEnd: number
  /** engine µs per metric call in each tenth of the adapter's calls */
  readonly usPerCallByDecile: ReadonlyArray<number>
  /** last decile / first decile */
  readonly lastOverFirst: number
  /**
   * the same from the process's CPU time (user + system, GC threads
   * included): on a shared machine wall time also counts other processes
   */
  readonly cpuUsPerCallByDecile: ReadonlyArray<number>
  readonly cpuLastOverFirst: number
  readonly selectionShare: number
  readonly selectionMsPerPlanLastDecile: number
  readonly gcShare: number
  /** with node --expose-gc: the heap after a full collection at each tenth (the collection's time is in the tenth's) */
  readonly liveHeapMbAtDecile: ReadonlyArray<number>
  /** with a run folder: bytes the process wrote (write calls, /proc/self/io) in each tenth, MB */
  readonly writtenMbByDecile?: ReadonlyArray<number>
  /** with a run folder: mean and worst milliseconds per save in each tenth */
  readonly saveMsByDecile?: ReadonlyArray<number>
  readonly saveMaxMsByDecile?: ReadonlyArray<number>
  readonly saveShare?: number
  readonly saves?: number
  /** with a run folder: CPU ms of the process per save in each tenth (user + system, all threads, while the save was under way) */
  readonly saveCpuMsByDecile?: ReadonlyArray<number>
  /** with a run folder: write system calls per metric call over the run (Linux's `syscw`, every thread) */
  readonly writesPerCall?: number
  /** with a run folder: its size at the end, MB, and everything written over the run, MB */
  readonly folderMb?: number
  readonly writtenMb?: number
}

/** A counter of this process's `/proc/self/io` (Linux); 0 elsewhere. */
const ioCounter = (name: "wchar" | "syscw"): number => {
  try {
    const m = new RegExp(`^${name}: (\\d+)$`, "m").exec(fs.readFileSync("/proc/self/io", "utf8"))
    return m === null ? 0 : Number(m[1])
  } catch {
    return 0
  }
}

/** Bytes this process has passed to write calls so far. */
const bytesWritten = (): number => ioCounter("wchar")

const folderBytes = (dir: string): number => fs.readdirSync(dir).reduce((n, name) => n + fs.statSync(path.join(dir, name)).size, 0)

const mix = (a: number, b: number): number => {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

export const scale = async (options: ScaleOptions, log: (line: string) => void = () => {}): Promise<ScaleResult> => {
  const trainset = Array.from({ length: options.trainSize }, (_, i): Example => ({ id: i }))
  const valset = Array.from({ length: options.valSize }, (_, i): Example => ({ id: options.trainSize + i }))
  let adapterMs = 0
  let modelMs = 0
  let examples = 0
  const decile = options.calls / 10
  const marks: Array<
    {
      t: number
      cpu: number
      adapterMs: number
      modelMs: number
      selectMs: number
      selects: number
      rss: number
      written: number
      saveMs: number
      saveCpuMs: number
      saves: number
      saveMax: number
      writes: number
    }
  > = []
  // saves, timed around the run folder's own save
  const saving = { ms: 0, cpuMs: 0, count: 0, max: 0 }
  let selectMs = 0
  let selects = 0
  const liveHeapMb: Array<number> = []
  const t0 = performance.now()
  const cpuMs = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  const mark = () => {
    const m = {
      t: performance.now(),
      cpu: cpuMs(),
      adapterMs,
      modelMs,
      selectMs,
      selects,
      rss: process.memoryUsage.rss() / 1048576,
      written: bytesWritten(),
      saveMs: saving.ms,
      saveCpuMs: saving.cpuMs,
      saves: saving.count,
      saveMax: saving.max,
      writes: ioCounter("syscw")
    }
    saving.max = 0
    return m
  }
  if (options.runDir !== undefined) fs.rmSync(options.runDir, { recursive: true, force: true })
  marks.push(mark())
  // candidate texts -> their seed for scores, computed once per candidate object
  const seeds = new WeakMap<object, number>()
  const seedOf = (c: Readonly<Record<string, string>>) => {
    let s = seeds.get(c)
    if (s === undefined) {
      s = fnv(`${c["a"]}|${c["b"]}`)
      seeds.set(c, s)
    }
    return s
  }
  const adapter: Adapter<Example, Trace, string> = {
    evaluate: (batch, candidate, { captureTraces }) =>
      Effect.sync(() => {
        const start = performance.now()
        const seed = seedOf(candidate)
        const scores: Array<number> = []
        const outputs: Array<string> = []
        for (const ex of batch) {
          const h = mix(seed, ex.id)
          scores.push((h % 5) / 4)
          outputs.push(`answer ${h % 1000}`)
        }
        examples += batch.length
        adapterMs += performance.now() - start
        if (examples >= decile * marks.length && marks.length <= 10) {
          // with --expose-gc: what the run holds at this point, garbage collected
          const gc = (globalThis as { gc?: () => void }).gc
          if (gc !== undefined) {
            gc()
            liveHeapMb.push(process.memoryUsage().heapUsed / 1048576)
          }
          marks.push(mark())
          log(`${marks.length - 1}/10: ${Math.round(marks.at(-1)!.rss)} MB RSS`)
        }
        return {
          outputs,
          scores,
          trajectories: captureTraces ? batch.map((ex, i): Trace => ({ id: ex.id, score: scores[i]! })) : undefined
        }
      }),
    makeReflectiveDataset: (_candidate, evaluation, names) =>
      Effect.sync(() => {
        const records = (evaluation.trajectories ?? []).map((t) => ({ "Inputs": `example ${t.id}`, "Feedback": `scored ${t.score}` }))
        return Object.fromEntries(names.map((c) => [c, records]))
      })
  }
  const reflectionModel = LanguageModel.fromFunction((prompt) => {
    const start = performance.now()
    const text = LanguageModel.promptText(prompt)
    const out = "```\nv" + (fnv(text) % 1_000_000_007) + "\n```"
    modelMs += performance.now() - start
    return out
  })
  const gc = { ms: 0 }
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gc.ms += e.duration
  })
  observer.observe({ entryTypes: ["gc"] })
  const result = await Effect.runPromise(Gepa.optimize({
    seedCandidate: { a: "v0", b: "v1" },
    trainset,
    valset,
    adapter,
    reflectionModel,
    maxMetricCalls: options.calls,
    minibatchSize: 3,
    seed: 0,
    ...(options.cache ? {} : { cache: false }),
    ...(options.runDir === undefined ? {} : {
      store: Effect.map(RunDir.make<string>(options.runDir, { cache: options.cache }), (store) => ({
        ...store,
        save: (state: GepaState) =>
          Effect.suspend(() => {
            const start = performance.now()
            const startCpu = cpuMs()
            return Effect.ensuring(
              store.save(state),
              Effect.sync(() => {
                const ms = performance.now() - start
                saving.cpuMs += cpuMs() - startCpu
                saving.ms += ms
                saving.count++
                saving.max = Math.max(saving.max, ms)
              })
            )
          })
      }))
    }),
    candidateSelector: (state, rng) => {
      const start = performance.now()
      const picked = CandidateSelector.pareto(state, rng)
      selectMs += performance.now() - start
      selects++
      return picked
    }
  }))
  const end = performance.now()
  observer.disconnect()
  while (marks.length < 11) marks.push(mark())
  // the finish (result.json) is written after the last tenth's mark
  marks[10] = { ...marks[10]!, written: bytesWritten(), writes: ioCounter("syscw"), saveMs: saving.ms, saveCpuMs: saving.cpuMs, saves: saving.count }
  const usPerCallByDecile = marks.slice(1).map((m, i) => {
    const p = marks[i]!
    return ((m.t - p.t) - (m.adapterMs - p.adapterMs) - (m.modelMs - p.modelMs)) * 1000 / decile
  })
  const cpuUsPerCallByDecile = marks.slice(1).map((m, i) => {
    const p = marks[i]!
    return ((m.cpu - p.cpu) - (m.adapterMs - p.adapterMs) - (m.modelMs - p.modelMs)) * 1000 / decile
  })
  const last = marks[10]!
  const prev = marks[9]!
  const wallMs = end - t0
  return {
    options,
    metricCalls: result.totalMetricCalls,
    iterations: result.iterations,
    candidates: result.candidates.length,
    wallSeconds: wallMs / 1000,
    rssMbAtDecile: marks.slice(1).map((m) => m.rss),
    rssMbEnd: process.memoryUsage.rss() / 1048576,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    heapUsedMbEnd: process.memoryUsage().heapUsed / 1048576,
    usPerCallByDecile,
    lastOverFirst: usPerCallByDecile[9]! / usPerCallByDecile[0]!,
    cpuUsPerCallByDecile,
    cpuLastOverFirst: cpuUsPerCallByDecile[9]! / cpuUsPerCallByDecile[0]!,
    selectionShare: selectMs / wallMs,
    selectionMsPerPlanLastDecile: (last.selectMs - prev.selectMs) / Math.max(1, last.selects - prev.selects),
    gcShare: gc.ms / wallMs,
    liveHeapMbAtDecile: liveHeapMb,
    ...(options.runDir === undefined ? {} : {
      writtenMbByDecile: marks.slice(1).map((m, i) => (m.written - marks[i]!.written) / 1048576),
      saveMsByDecile: marks.slice(1).map((m, i) => (m.saveMs - marks[i]!.saveMs) / Math.max(1, m.saves - marks[i]!.saves)),
      saveMaxMsByDecile: marks.slice(1).map((m) => m.saveMax),
      saveCpuMsByDecile: marks.slice(1).map((m, i) => (m.saveCpuMs - marks[i]!.saveCpuMs) / Math.max(1, m.saves - marks[i]!.saves)),
      writesPerCall: (marks[10]!.writes - marks[0]!.writes) / result.totalMetricCalls,
      saveShare: saving.ms / wallMs,
      saves: saving.count,
      folderMb: folderBytes(options.runDir) / 1048576,
      writtenMb: (marks[10]!.written - marks[0]!.written) / 1048576
    })
  }
}

const f = (x: number, d = 1) => x.toFixed(d)

export const markdown = (r: ScaleResult): string => {
  const lines = [
    `## Scale: ${r.metricCalls.toLocaleString("en")} metric calls (${r.options.cache ? "default in-memory cache" : "cache: false"})`,
    "",
    `${r.candidates.toLocaleString("en")} candidates, ${r.iterations.toLocaleString("en")} iterations, ${f(r.wallSeconds)} s wall. ` +
    `RSS at the end ${f(r.rssMbEnd, 0)} MB (peak ${f(r.peakRssMb, 0)} MB, heap used ${f(r.heapUsedMbEnd, 0)} MB). ` +
    `Parent selection ${f(r.selectionShare * 100)}% of wall (${f(r.selectionMsPerPlanLastDecile, 3)} ms per plan in the last tenth); ` +
    `GC ${f(r.gcShare * 100)}% of wall.`,
    "",
    "| tenth of the budget | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    `| engine µs per metric call | ${r.usPerCallByDecile.map((x) => f(x)).join(" | ")} |`,
    `| engine CPU µs per metric call | ${r.cpuUsPerCallByDecile.map((x) => f(x)).join(" | ")} |`,
    `| RSS MB at its end | ${r.rssMbAtDecile.map((x) => f(x, 0)).join(" | ")} |`,
    ...(r.liveHeapMbAtDecile.length === 0 ? [] : [`| live heap MB (after a full GC) | ${r.liveHeapMbAtDecile.map((x) => f(x, 0)).join(" | ")} |`]),
    ...(r.writtenMbByDecile === undefined ? [] : [
      `| MB written | ${r.writtenMbByDecile.map((x) => f(x)).join(" | ")} |`,
      `| ms per save (mean) | ${r.saveMsByDecile!.map((x) => f(x, 2)).join(" | ")} |`,
      `| ms per save (worst) | ${r.saveMaxMsByDecile!.map((x) => f(x, 1)).join(" | ")} |`,
      `| CPU ms per save (mean) | ${r.saveCpuMsByDecile!.map((x) => f(x, 2)).join(" | ")} |`
    ]),
    "",
    `Last tenth / first tenth: ${f(r.lastOverFirst, 2)}x wall, ${f(r.cpuLastOverFirst, 2)}x CPU.`,
    ...(r.folderMb === undefined ? [] : [
      "",
      `Run folder: ${f(r.folderMb)} MB at the end, ${f(r.writtenMb!)} MB written over the run (${f(r.writtenMb! / r.folderMb, 2)}x); ` +
      `${r.saves!.toLocaleString("en")} saves, ${f(r.saveShare! * 100)}% of wall; ${f(r.writesPerCall!, 3)} write calls per metric call.`
    ])
  ]
  return lines.join("\n") + "\n"
}

export const main = async (args: ReadonlyArray<string>): Promise<void> => {
  const arg = (name: string) => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1] : undefined
  }
  const calls = Number(arg("--calls") ?? 1_000_000)
  if (!Number.isInteger(calls) || calls < 1000) {
    console.error(`--calls: expected an integer of at least 1000, got ${arg("--calls")}`)
    process.exit(2)
  }
  const result = await scale(
    { calls, cache: arg("--cache") !== "off", trainSize: 200, valSize: 100, runDir: arg("--run-dir") },
    (line) => console.error(`[scale] ${line}`)
  )
  const json = arg("--json")
  if (json !== undefined) {
    const fs = await import("node:fs/promises")
    await fs.writeFile(json, JSON.stringify(result, null, 2) + "\n")
  }
  process.stdout.write(markdown(result))
}
