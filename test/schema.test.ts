import { assert, describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import fc from "fast-check"
import * as BatchSampler from "../src/BatchSampler.js"
import * as Candidate from "../src/Candidate.js"
import * as Frontier from "../src/Frontier.js"
import * as Merge from "../src/Merge.js"
import * as Result from "../src/Result.js"
import { Rng } from "../src/Rng.js"
import * as State from "../src/State.js"

const right = <A, E>(e: Either.Either<A, E>): A => {
  if (Either.isLeft(e)) throw new Error(`expected Right, got Left: ${String(e.left)}`)
  return e.right
}

/** encode -> JSON text -> parse -> decode, as a run store would. */
const roundTrip = <A, I>(schema: Schema.Schema<A, I>, value: A): A => {
  const text = JSON.stringify(Schema.encodeSync(schema)(value))
  return Schema.decodeUnknownSync(schema)(JSON.parse(text))
}

/**
 * Maps -0 to 0 everywhere. Arithmetic on tiny (denormal) scores can produce -0
 * (for example an average that underflows), and JSON has no -0; the two are
 * equal under every comparison the optimizer makes.
 */
const positiveZeros = (value: unknown): unknown => {
  if (typeof value === "number") return value === 0 ? 0 : value
  if (Array.isArray(value)) return value.map(positiveZeros)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, positiveZeros(v)]))
  }
  return value
}

const objectives = (scores: Record<string, number>) => Object.fromEntries(Object.entries(scores).map(([id, s]) => [id, { accuracy: s, brevity: 1 - s / 2 }]))

/** A state as a run would leave it: several candidates, merges, sampler, generator, trace. */
const realisticState = (): State.GepaState => {
  const seedCandidate = { system: "You are a careful assistant.\nThink step by step.", format: "Answer with {\"a\": …}" }
  const val0 = { "q-1": 1, "q-2": 0, "q-3": 0.5, "q/4": 0.25 }
  let state = right(
    State.initial({
      seed: 42,
      seedCandidate,
      frontierType: "cartesian",
      valset: { scores: val0, objectiveScores: objectives(val0) },
      metricCalls: 4
    })
  )
  const rng = Rng.fromState(state.rng)
  const train = ["t1", "t2", "t3", "t4", "t5"]
  let sampler = state.sampler
  const evaluations: Array<Record<string, number>> = [
    { "q-1": 1, "q-2": 1, "q-3": 0, "q/4": 0.25 },
    { "q-1": 0, "q-2": 0, "q-3": 1, "q/4": 1 },
    { "q-1": 1, "q-2": 1, "q-3": 1 }
  ]
  const parents = [[0], [0], [1, 2]]
  const trace: Array<State.TraceEntry> = []
  evaluations.forEach((scores, k) => {
    const [batch, nextSampler] = BatchSampler.next(sampler, train, 3, rng)
    sampler = nextSampler
    const [next, idx] = right(
      State.addCandidate(state, {
        candidate: { system: `${seedCandidate.system} v${k + 1}`, format: k === 1 ? "JSON only" : seedCandidate.format },
        parents: parents[k]!,
        valset: { scores, objectiveScores: objectives(scores) },
        discoveryBudget: state.metricCalls
      })
    )
    state = { ...next, iteration: k + 1, metricCalls: next.metricCalls + 3 + Object.keys(scores).length, reflectionCalls: k + 1 }
    trace.push({
      iteration: k + 1,
      kind: parents[k]!.length > 1 ? "merge" : "reflective",
      parents: parents[k]!,
      outcome: "accepted",
      candidate: idx,
      components: ["system"],
      subsampleIds: batch,
      scoresBefore: [0, 0.5, 1],
      scoresAfter: [1, 0.5, 1],
      metricCalls: 6
    })
  })
  trace.push({ iteration: 4, kind: "reflective", parents: [3], outcome: "rejected", reason: "no improvement", metricCalls: 3 })
  trace.push({ iteration: 5, kind: "merge", parents: [], outcome: "skipped", metricCalls: 0 })
  let merge = Merge.schedule(Merge.initial, 5)
  merge = Merge.recordAttempt(merge, true)
  merge = Merge.schedule(merge, 5)
  merge = {
    ...merge,
    triedTriples: [[1, 2, 0]],
    triedDescriptions: [JSON.stringify([1, 2, [1, 2]])]
  }
  return {
    ...state,
    acceptedProposals: 3,
    rejectedProposals: 1,
    consecutiveFailedIterations: 1,
    rng: rng.snapshot(),
    sampler,
    merge,
    trace
  }
}

