/**
 * Smoke test of the benchmark harness at tiny sizes: every benchmark runs to
 * the end and the report has the fields the JSON file promises. No timing
 * assertions: the machine is shared and timings are not the point here.
 */
import { describe, expect, it } from "vitest"
import * as B from "../bench/benchmarks.js"
import * as Overhead from "../bench/overhead.js"
import * as Work from "../bench/work.js"
import { markdown, runAll, type Sizes } from "../bench/run.js"

const tiny: Sizes = {
  overheadBudget: 300,
  latency: {
    budget: 60,
    taskLatencyMs: 1,
    llmLatencyMs: 2,
    seeds: [0, 1],
    sequentialSeeds: [0],
    task: { components: 2, keywordsPerComponent: 3, trainSize: 12, valSize: 6, testSize: 10, learnPermille: 500 },
    settings: [
      { label: "sequential (c=1)", maxConcurrency: 1 },
      { label: "c=16, default", maxConcurrency: 16 },
      { label: "1 component: c=16, parallelProposals 2", maxConcurrency: 16, parallelProposals: 2, components: 1 }
    ]
  },
  scaling: { candidates: [5, 20], examples: [5, 20], minMs: 1 },
  persistence: { candidates: 10, examples: 10, cacheEntries: 100, reps: 1 },
  faults: { budget: 40, seeds: 1, trainSize: 10, valSize: 6, failureRates: [0, 0.5], hangRate: 0.05, latencyMs: 1, timeoutMs: 20 }
}

