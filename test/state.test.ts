import { assert, describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import * as Frontier from "../src/Frontier.js"
import * as State from "../src/State.js"

const right = <A, E>(e: Either.Either<A, E>): A => {
  if (Either.isLeft(e)) throw new Error(`expected Right, got Left: ${String(e.left)}`)
  return e.right
}

const seedCandidate = { system: "You are helpful.", user: "Answer: {q}" }

const start = (scores: Record<string, number>, frontierType: Frontier.FrontierType = "instance") =>
  right(State.initial({ seed: 1, seedCandidate, frontierType, valset: { scores }, metricCalls: 3 }))

const add = (
  state: State.GepaState,
  parents: ReadonlyArray<number>,
  scores: Record<string, number>,
  candidate: Record<string, string> = { system: `s${state.candidates.length}`, user: "u" }
) => right(State.addCandidate(state, { candidate, parents, valset: { scores }, discoveryBudget: state.metricCalls }))

// ---------------------------------------------------------------------------
// random operation sequences
// ---------------------------------------------------------------------------

const VAL_IDS = ["v0", "v1", "v2", "v3", "v4"] as const
const OBJECTIVES = ["acc", "cost"] as const

const scoreArb = fc.integer({ min: 0, max: 4 }).map((x) => x / 4)

interface Evaluation {
  readonly scores: Record<string, number>
  readonly objectiveScores: Record<string, Record<string, number>>
}

/** objective frontiers need at least one evaluated example; the instance frontier allows none */
const evaluationArb = (minLength: number): fc.Arbitrary<Evaluation> =>
  fc
    .record({
      ids: fc.subarray([...VAL_IDS], { minLength }),
      scores: fc.array(scoreArb, { minLength: VAL_IDS.length, maxLength: VAL_IDS.length }),
      objectives: fc.array(fc.tuple(scoreArb, scoreArb), { minLength: VAL_IDS.length, maxLength: VAL_IDS.length })
    })
    .map(({ ids, objectives, scores }) => {
      const s: Record<string, number> = {}
      const o: Record<string, Record<string, number>> = {}
      for (const id of ids) {
        const k = VAL_IDS.indexOf(id as (typeof VAL_IDS)[number])
        s[id] = scores[k]!
        o[id] = { acc: objectives[k]![0], cost: objectives[k]![1] }
      }
      return { scores: s, objectiveScores: o }
    })

interface Op {
  readonly parents: ReadonlyArray<number>
  readonly evaluation: Evaluation
  readonly text: string
  readonly budget: number
  /** simulate a component selector moving some candidate's pointer */
  readonly bump: readonly [number, number] | null
}

const opArb = (minLength: number): fc.Arbitrary<Op> =>
  fc.record({
    parents: fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 2 }),
    evaluation: evaluationArb(minLength),
    text: fc.constantFrom("a", "b", "c"),
    budget: fc.nat({ max: 50 }),
    bump: fc.option(fc.tuple(fc.nat({ max: 1000 }), fc.nat({ max: 5 })), { nil: null })
  })

const specArb = fc
  .constantFrom<Frontier.FrontierType>("instance", "objective", "hybrid", "cartesian")
  .chain((frontierType) => {
    const minLength = frontierType === "instance" ? 0 : 1
    return fc.record({
      frontierType: fc.constant(frontierType),
      seed: fc.integer(),
      seedEvaluation: evaluationArb(minLength),
      ops: fc.array(opArb(minLength), { maxLength: 12 })
    })
  })

type Spec = typeof specArb extends fc.Arbitrary<infer A> ? A : never

