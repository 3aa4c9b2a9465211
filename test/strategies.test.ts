import { assert, describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import * as Acceptance from "../src/Acceptance.js"
import * as CandidateSelector from "../src/CandidateSelector.js"
import * as ComponentSelector from "../src/ComponentSelector.js"
import * as EvaluationPolicy from "../src/EvaluationPolicy.js"
import type * as Frontier from "../src/Frontier.js"
import * as Pareto from "../src/Pareto.js"
import { Rng } from "../src/Rng.js"
import * as State from "../src/State.js"

const right = <A, E>(e: Either.Either<A, E>): A => {
  if (Either.isLeft(e)) throw new Error(`expected Right, got Left: ${String(e.left)}`)
  return e.right
}

const build = (
  evaluations: ReadonlyArray<Record<string, number>>,
  seedCandidate: Record<string, string> = { a: "a", b: "b", c: "c" },
  frontierType: Frontier.FrontierType = "instance"
): State.GepaState => {
  const withObjectives = (scores: Record<string, number>) => ({
    scores,
    objectiveScores: Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, { acc: v, brevity: 1 - v }]))
  })
  let state = right(
    State.initial({ seed: 0, seedCandidate, frontierType, valset: withObjectives(evaluations[0]!), metricCalls: 0 })
  )
  for (const scores of evaluations.slice(1)) {
    ;[state] = right(
      State.addCandidate(state, {
        candidate: { ...seedCandidate },
        parents: [state.candidates.length - 1],
        valset: withObjectives(scores),
        discoveryBudget: 0
      })
    )
  }
  return state
}

/**
 * 0: avg .25, best on v1
 * 1: avg .625, best on v2, v3
 * 2: avg .25, specialist: alone on v4
 * 3: avg .625, best on v1, v2
 */
const fourCandidates = () =>
  build([
    { v1: 1, v2: 0, v3: 0, v4: 0 },
    { v1: 0, v2: 1, v3: 1, v4: 0.5 },
    { v1: 0, v2: 0, v3: 0, v4: 1 },
    { v1: 1, v2: 1, v3: 0.5, v4: 0 }
  ])

const VAL = ["v0", "v1", "v2", "v3", "v4", "v5"]

/** Random states: sparse evaluations (possibly empty) with ties. */
const stateArb = fc
  .record({
    frontierType: fc.constantFrom<Frontier.FrontierType>("instance", "hybrid"),
    evaluations: fc.array(fc.dictionary(fc.constantFrom(...VAL), fc.integer({ min: 0, max: 3 }).map((x) => x / 3)), {
      minLength: 1,
      maxLength: 10
    })
  })
  .map(({ evaluations, frontierType }) =>
    // objective frontiers need at least one score per candidate
    frontierType === "instance"
      ? build(evaluations, undefined, frontierType)
      : build(evaluations.map((e) => (Object.keys(e).length > 0 ? e : { v0: 0 })), undefined, frontierType)
  )

const context = (
  state: State.GepaState,
  candidateIdx: number,
  iteration: number
): ComponentSelector.SelectionContext => ({
  state,
  candidateIdx,
  candidate: state.candidates[candidateIdx]!,
  iteration,
  scores: [],
  rng: Rng.seeded(iteration)
})

/** Runs a selector for `iterations` iterations on candidate 0, feeding its pointer back. */
const runSchedule = (selector: ComponentSelector.ComponentSelector, state: State.GepaState, iterations: number) => {
  let s = state
  const chosen: Array<string> = []
  for (let it = 1; it <= iterations; it++) {
    const selection = selector(context(s, 0, it))
    assert.strictEqual(selection.components.length, 1)
    chosen.push(selection.components[0]!)
    if (selection.nextPointer !== undefined) {
      s = { ...s, nextComponent: s.nextComponent.map((v, i) => (i === 0 ? selection.nextPointer! : v)) }
    }
  }
  return chosen
}