describe("bench", () => {
  it("runs every benchmark at a tiny size and reports every field", async () => {
    const report = await runAll(tiny, "test")
    expect(report.overhead.metricCalls).toBeGreaterThan(0)
    expect(report.overhead.metricCalls).toBeLessThanOrEqual(tiny.overheadBudget)
    expect(Number.isFinite(report.overhead.engineUsPerIteration)).toBe(true)
    expect(report.latency.map((c) => c.label)).toHaveLength(3)
    expect(report.latency.map((c) => c.runs)).toEqual([1, 2, 2])
    expect(report.latency.map((c) => c.components)).toEqual([2, 2, 1])
    for (const c of report.latency) {
      expect(c.boundMs).toBeGreaterThan(0)
      expect(c.metricCallsMean).toBeLessThanOrEqual(tiny.latency.budget)
      expect(c.testMean).toBeGreaterThanOrEqual(0)
      expect(c.testMean).toBeLessThanOrEqual(1)
      expect(c.wastedCallsMean).toBe(0)
    }
    expect(report.scaling.cells).toHaveLength(4)
    expect(Object.keys(report.scaling.exponents).sort()).toEqual(["addCandidate", "bestIndex", "select", "updateTable"])
    expect(report.persistence.roundTripOk).toBe(true)
    expect(report.persistence.cache[0]!.entries).toBe(100)
    expect(report.faults).toHaveLength(3)
    for (const row of report.faults) expect(row.budgetOk).toBe(true)
    expect(report.memory.peakRssMb).toBeGreaterThan(0)
    expect(report.goals.length).toBeGreaterThan(0)
    const table = markdown(report)
    for (const heading of ["Engine overhead", "Latency x quality", "Scaling", "Persistence", "Fault injection", "Memory", "Goals"]) {
      expect(table).toContain(heading)
    }
    // the JSON file is this object serialized: it must survive a round trip
    expect(JSON.parse(JSON.stringify(report)).overhead.iterations).toBe(report.overhead.iterations)
  })

  it("measures the engine's overhead per metric call within the budget, with every field finite", async () => {
    const row = await Overhead.measure("1x32", 0, 100, false)
    expect(row.metricCalls).toBeGreaterThan(0)
    expect(row.metricCalls).toBeLessThanOrEqual(100)
    for (const x of [row.wallUsPerCall, row.engineUsPerCall, row.cpuUsPerCall, row.gcShare, row.test]) expect(Number.isFinite(x)).toBe(true)
    expect(Number.isInteger(row.majorGcs)).toBe(true)
    // the scavenges are part of the collector's time, never more
    expect(Number.isFinite(row.scavengeShare)).toBe(true)
    expect(row.scavengeShare).toBeLessThanOrEqual(row.gcShare)
    expect(row.engineUsPerCall).toBeLessThanOrEqual(row.wallUsPerCall)
    await expect(Overhead.measure("3x3", 0, 100, false)).rejects.toThrow(/--task: expected one of/)
  })

  it("reports each process's median beside the medians over all of them, and refuses a bad --processes in one line", async () => {
    const row = (process: number, engineUsPerCall: number) => ({
      task: "2x16",
      phase: "steady" as const,
      telemetry: true,
      seed: 0,
      budget: 100,
      metricCalls: 100,
      wallUsPerCall: engineUsPerCall + 1,
      engineUsPerCall,
      cpuUsPerCall: engineUsPerCall,
      gcShare: 0.2,
      test: 0.5,
      process
    })
    const text = Overhead.table([row(0, 40), row(0, 42), row(1, 80), row(1, 84)], { budget: 100, seeds: 2, telemetry: true, steady: 3, processes: 2 })
    expect(text).toContain("2 processes")
    // the median over the four runs, their range, and each process's own median
    expect(text).toContain("| 2x16 | steady (after 3 runs) | 62.0 (41.0-85.0) | 61.0 (40.0-84.0) |")
    expect(text).toContain("| 4 | 41.0 / 82.0 |")
    // rows recorded before scavenges were measured show none
    expect(text).toContain("| 20.0 (20.0-20.0)% | – | 20.0% | 4 |")
    const measured = Overhead.table([{ ...row(0, 40), scavengeShare: 0.15 }], { budget: 100, seeds: 1, telemetry: true, steady: 3, processes: 1 })
    expect(measured).toContain("| 20.0 (20.0-20.0)% | 15.0 (15.0-15.0)% | 20.0% | 1 |")
    // pooled: each run's GC time over all the runs' wall, so a long run weighs more than a short one
    const pooled = Overhead.table([{ ...row(0, 40), gcShare: 0.1 }, { ...row(0, 40), gcShare: 0.2, metricCalls: 300 }], {
      budget: 100,
      seeds: 2,
      telemetry: true,
      steady: 3,
      processes: 1
    })
    expect(pooled).toContain("| 15.0 (10.0-20.0)% | – | 17.5% | 2 |")
    expect(Overhead.table([row(0, 40)], { budget: 100, seeds: 1, telemetry: true, steady: 3, processes: 1 })).not.toContain("each process")
    await expect(Overhead.main(["overhead", "--processes", "0"])).rejects.toThrow(/^--processes: expected a whole number of at least 1, got 0$/)
    await expect(Overhead.main(["overhead", "--task", "9x9"])).rejects.toThrow(/^--task: expected one of/)
  })

  it("splits a process's runs by the halves of its garbage collector's cycles, leaving out runs outside a complete cycle", () => {
    const runs = [50, 60, 70, 30, 31, 32, 33, 34, 80, 35, 36, 37, 90].map((engineUsPerCall, i) => ({
      engineUsPerCall,
      // full collections during the 3rd, 8th and 11th runs
      majorGcs: i === 2 || i === 7 || i === 10 ? 1 : 0
    }))
    // cycles: runs 4-8 (first half 2 runs) and 9-11 (first half 1 run)
    expect(Overhead.cycleHalves(runs)).toEqual({ early: [30, 31, 80], late: [32, 33, 34, 35, 36] })
    expect(Overhead.cycleHalves(runs.slice(0, 5))).toEqual({ early: [], late: [] })
    const text = Overhead.cyclesReport(
      runs.map((r, seed) => ({
        ...r,
        task: "2x16",
        telemetry: true,
        seed,
        budget: 100,
        metricCalls: 100,
        wallUsPerCall: r.engineUsPerCall,
        cpuUsPerCall: 1,
        gcShare: 0.1,
        test: 1
      }))
    )
    expect(text).toContain("2x16: 50 60 70* 30 31 32 33 34* 80 35 36* 37 90")
    expect(text).toContain("2x16: first half of each cycle 31.0 (3 runs), second half 34.0 (5 runs)")
  })

  it("runs the demo's task with a strategy to the end, within the budget", async () => {
    const DemoTask = await import("../bench/demoTask.js")
    const row = await DemoTask.measure("one-round", 0, 200)
    expect(row.metricCalls).toBeGreaterThan(0)
    expect(row.metricCalls).toBeLessThanOrEqual(200)
    expect(row.best).toBeGreaterThanOrEqual(0)
    expect(row.test).toBeGreaterThanOrEqual(0)
    expect(row.test).toBeLessThanOrEqual(1)
  })

  it("builds synthetic states that pass the state's own consistency check", async () => {
    const { checkConsistency } = await import("../src/State.js")
    expect(checkConsistency(B.syntheticState(30, 40, { fullScores: true }))).toEqual([])
  })

  it("fits the exponents of a known power law", () => {
    const points = [10, 100, 1000].flatMap((n) => [10, 100].map((m) => ({ n, m, t: n * m * m })))
    const e = B.fitExponents(points)
    expect(e.candidates).toBeCloseTo(1, 6)
    expect(e.examples).toBeCloseTo(2, 6)
  })
})

