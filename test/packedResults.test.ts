import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { ObjectiveScores } from "../src/EvaluationBatch.js"
import { Entries } from "../src/internal/runDir/cache.js"
import { ExampleNumbers, PackedResults } from "../src/internal/shared/packedResults.js"

describe("PackedResults", () => {
  it("finds every entry added, in any order of examples, across its growth (against a plain map)", () => {
    fc.assert(
      // up to 500 writes: past 16 entries a bucket finds its examples through their sorted positions
      fc.property(
        fc.array(fc.record({ example: fc.integer({ min: 0, max: 200 }), score: fc.double({ noNaN: true }) }), { maxLength: 500, size: "max" }),
        (writes) => {
          const packed = new PackedResults<string>()
          const model = new Map<number, { output: string; score: number; iteration: number }>()
          writes.forEach(({ example, score }, n) => {
            const found = packed.find(example)
            const slot = found < 0 ? packed.add(example) : found
            packed.set(slot, `o${n}`, score, n)
            model.set(example, { output: `o${n}`, score, iteration: n })
          })
          expect(packed.size).toBe(model.size)
          for (let example = 0; example <= 200; example++) {
            const slot = packed.find(example)
            const expected = model.get(example)
            if (expected === undefined) expect(slot).toBe(-1)
            else {
              expect(packed.example(slot)).toBe(example)
              expect({ output: packed.output(slot), score: packed.score(slot), iteration: packed.iteration(slot) }).toEqual(expected)
            }
          }
        }
      ),
      { numRuns: 200 }
    )
  })

  it("numbers example keys once, in order of first sight", () => {
    const numbers = new ExampleNumbers()
    expect([numbers.of("b"), numbers.of("a"), numbers.of("b"), numbers.get("a"), numbers.get("c")]).toEqual([0, 1, 0, 1, undefined])
  })
})

describe("a run directory's entries", () => {
  it("keep the latest result per candidate and example, objective scores by example (against a plain map)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            candidate: fc.constantFrom("c0", "c1", "c2"),
            example: fc.integer({ min: 0, max: 30 }),
            objectives: fc.boolean(),
            iteration: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined })
          }),
          { maxLength: 200, size: "max" }
        ),
        (writes) => {
          const entries = new Entries<string | undefined>()
          const model = new Map<string, { output: string | undefined; score: number; objectiveScores?: ObjectiveScores; iteration?: number }>()
          writes.forEach(({ candidate, example, objectives, iteration }, n) => {
            // an undefined output is a result like any other
            const entry = {
              output: n % 5 === 0 ? undefined : `o${n}`,
              score: n / 3,
              ...(objectives ? { objectiveScores: { n } } : {}),
              ...(iteration === undefined ? {} : { iteration })
            }
            entries.set(candidate, `e${example}`, entry)
            model.set(`${candidate}/e${example}`, entry)
          })
          expect(entries.size).toBe(model.size)
          for (const candidate of ["c0", "c1", "c2", "c3"]) {
            for (let example = 0; example <= 31; example++) {
              expect(entries.get(candidate, `e${example}`)).toEqual(model.get(`${candidate}/e${example}`))
            }
          }
        }
      ),
      { numRuns: 200 }
    )
  })
})
