/**
 * The benchmark functions. Each takes its sizes as arguments (so the test can
 * run them tiny) and returns plain data; bench/run.ts picks the sizes, prints
 * the table and writes the JSON.
 *
 * Figures are reported as ratios or growth rates where possible: the machine
 * is shared and noisy, and absolute times only mean something next to each
 * other.
 */
import { Effect, Either, Option, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as BatchSampler from "../src/BatchSampler.js"
import type { Candidate } from "../src/Candidate.js"
import * as CandidateSelector from "../src/CandidateSelector.js"
import * as EvaluationCache from "../src/EvaluationCache.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Frontier from "../src/Frontier.js"
import * as Gepa from "../src/Gepa.js"
import * as Merge from "../src/Merge.js"
import { Rng } from "../src/Rng.js"
import * as RunDir from "../src/RunDir.js"
import * as State from "../src/State.js"
import { makeTask, type TaskOptions } from "./task.js"

// ---------------------------------------------------------------- helpers

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/**
 * Median time of `fn` in ms: repeats until `minMs` of total time or
 * `maxReps`, at least `minReps` times, so fast functions get enough samples
 * and slow ones do not dominate the run.
 */
export const timeIt = (
  fn: () => unknown,
  options: { readonly minMs?: number; readonly minReps?: number; readonly maxReps?: number } = {}
): number => {
  const minMs = options.minMs ?? 100
  const minReps = options.minReps ?? 3
  const maxReps = options.maxReps ?? 200
  const samples: Array<number> = []
  const start = performance.now()
  while (samples.length < maxReps && (samples.length < minReps || performance.now() - start < minMs)) {
    const t0 = performance.now()
    fn()
    samples.push(performance.now() - t0)
  }
  return median(samples)
}

/** Least-squares fit of log t = a + b log n + c log m; returns [b, c]. */
export const fitExponents = (
  points: ReadonlyArray<{ readonly n: number; readonly m: number; readonly t: number }>
): { readonly candidates: number; readonly examples: number } => {
  const rows = points.filter((p) => p.t > 0).map((p) => [1, Math.log(p.n), Math.log(p.m), Math.log(p.t)] as const)
  // normal equations for 3 unknowns, solved by Cramer's rule
  const s = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
  const y = [0, 0, 0]
  for (const r of rows) {
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) s[i]![j]! += r[i]! * r[j]!
      y[i]! += r[i]! * r[3]
    }
  }
  const det = (m: ReadonlyArray<ReadonlyArray<number>>) =>
    m[0]![0]! * (m[1]![1]! * m[2]![2]! - m[1]![2]! * m[2]![1]!) -
    m[0]![1]! * (m[1]![0]! * m[2]![2]! - m[1]![2]! * m[2]![0]!) +
    m[0]![2]! * (m[1]![0]! * m[2]![1]! - m[1]![1]! * m[2]![0]!)
  const d = det(s)
  const withColumn = (col: number) => s.map((row, i) => row.map((v, j) => (j === col ? y[i]! : v)))
  if (Math.abs(d) < 1e-12) return { candidates: Number.NaN, examples: Number.NaN }
  return { candidates: det(withColumn(1)) / d, examples: det(withColumn(2)) / d }
}

const maxRssMb = () => process.resourceUsage().maxRSS / 1024

// ---------------------------------------------------------------- 1. engine overhead

export interface OverheadResult {
  readonly metricCalls: number
  readonly budget: number
  readonly iterations: number
  readonly accepted: number
  readonly validations: number
  readonly wallMs: number
  readonly adapterMs: number
  readonly modelMs: number
  readonly engineUsPerIteration: number
  readonly engineUsPerMetricCall: number
  /** (wall - adapter) / wall: the brief's "share outside the adapter" */
  readonly shareOutsideAdapter: number
  /** (wall - adapter - model) / wall: the engine's own share */
  readonly shareEngine: number
}