describe("bench concurrency", () => {
  it("runs each measurement to the end and reports its fields", async () => {
    const C = await import("../bench/concurrency.js")
    const strategy = C.strategies.find((s) => s.label === "2 per step, best")!
    const q = await C.quality([strategy], [120], [0], () => {})
    expect(q[0]).toMatchObject({ strategy: strategy.label, budget: 120, seeds: 1, overBudget: 0 })
    expect(q[0]!.spentMean).toBeLessThanOrEqual(120)
    const d = await C.determinism(strategy, [80], [0], () => {})
    expect(d[0]).toMatchObject({ strategy: strategy.label, budget: 80, seeds: 1, identical: 1 })
    expect(C.markdown(q, [], d)).toContain("| 2 per step, best | 80 | 1/1 |")
  }, 60_000)

  it("prints the reference's recorded rows beside ours, and names a malformed record in one line", async () => {
    const C = await import("../bench/concurrency.js")
    const fs = await import("node:fs")
    const os = await import("node:os")
    const path = await import("node:path")
    const recorded = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "bench", "results", "reference.json")
    const reference = await C.readReference(recorded)
    expect(reference).toBeDefined()
    const q = [{
      strategy: "default",
      budget: 500,
      seeds: 1,
      testMean: 0.3,
      testSd: 0,
      testScores: [0.3],
      spentMean: 500,
      spentMin: 500,
      overBudget: 0,
      candidatesMean: 1
    }]
    const l = [{
      strategy: "default",
      profile: "20/50 ms",
      seeds: 1,
      budget: 1000,
      medianWallMs: 1000,
      reflectionsMean: 90,
      testMean: 0.3,
      testSd: 0,
      spentMean: 1000
    }]
    const table = C.markdown(q, l, [], reference)
    expect(table).toContain("| reference: sequential | 0.268 ± 0.042 | 514 (max 534) | (not strict) |")
    expect(table).toContain("| reference: independent2-best | 20/50 ms | 1000 | 10 | 4.79 | – | 0.511 ± 0.040 | 1019 | |")
    // rows at another budget (`--latency-budget`) sit beside the reference's at that budget
    const at2000 = C.markdown([], [{ ...l[0]!, budget: 2000 }], [], reference)
    expect(at2000).toContain("| reference: sequential | 20/50 ms | 2000 | 10 | 16.05 |")
    expect(at2000).not.toContain("| reference: sequential | 20/50 ms | 1000 |")
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-reference-"))
    expect(await C.readReference(path.join(dir, "absent.json"))).toBeUndefined()
    const bad = path.join(dir, "reference.json")
    fs.writeFileSync(bad, JSON.stringify({ referenceCommit: "x", task: { components: 2 } }))
    const error = await C.readReference(bad).then(() => undefined, (e: unknown) => e)
    expect(String(error)).toMatch(new RegExp(`^Error: ${bad.replace(/[.\\/]/g, "\\$&")}: not a reference record: .+$`))
  })
})

describe("bench tasks that forget", () => {
  // the keywords a reflection's answer lists, or undefined for an answer without a text
  const knownIn = (answer: string) => /know: ([^|]*)\|/.exec(answer)?.[1]!.split(" ").filter((w) => w !== "")
  const prompts = Array.from({ length: 400 }, (_, i) => `[c0] know: c0k1 c0k2 c0k3 | v${i}\nWrong: the instructions must mention 'c0k${4 + (i % 20)}'.`)

  it("drops a known keyword in some rewrites with forgetPermille, and never without it", async () => {
    const { makeTask } = await import("../bench/task.js")
    const { Effect } = await import("effect")
    const options = { components: 1, keywordsPerComponent: 32, trainSize: 10, valSize: 5, learnPermille: 300 }
    const answers = (task: ReturnType<typeof makeTask>) => prompts.map((p) => knownIn(Effect.runSync(task.reflectionModel.complete(p)).text)!)
    const lost = (words: ReadonlyArray<string>) => ["c0k1", "c0k2", "c0k3"].filter((w) => !words.includes(w)).length
    const plain = answers(makeTask(options))
    const zero = answers(makeTask({ ...options, forgetPermille: 0 }))
    const forgetting = answers(makeTask({ ...options, forgetPermille: 150 }))
    expect(plain.every((w) => lost(w) === 0)).toBe(true)
    expect(zero).toEqual(plain)
    const dropped = forgetting.filter((w) => lost(w) > 0)
    // one keyword at most per rewrite, about 15 % of them (400 prompts: 60 expected)
    expect(dropped.every((w) => lost(w) === 1)).toBe(true)
    expect(dropped.length).toBeGreaterThan(30)
    expect(dropped.length).toBeLessThan(100)
    // what is learned is learned the same way: the same prompts learn the same keyword
    const learned = (w: ReadonlyArray<string>) => w.filter((k) => !["c0k1", "c0k2", "c0k3"].includes(k))
    expect(forgetting.map(learned)).toEqual(plain.map(learned))
  })

  it("never prints the reference's rows of a task that does not forget beside one that does", async () => {
    const C = await import("../bench/concurrency.js")
    const path = await import("node:path")
    const recorded = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "bench", "results", "reference.json")
    expect(await C.readReference(recorded, C.tasks["2x16"])).toBeDefined()
    expect(await C.readReference(recorded, C.tasks["2x16r"])).toBeUndefined()
  })
})