describe("CandidateSelector", () => {
  describe("pareto", () => {
    it("returns a candidate on a (cleaned) front", () => {
      fc.assert(
        fc.property(stateArb, fc.integer(), (state, seed) => {
          const cleaned = Pareto.removeDominated(State.frontSets(state), State.scoreOf(state))
          const onFront = new Set(cleaned.flat())
          const rng = Rng.seeded(seed)
          for (let k = 0; k < 5; k++) {
            const idx = CandidateSelector.pareto(state, rng)
            if (onFront.size === 0) assert.strictEqual(idx, State.bestIndex(state))
            else assert.isTrue(onFront.has(idx), `${idx} not on ${JSON.stringify(cleaned)}`)
          }
        }),
        { numRuns: 200 }
      )
    })

    it("gives the specialist a chance, and never selects a dominated candidate", () => {
      const state = fourCandidates()
      const rng = Rng.seeded(1)
      const seen = new Set<number>()
      for (let k = 0; k < 300; k++) seen.add(CandidateSelector.pareto(state, rng))
      // 0 is dominated by 3 (v1 is its only front and 3 is on it too)
      assert.deepStrictEqual([...seen].sort(), [1, 2, 3])
    })

    it("falls back to the best candidate when every front is empty", () => {
      const state = build([{}, {}])
      assert.strictEqual(CandidateSelector.pareto(state, Rng.seeded(1)), 0)
    })
  })

  describe("currentBest", () => {
    it("is the best index", () => {
      fc.assert(
        fc.property(stateArb, (state) => {
          assert.strictEqual(CandidateSelector.currentBest(state, Rng.seeded(0)), State.bestIndex(state))
        }),
        { numRuns: 100 }
      )
      // 1 and 3 tie (mean 0.625 on 4 examples): the newer is the best
      assert.strictEqual(CandidateSelector.currentBest(fourCandidates(), Rng.seeded(0)), 3)
    })
  })

  describe("epsilonGreedy", () => {
    it("epsilon 0 is always the best", () => {
      const state = fourCandidates()
      const rng = Rng.seeded(5)
      for (let k = 0; k < 500; k++) assert.strictEqual(CandidateSelector.epsilonGreedy(0)(state, rng), 3)
    })

    it("epsilon 1 is uniform over all candidates", () => {
      const state = fourCandidates()
      const rng = Rng.seeded(6)
      const counts = [0, 0, 0, 0]
      const total = 8_000
      for (let k = 0; k < total; k++) counts[CandidateSelector.epsilonGreedy(1)(state, rng)]!++
      for (const c of counts) expect(Math.abs(c / total - 0.25)).toBeLessThan(0.025)
    })

    it("epsilon 0.5 mixes the best with random picks", () => {
      const state = fourCandidates()
      const rng = Rng.seeded(7)
      let best = 0
      const total = 8_000
      for (let k = 0; k < total; k++) if (CandidateSelector.epsilonGreedy(0.5)(state, rng) === 3) best++
      // P(best) = 0.5 + 0.5 / 4
      expect(Math.abs(best / total - 0.625)).toBeLessThan(0.025)
    })

    it("rejects epsilon outside [0, 1]", () => {
      expect(() => CandidateSelector.epsilonGreedy(-0.1)).toThrow(RangeError)
      expect(() => CandidateSelector.epsilonGreedy(1.1)).toThrow(RangeError)
      expect(() => CandidateSelector.epsilonGreedy(Number.NaN)).toThrow(RangeError)
    })
  })

  describe("topKPareto", () => {
    it("restricts selection to the top k", () => {
      const state = fourCandidates()
      const rng = Rng.seeded(8)
      const seen2 = new Set<number>()
      for (let k = 0; k < 300; k++) seen2.add(CandidateSelector.topKPareto(2)(state, rng))
      // top 2 by average: 1 and 3 (0 and 2 tie lower); the specialist 2 is excluded
      assert.deepStrictEqual([...seen2].sort(), [1, 3])
      for (let k = 0; k < 100; k++) assert.strictEqual(CandidateSelector.topKPareto(1)(state, rng), 1)
      const seen4 = new Set<number>()
      for (let k = 0; k < 300; k++) seen4.add(CandidateSelector.topKPareto(4)(state, rng))
      assert.deepStrictEqual([...seen4].sort(), [1, 2, 3])
    })

    it("returns a top-k candidate on some front, or the best when none is", () => {
      fc.assert(
        fc.property(stateArb, fc.integer({ min: 1, max: 5 }), fc.integer(), (state, k, seed) => {
          const score = State.scoreOf(state)
          const top = new Set(
            state.candidates
              .map((_, i) => i)
              .sort((a, b) => (score(a) === score(b) ? a - b : score(b) > score(a) ? 1 : -1))
              .slice(0, k)
          )
          const anyOnFront = State.frontSets(state).some((front) => front.some((p) => top.has(p)))
          const idx = CandidateSelector.topKPareto(k)(state, Rng.seeded(seed))
          if (anyOnFront) {
            assert.isTrue(top.has(idx), `${idx} not in top ${k}`)
            assert.isTrue(State.frontSets(state).some((front) => front.includes(idx)))
          } else assert.strictEqual(idx, State.bestIndex(state))
        }),
        { numRuns: 200 }
      )
    })

    it("rejects a non-positive or fractional k", () => {
      expect(() => CandidateSelector.topKPareto(0)).toThrow(RangeError)
      expect(() => CandidateSelector.topKPareto(1.5)).toThrow(RangeError)
    })
  })
})