export const overheadTask: TaskOptions = { components: 4, keywordsPerComponent: 40, trainSize: 200, valSize: 200, learnPermille: 150 }

export const engineOverhead = (
  options: { readonly budget: number; readonly task?: TaskOptions; readonly chunkSize?: number }
): Promise<OverheadResult> => {
  const task = makeTask(options.task ?? overheadTask)
  let validations = 0
  const t0 = performance.now()
  return Effect.runPromise(
    Gepa.optimize({
      seedCandidate: task.seedCandidate,
      trainset: task.trainset,
      valset: task.valset,
      adapter: task.adapter,
      reflectionModel: task.reflectionModel,
      maxMetricCalls: options.budget,
      minibatchSize: 3,
      ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }),
      seed: 0,
      onEvent: (e) => {
        if (e._tag === "EvaluationStarted" && e.purpose === "validation") validations++
      }
    })
  ).then((result) => {
    const wallMs = performance.now() - t0
    const engineMs = wallMs - task.timers.adapterMs - task.timers.modelMs
    return {
      metricCalls: result.totalMetricCalls,
      budget: options.budget,
      iterations: result.iterations,
      accepted: result.acceptedProposals,
      validations,
      wallMs,
      adapterMs: task.timers.adapterMs,
      modelMs: task.timers.modelMs,
      engineUsPerIteration: (engineMs * 1000) / Math.max(1, result.iterations),
      engineUsPerMetricCall: (engineMs * 1000) / Math.max(1, result.totalMetricCalls),
      shareOutsideAdapter: (wallMs - task.timers.adapterMs) / wallMs,
      shareEngine: engineMs / wallMs
    }
  })
}

// ---------------------------------------------------------------- 2. latency x quality: bench/latencyQuality.ts

// ---------------------------------------------------------------- 3. scaling of the pure functions

/** murmur3's finalizer: a well-mixed score per (candidate, example). */
const mix = (a: number, b: number): number => {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return (h >>> 0) / 4294967296
}

/**
 * Score of candidate i on example j, in {0, 0.5, 1}: later candidates reach
 * 1 more often (5% to 20%), half of all scores are 0.5, so fronts have the
 * ties of a real run (many candidates share the best score on an example).
 */
const syntheticScore = (i: number, n: number, j: number): number => {
  const u = mix(i, j)
  const p1 = 0.05 + 0.15 * (i / Math.max(1, n))
  return u < p1 ? 1 : u < p1 + 0.5 ? 0.5 : 0
}

export const valId = (j: number) => `v${j}`

/**
 * A state with `n` candidates scored on `m` validation examples, built
 * directly (adding candidates one at a time would be quadratic to build).
 * With `fullScores: false` every candidate shares one empty score record:
 * selection, front updates and bestIndex never read past candidates' sparse
 * scores, and 5,000 x 10,000 dense records would not fit in memory.
 */