describe("bench work", () => {
  it("counts a run's Effect operations, fibers and allocated bytes per metric call", async () => {
    const row = await Work.measureWork("2x16", 1, 200)
    expect(row.metricCalls).toBeGreaterThan(150)
    expect(row.metricCalls).toBeLessThanOrEqual(200)
    // an evaluation of one example alone is several operations; a run forks
    // fibers for its proposals; every call allocates its outcome at least
    expect(row.opsPerCall).toBeGreaterThan(5)
    expect(row.fibersPerCall).toBeGreaterThan(0)
    expect(row.bytesPerCall).toBeGreaterThan(1_000)
  }, 60_000)

  it("--telemetry off: the same run without the observer's events does less work", async () => {
    // the fewest of five counts each, taken in turns: a call slowed past a millisecond by the
    // machine runs its evaluation another way, with more operations (counts move by about 1 %,
    // and by up to 10 % on a loaded machine, where a whole run can take the slower way)
    const rows: Array<Work.WorkRow> = []
    for (let i = 0; i < 5; i++) {
      rows.push(await Work.measureWork("1x32", 1, 300, true))
      rows.push(await Work.measureWork("1x32", 1, 300, false))
    }
    const least = (telemetry: boolean) => {
      const mine = rows.filter((r) => r.telemetry === telemetry)
      return { ...mine[0]!, opsPerCall: Math.min(...mine.map((r) => r.opsPerCall)) }
    }
    const on = least(true)
    const off = least(false)
    expect(off.telemetry).toBe(false)
    // the same run: telemetry changes nothing the search does
    expect(off.metricCalls).toBe(on.metricCalls)
    // (about 10 % fewer here)
    expect(off.opsPerCall).toBeLessThan(on.opsPerCall * 0.97)
  }, 60_000)
})

describe("bench criticalPath", () => {
  it("counts the time no call covers, gaps between calls and after the last", async () => {
    const { idleOf } = await import("../bench/criticalPath.js")
    const calls = [
      { kind: "task" as const, start: 2, end: 5 },
      { kind: "model" as const, start: 4, end: 9 },
      { kind: "task" as const, start: 12, end: 13 }
    ]
    // 0-2, 9-12 and 13-20
    expect(idleOf(calls, 20)).toBe(12)
    expect(idleOf([], 7)).toBe(7)
  })

  it("reads a run's timeline to the end: steps, their outcomes, and the bounds of speculating past rejections", async () => {
    const { measure } = await import("../bench/criticalPath.js")
    const row = await measure({ components: 1, keywordsPerComponent: 6, trainSize: 12, valSize: 6, testSize: 10, learnPermille: 500 }, 80, 0, {
      taskMs: 1,
      modelMs: 2
    })
    expect(row.steps).toBeGreaterThan(0)
    expect(row.rejectedSteps + row.acceptedSteps).toBeLessThanOrEqual(row.steps)
    expect(row.idleMs).toBeGreaterThanOrEqual(0)
    expect(row.idleMs).toBeLessThanOrEqual(row.wallMs)
    expect(row.speculationBoundMs).toBeLessThanOrEqual(row.wallMs)
    expect(row.speculationWasteCalls).toBeLessThanOrEqual(80)
    expect(row.afterRejection.rejected).toBeLessThanOrEqual(row.afterRejection.steps)
  }, 60_000)
})
