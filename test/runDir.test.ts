import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Adapter from "../src/Adapter.js"
import * as Candidate from "../src/Candidate.js"
import * as CandidateSelector from "../src/CandidateSelector.js"
import * as Fingerprint from "../src/Fingerprint.js"
import * as Gepa from "../src/Gepa.js"
import * as RunDir from "../src/RunDir.js"
import type { Rng } from "../src/Rng.js"
import * as State from "../src/State.js"
import * as StopCondition from "../src/StopCondition.js"
import { crashConfig, instrument, trainset as crashTrainset, valset as crashValset } from "./fixtures/crashChild.js"
import { light } from "./fixtures/repeats.js"
import * as Toy from "./fixtures/toy.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"
import { onePerStep } from "./fixtures/strategy.js"

const tmpDir = () => makeTmpDir("gepa-rundir-")

const trainset = Toy.makeExamples(30)
const valset = Toy.makeExamples(12, 100)

/** The toy adapter, counting evaluations per (candidate, example, traces). */
const counted = Effect.gen(function*() {
  const toy = yield* Toy.makeAdapter()
  const calls = new Map<string, number>()
  // traces stored with the results: a proposal re-launched after a pause or a crash takes its
  // parent's traced minibatch from the run directory (without, it is paid again)
  const adapter = instrument(Adapter.withStoredTraces(toy.adapter), (line) => calls.set(line, (calls.get(line) ?? 0) + 1))
  return { adapter, calls, total: () => [...calls.values()].reduce((a, b) => a + b, 0) }
})

const baseConfig = <T>(adapter: Gepa.Config<Toy.Example, T, string>["adapter"] & object) => ({
  seedCandidate: Toy.seedCandidate,
  trainset,
  valset,
  adapter,
  reflectionModel: Toy.reflectionModel(),
  maxMetricCalls: 200,
  merge: true,
  minibatchSize: 3,
  seed: 3,
  // the GEPA loop: these tests stop and resume at given iterations (the toy's two components default to steps of two)
  ...onePerStep
})

const comparable = (r: Gepa.OptimizeResult<string>) => ({
  candidates: r.candidates,
  parents: r.parents,
  valScores: r.valScores,
  bestIndex: r.bestIndex,
  totalMetricCalls: r.totalMetricCalls,
  discoveryBudget: r.discoveryBudget,
  iterations: r.iterations
})

const someState = Effect.gen(function*() {
  const { adapter } = yield* counted
  const result = yield* Gepa.optimize({ ...baseConfig(adapter), maxMetricCalls: 60 })
  return result.state
})

/** A state of a long run: many candidates with long texts and a big validation set. */
const bigState = (candidates: number, valSize: number, textSize: number): State.GepaState => {
  const scores = (c: number) => Object.fromEntries(Array.from({ length: valSize }, (_, i) => [`v${i}`, ((c * 7 + i) % 10) / 10]))
  const text = (c: number, k: string) => `${k} ${c} `.padEnd(textSize, "lorem ipsum ")
  let state = Either.getOrThrow(State.initial({
    seed: 1,
    seedCandidate: { a: text(0, "a"), b: text(0, "b") },
    frontierType: "instance",
    valset: { scores: scores(0) },
    metricCalls: valSize
  }))
  for (let c = 1; c < candidates; c++) {
    const [next] = Either.getOrThrow(State.addCandidate(state, {
      candidate: { a: text(c, "a"), b: text(c, "b") },
      parents: [c - 1],
      valset: { scores: scores(c) },
      discoveryBudget: c * valSize
    }))
    state = {
      ...next,
      iteration: c,
      trace: [...next.trace, { iteration: c, kind: "reflective", parents: [c - 1], outcome: "accepted", candidate: c, metricCalls: c * valSize }]
    }
  }
  return state
}