describe("ComponentSelector", () => {
  describe("roundRobin", () => {
    it("cycles through the components and wraps the pointer", () => {
      const state = build([{ v: 1 }])
      assert.deepStrictEqual(runSchedule(ComponentSelector.roundRobin, state, 7), ["a", "b", "c", "a", "b", "c", "a"])
      assert.deepStrictEqual(ComponentSelector.roundRobin(context(state, 0, 1)), { components: ["a"], nextPointer: 1 })
      const last = { ...state, nextComponent: [2] }
      assert.deepStrictEqual(ComponentSelector.roundRobin(context(last, 0, 1)), { components: ["c"], nextPointer: 0 })
      const outOfRange = { ...state, nextComponent: [7] }
      assert.deepStrictEqual(ComponentSelector.roundRobin(context(outOfRange, 0, 1)), { components: ["b"], nextPointer: 2 })
    })

    it("a child continues from its parent's pointer", () => {
      let state: State.GepaState = { ...build([{ v: 1 }]), nextComponent: [2] }
      ;[state] = right(State.addCandidate(state, { candidate: state.candidates[0]!, parents: [0], valset: { scores: { v: 1 } }, discoveryBudget: 0 }))
      assert.deepStrictEqual(ComponentSelector.roundRobin(context(state, 1, 1)).components, ["c"])
    })
  })

  describe("all", () => {
    it("selects every component", () => {
      const state = build([{ v: 1 }])
      assert.deepStrictEqual(ComponentSelector.all(context(state, 0, 1)).components, ["a", "b", "c"])
      assert.isUndefined(ComponentSelector.all(context(state, 0, 1)).nextPointer)
    })
  })

  describe("codePromptSchedule", () => {
    const seed = { code_a: "def f(): ...", prompt_x: "You are...", prompt_y: "Answer...", code_b: "def g(): ..." }
    const isCode = (c: string) => c.startsWith("code")
    const state = build([{ v: 1 }], seed)

    it("with initial = 1 alternates code and prompt changes", () => {
      const chosen = runSchedule(ComponentSelector.codePromptSchedule({ isCode }), state, 25)
      chosen.forEach((c, k) => assert.strictEqual(isCode(c), k % 2 === 0, `iteration ${k + 1}: ${c}`))
    })

    it("cycles through every component of each group", () => {
      const chosen = runSchedule(ComponentSelector.codePromptSchedule({ isCode }), state, 8)
      assert.deepStrictEqual(chosen, ["code_a", "prompt_x", "code_b", "prompt_y", "code_a", "prompt_x", "code_b", "prompt_y"])
      // uneven groups and a slower schedule: still every component is reached
      const wide = build([{ v: 1 }], { code_1: "", code_2: "", code_3: "", p_1: "", p_2: "" })
      const chosenWide = runSchedule(ComponentSelector.codePromptSchedule({ isCode, initial: 2 }), wide, 30)
      assert.deepStrictEqual([...new Set(chosenWide)].sort(), ["code_1", "code_2", "code_3", "p_1", "p_2"])
    })

    it("gives more prompt changes per code change later in the run", () => {
      const chosen = runSchedule(ComponentSelector.codePromptSchedule({ isCode }), state, 75)
      const ratio = (from: number, to: number) => {
        const window = chosen.slice(from - 1, to)
        const code = window.filter(isCode).length
        return (window.length - code) / code
      }
      const early = ratio(1, 25)
      const middle = ratio(26, 50)
      const late = ratio(51, 75)
      assert.isBelow(early, middle)
      assert.isBelow(middle, late)
      assert.closeTo(middle, 2, 0.4)
      assert.closeTo(late, 4, 1.1)
      // growEvery and factor shape the schedule
      const fast = runSchedule(ComponentSelector.codePromptSchedule({ isCode, growEvery: 5, factor: 3 }), state, 10)
      // steps 0-4: one prompt per code change; steps 5-9: three (code at step 8 = iteration 9)
      assert.deepStrictEqual(fast.map(isCode), [true, false, true, false, true, false, false, false, true, false])
    })

    it("stops code changes after codeCutoff", () => {
      const chosen = runSchedule(ComponentSelector.codePromptSchedule({ isCode, codeCutoff: 10 }), state, 40)
      assert.isTrue(chosen.slice(0, 9).some(isCode))
      for (const c of chosen.slice(10)) assert.isFalse(isCode(c))
      assert.deepStrictEqual([...new Set(chosen.slice(10))].sort(), ["prompt_x", "prompt_y"])
    })

    it("initial = 0 changes code only; an empty group falls back to the other", () => {
      const codeOnly = runSchedule(ComponentSelector.codePromptSchedule({ isCode, initial: 0 }), state, 10)
      assert.isTrue(codeOnly.every(isCode))
      assert.deepStrictEqual([...new Set(codeOnly)].sort(), ["code_a", "code_b"])
      const promptsOnly = build([{ v: 1 }], { p1: "", p2: "", p3: "" })
      assert.deepStrictEqual(
        runSchedule(ComponentSelector.codePromptSchedule({ isCode }), promptsOnly, 6),
        ["p1", "p2", "p3", "p1", "p2", "p3"]
      )
      const codeOnlyState = build([{ v: 1 }], { code_1: "", code_2: "" })
      assert.deepStrictEqual(
        runSchedule(ComponentSelector.codePromptSchedule({ isCode, codeCutoff: 0 }), codeOnlyState, 4),
        ["code_1", "code_2", "code_1", "code_2"]
      )
    })

    it("rejects invalid options", () => {
      expect(() => ComponentSelector.codePromptSchedule({ isCode, initial: -1 })).toThrow(RangeError)
      expect(() => ComponentSelector.codePromptSchedule({ isCode, growEvery: 0 })).toThrow(RangeError)
      expect(() => ComponentSelector.codePromptSchedule({ isCode, factor: 0.5 })).toThrow(RangeError)
    })
  })
})

