import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import * as CandidateSelector from "../src/CandidateSelector.js"
import * as Frontier from "../src/Frontier.js"
import * as AppendOnly from "../src/internal/engine/appendOnly.js"
import * as ParetoIndex from "../src/internal/engine/paretoIndex.js"
import * as Pareto from "../src/Pareto.js"
import { Rng } from "../src/Rng.js"
import * as State from "../src/State.js"

// The incremental analysis must choose exactly what the full computation
// (Pareto.selectionWeights + Pareto.draw, rebuilt from scratch) chooses, for
// any sequence of fronts it is asked about: successive states of a run, and
// unrelated fronts and scores in between.

const score = fc.oneof(
  fc.integer({ min: 0, max: 4 }).map((x) => x / 4),
  fc.constant(Number.NEGATIVE_INFINITY)
)

/** a key -> program list table over programs 0 .. n-1 (lists in any order, possibly with repeats) */
const table = (n: number) =>
  fc.dictionary(
    fc.constantFrom("a", "b", "c", "d", "e", "f"),
    fc.array(fc.nat({ max: n - 1 }), { minLength: 1, maxLength: 6 })
  )

const expectSame = (ix: ParetoIndex.ParetoIndex, tables: ParetoIndex.FrontTables, scoreOf: (p: number) => number, seed: number) => {
  const fronts = tables.flatMap((t) => Object.values(t))
  const full = Pareto.selectionWeights(fronts, scoreOf)
  const mine = ParetoIndex.weights(ix)
  expect(mine.programs).toEqual(full.programs)
  expect(mine.weights).toEqual(full.weights)
  expect(mine.total).toBe(full.total)
  for (let k = 0; k < 5; k++) {
    const a = Rng.seeded(seed + k)
    const b = Rng.seeded(seed + k)
    expect(ParetoIndex.draw(ix, a)).toBe(Pareto.draw(full, b))
    expect(a.snapshot()).toEqual(b.snapshot())
  }
}

