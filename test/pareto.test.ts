import { assert, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Pareto from "../src/Pareto.js"
import { Rng } from "../src/Rng.js"

type Fronts = ReadonlyArray<ReadonlyArray<number>>

/**
 * Reference-style removal, written independently of src/Pareto.ts: sort the
 * programs by score ascending (ties: lower index first), then repeatedly scan
 * from the start for the first program not yet removed whose every front
 * still holds another surviving program; remove it and rescan from scratch.
 */
const referenceDominators = (fronts: Fronts, scoreOf: (p: number) => number): Array<number> => {
  const programs = Array.from(new Set(fronts.flat())).sort((a, b) => {
    const sa = scoreOf(a)
    const sb = scoreOf(b)
    if (sa < sb) return -1
    if (sa > sb) return 1
    return a - b
  })
  const dominated = new Set<number>()
  const isDominated = (y: number): boolean => {
    const others = programs.filter((p) => p !== y && !dominated.has(p))
    return fronts.filter((front) => front.includes(y)).every((front) => front.some((p) => others.includes(p)))
  }
  let found = true
  while (found) {
    found = false
    for (const y of programs) {
      if (dominated.has(y)) continue
      if (isDominated(y)) {
        dominated.add(y)
        found = true
        break
      }
    }
  }
  return programs.filter((p) => !dominated.has(p))
}

/** Random fronts over `nPrograms` programs, with ties, duplicated members and identical fronts. */
const frontsAndScores = fc
  .integer({ min: 1, max: 9 })
  .chain((nPrograms) =>
    fc.record({
      templates: fc.array(fc.array(fc.nat({ max: nPrograms - 1 }), { maxLength: 5 }), { minLength: 1, maxLength: 6 }),
      picks: fc.array(fc.nat({ max: 100 }), { maxLength: 10 }),
      scores: fc.array(
        fc.oneof(
          fc.integer({ min: 0, max: 3 }).map((x) => x / 4),
          fc.constant(Number.NEGATIVE_INFINITY)
        ),
        { minLength: nPrograms, maxLength: nPrograms }
      )
    })
  )
  .map(({ picks, scores, templates }) => ({
    // fronts drawn from a few templates, so identical fronts are common
    fronts: [...templates, ...picks.map((i) => templates[i % templates.length]!)] as Fronts,
    scores
  }))

const cleanedFrontsContain = (cleaned: Fronts, p: number) => cleaned.some((front) => front.includes(p))

describe("Pareto", () => {
  describe("removalOrder", () => {
    it("sorts by score ascending, ties by lower index", () => {
      const scores = [0.5, 0.2, 0.5, 0.2, Number.NEGATIVE_INFINITY]
      assert.deepStrictEqual(Pareto.removalOrder([0, 1, 2, 3, 4], (p) => scores[p]!), [4, 1, 3, 0, 2])
      assert.deepStrictEqual(Pareto.removalOrder(new Set([3, 2, 1, 0]), () => 1), [0, 1, 2, 3])
    })
  })

  describe("dominators", () => {
    it("matches a hand-computed example", () => {
      // program 0 is on two fronts that each hold another program; it has the
      // lowest score so it goes first, after which 2 and 1 are each alone somewhere
      const fronts = [[0, 1], [1], [0, 2]]
      const scores = [0.5, 0.7, 0.6]
      assert.deepStrictEqual(Pareto.dominators(fronts, (p) => scores[p]!), [2, 1])
    })

    it("keeps the best of programs with identical membership", () => {
      const fronts = [[0, 1, 2], [0, 1, 2]]
      const scores = [0.3, 0.9, 0.6]
      assert.deepStrictEqual(Pareto.dominators(fronts, (p) => scores[p]!), [1])
      // equal scores: the highest index is examined last and survives
      assert.deepStrictEqual(Pareto.dominators(fronts, () => 0.5), [2])
    })

    it("ignores empty fronts and duplicated members", () => {
      assert.deepStrictEqual(Pareto.dominators([], () => 0), [])
      assert.deepStrictEqual(Pareto.dominators([[], []], () => 0), [])
      // [0, 0] is a front with a single program: 0 cannot be removed
      assert.deepStrictEqual(Pareto.dominators([[0, 0], [0, 1]], (p) => p), [0])
    })

    it("returns exactly the reference's survivors (random fronts and scores)", () => {
      fc.assert(
        fc.property(frontsAndScores, ({ fronts, scores }) => {
          const scoreOf = (p: number) => scores[p]!
          const expected = referenceDominators(fronts, scoreOf)
          const actual = Pareto.dominators(fronts, scoreOf)
          assert.deepStrictEqual(
            actual.slice().sort((a, b) => a - b),
            expected.slice().sort((a, b) => a - b),
            JSON.stringify({ fronts, scores })
          )
          // both list survivors in removal order
          assert.deepStrictEqual(actual, expected)
        }),
        { numRuns: 300 }
      )
    })

    it("every survivor is the only survivor of at least one front (nothing more can be removed)", () => {
      fc.assert(
        fc.property(frontsAndScores, ({ fronts, scores }) => {
          const cleaned = Pareto.removeDominated(fronts, (p) => scores[p]!)
          for (const p of Pareto.dominators(fronts, (q) => scores[q]!)) {
            assert.isTrue(
              cleaned.some((front) => front.length > 0 && front.every((q) => q === p)),
              `survivor ${p} is removable in ${JSON.stringify(cleaned)}`
            )
          }
        }),
        { numRuns: 200 }
      )
    })
  })

  describe("removeDominated", () => {
    it("every non-empty front keeps at least one program, and fronts only shrink", () => {
      fc.assert(
        fc.property(frontsAndScores, ({ fronts, scores }) => {
          const cleaned = Pareto.removeDominated(fronts, (p) => scores[p]!)
          assert.strictEqual(cleaned.length, fronts.length)
          cleaned.forEach((front, f) => {
            const original = fronts[f]!
            if (original.length > 0) assert.isAbove(front.length, 0, `front ${f} emptied`)
            for (const p of front) assert.include(original, p)
          })
        }),
        { numRuns: 300 }
      )
    })
  })

  describe("frequencies", () => {
    it("counts each front once per program", () => {
      const freq = Pareto.frequencies([[0, 0, 1], [1], [], [2, 1]])
      assert.deepStrictEqual(
        [...freq.entries()].sort((a, b) => a[0] - b[0]),
        [[0, 1], [1, 3], [2, 1]]
      )
    })
  })

  describe("selectFromFronts", () => {
    it("returns a program on some cleaned front, undefined only when every front is empty", () => {
      fc.assert(
        fc.property(frontsAndScores, fc.integer(), ({ fronts, scores }, seed) => {
          const scoreOf = (p: number) => scores[p]!
          const cleaned = Pareto.removeDominated(fronts, scoreOf)
          const rng = Rng.seeded(seed)
          const allEmpty = fronts.every((front) => front.length === 0)
          for (let k = 0; k < 5; k++) {
            const p = Pareto.selectFromFronts(fronts, scoreOf, rng)
            if (allEmpty) assert.isUndefined(p)
            else {
              assert.isDefined(p)
              assert.isTrue(cleanedFrontsContain(cleaned, p!), `${p} not on ${JSON.stringify(cleaned)}`)
            }
          }
        }),
        { numRuns: 200 }
      )
      assert.isUndefined(Pareto.selectFromFronts([[], []], () => 0, Rng.seeded(1)))
    })

    it("selects with frequency proportional to front membership (fixed seed)", () => {
      // program 3 is dominated (each of its fronts holds 0 or 2) and has the lowest score;
      // after cleaning: 0 on 4 fronts, 1 on 1, 2 on 3
      const fronts = [[0], [0], [0, 3], [1], [2], [2, 3], [0, 2]]
      const scores = [0.5, 0.4, 0.6, 0.1]
      const scoreOf = (p: number) => scores[p]!
      assert.deepStrictEqual(Pareto.dominators(fronts, scoreOf).sort(), [0, 1, 2])
      const rng = Rng.seeded(2025)
      const counts = [0, 0, 0, 0]
      const total = 24_000
      for (let i = 0; i < total; i++) counts[Pareto.selectFromFronts(fronts, scoreOf, rng)!]!++
      assert.strictEqual(counts[3], 0)
      expect(Math.abs(counts[0]! / total - 4 / 8)).toBeLessThan(0.015)
      expect(Math.abs(counts[1]! / total - 1 / 8)).toBeLessThan(0.015)
      expect(Math.abs(counts[2]! / total - 3 / 8)).toBeLessThan(0.015)
    })

    it("is deterministic for a given generator state", () => {
      const fronts = [[0, 1], [1, 2], [3], [2, 3]]
      const scoreOf = (p: number) => p / 10
      const a = Rng.seeded(4)
      const b = Rng.seeded(4)
      for (let i = 0; i < 50; i++) {
        assert.strictEqual(Pareto.selectFromFronts(fronts, scoreOf, a), Pareto.selectFromFronts(fronts, scoreOf, b))
      }
    })
  })
})
