/**
 * Durable runs (issue 12): content-checked resume, cache keys by example
 * content, the write-ahead budget and stored trajectories.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Adapter from "../src/Adapter.js"
import * as Candidate from "../src/Candidate.js"
import * as Fingerprint from "../src/Fingerprint.js"
import * as Gepa from "../src/Gepa.js"
import * as RunDir from "../src/RunDir.js"
import * as StopCondition from "../src/StopCondition.js"
import { instrument } from "./fixtures/crashChild.js"
import * as Toy from "./fixtures/toy.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"

const tmpDir = () => makeTmpDir("gepa-durable-")
const trainset = Toy.makeExamples(20)
const valset = Toy.makeExamples(12, 100)

/** the adapter, with a ledger of every example it really evaluated (hash, example id, traced) */
const counted = (options?: { readonly storeTraces?: boolean }) =>
  Effect.gen(function*() {
    const toy = yield* Toy.makeAdapter()
    const calls: Array<string> = []
    const base: typeof toy.adapter = options?.storeTraces === false ? toy.adapter : Adapter.withStoredTraces(toy.adapter)
    return { adapter: instrument(base, (line) => calls.push(line)), calls }
  })

const config = <T>(adapter: Adapter.Adapter<Toy.Example, T, string>) => ({
  seedCandidate: Toy.seedCandidate,
  trainset,
  valset,
  adapter,
  reflectionModel: Toy.reflectionModel(),
  maxMetricCalls: 150,
  minibatchSize: 3,
  seed: 5
})

const flip = (e: Toy.Example): Toy.Example => ({ ...e, category: e.category === "a" ? "b" : "a" })

describe("Fingerprint", () => {
  it("a stable serialization: key order does not matter, content does", () => {
    expect(Fingerprint.exampleHash({ a: 1, b: [1, { c: "x" }] })).toBe(Fingerprint.exampleHash({ b: [1, { c: "x" }], a: 1 }))
    expect(Fingerprint.exampleHash({ a: 1 })).not.toBe(Fingerprint.exampleHash({ a: "1" }))
    expect(Fingerprint.exampleHash({ a: 1, b: undefined })).toBe(Fingerprint.exampleHash({ a: 1 }))
    expect(Fingerprint.exampleHash([1, 2])).not.toBe(Fingerprint.exampleHash([2, 1]))
    expect(Fingerprint.exampleHash(new Date(0))).not.toBe(Fingerprint.exampleHash(new Date(1)))
    expect(Fingerprint.exampleHash(new Map([[1, 2]]))).not.toBe(Fingerprint.exampleHash(new Map([[1, 3]])))
    expect(Fingerprint.exampleHash(1n)).not.toBe(Fingerprint.exampleHash(1))
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic["self"] = cyclic
    expect(Fingerprint.stableStringify(cyclic)).toBe(`{"a":1,"self":#ref0}`)
  })
})

describe("trace codecs", () => {
  it("jsonTraces stores JSON values as they are and refuses what JSON would change", () => {
    const codec = Adapter.jsonTraces<unknown>()
    const trace = { steps: [{ tool: "search", ok: true, n: 2 }], note: null }
    expect(codec.decode(codec.encode(trace))).toEqual(trace)
    expect(() => codec.encode({ at: new Date(0) })).toThrow()
    expect(() => codec.encode({ list: [undefined] })).toThrow()
    expect(() => codec.encode({ x: Number.NaN })).toThrow()
  })

  it("traceSchema round-trips through the schema's JSON form", () => {
    const codec = Adapter.traceSchema(Schema.Struct({ at: Schema.Date, tokens: Schema.Number }))
    const trace = { at: new Date(5), tokens: 3 }
    const stored = codec.encode(trace)
    expect(JSON.parse(JSON.stringify(stored))).toEqual({ at: new Date(5).toISOString(), tokens: 3 })
    expect(codec.decode(JSON.parse(JSON.stringify(stored)))).toEqual(trace)
    expect(() => codec.decode({ at: "not a date", tokens: 3 })).toThrow()
  })
})