/** Builds a state and checks the per-step rules (index, parents, pointer, improvement) on the way. */
const buildChecked = (spec: Spec) => {
  let state = right(
    State.initial({
      seed: spec.seed,
      seedCandidate,
      frontierType: spec.frontierType,
      valset: spec.seedEvaluation,
      metricCalls: 0
    })
  )
  const evaluations: Array<Evaluation> = [spec.seedEvaluation]
  spec.ops.forEach((op, step) => {
    if (op.bump !== null) {
      const target = op.bump[0] % state.candidates.length
      const nextComponent = state.nextComponent.slice()
      nextComponent[target] = op.bump[1]
      state = { ...state, nextComponent }
    }
    const n = state.candidates.length
    const parents = [...new Set(op.parents.map((p) => p % n))]
    const expectedPointer = Math.max(...parents.map((p) => state.nextComponent[p]!))
    const prevBestScore = State.scoreOf(state)(State.bestIndex(state))
    const prevLastImprovement = state.lastImprovementIteration
    const values = Object.values(op.evaluation.scores)
    const avg = values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length
    state = { ...state, iteration: step + 1, metricCalls: state.metricCalls + values.length }
    const [next, idx] = right(
      State.addCandidate(state, {
        candidate: { system: `${op.text}${n}`, user: op.text },
        parents,
        valset: op.evaluation,
        discoveryBudget: op.budget
      })
    )
    assert.strictEqual(idx, n)
    assert.deepStrictEqual(next.parents[idx], parents)
    assert.strictEqual(next.nextComponent[idx], expectedPointer)
    assert.strictEqual(next.discoveryBudget[idx], op.budget)
    assert.strictEqual(next.lastImprovementIteration, avg > prevBestScore ? step + 1 : prevLastImprovement)
    state = next
    evaluations.push(op.evaluation)
  })
  return { state, evaluations }
}

/** The table a model recomputes from scratch: best per key and the programs reaching it. */
const modelTable = (perProgram: ReadonlyArray<Readonly<Record<string, number>>>): Frontier.FrontTable => {
  const best: Record<string, number> = {}
  const programs: Record<string, Array<number>> = {}
  perProgram.forEach((scores, p) => {
    for (const [key, s] of Object.entries(scores)) {
      if (best[key] === undefined || s > best[key]!) {
        best[key] = s
        programs[key] = [p]
      } else if (s === best[key]) programs[key]!.push(p)
    }
  })
  return { best, programs }
}

