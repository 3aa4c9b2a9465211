import { assert, describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import * as Frontier from "../src/Frontier.js"

const right = <A, E>(e: Either.Either<A, E>): A => {
  if (Either.isLeft(e)) throw new Error(`expected Right, got Left: ${String(e.left)}`)
  return e.right
}

describe("Frontier", () => {
  describe("updateTable", () => {
    it("a higher score replaces the set, an equal score joins it, a lower score is ignored", () => {
      let t = Frontier.updateTable(Frontier.emptyTable, [["a", 0.5], ["b", 0.2]], 0)
      assert.deepStrictEqual(t, { best: { a: 0.5, b: 0.2 }, programs: { a: [0], b: [0] } })
      // higher on a, equal on b
      t = Frontier.updateTable(t, [["a", 0.7], ["b", 0.2]], 1)
      assert.deepStrictEqual(t, { best: { a: 0.7, b: 0.2 }, programs: { a: [1], b: [0, 1] } })
      // lower on a, lower on b
      const unchanged = Frontier.updateTable(t, [["a", 0.1], ["b", 0.1]], 2)
      assert.strictEqual(unchanged, t)
      // a new key starts a new front
      t = Frontier.updateTable(t, [["c", -1]], 3)
      assert.deepStrictEqual(t.programs.c, [3])
      assert.strictEqual(t.best.c, -1)
    })

    it("does not mutate its input", () => {
      const t0 = Frontier.updateTable(Frontier.emptyTable, [["a", 0.5]], 0)
      const snapshot = JSON.parse(JSON.stringify(t0))
      Frontier.updateTable(t0, [["a", 0.5]], 1)
      Frontier.updateTable(t0, [["a", 0.9]], 2)
      assert.deepStrictEqual(t0, snapshot)
      assert.deepStrictEqual(Frontier.emptyTable, { best: {}, programs: {} })
    })

    it("keeps program lists sorted and free of duplicates", () => {
      let t = Frontier.emptyTable
      for (const p of [5, 2, 9, 2, 0, 5]) t = Frontier.updateTable(t, [["k", 1]], p)
      assert.deepStrictEqual(t.programs.k, [0, 2, 5, 9])
    })

    it("matches a model: best = max score seen, programs = every program reaching it", () => {
      const update = fc.record({
        program: fc.nat({ max: 12 }),
        scores: fc.dictionary(fc.constantFrom("a", "b", "c", "d"), fc.integer({ min: 0, max: 3 }).map((x) => x / 2))
      })
      fc.assert(
        fc.property(fc.array(update, { maxLength: 25 }), (updates) => {
          let t = Frontier.emptyTable
          for (const u of updates) t = Frontier.updateTable(t, Object.entries(u.scores), u.program)
          const keys = new Set(updates.flatMap((u) => Object.keys(u.scores)))
          assert.deepStrictEqual(Object.keys(t.best).sort(), [...keys].sort())
          for (const key of keys) {
            const reports = updates.filter((u) => key in u.scores)
            const best = Math.max(...reports.map((u) => u.scores[key]!))
            const programs = [...new Set(reports.filter((u) => u.scores[key] === best).map((u) => u.program))]
            programs.sort((a, b) => a - b)
            assert.strictEqual(t.best[key], best)
            assert.deepStrictEqual(t.programs[key], programs)
          }
        }),
        { numRuns: 300 }
      )
    })
  })

  describe("aggregateObjectives", () => {
    it("averages each objective over the examples that report it", () => {
      assert.deepStrictEqual(
        Frontier.aggregateObjectives([{ acc: 1, len: 0.5 }, { acc: 0 }, { acc: 0.5, len: 1 }]),
        { acc: 0.5, len: 0.75 }
      )
      assert.deepStrictEqual(Frontier.aggregateObjectives([]), {})
    })
  })

  describe("addProgram", () => {
    const scores = { valScores: { v1: 1, v2: 0 } }

    it("instance works without objective scores and leaves the other tables alone", () => {
      const fronts = right(Frontier.addProgram(Frontier.empty, "instance", 0, scores))
      assert.deepStrictEqual(fronts.instance, { best: { v1: 1, v2: 0 }, programs: { v1: [0], v2: [0] } })
      assert.deepStrictEqual(fronts.objective, Frontier.emptyTable)
      assert.deepStrictEqual(fronts.cartesian, Frontier.emptyTable)
    })

    for (const frontierType of ["objective", "hybrid", "cartesian"] as const) {
      it(`${frontierType} without objective scores fails with MissingObjectiveScores naming the type`, () => {
        for (const s of [scores, { ...scores, valObjectiveScores: {} }, { ...scores, valObjectiveScores: undefined }]) {
          const result = Frontier.addProgram(Frontier.empty, frontierType, 0, s, "evaluate (test)")
          assert.isTrue(Either.isLeft(result))
          if (Either.isLeft(result)) {
            const error = result.left
            assert.strictEqual(error._tag, "MissingObjectiveScores")
            assert.strictEqual(error.frontierType, frontierType)
            assert.strictEqual(error.call, "evaluate (test)")
            expect(error.message).toContain(`"${frontierType}"`)
            expect(error.message).toContain("evaluate (test)")
          }
        }
      })
    }

    const withObjectives = {
      valScores: { v1: 1, v2: 0 },
      valObjectiveScores: { v1: { acc: 1, cost: 0.2 }, v2: { acc: 0, cost: 0.6 } }
    }

    it("instance with objective scores also tracks the objective table", () => {
      const fronts = right(Frontier.addProgram(Frontier.empty, "instance", 0, withObjectives))
      assert.deepStrictEqual(fronts.objective.best, { acc: 0.5, cost: 0.4 })
      assert.deepStrictEqual(fronts.cartesian, Frontier.emptyTable)
    })

    it("hybrid tracks instance and objective, not cartesian", () => {
      const fronts = right(Frontier.addProgram(Frontier.empty, "hybrid", 0, withObjectives))
      assert.deepStrictEqual(Object.keys(fronts.instance.best).sort(), ["v1", "v2"])
      assert.deepStrictEqual(Object.keys(fronts.objective.best).sort(), ["acc", "cost"])
      assert.deepStrictEqual(fronts.cartesian, Frontier.emptyTable)
    })

    it("cartesian tracks one front per (example, objective) pair", () => {
      let fronts = right(Frontier.addProgram(Frontier.empty, "cartesian", 0, withObjectives))
      fronts = right(
        Frontier.addProgram(fronts, "cartesian", 1, {
          valScores: { v1: 1, v2: 1 },
          valObjectiveScores: { v1: { acc: 1, cost: 0.1 }, v2: { acc: 1, cost: 0.6 } }
        })
      )
      const c = fronts.cartesian
      assert.deepStrictEqual(
        Object.keys(c.best).sort(),
        [
          Frontier.cartesianKey("v1", "acc"),
          Frontier.cartesianKey("v1", "cost"),
          Frontier.cartesianKey("v2", "acc"),
          Frontier.cartesianKey("v2", "cost")
        ].sort()
      )
      assert.deepStrictEqual(c.programs[Frontier.cartesianKey("v1", "acc")], [0, 1])
      assert.deepStrictEqual(c.programs[Frontier.cartesianKey("v1", "cost")], [0])
      assert.deepStrictEqual(c.programs[Frontier.cartesianKey("v2", "acc")], [1])
      assert.deepStrictEqual(c.programs[Frontier.cartesianKey("v2", "cost")], [0, 1])
      assert.strictEqual(c.best[Frontier.cartesianKey("v2", "acc")], 1)
    })
  })

  describe("cartesianKey", () => {
    it("is injective on (example, objective) pairs and decodable", () => {
      assert.notStrictEqual(Frontier.cartesianKey("a,b", "c"), Frontier.cartesianKey("a", "b,c"))
      fc.assert(
        fc.property(fc.string(), fc.string(), fc.string(), fc.string(), (v1, o1, v2, o2) => {
          const k1 = Frontier.cartesianKey(v1, o1)
          assert.deepStrictEqual(JSON.parse(k1), [v1, o1])
          if (v1 !== v2 || o1 !== o2) assert.notStrictEqual(k1, Frontier.cartesianKey(v2, o2))
        }),
        { numRuns: 300 }
      )
    })
  })

  describe("programSets", () => {
    const fronts: Frontier.Fronts = {
      instance: { best: { v1: 1, v2: 1 }, programs: { v1: [0], v2: [1, 2] } },
      objective: { best: { acc: 1 }, programs: { acc: [3] } },
      cartesian: { best: { [Frontier.cartesianKey("v1", "acc")]: 1 }, programs: { [Frontier.cartesianKey("v1", "acc")]: [4] } }
    }

    it("selects the fronts of the frontier type", () => {
      const sorted = (sets: ReadonlyArray<ReadonlyArray<number>>) => sets.map((s) => [...s]).sort((a, b) => a[0]! - b[0]!)
      assert.deepStrictEqual(sorted(Frontier.programSets(fronts, "instance")), [[0], [1, 2]])
      assert.deepStrictEqual(sorted(Frontier.programSets(fronts, "objective")), [[3]])
      assert.deepStrictEqual(sorted(Frontier.programSets(fronts, "hybrid")), [[0], [1, 2], [3]])
      assert.deepStrictEqual(sorted(Frontier.programSets(fronts, "cartesian")), [[4]])
      assert.deepStrictEqual(Frontier.programSets(Frontier.empty, "hybrid"), [])
    })
  })
})
