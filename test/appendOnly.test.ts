import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { makeTask } from "../bench/task.js"
import type { GepaEvent } from "../src/Event.js"
import * as CandidateSelector from "../src/CandidateSelector.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Gepa from "../src/Gepa.js"
import type * as State from "../src/State.js"
import * as AppendOnly from "../src/internal/engine/appendOnly.js"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Toy from "./fixtures/toy.js"
import { tmpDir } from "./fixtures/tmp.js"

describe("appendOnly", () => {
  it("appends in place only to arrays its owner made and did not seal; a sealed or foreign array is copied once", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("append", "seal", "foreign"), { maxLength: 40 }), (ops) => {
        const owner = AppendOnly.makeOwner()
        let current: ReadonlyArray<number> = []
        // every array handed out, with the length it had then: a sealed one must never change
        const sealed: Array<readonly [ReadonlyArray<number>, number]> = []
        let n = 0
        for (const op of ops) {
          if (op === "append") {
            const before = current
            const owned = owner.owned.has(before)
            current = AppendOnly.append(owner, current, n++)
            assert.strictEqual(current === before, owned)
          } else if (op === "seal") {
            AppendOnly.seal(owner)
            sealed.push([current, current.length])
          } else {
            current = [...current]
            sealed.push([current, current.length])
          }
        }
        for (const [array, length] of sealed) assert.strictEqual(array.length, length)
        assert.deepStrictEqual(current, Array.from({ length: n }, (_, i) => i))
      })
    )
  })

  it("set changes an owned array in place; a released or foreign one is copied once, and never changes", () => {
    const owner = AppendOnly.makeOwner()
    const foreign: ReadonlyArray<number> = [0, 0, 0]
    const owned = AppendOnly.set(owner, foreign, 1, 5)
    assert.deepStrictEqual([foreign, owned], [[0, 0, 0], [0, 5, 0]])
    assert.strictEqual(AppendOnly.set(owner, owned, 2, 7), owned)
    assert.deepStrictEqual(owned, [0, 5, 7])
    AppendOnly.release(owner, owned)
    const copy = AppendOnly.set(owner, owned, 0, 1)
    assert.notStrictEqual(copy, owned)
    assert.deepStrictEqual([owned, copy], [[0, 5, 7], [1, 5, 7]])
    // an unchanged entry: the same array
    assert.strictEqual(AppendOnly.set(undefined, foreign, 0, 0), foreign)
  })

  it("without an owner, always a copy", () => {
    const a: ReadonlyArray<number> = [1]
    const b = AppendOnly.append(undefined, a, 2)
    assert.notStrictEqual(a, b)
    assert.deepStrictEqual([a, b], [[1], [1, 2]])
  })
})

const taskOptions = { components: 2, keywordsPerComponent: 8, trainSize: 40, valSize: 12, learnPermille: 300 }

const runWith = (onEvent: ((event: GepaEvent) => void) | undefined, maxConcurrency = 4) =>
  Effect.gen(function*() {
    const task = makeTask(taskOptions)
    const adapter = FaultInjection.adapter(task.adapter, { latency: "0 millis", jitter: "2 millis", seed: 5 }).adapter
    return yield* Gepa.optimize({
      seedCandidate: task.seedCandidate,
      trainset: task.trainset,
      valset: task.valset,
      adapter,
      reflectionModel: task.reflectionModel,
      maxMetricCalls: 300,
      maxConcurrency,
      seed: 7,
      merge: true,
      ...(onEvent === undefined ? {} : { onEvent })
    })
  })

describe("the state's arrays grow in place inside a run", () => {
  it.live("a run nobody listens to equals one whose every state is kept; kept states never change afterwards", () =>
    Effect.gen(function*() {
      const kept: Array<{ readonly state: State.GepaState; readonly trace: number; readonly candidates: number }> = []
      const listened = yield* runWith((event) => {
        if (event._tag === "IterationEnded") {
          kept.push({ state: event.state, trace: event.state.trace.length, candidates: event.state.candidates.length })
        }
      })
      const quiet = yield* runWith(undefined, 1)
      assert.deepStrictEqual(quiet.state, listened.state)
      assert.deepStrictEqual(quiet.candidates, listened.candidates)
      assert.isAbove(kept.length, 5)
      assert.isAbove(listened.candidates.length, 1)
      for (const k of kept) {
        assert.strictEqual(k.state.trace.length, k.trace)
        assert.strictEqual(k.state.candidates.length, k.candidates)
        for (const arr of [k.state.parents, k.state.valScores, k.state.valAverages, k.state.valCoverage, k.state.discoveryBudget]) {
          assert.strictEqual(arr.length, k.candidates)
        }
      }
      // later states extend earlier ones
      const last = listened.state
      for (const k of kept) assert.deepStrictEqual(last.trace.slice(0, k.trace), k.state.trace)
    }))

  it.effect("a run without listeners of the user's appends in place: its states share one trace array", () =>
    Effect.gen(function*() {
      const task = makeTask(taskOptions)
      const seen = new Set<ReadonlyArray<unknown>>()
      let plans = 0
      yield* Gepa.optimize({
        seedCandidate: task.seedCandidate,
        trainset: task.trainset,
        valset: task.valset,
        adapter: task.adapter,
        reflectionModel: task.reflectionModel,
        maxMetricCalls: 300,
        seed: 7,
        candidateSelector: (state, rng) => {
          plans++
          if (state.trace.length > 0) seen.add(state.trace)
          return CandidateSelector.pareto(state, rng)
        }
      })
      assert.isAbove(plans, 10)
      // copied once (the first append), then grown in place
      assert.isAtMost(seen.size, 2)
    }))
})

describe("AppendOnly.countsOf", () => {
  it("reads an event's candidate count and metric calls as of the event, without making its state", () => {
    let copies = 0
    const trace = new Proxy<Array<unknown>>([], {
      get: (target, key) => {
        if (key === "slice") copies++
        return Reflect.get(target, key, target)
      }
    })
    const candidates = [{ a: "x" }, { a: "y" }]
    const state = { candidates, trace, metricCalls: 7 } as unknown as State.GepaState
    const event = Object.defineProperty({}, "state", { get: AppendOnly.asOf(state), enumerable: true }) as { readonly state: State.GepaState }
    // the run appends in place after the event
    candidates.push({ a: "z" })
    assert.deepStrictEqual(AppendOnly.countsOf(event), { candidates: 2, metricCalls: 7 })
    assert.strictEqual(copies, 0)
    // a plain state is read as it is
    assert.deepStrictEqual(AppendOnly.countsOf({ state }), { candidates: 3, metricCalls: 7 })
  })

  it.effect("the run folder's event log has every iteration's counts", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-counts-")
      const { adapter } = yield* Toy.makeAdapter()
      const seen: Array<readonly [number, number, number]> = []
      yield* Gepa.optimize({
        ...Toy.runConfig(adapter),
        maxMetricCalls: 120,
        runDir: dir,
        onEvent: (e) => {
          if (e._tag === "IterationEnded") seen.push([e.iteration, e.state.candidates.length, e.state.metricCalls])
        }
      })
      const logged = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").trim().split("\n")
        .map((l): { _tag: string; iteration: number; candidates: number; metricCalls: number } => JSON.parse(l))
        .filter((e) => e._tag === "IterationEnded")
        .map((e) => [e.iteration, e.candidates, e.metricCalls] as const)
      assert.isAbove(seen.length, 3)
      assert.deepStrictEqual(logged, seen)
    }))
})