/** The first `n` candidates of a state built by `bigState`, as the state was when it had them. */
const slice = (state: State.GepaState, n: number): State.GepaState => {
  let out = Either.getOrThrow(State.initial({
    seed: 1,
    seedCandidate: state.candidates[0]!,
    frontierType: "instance",
    valset: { scores: state.valScores[0]! },
    metricCalls: state.valCoverage[0]!
  }))
  for (let c = 1; c < n; c++) {
    const [next] = Either.getOrThrow(State.addCandidate(out, {
      candidate: state.candidates[c]!,
      parents: state.parents[c]!,
      valset: { scores: state.valScores[c]! },
      discoveryBudget: state.discoveryBudget[c]!
    }))
    out = { ...next, iteration: c, trace: state.trace.slice(0, c) }
  }
  return out
}

describe("RunDir", () => {
  it.scoped("save/load round trip, atomically, without temp files left", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const state = yield* someState
      const store = yield* RunDir.make<string>(dir)
      assert.isTrue(Option.isNone(yield* store.load))
      yield* store.save(state)
      yield* store.save({ ...state, iteration: state.iteration + 1 })
      const loaded = yield* store.load
      expect(Option.getOrThrow(loaded)).toEqual({ ...state, iteration: state.iteration + 1 })
      const files = fs.readdirSync(dir).sort()
      expect(files.filter((f) => f.includes("tmp"))).toEqual([])
      expect(files).toEqual(expect.arrayContaining(["gepa_state.json", "gepa_state.prev.json", "best_candidate.json", "gepa.lock"]))
      const prev = JSON.parse(fs.readFileSync(path.join(dir, "gepa_state.prev.json"), "utf8")) as RunDir.SavedState
      expect(prev.schemaVersion).toBe(State.SCHEMA_VERSION)
      expect((prev.state as { iteration: number }).iteration).toBe(state.iteration)
      const best = JSON.parse(fs.readFileSync(path.join(dir, "best_candidate.json"), "utf8")) as { candidate: unknown }
      expect(best.candidate).toEqual(state.candidates[State.bestIndex(state)])
    }))

  it.scoped("a large state round-trips; each save appends only the new candidates", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const state = bigState(60, 200, 500)
      const store = yield* RunDir.make<string>(dir)
      yield* store.load
      const early = slice(state, 40)
      yield* store.save(early)
      const log = path.join(dir, RunDir.FILES.candidates)
      const lines = () => fs.readFileSync(log, "utf8").split("\n").filter((l) => l.length > 0).length
      expect(lines()).toBe(40)
      const sizeAfterEarly = fs.statSync(log).size
      yield* store.save({ ...early, iteration: early.iteration + 1 })
      // nothing new: the candidate log is untouched, only the small head is rewritten
      expect(fs.statSync(log).size).toBe(sizeAfterEarly)
      yield* store.save(state)
      expect(lines()).toBe(60)
      const head = JSON.parse(fs.readFileSync(path.join(dir, RunDir.FILES.state), "utf8")) as RunDir.SavedState
      expect(head.candidateCount).toBe(60)
      expect((head.state as State.GepaState).valScores).toEqual([])
      expect(Option.getOrThrow(yield* RunDir.readState(dir))).toEqual(state)
    }))

  it.scoped("candidate lines past the saved count (a crash between append and save) are dropped", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const state = bigState(8, 20, 50)
      const five = slice(state, 5)
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* RunDir.make<string>(dir)
        yield* store.load
        yield* store.save(five)
      }))
      // a crashed process appended two candidates, then died before saving the state
      const log = path.join(dir, RunDir.FILES.candidates)
      const stale = (i: number) => JSON.stringify({ i, candidate: { a: "stale", b: "stale" }, valScores: {}, objectiveScores: {} })
      fs.appendFileSync(log, `${stale(5)}\n${stale(6)}\n`)
      const store = yield* RunDir.make<string>(dir)
      expect(Option.getOrThrow(yield* store.load)).toEqual(five)
      expect(fs.readFileSync(log, "utf8").split("\n").filter((l) => l.length > 0).length).toBe(5)
      yield* store.save(slice(state, 6))
      const reloaded = Option.getOrThrow(yield* RunDir.readState(dir))
      expect(reloaded.candidates[5]).toEqual(state.candidates[5])
      expect(reloaded.candidates.length).toBe(6)
    }))

  it.scoped("a damaged candidate log falls back to the generation it still covers", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const state = bigState(6, 20, 50)
      const four = slice(state, 4)
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* RunDir.make<string>(dir)
        yield* store.load
        yield* store.save(four)
        yield* store.save(state)
      }))
      // the last candidate line is garbled: the current state (6 lines) is unreadable, the previous (4) is not
      const log = path.join(dir, RunDir.FILES.candidates)
      const kept = fs.readFileSync(log, "utf8").split("\n").filter((l) => l.length > 0)
      fs.writeFileSync(log, [...kept.slice(0, 5), "{garbled"].join("\n") + "\n")
      const store = yield* RunDir.make<string>(dir)
      expect(Option.getOrThrow(yield* store.load)).toEqual(four)
    }))

  it.scoped("two proposals that paid for the same pair each find their own result after a reopen", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const key = { candidateHash: "c1", split: "train" as const, id: "e1", contentHash: "h1" }
      // iteration 6 ran beside iteration 5 (it sees up to 4): both paid for the pair, 5's result is
      // the one every later proposal sees, and 6's stays 6's own
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* RunDir.make<string>(dir)
        yield* store.load
        yield* Option.getOrThrow(store.cache).set(key, { output: "late", score: 0.25, iteration: 6 })
        yield* Option.getOrThrow(store.cache).set(key, { output: "early", score: 0.5, iteration: 5 })
      }))
      const store = yield* RunDir.make<string>(dir)
      yield* store.load
      const cache = Option.getOrThrow(store.cache)
      // 6, re-launched after a crash, cannot see 5's result but finds its own
      const own = Option.getOrThrow(yield* cache.get({ ...key, requestedBy: 6, visibleUpTo: 4 }))
      expect([own.output, own.score]).toEqual(["late", 0.25])
      // a later proposal that sees both gets the earlier payer's result
      expect(Option.getOrThrow(yield* cache.get({ ...key, requestedBy: 8, visibleUpTo: 7 })).output).toBe("early")
      // one that sees neither gets nothing
      expect(Option.isNone(yield* cache.get({ ...key, requestedBy: 7, visibleUpTo: 4 }))).toBe(true)
    }))

  it.scoped("a corrupt state file falls back to the previous generation and is kept aside", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const state = yield* someState
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* RunDir.make<string>(dir)
        yield* store.save(state)
        yield* store.save({ ...state, iteration: state.iteration + 1 })
      }))
      const file = path.join(dir, "gepa_state.json")
      const text = fs.readFileSync(file, "utf8")
      fs.writeFileSync(file, text.slice(0, text.length / 2))
      const store = yield* RunDir.make<string>(dir)
      const loaded = Option.getOrThrow(yield* store.load)
      // the previous snapshot's journal leads up to the damaged one: the last save is not lost
      expect(loaded).toEqual({ ...state, iteration: state.iteration + 1 })
      expect(fs.readdirSync(dir).some((f) => f.startsWith("gepa_state.corrupt-"))).toBe(true)
      expect(fs.existsSync(file)).toBe(false)
    }))

  it.effect("a corrupt snapshot falls back at most one save (maxIterations 6), and the resumed run ends as the uninterrupted one", () =>
    Effect.gen(function*() {
      const { adapter } = yield* counted
      const config = { ...baseConfig(adapter), maxMetricCalls: 400, stop: StopCondition.maxIterations(6) }
      const whole = yield* Gepa.optimize(config)
      const dir = tmpDir()
      const saves: Array<number> = []
      yield* Gepa.optimize({
        ...config,
        runDir: dir,
        onEvent: (e) => Effect.sync(() => e._tag === "StateSaved" && saves.push(e.iteration))
      })
      expect(saves.at(-1)).toBe(6)
      const file = path.join(dir, RunDir.FILES.state)
      const text = fs.readFileSync(file, "utf8")
      fs.writeFileSync(file, text.slice(0, text.length / 2))
      const loaded = Option.getOrThrow(yield* RunDir.readState(dir).pipe(Effect.either, Effect.map(Either.getOrThrow)))
      // at most one save back: the previous save's iteration, or the last one's
      expect(loaded.iteration).toBeGreaterThanOrEqual(saves.at(-2)!)
      expect(loaded.iteration).toBe(6)
      fs.rmSync(path.join(dir, RunDir.FILES.result))
      const resumed = yield* Gepa.optimize({ ...config, runDir: dir })
      expect(resumed.iterations).toBe(6)
      expect(comparable(resumed)).toEqual(comparable(whole))
    }))

  it.scoped("both state files corrupt: PersistenceError naming the file", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      fs.writeFileSync(path.join(dir, "gepa_state.json"), "{\"schemaVersion\": 1, \"state\": {\"cand")
      fs.writeFileSync(path.join(dir, "gepa_state.prev.json"), JSON.stringify({ schemaVersion: 1, savedAt: "x", state: { iteration: 1 } }))
      const store = yield* RunDir.make<string>(dir)
      const error = yield* Effect.flip(store.load)
      expect(error._tag).toBe("PersistenceError")
      expect(error.path).toBe(path.join(dir, "gepa_state.json"))
      expect(error.message).toContain("not valid JSON")
      expect(error.message).toContain("gepa_state.prev.json")
    }))

  it.scoped("schema versions: migrations for older, a clear error for newer", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const state = yield* someState
      const encoded = { ...state, schemaVersion: 0, renamedField: true }
      fs.writeFileSync(path.join(dir, "gepa_state.json"), JSON.stringify({ schemaVersion: 0, savedAt: "x", state: encoded }))
      const noMigration = yield* Effect.scoped(Effect.flatMap(RunDir.make<string>(dir), (s) => Effect.flip(s.load)))
      expect(noMigration.message).toContain("no migration from version 0")
      const migrated = yield* Effect.scoped(Effect.flatMap(
        RunDir.make<string>(dir, {
          migrations: {
            0: (old) => {
              const { renamedField: _, ...rest } = old as Record<string, unknown>
              return { ...rest, schemaVersion: 1 }
            }
          }
        }),
        (s) => s.load
      ))
      expect(Option.getOrThrow(migrated)).toEqual(state)
      fs.writeFileSync(path.join(dir, "gepa_state.json"), JSON.stringify({ schemaVersion: 99, savedAt: "x", state: {} }))
      const newer = yield* Effect.scoped(Effect.flatMap(RunDir.make<string>(dir), (s) => Effect.flip(s.load)))
      expect(newer.message).toContain("version 99")
      expect(newer.message).toContain("newer")
    }))

  it.scoped("the lock: a live holder is named, a stale one is taken over, released on scope close", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      yield* Effect.scoped(Effect.gen(function*() {
        yield* RunDir.make<string>(dir)
        const error = yield* Effect.flip(RunDir.make<string>(dir))
        expect(error._tag).toBe("PersistenceError")
        expect(error.message).toContain(`process ${process.pid}`)
        expect(error.message).toContain(os.hostname())
      }))
      expect(fs.existsSync(path.join(dir, "gepa.lock"))).toBe(false)
      // a pid that is certainly gone: a child that has exited
      const dead = spawnSync(process.execPath, ["-e", "0"]).pid!
      fs.writeFileSync(path.join(dir, "gepa.lock"), JSON.stringify({ pid: dead, hostname: os.hostname(), startedAt: "then" }))
      yield* RunDir.make<string>(dir)
      const lock = JSON.parse(fs.readFileSync(path.join(dir, "gepa.lock"), "utf8")) as { pid: number }
      expect(lock.pid).toBe(process.pid)
    }))

  it.effect("an unwritable run directory fails before any evaluation", () =>
    Effect.gen(function*() {
      const base = tmpDir()
      fs.writeFileSync(path.join(base, "file"), "")
      const { adapter, total } = yield* counted
      const bad = path.join(base, "file", "run")
      const error = yield* Effect.flip(Gepa.optimize({ ...baseConfig(adapter), runDir: bad }))
      expect(error._tag).toBe("PersistenceError")
      expect(error.message).toContain(bad)
      expect(total()).toBe(0)
    }))

  it.effect("the stop file stops the run after the current iteration; resuming removes it and finishes", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const full = yield* Effect.flatMap(counted, ({ adapter }) => Gepa.optimize(baseConfig(adapter)))
      const { adapter } = yield* counted
      const stopped = yield* Gepa.optimize({
        ...baseConfig(adapter),
        runDir: dir,
        onEvent: (e) => {
          if (e._tag === "IterationEnded" && e.iteration === 3) fs.writeFileSync(path.join(dir, "gepa.stop"), "")
        }
      })
      expect(stopped.stopReason).toContain("stop file")
      expect(stopped.iterations).toBe(3)
      const resumed = yield* Gepa.optimize({ ...baseConfig(adapter), runDir: dir })
      expect(comparable(resumed)).toEqual(comparable(full))
      const events = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { _tag: string })
      expect(events.filter((e) => e._tag === "OptimizationStarted")).toHaveLength(2)
      expect(JSON.stringify(events.find((e) => e._tag === "IterationEnded"))).not.toContain("candidates\":[")
      const result = JSON.parse(fs.readFileSync(path.join(dir, "result.json"), "utf8")) as { bestIndex: number }
      expect(result.bestIndex).toBe(full.bestIndex)
    }))

  it.effect("resuming with a different seed, frontier type or valset is a ResumeConflict naming the field", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter } = yield* counted
      yield* Gepa.optimize({ ...baseConfig(adapter), runDir: dir, stop: StopCondition.maxIterations(2) })
      const conflict = (
        config: { readonly seedCandidate?: Candidate.Candidate; readonly frontierType?: "objective"; readonly valset?: ReadonlyArray<Toy.Example> }
      ) => Effect.flip(Gepa.optimize({ ...baseConfig(adapter), ...config, runDir: dir }))
      const seed = yield* conflict({ seedCandidate: { ...Toy.seedCandidate, rules_a: "other" } })
      expect(seed._tag).toBe("ResumeConflict")
      expect(seed.message).toContain("seedCandidate.rules_a")
      const frontier = yield* conflict({ frontierType: "objective" })
      expect(frontier.message).toContain("frontierType")
      const val = yield* conflict({ valset: Toy.makeExamples(5, 100) })
      expect(val.message).toContain("valset")
      // stop conditions are not part of the run: changing them is fine
      const ok = yield* Gepa.optimize({ ...baseConfig(adapter), runDir: dir, stop: StopCondition.maxIterations(4) })
      expect(ok.iterations).toBe(4)
    }))

  it.effect("exact resume: stopped at iteration k and resumed equals the uninterrupted run", () =>
    Effect.gen(function*() {
      // the first two proposals start from the seed, so two lineages diverge,
      // merges happen and their state is resumed too; one proposal at a time,
      // because a stop condition lets proposals in flight finish, and the
      // resumed run then plans from a state the uninterrupted run never had
      // (a crash or a stop file resumes exactly with proposals in flight:
      // tested below and above)
      const config = <T>(adapter: Parameters<typeof baseConfig<T>>[0]) => ({
        ...baseConfig(adapter),
        maxMetricCalls: 300,
        reflectionModel: Toy.reflectionModel(1),
        seed: 0,
        parallelProposals: 1,
        candidateSelector: (state: State.GepaState, rng: Rng) => state.candidates.length <= 2 ? 0 : CandidateSelector.pareto(state, rng),
        merge: { overlapFloor: 3 }
      })
      const full = yield* Effect.flatMap(counted, ({ adapter }) => Gepa.optimize(config(adapter)))
      assert.isAbove(full.iterations, 8)
      assert.isAbove(full.candidates.length, 2)
      assert.isAbove(full.mergesAttempted, 0)
      for (const k of [1, 2, 4, 7, full.iterations - 1]) {
        const dir = tmpDir()
        const { adapter } = yield* counted
        const first = yield* Gepa.optimize({ ...config(adapter), runDir: dir, stop: StopCondition.maxIterations(k) })
        expect(first.iterations).toBe(k)
        const resumed = yield* Gepa.optimize({ ...config(adapter), runDir: dir })
        expect(comparable(resumed)).toEqual(comparable(full))
        expect(resumed.state).toEqual(full.state)
      }
    }), 60_000)

  it.effect("exact resume with steps of several proposals: stopped between steps and resumed equals the uninterrupted run", () =>
    Effect.gen(function*() {
      const config = <T>(adapter: Parameters<typeof baseConfig<T>>[0]) => ({
        ...baseConfig(adapter),
        maxMetricCalls: 300,
        reflectionModel: Toy.reflectionModel(1),
        seed: 2,
        proposalsPerStep: 3,
        proposalSelection: { topK: 2 },
        merge: { overlapFloor: 3 }
      })
      const full = yield* Effect.flatMap(counted, ({ adapter }) => Gepa.optimize(config(adapter)))
      assert.isAbove(full.iterations, 9)
      assert.isAbove(full.candidates.length, 2)
      // a condition without an iteration cap is checked between steps: the
      // first run stops at the first step boundary from k on
      for (const k of [2, 5, 9, 14]) {
        const dir = tmpDir()
        const { adapter } = yield* counted
        const after = StopCondition.fromPredicate(`after ${k}`, (s) => s.state.iteration >= k)
        const first = yield* Gepa.optimize({ ...config(adapter), runDir: dir, stop: after })
        expect(first.iterations).toBeGreaterThanOrEqual(k)
        expect(first.iterations).toBeLessThan(k + 3)
        const resumed = yield* Gepa.optimize({ ...config(adapter), runDir: dir })
        expect(comparable(resumed)).toEqual(comparable(full))
        expect(resumed.state).toEqual(full.state)
      }
    }), 60_000)

  it.effect("the persistent cache: no evaluation without traces is repeated across restarts, hits cost no budget", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter, calls, total } = yield* counted
      yield* Gepa.optimize({ ...baseConfig(adapter), runDir: dir, stop: StopCondition.maxIterations(3) })
      yield* Gepa.optimize({ ...baseConfig(adapter), runDir: dir, stop: StopCondition.maxIterations(6) })
      const last = yield* Gepa.optimize({ ...baseConfig(adapter), runDir: dir })
      const repeated = [...calls].filter(([key, n]) => key.endsWith("\tN") && n > 1)
      expect(repeated).toEqual([])
      // every metric call is an evaluation the adapter performed
      expect(last.totalMetricCalls).toBe(total())
      // and a fresh run on the same directory's cache with a new state costs nothing for the seed
      fs.rmSync(path.join(dir, "gepa_state.json"))
      fs.rmSync(path.join(dir, "gepa_state.prev.json"))
      const before = total()
      const again = yield* Gepa.optimize({ ...baseConfig(adapter), runDir: dir, stop: StopCondition.maxIterations(0) })
      expect(total()).toBe(before)
      expect(again.totalMetricCalls).toBe(0)
    }))
})