// ---------------------------------------------------------------------------
// random states from random operation sequences
// ---------------------------------------------------------------------------

const idArb = fc.string({ maxLength: 4 }).map((s) => `id:${s}`)
// JSON writes -0 as 0; fast-check still yields -0 with a negative min, so normalise it
const numberArb = fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }).map((x) => (x === 0 ? 0 : x))
const scoresArb = fc.dictionary(idArb, numberArb, { minKeys: 1, maxKeys: 5, noNullPrototype: true })
const textArb = fc.string({ maxLength: 12, unit: "grapheme-composite" })

const traceArb: fc.Arbitrary<State.TraceEntry> = fc.record(
  {
    iteration: fc.nat({ max: 100 }),
    kind: fc.constantFrom("reflective" as const, "merge" as const),
    parents: fc.array(fc.nat({ max: 10 }), { maxLength: 2 }),
    outcome: fc.constantFrom("accepted" as const, "rejected" as const, "skipped" as const, "failed" as const),
    candidate: fc.nat({ max: 10 }),
    components: fc.array(fc.constantFrom("system", "tool"), { maxLength: 2 }),
    subsampleIds: fc.array(idArb, { maxLength: 3 }),
    scoresBefore: fc.array(numberArb, { maxLength: 3 }),
    scoresAfter: fc.array(numberArb, { maxLength: 3 }),
    reason: textArb,
    metricCalls: fc.nat({ max: 1000 })
  },
  { requiredKeys: ["iteration", "kind", "parents", "outcome", "metricCalls"], noNullPrototype: true }
)

type Op =
  | { readonly _tag: "add"; readonly parent: number; readonly scores: Record<string, number>; readonly text: string }
  | { readonly _tag: "draw"; readonly size: number }
  | { readonly _tag: "schedule" }
  | { readonly _tag: "attempt"; readonly accepted: boolean }
  | { readonly _tag: "tried"; readonly triple: readonly [number, number, number]; readonly description: string }
  | { readonly _tag: "trace"; readonly entry: State.TraceEntry }
  | { readonly _tag: "tick"; readonly calls: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ _tag: fc.constant("add" as const), parent: fc.nat({ max: 100 }), scores: scoresArb, text: textArb }),
  fc.record({ _tag: fc.constant("draw" as const), size: fc.integer({ min: 1, max: 4 }) }),
  fc.constant({ _tag: "schedule" as const }),
  fc.record({ _tag: fc.constant("attempt" as const), accepted: fc.boolean() }),
  fc.record({
    _tag: fc.constant("tried" as const),
    triple: fc.tuple(fc.nat({ max: 9 }), fc.nat({ max: 9 }), fc.nat({ max: 9 })),
    description: textArb
  }),
  fc.record({ _tag: fc.constant("trace" as const), entry: traceArb }),
  fc.record({ _tag: fc.constant("tick" as const), calls: fc.nat({ max: 20 }) })
)