describe("State", () => {
  describe("initial", () => {
    it("records the seed candidate and its validation results", () => {
      const s = start({ v1: 1, v2: 0.5 })
      assert.strictEqual(s.schemaVersion, State.SCHEMA_VERSION)
      assert.deepStrictEqual(s.componentNames, ["system", "user"])
      assert.deepStrictEqual(s.candidates, [seedCandidate])
      assert.notStrictEqual(s.candidates[0], seedCandidate)
      assert.deepStrictEqual(s.parents, [[]])
      assert.deepStrictEqual(s.valAverages, [0.75])
      assert.deepStrictEqual(s.valCoverage, [2])
      assert.deepStrictEqual(s.nextComponent, [0])
      assert.strictEqual(s.metricCalls, 3)
      assert.strictEqual(s.fullValEvals, 1)
      assert.strictEqual(s.iteration, 0)
      assert.deepStrictEqual(s.fronts.instance.programs, { v1: [0], v2: [0] })
      assert.deepStrictEqual(State.checkConsistency(s), [])
    })

    it("fails for a non-instance frontier without objective scores", () => {
      const result = State.initial({
        seed: 0,
        seedCandidate,
        frontierType: "objective",
        valset: { scores: { v1: 1 } },
        metricCalls: 1
      })
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) expect(result.left.message).toContain("objective")
    })

    it("seeds the generator from the seed", () => {
      assert.deepStrictEqual(start({ v: 1 }).rng, start({ v: 1 }).rng)
      const other = right(State.initial({ seed: 2, seedCandidate, frontierType: "instance", valset: { scores: {} }, metricCalls: 0 }))
      assert.notDeepEqual(other.rng, start({ v: 1 }).rng)
    })
  })

  describe("addCandidate", () => {
    it("stores parents, scores, averages and coverage", () => {
      const s0 = start({ v1: 1, v2: 0 })
      const [s1, i1] = add(s0, [0], { v1: 0.5, v2: 0.5, v3: 1 })
      assert.strictEqual(i1, 1)
      assert.deepStrictEqual(s1.parents, [[], [0]])
      assert.deepStrictEqual(s1.valScores[1], { v1: 0.5, v2: 0.5, v3: 1 })
      assert.closeTo(s1.valAverages[1]!, 2 / 3, 1e-12)
      assert.strictEqual(s1.valCoverage[1], 3)
      assert.strictEqual(s1.fullValEvals, 2)
      assert.deepStrictEqual(s1.fronts.instance.programs, { v1: [0], v2: [1], v3: [1] })
      // the input state is untouched
      assert.strictEqual(s0.candidates.length, 1)
      const [s2, i2] = add(s1, [0, 1], {})
      assert.strictEqual(i2, 2)
      assert.deepStrictEqual(s2.parents[2], [0, 1])
      assert.strictEqual(s2.valAverages[2], 0)
      assert.strictEqual(s2.valCoverage[2], 0)
      assert.strictEqual(State.scoreOf(s2)(2), Number.NEGATIVE_INFINITY)
    })

    it("the child's round-robin pointer is the max of its parents' pointers", () => {
      let s = start({ v: 0 })
      ;[s] = add(s, [0], { v: 0 })
      s = { ...s, nextComponent: [2, 5] }
      const [a] = add(s, [0], { v: 0 })
      assert.strictEqual(a.nextComponent[2], 2)
      const [b] = add(s, [0, 1], { v: 0 })
      assert.strictEqual(b.nextComponent[2], 5)
      const [c] = add(s, [1, 0], { v: 0 })
      assert.strictEqual(c.nextComponent[2], 5)
    })

    it("fails for a non-instance frontier when the new candidate has no objective scores", () => {
      const s = right(
        State.initial({
          seed: 0,
          seedCandidate,
          frontierType: "hybrid",
          valset: { scores: { v: 1 }, objectiveScores: { v: { acc: 1 } } },
          metricCalls: 1
        })
      )
      const result = State.addCandidate(s, { candidate: seedCandidate, parents: [0], valset: { scores: { v: 1 } }, discoveryBudget: 1 })
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left._tag, "MissingObjectiveScores")
        expect(result.left.message).toContain("hybrid")
      }
    })

    it("records aggregate objective scores", () => {
      const s = right(
        State.initial({
          seed: 0,
          seedCandidate,
          frontierType: "objective",
          valset: { scores: { v1: 1, v2: 0 }, objectiveScores: { v1: { acc: 1, len: 0 }, v2: { acc: 0, len: 1 } } },
          metricCalls: 2
        })
      )
      assert.deepStrictEqual(s.objectiveScores, [{ acc: 0.5, len: 0.5 }])
      const [s1] = right(
        State.addCandidate(s, {
          candidate: seedCandidate,
          parents: [0],
          valset: { scores: { v1: 1, v2: 1 }, objectiveScores: { v1: { acc: 1, len: 1 }, v2: { acc: 1, len: 0 } } },
          discoveryBudget: 4
        })
      )
      assert.deepStrictEqual(s1.objectiveScores[1], { acc: 1, len: 0.5 })
      assert.deepStrictEqual(s1.fronts.objective.programs, { acc: [1], len: [0, 1] })
      assert.deepStrictEqual(State.frontSets(s1), [[1], [0, 1]])
    })
  })

  describe("bestIndex", () => {
    it("prefers the highest average, then more coverage, then the newest", () => {
      let s = start({ v1: 0.5, v2: 0.5 }) // 0: avg .5, coverage 2
      ;[s] = add(s, [0], { v1: 0.5, v2: 0.5, v3: 0.5 }) // 1: avg .5, coverage 3
      assert.strictEqual(State.bestIndex(s), 1)
      ;[s] = add(s, [0], { v1: 0.5, v2: 0.5, v4: 0.5 }) // 2: same as 1, newer
      assert.strictEqual(State.bestIndex(s), 2)
      ;[s] = add(s, [0], { v1: 0.5, v2: 0.5 }) // 3: same average, less coverage
      assert.strictEqual(State.bestIndex(s), 2)
      ;[s] = add(s, [0], { v1: 0.4 }) // 4: lower
      assert.strictEqual(State.bestIndex(s), 2)
      ;[s] = add(s, [0], { v1: 0.6 }) // 5: higher average, less coverage
      assert.strictEqual(State.bestIndex(s), 5)
    })

    it("never prefers a candidate without coverage over one with coverage", () => {
      let s = start({})
      assert.strictEqual(State.bestIndex(s), 0)
      ;[s] = add(s, [0], { v: -0.5 })
      assert.strictEqual(State.bestIndex(s), 1)
      ;[s] = add(s, [0], {})
      assert.strictEqual(State.bestIndex(s), 1)
    })
  })

  describe("lastImprovementIteration", () => {
    it("moves only when the best average strictly improves", () => {
      let s = start({ v: 0.5 })
      s = { ...s, iteration: 3 }
      ;[s] = add(s, [0], { v: 0.5 })
      assert.strictEqual(s.lastImprovementIteration, 0)
      ;[s] = add(s, [0], { v: 0.25 })
      assert.strictEqual(s.lastImprovementIteration, 0)
      s = { ...s, iteration: 7 }
      ;[s] = add(s, [0], { v: 0.75 })
      assert.strictEqual(s.lastImprovementIteration, 7)
      s = { ...s, iteration: 9 }
      ;[s] = add(s, [0], {})
      assert.strictEqual(s.lastImprovementIteration, 7)
    })

    it("counts the first evaluated candidate as an improvement over an unevaluated seed, even with negative scores", () => {
      let s = { ...start({}), iteration: 5 }
      ;[s] = add(s, [0], { v: -0.5 })
      assert.strictEqual(State.bestIndex(s), 1)
      assert.strictEqual(s.lastImprovementIteration, 5)
    })
  })

  describe("checkConsistency", () => {
    it("reports broken states", () => {
      const [s] = add(start({ v1: 1 }), [0], { v1: 0.5 })
      assert.deepStrictEqual(State.checkConsistency(s), [])
      const problems = (st: State.GepaState) => State.checkConsistency(st).join("\n")
      expect(problems({ ...s, parents: [[], [1]] })).toContain("parent 1")
      expect(problems({ ...s, valAverages: [1] })).toContain("valAverages")
      expect(problems({ ...s, candidates: [seedCandidate, { system: "x" }] })).toContain("candidate 1 components")
      expect(
        problems({ ...s, fronts: { ...s.fronts, instance: { best: { v1: 1 }, programs: { v1: [1] } } } })
      ).toContain("candidate 1 is on the front")
      expect(
        problems({ ...s, fronts: { ...s.fronts, instance: { best: { v1: 1 }, programs: { v1: [] } } } })
      ).toContain("empty")
      expect(problems({ ...s, metricCalls: -1 })).toContain("metricCalls")
    })

    it("is empty for states built by random sequences of addCandidate, whose fronts match a model", () => {
      fc.assert(
        fc.property(specArb, (spec) => {
          const { evaluations, state } = buildChecked(spec)
          assert.deepStrictEqual(State.checkConsistency(state), [])
          const n = state.candidates.length
          assert.strictEqual(n, spec.ops.length + 1)
          assert.strictEqual(state.fullValEvals, n)

          // averages and coverage
          evaluations.forEach((e, i) => {
            const values = Object.values(e.scores)
            assert.strictEqual(state.valCoverage[i], values.length)
            const mean = values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length
            assert.closeTo(state.valAverages[i]!, mean, 1e-12)
          })

          // every program on a front has the best score for that key, and every
          // program reaching the best score is on the front
          assert.deepStrictEqual(state.fronts.instance, modelTable(state.valScores))
          for (const [key, programs] of Object.entries(state.fronts.instance.programs)) {
            for (const p of programs) assert.strictEqual(state.valScores[p]![key], state.fronts.instance.best[key])
          }
          assert.deepStrictEqual(state.fronts.objective, modelTable(state.objectiveScores))
          if (spec.frontierType === "cartesian") {
            const perProgram = evaluations.map((e) => {
              const out: Record<string, number> = {}
              for (const [v, objs] of Object.entries(e.objectiveScores)) {
                for (const o of OBJECTIVES) out[Frontier.cartesianKey(v, o)] = objs[o]!
              }
              return out
            })
            assert.deepStrictEqual(state.fronts.cartesian, modelTable(perProgram))
          } else {
            assert.deepStrictEqual(state.fronts.cartesian, Frontier.emptyTable)
          }

          // best index against a brute-force ranking
          const ranked = state.candidates
            .map((_, i) => i)
            .sort((a, b) => {
              const sa = state.valCoverage[a]! > 0 ? state.valAverages[a]! : -Infinity
              const sb = state.valCoverage[b]! > 0 ? state.valAverages[b]! : -Infinity
              if (sa !== sb) return sb - sa
              if (state.valCoverage[a] !== state.valCoverage[b]) return state.valCoverage[b]! - state.valCoverage[a]!
              // equals: the newest, unless none was scored (then the seed)
              return state.valCoverage[a]! > 0 ? b - a : a - b
            })
          assert.strictEqual(State.bestIndex(state), ranked[0])
        }),
        { numRuns: 200 }
      )
    })
  })
})