describe("RunDir crash safety", () => {
  const budget = 400
  const iterations = 25
  const child = path.join(import.meta.dirname, "fixtures", "crashChild.ts")

  /**
   * Runs the child; with `killAfter`, kills it once it has evaluated about
   * that many more examples (progress, not time, so that machine load does
   * not decide whether the kill lands mid-run).
   */
  const runChild = (dir: string, killAfter: number | undefined) =>
    new Promise<{ completed: boolean }>((resolve, reject) => {
      const p: ChildProcess = spawn(process.execPath, ["--import", "tsx", child, dir, String(budget), String(iterations)], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      let err = ""
      let timer: NodeJS.Timeout | undefined
      const logFile = path.join(dir, "evals.log")
      const logSize = () => (fs.existsSync(logFile) ? fs.statSync(logFile).size : 0)
      // a log line is about 38 bytes: 32-char hash, tab, id, tab, flag, newline
      const killAt = killAfter === undefined ? undefined : logSize() + killAfter * 38
      p.stdout!.on("data", (d: Buffer) => {
        out += d.toString()
        if (killAt !== undefined && timer === undefined && out.includes("ready")) {
          timer = setInterval(() => {
            if (logSize() >= killAt) p.kill("SIGKILL")
          }, 2)
        }
      })
      p.stderr!.on("data", (d: Buffer) => (err += d.toString()))
      p.on("error", reject)
      p.on("exit", (code, signal) => {
        if (timer !== undefined) clearInterval(timer)
        if (code === 0) resolve({ completed: true })
        else if (signal === "SIGKILL") resolve({ completed: false })
        else reject(new Error(`child exited with ${code}: ${err}`))
      })
    })

  /** a small deterministic generator for the kill points (examples evaluated before the kill) */
  const delays = (seed: number) => {
    let s = seed
    return () => {
      s = (s * 1103515245 + 12345) % 2147483648
      return 5 + (s % 150)
    }
  }

  it.effect("SIGKILL at random points: state always readable, nothing lost, nothing re-evaluated, same result", () =>
    Effect.gen(function*() {
      // the uninterrupted run, with the evaluations it made
      const baselineLog: Array<string> = []
      const baseline = yield* Effect.gen(function*() {
        const toy = yield* Toy.makeAdapter()
        return yield* Gepa.optimize(crashConfig(instrument(toy.adapter, (line) => baselineLog.push(line)), budget, iterations))
      })
      // the cache key of a log line: the candidate and the example's content, whatever the split
      const keyOf = (line: string) => {
        const [hash, exampleId] = line.split("\t")
        const example = [...crashTrainset, ...crashValset].find((e) => e.id === Number(exampleId))!
        return `${hash}\u0000${Fingerprint.exampleHash(example)}`
      }
      const countKeys = (lines: ReadonlyArray<string>) => {
        const m = new Map<string, number>()
        for (const l of lines) m.set(keyOf(l), (m.get(keyOf(l)) ?? 0) + 1)
        return m
      }
      const runOne = async (seed: number) => {
        const dir = tmpDir()
        const next = delays(seed)
        const accepted: Array<Candidate.Candidate> = []
        let kills = 0
        // per restart: the log lines written before it, and the complete cache lines per key on disk then
        const restarts: Array<{ readonly logLines: number; readonly cached: ReadonlyMap<string, number> }> = []
        const readLog = () =>
          fs.existsSync(path.join(dir, "evals.log")) ? fs.readFileSync(path.join(dir, "evals.log"), "utf8").split("\n").filter((l) => l.length > 0) : []
        for (let attempt = 0; attempt < 10; attempt++) {
          const { completed } = await runChild(dir, kills < 2 ? next() : undefined)
          if (!completed) {
            kills++
            const cached = new Map<string, number>()
            for (const line of fs.readFileSync(path.join(dir, "cache.jsonl"), "utf8").split("\n")) {
              try {
                const k = (JSON.parse(line) as { k: string }).k
                cached.set(k, (cached.get(k) ?? 0) + 1)
              } catch {
                // a line cut by the kill
              }
            }
            restarts.push({ logLines: readLog().length, cached })
          }
          const saved = await Effect.runPromise(RunDir.readState(dir))
          if (fs.existsSync(path.join(dir, "gepa_state.json"))) {
            // the current file itself must decode, not only the fallback
            const envelope = JSON.parse(fs.readFileSync(path.join(dir, "gepa_state.json"), "utf8")) as RunDir.SavedState
            assert.isTrue(Either.isRight(Schema.decodeUnknownEither(State.GepaState)(envelope.state)))
          }
          if (Option.isSome(saved)) {
            for (const c of accepted) expect(saved.value.candidates.some((x) => Candidate.equals(x, c))).toBe(true)
            accepted.splice(0, accepted.length, ...saved.value.candidates)
          }
          if (completed) break
        }
        // an evaluation cut short by a kill is lost and legitimately redone; one whose result reached
        // cache.jsonl must never run again (those with traces are not served from the cache by design:
        // this run stores no trajectories). A pair the uninterrupted run pays for n times without traces
        // (proposals side by side may each pay for it) may be paid so between a restart and the next
        // kill only n times less the untraced calls of it completed before the restart: the pair's
        // cache lines less its traced calls before the restart (each completed call wrote one line)
        const log = readLog()
        const untracedOf = (lines: ReadonlyArray<string>) => lines.filter((l) => l.endsWith("\tN"))
        const tracedOf = (lines: ReadonlyArray<string>) => lines.filter((l) => l.endsWith("\tT"))
        const allowedUntraced = countKeys(untracedOf(baselineLog))
        const repeated: Array<string> = []
        restarts.forEach(({ cached, logLines }, r) => {
          const window = log.slice(logLines, restarts[r + 1]?.logLines ?? log.length)
          const tracedBefore = countKeys(tracedOf(log.slice(0, logLines)))
          for (const [key, calls] of countKeys(untracedOf(window))) {
            const completed = Math.max(0, (cached.get(key) ?? 0) - (tracedBefore.get(key) ?? 0))
            if (completed > 0 && calls > (allowedUntraced.get(key) ?? 0) - completed) {
              repeated.push(
                `${window.find((l) => keyOf(l) === key && l.endsWith("\tN"))} after the restart at ${logLines}: ` +
                  `${calls} calls, ${completed} completed before, ${allowedUntraced.get(key) ?? 0} uninterrupted`
              )
            }
          }
        })
        const result = JSON.parse(fs.readFileSync(path.join(dir, "result.json"), "utf8")) as Gepa.OptimizeResult<string>
        const untraced = log.filter((l) => l.endsWith("\tN"))
        const redone = untraced.length - new Set(untraced).size
        console.log(
          `crash seed ${seed}: ${kills} kills, ${redone} evaluations without traces redone (in flight at a kill), ` +
            `${result.totalMetricCalls} metric calls vs ${baseline.totalMetricCalls} uninterrupted`
        )
        return { kills, repeated, result }
      }
      const runs = yield* Effect.promise(() => Promise.all((light ? [11] : [11, 22, 33]).map(runOne)))
      for (const { kills, repeated, result } of runs) {
        expect(kills).toBeGreaterThan(0)
        // no completed evaluation runs again after a kill (a proposal re-launched beside an earlier
        // one that paid for the same pair finds its own result: RunDir keeps both)
        expect(repeated, repeated.join("; ")).toEqual([])
        expect(result.candidates).toEqual(baseline.candidates)
        expect(result.parents).toEqual(baseline.parents)
        expect(result.valScores).toEqual(baseline.valScores)
        expect(result.bestIndex).toBe(baseline.bestIndex)
        expect(result.iterations).toBe(baseline.iterations)
        // evaluations of an iteration cut short are cache hits when it is replayed; they were paid
        // but never counted, so the hit is charged once and the accounting matches exactly
        expect(result.totalMetricCalls).toBe(baseline.totalMetricCalls)
      }
    }), 90_000)
})

describe("RunDir files for tools (the gepa command)", () => {
  it.effect("writes, reads and recognizes the files of a run directory", () =>
    Effect.gen(function*() {
      const dir = path.join(tmpDir(), "run")
      expect(Option.isNone(yield* RunDir.readFile(dir, RunDir.FILES.config))).toBe(true)
      expect(yield* RunDir.holdsRun(dir)).toBe(false)
      yield* RunDir.writeFile(dir, RunDir.FILES.config, `{"a": 1}\n`)
      expect(Option.getOrThrow(yield* RunDir.readFile(dir, RunDir.FILES.config))).toBe(`{"a": 1}\n`)
      expect(yield* RunDir.holdsRun(dir)).toBe(true)
      // the write left no temporary file behind
      expect(fs.readdirSync(dir)).toEqual(["config.json"])
      expect(Option.isNone(yield* RunDir.readResult(dir))).toBe(true)
      expect(Option.isNone(yield* RunDir.readState(dir))).toBe(true)
    }))

  it.effect("names the file and its first problem when a result or state file is unreadable", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      fs.writeFileSync(path.join(dir, RunDir.FILES.result), `{"bestScore": "high"}`)
      const result = yield* Effect.flip(RunDir.readResult(dir))
      expect(result.path).toBe(path.join(dir, "result.json"))
      expect(result.detail).toMatch(/^not a GEPA result: /)
      expect(result.detail).not.toContain("\n")
      fs.writeFileSync(path.join(dir, RunDir.FILES.result), `{"bestScore": `)
      expect((yield* Effect.flip(RunDir.readResult(dir))).detail).toMatch(/^not valid JSON/)
      fs.writeFileSync(path.join(dir, RunDir.FILES.state), JSON.stringify({ schemaVersion: State.SCHEMA_VERSION, savedAt: "", state: { iteration: "x" } }))
      const state = yield* Effect.flip(RunDir.readState(dir))
      expect(state.path).toBe(path.join(dir, "gepa_state.json"))
      expect(state.detail).toMatch(/^not a valid state: /)
      expect(state.detail).not.toContain("\n")
    }))
})
