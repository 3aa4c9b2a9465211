import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Gepa from "../src/Gepa.js"
import * as RunDir from "../src/RunDir.js"
import * as RunStore from "../src/RunStore.js"
import type * as State from "../src/State.js"
import * as StopCondition from "../src/StopCondition.js"
import * as Toy from "./fixtures/toy.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"

const tmpDir = () => makeTmpDir("gepa-runstore-")

const config = <T>(adapter: Gepa.Config<Toy.Example, T, string>["adapter"] & object) => ({
  ...Toy.runConfig(adapter),
  maxMetricCalls: 300,
  parallelProposals: 1
})

const lines = (file: string) => fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0) : []

describe("RunStore", () => {
  it.effect("none keeps nothing; every member is there", () =>
    Effect.gen(function*() {
      const store = RunStore.none<string>()
      assert.isTrue(Option.isNone(yield* store.load))
      assert.isTrue(Option.isNone(store.cache))
      assert.isFalse(store.durable)
      assert.isFalse(yield* store.stopRequested)
      expect(yield* store.unaccounted).toEqual({ lost: 0, owed: new Map() })
    }))

  it.effect("layerMemory: a run stopped early resumes from the memory and ends as the uninterrupted run", () =>
    Effect.gen(function*() {
      const full = yield* Effect.flatMap(Toy.makeAdapter(), ({ adapter }) => Gepa.optimize(config(adapter))).pipe(
        Effect.provide(RunStore.layerNone)
      )
      const { adapter } = yield* Toy.makeAdapter()
      // at a step's end: the toy's two components plan steps of six proposals (three rounds), and a cap inside one cuts it short
      const first = yield* Gepa.optimize({ ...config(adapter), stop: StopCondition.maxIterations(6) })
      expect(first.iterations).toBe(6)
      const memory = yield* Ref.get(yield* RunStore.MemoryRef)
      expect(Option.map(memory.state, (s) => s.iteration)).toEqual(Option.some(6))
      expect(Option.isSome(memory.finished)).toBe(true)
      const resumed = yield* Gepa.optimize(config(adapter))
      expect(resumed.candidates).toEqual(full.candidates)
      expect(resumed.iterations).toBe(full.iterations)
    }).pipe(Effect.provide(RunStore.layerMemory)))

  it.effect("RunDir.layer: runs through the service use the directory and resume from it", () => {
    const dir = tmpDir()
    return Effect.gen(function*() {
      const { adapter } = yield* Toy.makeAdapter()
      yield* Gepa.optimize({ ...config(adapter), stop: StopCondition.maxIterations(2) })
      const saved = Option.getOrThrow(yield* RunDir.readState(dir))
      expect(saved.iteration).toBe(2)
      const resumed = yield* Gepa.optimize({ ...config(adapter), stop: StopCondition.maxIterations(4) })
      expect(resumed.iterations).toBe(4)
    }).pipe(Effect.provide(RunDir.layer(dir)))
  })
})

describe("RunDir saves write what changed", () => {
  it.effect("a long run appends to the journal; snapshots are rare; the state read back is the run's", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter } = yield* Toy.makeAdapter()
      const saved: Array<State.GepaState> = []
      const result = yield* Gepa.optimize({
        ...config(adapter),
        // a save each time the loop waits for a result: one proposal per step waits often
        proposalsPerStep: 1,
        store: Effect.map(RunDir.make<string>(dir), (store) => ({
          ...store,
          save: (state: State.GepaState) => Effect.zipRight(store.save(state), Effect.sync(() => saved.push(state)))
        }))
      })
      assert.isAbove(saved.length, 10)
      const journal = lines(path.join(dir, RunDir.FILES.journal))
      const previous = lines(path.join(dir, RunDir.FILES.prevJournal))
      // the saves since the snapshot before the current one are journal lines (a snapshot is
      // written when the journal outgrows the current one)
      assert.isAbove(journal.length + previous.length, 4)
      expect(Option.getOrThrow(yield* RunDir.readState(dir))).toEqual(result.state)
    }))

  it.scoped("a journal line cut by a crash: the load continues from the line before it", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter } = yield* Toy.makeAdapter()
      const saved: Array<State.GepaState> = []
      yield* Gepa.optimize({
        ...config(adapter),
        stop: StopCondition.maxIterations(8),
        store: Effect.map(RunDir.make<string>(dir), (store) => ({
          ...store,
          save: (state: State.GepaState) => Effect.zipRight(store.save(state), Effect.sync(() => saved.push(state)))
        }))
      })
      // the run's saves again, in a new directory, until the last one is a journal line
      const again = tmpDir()
      const file = path.join(again, RunDir.FILES.journal)
      let n = 0
      yield* Effect.scoped(Effect.gen(function*() {
        const writer = yield* RunDir.make<string>(again)
        yield* writer.load
        while (n < saved.length && (n < 3 || lines(file).length === 0)) yield* writer.save(saved[n++]!)
      }))
      assert.isAbove(lines(file).length, 0)
      const text = fs.readFileSync(file, "utf8")
      fs.writeFileSync(file, text.slice(0, text.length - 5))
      const store = yield* RunDir.make<string>(again)
      const loaded = Option.getOrThrow(yield* store.load)
      expect(loaded).toEqual(saved[n - 2])
      // the cut line is gone: the next save appends after the line it continued from
      expect(text.startsWith(fs.readFileSync(file, "utf8"))).toBe(true)
      yield* store.save(saved[n - 1]!)
      expect(Option.getOrThrow(yield* RunDir.readState(again))).toEqual(saved[n - 1])
    }))

  it.scoped("a folder saved by 0.2 (whole state in gepa_state.json) resumes, and the next save starts a journal", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter } = yield* Toy.makeAdapter()
      const first = yield* Gepa.optimize({ ...config(adapter), stop: StopCondition.maxIterations(3) })
      // the 0.2 layout: one state file with everything in it, no candidate log, no journal
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(path.join(dir, RunDir.FILES.state), JSON.stringify({ schemaVersion: 1, savedAt: "x", state: first.state }))
      const store = yield* RunDir.make<string>(dir)
      expect(Option.getOrThrow(yield* store.load)).toEqual(first.state)
      const next = { ...first.state, iteration: first.state.iteration + 1 }
      yield* store.save(next)
      yield* store.save({ ...next, iteration: next.iteration + 1 })
      yield* store.save({ ...next, iteration: next.iteration + 2 })
      expect(Option.getOrThrow(yield* RunDir.readState(dir)).iteration).toBe(next.iteration + 2)
      assert.isAbove(lines(path.join(dir, RunDir.FILES.journal)).length, 0)
    }))
})