describe("EvaluationPolicy", () => {
  it("full evaluates every example", () => {
    assert.deepStrictEqual(EvaluationPolicy.full(fourCandidates(), VAL, Rng.seeded(0)), VAL)
  })

  it("incremental prefers the least-covered examples", () => {
    // v0..v2 evaluated twice, v3 once, v4 and v5 never
    const state = build([{ v0: 1, v1: 1, v2: 1, v3: 1 }, { v0: 1, v1: 1, v2: 1 }])
    for (let seed = 0; seed < 20; seed++) {
      assert.deepStrictEqual(EvaluationPolicy.incremental(2)(state, VAL, Rng.seeded(seed)), ["v4", "v5"])
      assert.deepStrictEqual(EvaluationPolicy.incremental(3)(state, VAL, Rng.seeded(seed)), ["v3", "v4", "v5"])
    }
    // ties are broken at random
    const seen = new Set<string>()
    for (let seed = 0; seed < 40; seed++) {
      for (const id of EvaluationPolicy.incremental(4)(state, VAL, Rng.seeded(seed))) seen.add(id)
    }
    assert.deepStrictEqual([...seen].sort(), VAL)
  })

  it("incremental returns batchSize distinct ids, never a more-covered one before a less-covered one", () => {
    fc.assert(
      fc.property(stateArb, fc.integer({ min: 1, max: 8 }), fc.integer(), (state, batchSize, seed) => {
        const out = EvaluationPolicy.incremental(batchSize)(state, VAL, Rng.seeded(seed))
        assert.strictEqual(out.length, Math.min(batchSize, VAL.length))
        assert.strictEqual(new Set(out).size, out.length)
        // in validation-set order
        assert.deepStrictEqual(out, VAL.filter((id) => out.includes(id)))
        const coverage = (id: string) => state.valScores.filter((s) => id in s).length
        const chosen = out.map(coverage)
        const rest = VAL.filter((id) => !out.includes(id)).map(coverage)
        if (rest.length > 0) assert.isAtMost(Math.max(...chosen), Math.min(...rest))
      }),
      { numRuns: 200 }
    )
  })

  it("incremental rejects a non-positive batch size", () => {
    expect(() => EvaluationPolicy.incremental(0)).toThrow(RangeError)
    expect(() => EvaluationPolicy.incremental(2.5)).toThrow(RangeError)
  })
})

describe("Acceptance", () => {
  it("strictImprovement needs a strictly higher sum", () => {
    assert.isTrue(Acceptance.strictImprovement([0.5, 0.5], [0.5, 0.6]))
    assert.isFalse(Acceptance.strictImprovement([0.5, 0.5], [1, 0]))
    assert.isFalse(Acceptance.strictImprovement([0.5, 0.5], [0.4, 0.5]))
    assert.isFalse(Acceptance.strictImprovement([], []))
  })

  it("improvementOrEqual accepts lateral moves", () => {
    assert.isTrue(Acceptance.improvementOrEqual([0.5, 0.5], [1, 0]))
    assert.isTrue(Acceptance.improvementOrEqual([], []))
    assert.isFalse(Acceptance.improvementOrEqual([0.5, 0.5], [0.4, 0.5]))
  })

  it("both compare sums (random integer scores)", () => {
    const scores = fc.array(fc.integer({ min: 0, max: 10 }), { maxLength: 6 })
    fc.assert(
      fc.property(scores, scores, (before, after) => {
        const sb = before.reduce((a, b) => a + b, 0)
        const sa = after.reduce((a, b) => a + b, 0)
        assert.strictEqual(Acceptance.strictImprovement(before, after), sa > sb)
        assert.strictEqual(Acceptance.improvementOrEqual(before, after), sa >= sb)
      }),
      { numRuns: 200 }
    )
  })
})