export const syntheticState = (n: number, m: number, options: { readonly fullScores: boolean }): State.GepaState => {
  const components = ["component_0", "component_1", "component_2", "component_3"]
  const best: Record<string, number> = {}
  const programs: Record<string, Array<number>> = {}
  const sums = new Float64Array(n)
  const valScores: Array<Record<string, number>> = []
  const shared: Record<string, number> = {}
  for (let i = 0; i < n; i++) valScores.push(options.fullScores ? {} : shared)
  for (let j = 0; j < m; j++) {
    const key = valId(j)
    let top = -1
    let front: Array<number> = []
    for (let i = 0; i < n; i++) {
      const s = syntheticScore(i, n, j)
      sums[i] = sums[i]! + s
      if (options.fullScores) valScores[i]![key] = s
      if (s > top) {
        top = s
        front = [i]
      } else if (s === top) front.push(i)
    }
    best[key] = top
    programs[key] = front
  }
  const candidates: Array<Candidate> = []
  for (let i = 0; i < n; i++) {
    candidates.push(Object.fromEntries(components.map((c) => [c, `[${c}] instructions of candidate ${i}`])))
  }
  return {
    schemaVersion: State.SCHEMA_VERSION,
    componentNames: components,
    frontierType: "instance",
    candidates,
    parents: candidates.map((_, i) => (i === 0 ? [] : [Math.floor(i / 2)])),
    valScores,
    objectiveScores: candidates.map(() => ({})),
    valAverages: Array.from(sums, (s) => s / m),
    valCoverage: candidates.map(() => m),
    nextComponent: candidates.map((_, i) => i % components.length),
    discoveryBudget: candidates.map((_, i) => i * 10),
    fronts: { instance: { best, programs }, objective: Frontier.emptyTable, cartesian: Frontier.emptyTable },
    iteration: n,
    metricCalls: n * m,
    fullValEvals: n,
    reflectionCalls: n,
    reflectionUsage: { inputTokens: 0, outputTokens: 0, cost: 0 },
    acceptedProposals: n - 1,
    rejectedProposals: 0,
    lastImprovementIteration: 0,
    consecutiveFailedIterations: 0,
    rng: Rng.seeded(0).snapshot(),
    sampler: BatchSampler.initial,
    merge: Merge.initial,
    trace: [],
    pending: [],
    lostMetricCalls: 0
  }
}

export interface ScalingCell {
  readonly candidates: number
  readonly examples: number
  readonly frontEntries: number
  readonly selectMs: number
  readonly updateTableMs: number
  readonly addCandidateMs: number
  readonly bestIndexMs: number
}

export interface ScalingResult {
  readonly cells: ReadonlyArray<ScalingCell>
  /** log-log slopes per function: time ~ candidates^a * examples^b */
  readonly exponents: Readonly<Record<"select" | "updateTable" | "addCandidate" | "bestIndex", { readonly candidates: number; readonly examples: number }>>
  readonly peakRssMb: number
}

export const scaling = (options: {
  readonly candidates: ReadonlyArray<number>
  readonly examples: ReadonlyArray<number>
  readonly minMs?: number
}): ScalingResult => {
  const cells: Array<ScalingCell> = []
  const timing = { minMs: options.minMs ?? 150, minReps: 3, maxReps: 100 }
  for (const n of options.candidates) {
    for (const m of options.examples) {
      const state = syntheticState(n, m, { fullScores: false })
      let frontEntries = 0
      for (const key in state.fronts.instance.programs) frontEntries += state.fronts.instance.programs[key]!.length
      const newScores: Record<string, number> = {}
      for (let j = 0; j < m; j++) newScores[valId(j)] = syntheticScore(n, n, j)
      const entries = Object.entries(newScores)
      const rng = Rng.seeded(1)
      const child = { ...state.candidates[0]!, component_0: "a new text" }
      cells.push({
        candidates: n,
        examples: m,
        frontEntries,
        // a fresh fronts object each time: the selector caches its analysis per
        // fronts (they change only when a candidate is added), and what matters
        // is the first selection after a change
        selectMs: timeIt(() => CandidateSelector.pareto({ ...state, fronts: { ...state.fronts } }, rng), timing),
        updateTableMs: timeIt(() => Frontier.updateTable(state.fronts.instance, entries, n), timing),
        addCandidateMs: timeIt(
          () => State.addCandidate(state, { candidate: child, parents: [0], valset: { scores: newScores }, discoveryBudget: 0 }),
          timing
        ),
        bestIndexMs: timeIt(() => State.bestIndex(state), timing)
      })
    }
  }
  const fit = (pick: (c: ScalingCell) => number) => fitExponents(cells.map((c) => ({ n: c.candidates, m: c.examples, t: pick(c) })))
  return {
    cells,
    exponents: {
      select: fit((c) => c.selectMs),
      updateTable: fit((c) => c.updateTableMs),
      addCandidate: fit((c) => c.addCandidateMs),
      bestIndex: fit((c) => c.bestIndexMs)
    },
    peakRssMb: maxRssMb()
  }
}