const randomStateArb = fc
  .record({
    seed: fc.integer(),
    frontierType: fc.constantFrom<Frontier.FrontierType>("instance", "objective", "hybrid", "cartesian"),
    seedText: textArb,
    seedScores: scoresArb,
    ops: fc.array(opArb, { maxLength: 25 })
  })
  .map(({ frontierType, ops, seed, seedScores, seedText }) => {
    let state = right(
      State.initial({
        seed,
        seedCandidate: { system: seedText, tool: "tool" },
        frontierType,
        valset: { scores: seedScores, objectiveScores: objectives(seedScores) },
        metricCalls: Object.keys(seedScores).length
      })
    )
    const train = ["a", "b", "c", "d", "e", "f", "g"]
    for (const op of ops) {
      switch (op._tag) {
        case "add":
          ;[state] = right(
            State.addCandidate(state, {
              candidate: { system: op.text, tool: `tool${state.candidates.length}` },
              parents: [op.parent % state.candidates.length],
              valset: { scores: op.scores, objectiveScores: objectives(op.scores) },
              discoveryBudget: state.metricCalls
            })
          )
          break
        case "draw": {
          const rng = Rng.fromState(state.rng)
          const [, sampler] = BatchSampler.next(state.sampler, train, op.size, rng)
          state = { ...state, sampler, rng: rng.snapshot() }
          break
        }
        case "schedule":
          state = { ...state, merge: Merge.schedule(state.merge, 3), acceptedProposals: state.acceptedProposals + 1 }
          break
        case "attempt":
          if (Merge.isDue(state.merge, 3)) state = { ...state, merge: Merge.recordAttempt(state.merge, op.accepted) }
          else state = { ...state, rejectedProposals: state.rejectedProposals + 1 }
          break
        case "tried":
          state = {
            ...state,
            merge: {
              ...state.merge,
              triedTriples: [...state.merge.triedTriples, op.triple],
              triedDescriptions: [...state.merge.triedDescriptions, op.description]
            }
          }
          break
        case "trace":
          state = { ...state, trace: [...state.trace, op.entry] }
          break
        case "tick":
          state = {
            ...state,
            iteration: state.iteration + 1,
            metricCalls: state.metricCalls + op.calls,
            reflectionCalls: state.reflectionCalls + 1
          }
          break
      }
    }
    return state
  })

describe("schema round trips", () => {
  it("a realistic GepaState survives encode -> JSON -> decode", () => {
    const state = realisticState()
    assert.deepStrictEqual(State.checkConsistency(state), [])
    // the fixture exercises the interesting parts of the layout
    assert.isAbove(Object.keys(state.fronts.cartesian.best).length, 0)
    assert.isAbove(Object.keys(state.fronts.objective.best).length, 0)
    assert.isAbove(state.sampler.order.length, 0)
    assert.strictEqual(state.merge.attempted, 1)
    const decoded = roundTrip(State.GepaState, state)
    expect(decoded).toStrictEqual(state)
    // and the decoded state continues identically
    const a = Rng.fromState(state.rng)
    const b = Rng.fromState(decoded.rng)
    assert.deepStrictEqual(
      BatchSampler.next(decoded.sampler, ["t1", "t2", "t3", "t4", "t5"], 3, b),
      BatchSampler.next(state.sampler, ["t1", "t2", "t3", "t4", "t5"], 3, a)
    )
  })

  it("the state's encoded form is the state itself (the run directory writes it as is)", () => {
    const state = realisticState()
    expect(Schema.encodeSync(State.GepaState)(state)).toStrictEqual(state)
    expect(Schema.decodeUnknownSync(State.GepaState)(JSON.parse(JSON.stringify(state)))).toStrictEqual(state)
  })

  it("a GepaResult from that state survives encode -> JSON -> decode", () => {
    const state = realisticState()
    const result = Result.fromState(state, "max metric calls reached")
    assert.strictEqual(result.bestIndex, State.bestIndex(state))
    assert.deepStrictEqual(result.bestCandidate, state.candidates[result.bestIndex])
    assert.strictEqual(result.mergesAttempted, 1)
    assert.strictEqual(result.mergesAccepted, 1)
    assert.strictEqual(result.totalMetricCalls, state.metricCalls)
    assert.strictEqual(result.iterations, 3)
    expect(roundTrip(Result.GepaResult, result)).toStrictEqual(result)
  })

  it("a result keeps null scores for never-evaluated candidates", () => {
    let state = right(
      State.initial({ seed: 1, seedCandidate: { p: "x" }, frontierType: "instance", valset: { scores: {} }, metricCalls: 0 })
    )
    ;[state] = right(State.addCandidate(state, { candidate: { p: "y" }, parents: [0], valset: { scores: { v: 0.5 } }, discoveryBudget: 1 }))
    const result = Result.fromState(state, "done")
    assert.deepStrictEqual(result.valAggregateScores, [null, 0.5])
    assert.strictEqual(result.seedScore, null)
    assert.strictEqual(result.bestScore, 0.5)
    assert.strictEqual(result.bestIndex, 1)
    expect(roundTrip(Result.GepaResult, result)).toStrictEqual(result)
  })

  it("random states from random operation sequences round-trip, and so do their results", () => {
    fc.assert(
      fc.property(randomStateArb, (state) => {
        assert.deepStrictEqual(State.checkConsistency(state), [])
        expect(roundTrip(State.GepaState, state)).toStrictEqual(positiveZeros(state))
        const result = Result.fromState(state, "stopped")
        expect(roundTrip(Result.GepaResult, result)).toStrictEqual(positiveZeros(result))
      }),
      { numRuns: 150 }
    )
  })

  it("decoding rejects a malformed or foreign state", () => {
    const encoded = Schema.encodeSync(State.GepaState)(realisticState())
    const decode = Schema.decodeUnknownEither(State.GepaState)
    assert.isTrue(Either.isRight(decode(encoded)))
    assert.isTrue(Either.isLeft(decode({ ...encoded, schemaVersion: 2 })))
    const { rng: _rng, ...missing } = encoded
    assert.isTrue(Either.isLeft(decode(missing)))
    assert.isTrue(Either.isLeft(decode({ ...encoded, frontierType: "pareto" })))
    assert.isTrue(Either.isLeft(decode({ ...encoded, valAverages: ["0.5"] })))
    assert.isTrue(Either.isLeft(decode({ ...encoded, trace: [{ iteration: 1 }] })))
  })
})