describe("ParetoIndex", () => {
  it("matches the full computation on arbitrary fronts and scores, in any order", () => {
    const n = 8
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            tables: fc.array(table(n), { minLength: 1, maxLength: 2 }),
            scores: fc.array(score, { minLength: n, maxLength: n }),
            // keep some lists of the previous step by reference, as a new candidate does
            keep: fc.boolean()
          }),
          { minLength: 1, maxLength: 8 }
        ),
        fc.integer(),
        (steps, seed) => {
          const ix = ParetoIndex.make()
          let previous: ParetoIndex.FrontTables | undefined
          let previousScores: Array<number> | undefined
          for (const step of steps) {
            let tables: ParetoIndex.FrontTables = step.tables
            let scores = step.scores
            if (step.keep && previous !== undefined && previousScores !== undefined) {
              tables = step.tables.map((t, i) => ({ ...(previous![i] ?? {}), ...t }))
              scores = previousScores
            }
            const scoreOf = (p: number) => scores[p]!
            ParetoIndex.sync(ix, tables, [scores], n, scoreOf)
            expectSame(ix, tables, scoreOf, seed)
            previous = tables
            previousScores = scores
          }
        }
      ),
      { numRuns: 300 }
    )
  })

  it("matches the full computation along a run's states (CandidateSelector.pareto)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 6, maxLength: 6 }), { minLength: 1, maxLength: 40 }),
        fc.constantFrom<Frontier.FrontierType>("instance", "hybrid", "objective", "cartesian"),
        fc.integer(),
        (rows, frontierType, seed) => {
          const ids = ["v0", "v1", "v2", "v3", "v4", "v5"]
          const valset = (row: ReadonlyArray<number>): State.ValsetEvaluation => ({
            scores: Object.fromEntries(ids.map((id, j) => [id, row[j]! / 4])),
            objectiveScores: Object.fromEntries(ids.map((id, j) => [id, { x: row[j]! / 4, y: (4 - row[(j + 1) % 6]!) / 4 }]))
          })
          let state = Either.getOrThrow(State.initial({
            seed: 0,
            seedCandidate: { p: "seed" },
            frontierType,
            valset: valset(rows[0]!),
            metricCalls: 0
          }))
          const check = () => {
            const a = Rng.seeded(seed)
            const b = Rng.seeded(seed)
            const expected = Pareto.draw(Pareto.selectionWeights(State.frontSets(state), State.scoreOf(state)), b) ?? State.bestIndex(state)
            expect(CandidateSelector.pareto(state, a)).toBe(expected)
            expect(a.snapshot()).toEqual(b.snapshot())
          }
          check()
          for (let i = 1; i < rows.length; i++) {
            const [next] = Either.getOrThrow(State.addCandidate(state, {
              candidate: { p: `candidate ${i}` },
              parents: [i - 1],
              valset: valset(rows[i]!),
              discoveryBudget: i
            }))
            state = next
            check()
            // asked twice about the same state: the same answer
            check()
          }
        }
      ),
      { numRuns: 200 }
    )
  })

  it("matches the full computation when the fronts grow in place, asked about now and then, with seals in between", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            row: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 5, maxLength: 5 }),
            ask: fc.boolean(),
            seal: fc.boolean()
          }),
          { minLength: 1, maxLength: 40 }
        ),
        fc.constantFrom<Frontier.FrontierType>("instance", "hybrid"),
        fc.integer(),
        (steps, frontierType, seed) => {
          const ids = ["v0", "v1", "v2", "v3", "v4"]
          const valset = (row: ReadonlyArray<number>): State.ValsetEvaluation => ({
            scores: Object.fromEntries(ids.map((id, j) => [id, row[j]! / 2])),
            objectiveScores: Object.fromEntries(ids.map((id, j) => [id, { x: row[j]! / 2 }]))
          })
          const owner = AppendOnly.makeOwner()
          let state = Either.getOrThrow(State.initial({
            seed: 0,
            seedCandidate: { p: "seed" },
            frontierType,
            valset: valset(steps[0]!.row),
            metricCalls: 0
          }))
          const kept: Array<readonly [State.GepaState, string]> = []
          const check = () => {
            const a = Rng.seeded(seed)
            const b = Rng.seeded(seed)
            const expected = Pareto.draw(Pareto.selectionWeights(State.frontSets(state), State.scoreOf(state)), b) ?? State.bestIndex(state)
            expect(CandidateSelector.pareto(state, a)).toBe(expected)
          }
          for (let i = 1; i < steps.length; i++) {
            const step = steps[i]!
            const [next] = Either.getOrThrow(State.addCandidate(state, {
              candidate: { p: `candidate ${i}` },
              parents: [i - 1],
              valset: valset(step.row),
              discoveryBudget: i,
              append: AppendOnly.appender(owner)
            }))
            state = next
            if (step.ask) check()
            if (step.seal) {
              AppendOnly.seal(owner)
              kept.push([state, JSON.stringify(state.fronts)])
            }
          }
          check()
          // a sealed state's fronts never changed afterwards
          for (const [s, fronts] of kept) expect(JSON.stringify(s.fronts)).toBe(fronts)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("survives growth past its initial capacity", () => {
    const ix = ParetoIndex.make()
    const lists: Record<string, Array<number>> = {}
    const scores: Array<number> = []
    for (let p = 0; p < 300; p++) {
      scores.push((p * 7919) % 13)
      lists[`k${p % 17}`] = [...(lists[`k${p % 17}`] ?? []), p]
      if (p % 5 === 0) lists[`k${p % 17}`] = [p]
      const tables = [{ ...lists }]
      const copy = scores.slice()
      ParetoIndex.sync(ix, tables, [copy], copy.length, (q) => copy[q]!)
      expectSame(ix, tables, (q) => copy[q]!, p)
    }
  })
})