// ---------------------------------------------------------------- 4. persistence

export interface PersistenceResult {
  readonly candidates: number
  readonly examples: number
  /** which implementation was measured */
  readonly method: string
  readonly saveMs: number
  readonly loadMs: number
  /** the same save without Schema.encode (JSON.stringify of the state as is): how much of saveMs is the schema */
  readonly saveWithoutSchemaMs: number
  readonly fileMb: number
  /** the run directory's save after an iteration (head rewritten, new candidates appended) */
  readonly runDirSaveMs: number
  /** the first save of the state, writing every candidate to candidates.jsonl */
  readonly runDirFirstSaveMs: number
  /** size of candidates.jsonl */
  readonly runDirCandidatesMb: number
  readonly runDirLoadMs: number
  readonly runDirFileMb: number
  /**
   * the write-ahead budget per iteration: the reservations the engine makes
   * before an iteration's adapter calls (one for each minibatch, two blocks
   * for a validation of `examples`), each an append to reservations.jsonl
   */
  readonly runDirReserveMsPerIteration: number
  /** the save after an iteration's reservations (it flushes them: one more fdatasync than `runDirSaveMs`) */
  readonly runDirSaveWithReservationsMs: number
  readonly roundTripOk: boolean
  readonly cache: ReadonlyArray<{ readonly name: string; readonly entries: number; readonly appendPerSec: number; readonly lookupPerSec: number }>
}

const encodeState = Schema.encodeSync(State.GepaState)
const decodeState = Schema.decodeUnknownSync(State.GepaState)

/**
 * Saves and loads like a run directory would: Schema encode, JSON, and an
 * atomic write (temporary file, then rename). src/RunDir.ts did not exist
 * when this was written; see bench/README.md.
 */