describe("content-checked resume", () => {
  const saved = Effect.gen(function*() {
    const dir = tmpDir()
    const { adapter } = yield* counted()
    yield* Gepa.optimize({ ...config(adapter), runDir: dir, stop: StopCondition.maxIterations(2) })
    return { dir, adapter }
  })
  const conflict = (change: {
    readonly valset?: ReadonlyArray<Toy.Example>
    readonly trainset?: ReadonlyArray<Toy.Example>
    readonly seed?: number
    readonly minibatchSize?: number
  }) =>
    Effect.gen(function*() {
      const { dir, adapter } = yield* saved
      const error = yield* Effect.flip(Gepa.optimize({ ...config(adapter), ...change, runDir: dir }))
      expect(error._tag).toBe("ResumeConflict")
      return error.message
    })

  it.effect("validation labels changed: refused, naming the first changed example", () =>
    Effect.gen(function*() {
      const message = yield* conflict({ valset: valset.map((e, i) => (i === 4 || i === 7 ? flip(e) : e)) })
      expect(message).toContain(`"valset"`)
      expect(message).toContain(`example "4"`)
    }))

  it.effect("validation set reversed: refused (ids are positions, so the content under id 0 changed)", () =>
    Effect.gen(function*() {
      const message = yield* conflict({ valset: [...valset].reverse() })
      expect(message).toContain(`"valset"`)
      expect(message).toContain(`example "0"`)
    }))

  it.effect("the same examples reordered under stable ids: refused as a reorder", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter } = yield* counted()
      const idOf = (e: Toy.Example) => `ex${e.id}`
      const loader = (items: ReadonlyArray<Toy.Example>) => ({ ...RunDirLoader(items, idOf) })
      yield* Gepa.optimize({ ...config(adapter), valset: loader(valset), runDir: dir, stop: StopCondition.maxIterations(1) })
      const error = yield* Effect.flip(Gepa.optimize({ ...config(adapter), valset: loader([...valset].reverse()), runDir: dir }))
      expect(error._tag).toBe("ResumeConflict")
      expect(error.message).toContain("different order")
    }))

  it.effect("examples added to the validation set: refused, naming the first new one", () =>
    Effect.gen(function*() {
      const message = yield* conflict({ valset: [...valset, ...Toy.makeExamples(5, 200)] })
      expect(message).toContain(`"valset"`)
      expect(message).toContain("17 examples")
      expect(message).toContain(`example "12"`)
    }))

  it.effect("training set relabelled: refused", () =>
    Effect.gen(function*() {
      const message = yield* conflict({ trainset: trainset.map((e, i) => (i === 9 ? flip(e) : e)) })
      expect(message).toContain(`"trainset"`)
      expect(message).toContain(`example "9"`)
    }))

  it.effect("a different seed or minibatch size: refused, naming the setting", () =>
    Effect.gen(function*() {
      expect(yield* conflict({ seed: 6 })).toContain(`"seed"`)
      expect(yield* conflict({ minibatchSize: 4 })).toContain(`"minibatchSize"`)
    }))

  it.effect("budget, concurrency, timeouts, chunk size and the model instance may change; an old state is checked and fingerprinted", () =>
    Effect.gen(function*() {
      const { dir, adapter } = yield* saved
      const resumed = yield* Gepa.optimize({
        ...config(adapter),
        runDir: dir,
        maxMetricCalls: 120,
        maxConcurrency: 3,
        chunkSize: 2,
        evaluationTimeout: "10 seconds",
        reflectionModel: Toy.reflectionModel(),
        stop: StopCondition.maxIterations(4)
      })
      expect(resumed.iterations).toBe(4)
      expect(resumed.state.fingerprint?.valset.ids).toHaveLength(valset.length)
      // a state from before fingerprints: resumed on the id checks, then fingerprinted
      const file = path.join(dir, RunDir.FILES.state)
      const envelope = JSON.parse(fs.readFileSync(file, "utf8")) as { state: Record<string, unknown> }
      delete envelope.state["fingerprint"]
      delete envelope.state["lostMetricCalls"]
      fs.writeFileSync(file, JSON.stringify(envelope))
      const old = yield* Gepa.optimize({ ...config(adapter), runDir: dir, stop: StopCondition.maxIterations(5) })
      expect(old.state.fingerprint).toEqual(resumed.state.fingerprint)
      expect(old.lostMetricCalls).toBe(0)
    }))
})

/** a loader with ids of its own (not positions) */
const RunDirLoader = (items: ReadonlyArray<Toy.Example>, idOf: (e: Toy.Example) => string) => {
  const byId = new Map(items.map((e) => [idOf(e), e] as const))
  return {
    name: "stable",
    ids: Effect.succeed(items.map(idOf)),
    size: Effect.succeed(items.length),
    fetch: (ids: ReadonlyArray<string>) => Effect.succeed(ids.map((id) => byId.get(id)!))
  }
}

describe("cache keys by example content", () => {
  it.effect("a warm cache never serves a result for other content under the same id", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter, calls } = yield* counted()
      yield* Gepa.optimize({ ...config(adapter), runDir: dir, stop: StopCondition.maxIterations(0) })
      expect(calls).toHaveLength(valset.length)
      // start over on the warm cache with example 3 relabelled
      fs.rmSync(path.join(dir, RunDir.FILES.state))
      fs.rmSync(path.join(dir, RunDir.FILES.prev), { force: true })
      const changed = valset.map((e, i) => (i === 3 ? flip(e) : e))
      const again = yield* Gepa.optimize({ ...config(adapter), valset: changed, runDir: dir, stop: StopCondition.maxIterations(0) })
      expect(calls).toHaveLength(valset.length + 1)
      expect(calls.at(-1)!.split("\t")[1]).toBe(String(changed[3]!.id))
      expect(again.totalMetricCalls).toBe(1)
      expect(again.lostMetricCalls).toBe(0)
      expect(again.valScores[0]!["3"]).toBe(Toy.solve(changed[3]!, Toy.seedCandidate).score)
    }))
})