describe("Candidate", () => {
  const candidateArb = fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 6 }), {
    maxKeys: 4,
    noNullPrototype: true
  })

  it("round-trips through its schema", () => {
    fc.assert(
      fc.property(candidateArb, (c) => {
        expect(roundTrip(Candidate.Candidate, c)).toStrictEqual(c)
      }),
      { numRuns: 100 }
    )
  })

  it("hash ignores key order and separates different candidates", () => {
    assert.strictEqual(Candidate.hash({ a: "1", b: "2" }), Candidate.hash({ b: "2", a: "1" }))
    assert.notStrictEqual(Candidate.hash({ a: "bc" }), Candidate.hash({ ab: "c" }))
    assert.notStrictEqual(Candidate.hash({ a: "1:b" }), Candidate.hash({ a: "1", b: "" }))
    assert.notStrictEqual(Candidate.hash({}), Candidate.hash({ "": "" }))
    assert.match(Candidate.hash({ a: "x" }), /^[0-9a-f]{32}$/)
    fc.assert(
      fc.property(candidateArb, candidateArb, (a, b) => {
        const reversed = Object.fromEntries(Object.entries(a).reverse())
        assert.strictEqual(Candidate.hash(reversed), Candidate.hash(a))
        assert.strictEqual(Candidate.hash(a) === Candidate.hash(b), Candidate.equals(a, b))
      }),
      { numRuns: 300 }
    )
  })

  it("equals compares names and texts", () => {
    assert.isTrue(Candidate.equals({ a: "1", b: "2" }, { b: "2", a: "1" }))
    assert.isFalse(Candidate.equals({ a: "1" }, { a: "2" }))
    assert.isFalse(Candidate.equals({ a: "1" }, { a: "1", b: "2" }))
    assert.isFalse(Candidate.equals({ a: "1", c: "3" }, { a: "1", b: "3" }))
  })

  it("changedComponents lists the components the child rewrote", () => {
    assert.deepStrictEqual(Candidate.changedComponents({ a: "1", b: "2", c: "3" }, { a: "1", b: "x", c: "y" }), ["b", "c"])
    assert.deepStrictEqual(Candidate.changedComponents({ a: "1" }, { a: "1" }), [])
  })
})

describe("Result.lineage", () => {
  it("walks from the seed to the candidate, first parent first", () => {
    const parents = [[], [0], [0], [1, 2], [3]]
    assert.deepStrictEqual(Result.lineage({ parents }, 4), [0, 1, 2, 3, 4])
    assert.deepStrictEqual(Result.lineage({ parents }, 2), [0, 2])
    assert.deepStrictEqual(Result.lineage({ parents }, 0), [0])
  })
})