export const persistence = async (options: {
  readonly candidates: number
  readonly examples: number
  readonly cacheEntries: number
  readonly reps?: number
}): Promise<PersistenceResult> => {
  const state = syntheticState(options.candidates, options.examples, { fullScores: true })
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "gepa-bench-"))
  const file = path.join(dir, "state.json")
  const reps = options.reps ?? 3
  try {
    const saves: Array<number> = []
    const rawSaves: Array<number> = []
    const loads: Array<number> = []
    let loaded: State.GepaState | undefined
    for (let k = 0; k < reps; k++) {
      const t0 = performance.now()
      const json = JSON.stringify(encodeState(state))
      await fs.writeFile(`${file}.tmp`, json)
      await fs.rename(`${file}.tmp`, file)
      saves.push(performance.now() - t0)
      const t2 = performance.now()
      await fs.writeFile(`${file}.raw.tmp`, JSON.stringify(state))
      await fs.rename(`${file}.raw.tmp`, `${file}.raw`)
      rawSaves.push(performance.now() - t2)
      const t1 = performance.now()
      loaded = decodeState(JSON.parse(await fs.readFile(file, "utf8")))
      loads.push(performance.now() - t1)
    }
    const { size } = await fs.stat(file)
    const roundTripOk = loaded !== undefined &&
      loaded.candidates.length === state.candidates.length &&
      State.bestIndex(loaded) === State.bestIndex(state) &&
      JSON.stringify(loaded.fronts.instance.best) === JSON.stringify(state.fronts.instance.best)
    // the run directory as the engine uses it: atomic save with the previous
    // generation kept, fsyncs, best-candidate file; load decodes and validates
    const runDirTimes = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* RunDir.make<string>(path.join(dir, "run"))
      yield* store.load
      // the first save writes every candidate to candidates.jsonl; later
      // saves (one per iteration) append only new candidates and rewrite the head
      const t0 = performance.now()
      yield* store.save(state)
      const firstSave = performance.now() - t0
      const saves: Array<number> = []
      for (let k = 0; k < reps; k++) {
        const t1 = performance.now()
        yield* store.save({ ...state, iteration: state.iteration + k + 1 })
        saves.push(performance.now() - t1)
      }
      const reserves: Array<number> = []
      const savesAfterReserves: Array<number> = []
      for (let k = 0; k < Math.max(reps, 10); k++) {
        const iteration = state.iteration + reps + k + 1
        const t2 = performance.now()
        yield* store.reserve({ iteration, calls: 3 })
        yield* store.reserve({ iteration, calls: 3 })
        for (let b = 0; b < 2; b++) yield* store.reserve({ iteration, calls: Math.ceil(options.examples / 2) })
        reserves.push(performance.now() - t2)
        const t3 = performance.now()
        yield* store.save({ ...state, iteration })
        savesAfterReserves.push(performance.now() - t3)
      }
      const cache = yield* cacheThroughputEffect("RunDir cache (cache.jsonl)", Option.getOrThrow(store.cache), options.cacheEntries)
      return { saves, firstSave, cache, reserves, savesAfterReserves }
    })))
    const runDirLoads: Array<number> = []
    for (let k = 0; k < reps; k++) {
      const t0 = performance.now()
      const read = await Effect.runPromise(RunDir.readState(path.join(dir, "run")))
      runDirLoads.push(performance.now() - t0)
      if (read._tag !== "Some" || read.value.candidates.length !== state.candidates.length) throw new Error("RunDir load failed")
    }
    const runDirSize = (await fs.stat(path.join(dir, "run", RunDir.FILES.state))).size
    return {
      candidates: options.candidates,
      examples: options.examples,
      method:
        "RunDir.save (candidates appended once to candidates.jsonl; head written to a temp file, fsynced, renamed, previous generation kept) and RunDir.readState (JSON.parse + Schema.decode)",
      runDirSaveMs: median(runDirTimes.saves),
      runDirReserveMsPerIteration: median(runDirTimes.reserves),
      runDirSaveWithReservationsMs: median(runDirTimes.savesAfterReserves),
      runDirFirstSaveMs: runDirTimes.firstSave,
      runDirLoadMs: median(runDirLoads),
      runDirFileMb: runDirSize / 1024 / 1024,
      runDirCandidatesMb: (await fs.stat(path.join(dir, "run", RunDir.FILES.candidates))).size / 1024 / 1024,
      saveMs: median(saves),
      loadMs: median(loads),
      saveWithoutSchemaMs: median(rawSaves),
      fileMb: size / 1024 / 1024,
      roundTripOk,
      cache: [await cacheThroughput("EvaluationCache.memory", EvaluationCache.memory<string>(), options.cacheEntries), runDirTimes.cache]
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

const cacheThroughputEffect = (name: string, cache: EvaluationCache.EvaluationCache<string>, entries: number) =>
  Effect.promise(() => cacheThroughput(name, cache, entries))

const cacheThroughput = async (name: string, cache: EvaluationCache.EvaluationCache<string>, entries: number) => {
  const keys = Array.from({ length: entries }, (_, i): EvaluationCache.CacheKey => ({
    candidateHash: (Math.imul(i >>> 6, 2654435761) >>> 0).toString(16).padStart(32, "0"),
    split: i % 2 === 0 ? "train" : "val",
    id: String(i & 63)
  }))
  const t0 = performance.now()
  await Effect.runPromise(Effect.forEach(keys, (key, i) => cache.set(key, { output: "out", score: i % 3 === 0 ? 1 : 0 }), { discard: true }))
  const appendMs = performance.now() - t0
  const t1 = performance.now()
  const hits = await Effect.runPromise(Effect.reduce(keys, 0, (n, key) => Effect.map(cache.get(key), (o) => (o._tag === "Some" ? n + 1 : n))))
  const lookupMs = performance.now() - t1
  if (hits !== entries) throw new Error(`${name}: ${hits} of ${entries} lookups hit`)
  return { name, entries, appendPerSec: entries / (appendMs / 1000), lookupPerSec: entries / (lookupMs / 1000) }
}

// ---------------------------------------------------------------- 5. fault injection

export interface FaultRow {
  readonly label: string
  readonly failureRate: number
  readonly hangRate: number
  readonly runs: number
  readonly completed: number
  readonly budget: number
  /** the most metric calls any run recorded */
  readonly maxMetricCalls: number
  /** the most examples any run handed to the adapter (failed and hung ones included) */
  readonly maxAdapterExamples: number
  readonly budgetOk: boolean
  /** mean over runs of (true best score / fault-free true best score, same seed) */
  readonly relativeBestScore: number
  readonly injected: { readonly failures: number; readonly hangs: number }
  readonly errors: ReadonlyArray<string>
}

export const faults = async (options: {
  readonly budget: number
  readonly seeds: number
  readonly trainSize: number
  readonly valSize: number
  readonly failureRates: ReadonlyArray<number>
  readonly hangRate: number
  readonly latencyMs: number
  readonly timeoutMs: number
}): Promise<ReadonlyArray<FaultRow>> => {
  const settings = [
    { label: "fault-free", failureRate: 0, hangRate: 0 },
    ...options.failureRates.map((f) => ({
      label: `${Math.round(f * 100)}% fail + ${Math.round(options.hangRate * 100)}% hang`,
      failureRate: f,
      hangRate: options.hangRate
    }))
  ]
  const reference = new Map<number, number>()
  const rows: Array<FaultRow> = []
  for (const s of settings) {
    let completed = 0
    let maxMetricCalls = 0
    let maxAdapterExamples = 0
    const relative: Array<number> = []
    const errors: Array<string> = []
    const injected = { failures: 0, hangs: 0 }
    for (let seed = 0; seed < options.seeds; seed++) {
      const task = makeTask({ components: 2, keywordsPerComponent: 6, trainSize: options.trainSize, valSize: options.valSize, learnPermille: 1000 })
      const faulty = FaultInjection.adapter(task.adapter, {
        failureRate: s.failureRate,
        hangRate: s.hangRate,
        latency: `${options.latencyMs} millis`,
        jitter: `${options.latencyMs} millis`,
        seed: 100 + seed
      })
      let recorded = 0
      const outcome = await Effect.runPromise(Effect.either(Gepa.optimize({
        seedCandidate: task.seedCandidate,
        trainset: task.trainset,
        valset: task.valset,
        adapter: faulty.adapter,
        reflectionModel: task.reflectionModel,
        maxMetricCalls: options.budget,
        evaluationTimeout: `${options.timeoutMs} millis`,
        maxConcurrency: 8,
        seed,
        onEvent: (e) => {
          if (e._tag === "BudgetUpdated") recorded = Math.max(recorded, e.metricCalls)
        }
      })))
      injected.failures += faulty.stats.failures
      injected.hangs += faulty.stats.hangs
      maxAdapterExamples = Math.max(maxAdapterExamples, faulty.stats.calls)
      if (Either.isRight(outcome)) {
        completed++
        maxMetricCalls = Math.max(maxMetricCalls, outcome.right.totalMetricCalls, recorded)
        const score = task.trueScore(outcome.right.bestCandidate)
        if (s.failureRate === 0 && s.hangRate === 0) reference.set(seed, score)
        const ref = reference.get(seed)
        if (ref !== undefined && ref > 0) relative.push(score / ref)
      } else {
        maxMetricCalls = Math.max(maxMetricCalls, recorded)
        errors.push(`seed ${seed}: ${outcome.left._tag}`)
      }
    }
    rows.push({
      ...s,
      runs: options.seeds,
      completed,
      budget: options.budget,
      maxMetricCalls,
      maxAdapterExamples,
      budgetOk: maxMetricCalls <= options.budget && maxAdapterExamples <= options.budget,
      relativeBestScore: relative.length === 0 ? Number.NaN : relative.reduce((a, b) => a + b, 0) / relative.length,
      injected,
      errors
    })
  }
  return rows
}