describe("write-ahead budget", () => {
  it.effect("calls on record without a result are charged as lost work: event, result, budget", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter } = yield* counted()
      const first = yield* Gepa.optimize({ ...config(adapter), runDir: dir, stop: StopCondition.maxIterations(2) })
      // a process that reserved 5 calls for the next iteration and was killed before any result
      fs.appendFileSync(path.join(dir, RunDir.FILES.reservations), JSON.stringify({ i: first.state.iteration + 1, n: 5, g: 99 }) + "\n")
      const events: Array<{ metricCalls: number; totalLost: number }> = []
      const resumed = yield* Gepa.optimize({
        ...config(adapter),
        runDir: dir,
        onEvent: (e) => {
          if (e._tag === "LostWorkCharged") events.push({ metricCalls: e.metricCalls, totalLost: e.totalLost })
        }
      })
      expect(events).toEqual([{ metricCalls: 5, totalLost: 5 }])
      expect(resumed.lostMetricCalls).toBe(5)
      expect(resumed.totalMetricCalls + resumed.lostMetricCalls).toBeLessThanOrEqual(150)
      const result = JSON.parse(fs.readFileSync(path.join(dir, RunDir.FILES.result), "utf8")) as { lostMetricCalls: number }
      expect(result.lostMetricCalls).toBe(5)
      // charged once: a second resume charges nothing more
      const again = yield* Gepa.optimize({ ...config(adapter), runDir: dir })
      expect(again.lostMetricCalls).toBe(5)
    }))

  it.effect("without stored traces, a pause re-runs the parent's traced minibatch and counts it honestly", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter, calls } = yield* counted({ storeTraces: false })
      const onEvent = (e: { readonly _tag: string; readonly iteration?: number; readonly purpose?: string }) => {
        if (e._tag === "EvaluationEnded" && e.purpose === "parent-minibatch" && e.iteration === 3) {
          fs.writeFileSync(path.join(dir, RunDir.FILES.stop), "")
        }
      }
      const stopped = yield* Gepa.optimize({ ...config(adapter), runDir: dir, onEvent, parallelProposals: 2 })
      expect(stopped.stopReason).toContain("stop file")
      expect(stopped.state.pending.length).toBeGreaterThan(0)
      const resumed = yield* Gepa.optimize({ ...config(adapter), runDir: dir, parallelProposals: 2 })
      // every example the adapter ran is charged: as a counted metric call or as lost work
      expect(resumed.totalMetricCalls + resumed.lostMetricCalls).toBe(calls.length)
      expect(resumed.lostMetricCalls).toBeGreaterThan(0)
      expect(calls.length).toBeLessThanOrEqual(150)
    }))

  it.effect("with stored traces, a pause costs only the calls it interrupted: nothing completed runs again", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter, calls } = yield* counted()
      const onEvent = (e: { readonly _tag: string; readonly iteration?: number; readonly purpose?: string }) => {
        if (e._tag === "EvaluationEnded" && e.purpose === "parent-minibatch" && e.iteration === 3) {
          fs.writeFileSync(path.join(dir, RunDir.FILES.stop), "")
        }
      }
      // a run that ends on its iteration count, not its budget: the lost calls leave
      // less budget, which would change the end of a run that spends it all
      const settings = { parallelProposals: 2, maxMetricCalls: 400, stop: StopCondition.maxIterations(10) }
      yield* Gepa.optimize({ ...config(adapter), runDir: dir, onEvent, ...settings })
      const resumed = yield* Gepa.optimize({ ...config(adapter), runDir: dir, ...settings })
      const uninterrupted = yield* counted()
      const full = yield* Gepa.optimize({ ...config(uninterrupted.adapter), ...settings })
      // the adapter ran what the uninterrupted run ran (GEPA itself re-evaluates a parent with
      // traces in every iteration that selects it: those repeats are in both), plus the calls the
      // pause interrupted, which are charged as lost work
      const extra = [...calls]
      for (const c of uninterrupted.calls) {
        const at = extra.indexOf(c)
        expect(at, `missing ${c}`).toBeGreaterThanOrEqual(0)
        extra.splice(at, 1)
      }
      expect(extra.filter((c) => c.endsWith("\tT"))).toEqual([])
      expect(resumed.lostMetricCalls).toBe(extra.length)
      expect(resumed.totalMetricCalls + resumed.lostMetricCalls).toBe(calls.length)
      expect(resumed.candidates).toEqual(full.candidates)
      expect(resumed.totalMetricCalls).toBe(full.totalMetricCalls)
      expect(Candidate.equals(resumed.bestCandidate, full.bestCandidate)).toBe(true)
    }))
})
