import { assert, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Rng } from "../src/Rng.js"

const draws = (rng: Rng, n: number): Array<number> => Array.from({ length: n }, () => rng.nextUint32())

/** Pearson chi-square statistic of observed counts against a uniform expectation. */
const chiSquareUniform = (counts: ReadonlyArray<number>): number => {
  const total = counts.reduce((a, b) => a + b, 0)
  const expected = total / counts.length
  return counts.reduce((acc, c) => acc + (c - expected) ** 2 / expected, 0)
}

describe("Rng", () => {
  describe("determinism", () => {
    it("the same seed gives the same stream", () => {
      fc.assert(
        fc.property(fc.integer(), (seed) => {
          assert.deepStrictEqual(draws(Rng.seeded(seed), 64), draws(Rng.seeded(seed), 64))
        }),
        { numRuns: 200 }
      )
    })

    it("different seeds give different streams", () => {
      const streams = new Set([0, 1, 2, 3, 42, -1, 2 ** 31].map((s) => draws(Rng.seeded(s), 8).join(",")))
      assert.strictEqual(streams.size, 7)
    })

    it("fromState(snapshot) continues the stream exactly", () => {
      fc.assert(
        fc.property(fc.integer(), fc.nat({ max: 200 }), (seed, skip) => {
          const rng = Rng.seeded(seed)
          for (let i = 0; i < skip; i++) rng.nextUint32()
          const snapshot = rng.snapshot()
          // the snapshot is plain JSON data
          const restored = Rng.fromState(JSON.parse(JSON.stringify(snapshot)))
          assert.deepStrictEqual(draws(restored, 32), draws(rng, 32))
        }),
        { numRuns: 200 }
      )
    })

    it("snapshot is four unsigned 32-bit integers and is not aliased", () => {
      const rng = Rng.seeded(7)
      const snap = rng.snapshot()
      assert.strictEqual(snap.length, 4)
      for (const x of snap) assert.isTrue(Number.isInteger(x) && x >= 0 && x <= 0xffffffff)
      rng.nextUint32()
      assert.notDeepEqual(rng.snapshot(), snap)
    })

    it("clone is an independent copy at the same position", () => {
      const rng = Rng.seeded(99)
      rng.nextUint32()
      const copy = rng.clone()
      const a = draws(rng, 10)
      const b = draws(copy, 10)
      assert.deepStrictEqual(a, b)
      rng.nextUint32()
      assert.notDeepEqual(rng.snapshot(), copy.snapshot())
    })

    it("an all-zero state does not get stuck", () => {
      const rng = Rng.fromState([0, 0, 0, 0])
      const xs = draws(rng, 16)
      assert.isTrue(new Set(xs).size > 10)
    })
  })

  describe("nextInt", () => {
    it("stays in [0, n)", () => {
      fc.assert(
        fc.property(fc.integer(), fc.integer({ min: 1, max: 2 ** 32 }), (seed, n) => {
          const rng = Rng.seeded(seed)
          for (let i = 0; i < 20; i++) {
            const x = rng.nextInt(n)
            assert.isTrue(Number.isInteger(x) && x >= 0 && x < n, `${x} not in [0, ${n})`)
          }
        }),
        { numRuns: 300 }
      )
    })

    it("is roughly uniform (chi-square, fixed seed)", () => {
      const rng = Rng.seeded(12345)
      for (const n of [2, 7, 10]) {
        const counts = new Array<number>(n).fill(0)
        for (let i = 0; i < 30_000; i++) counts[rng.nextInt(n)]!++
        // 0.1% critical values: df=1 -> 10.83, df=6 -> 22.46, df=9 -> 27.88
        const critical = { 2: 10.83, 7: 22.46, 10: 27.88 }[n]!
        expect(chiSquareUniform(counts)).toBeLessThan(critical)
      }
    })

    it("is uniform for a range that does not divide 2^32 (no modulo bias)", () => {
      // n = 3 * 2^30: naive modulo would make the lowest 2^30 values twice as likely
      const n = 3 * 2 ** 30
      const rng = Rng.seeded(5)
      let low = 0
      const total = 30_000
      for (let i = 0; i < total; i++) if (rng.nextInt(n) < 2 ** 30) low++
      expect(Math.abs(low / total - 1 / 3)).toBeLessThan(0.02)
    })

    it("rejects a non-positive or non-integer bound", () => {
      const rng = Rng.seeded(1)
      expect(() => rng.nextInt(0)).toThrow(RangeError)
      expect(() => rng.nextInt(-3)).toThrow(RangeError)
      expect(() => rng.nextInt(1.5)).toThrow(RangeError)
      expect(() => rng.nextInt(Number.NaN)).toThrow(RangeError)
      assert.strictEqual(rng.nextInt(1), 0)
    })
  })

  describe("nextFloat", () => {
    it("stays in [0, 1) with mean close to 1/2", () => {
      const rng = Rng.seeded(2024)
      let sum = 0
      const total = 20_000
      for (let i = 0; i < total; i++) {
        const x = rng.nextFloat()
        assert.isTrue(x >= 0 && x < 1)
        sum += x
      }
      expect(Math.abs(sum / total - 0.5)).toBeLessThan(0.01)
    })
  })

  describe("pick / weightedPick", () => {
    it("pick fails on an empty array and returns members", () => {
      const rng = Rng.seeded(3)
      expect(() => rng.pick([])).toThrow(RangeError)
      for (let i = 0; i < 50; i++) assert.include(["a", "b", "c"], rng.pick(["a", "b", "c"]))
    })

    it("weightedPick with all-zero weights falls back to a uniform choice (no throw)", () => {
      const rng = Rng.seeded(8)
      const items = ["a", "b", "c"]
      const counts: Record<string, number> = { a: 0, b: 0, c: 0 }
      const total = 9_000
      for (let i = 0; i < total; i++) counts[rng.weightedPick(items, [0, 0, 0])]!++
      for (const k of items) expect(Math.abs(counts[k]! / total - 1 / 3)).toBeLessThan(0.03)
    })

    it("weightedPick with only non-positive / non-finite weights falls back to uniform", () => {
      const rng = Rng.seeded(9)
      const seen = new Set<string>()
      for (let i = 0; i < 200; i++) {
        seen.add(rng.weightedPick(["a", "b", "c"], [-1, Number.NaN, Number.POSITIVE_INFINITY]))
      }
      assert.deepStrictEqual([...seen].sort(), ["a", "b", "c"])
    })

    it("weightedPick is proportional to the weights", () => {
      const rng = Rng.seeded(10)
      const counts = [0, 0, 0]
      const total = 20_000
      for (let i = 0; i < total; i++) counts[rng.weightedPick([0, 1, 2], [1, 0, 3])]!++
      assert.strictEqual(counts[1], 0)
      expect(Math.abs(counts[0]! / total - 0.25)).toBeLessThan(0.015)
      expect(Math.abs(counts[2]! / total - 0.75)).toBeLessThan(0.015)
    })

    it("weightedPick never picks an item without positive weight when some weight is positive", () => {
      fc.assert(
        fc.property(
          fc.integer(),
          fc.array(fc.oneof(fc.constant(0), fc.constant(-1), fc.double({ min: 0.001, max: 10, noNaN: true })), {
            minLength: 1,
            maxLength: 8
          }),
          (seed, weights) => {
            fc.pre(weights.some((w) => w > 0))
            const rng = Rng.seeded(seed)
            const items = weights.map((_, i) => i)
            for (let k = 0; k < 20; k++) {
              const i = rng.weightedPick(items, weights)
              assert.isTrue(weights[i]! > 0, `picked ${i} with weight ${weights[i]}`)
            }
          }
        ),
        { numRuns: 200 }
      )
    })

    it("weightedPick fails on an empty array", () => {
      expect(() => Rng.seeded(1).weightedPick([], [])).toThrow(RangeError)
    })
  })

  describe("shuffle / sample", () => {
    it("shuffle returns a permutation and leaves the input untouched", () => {
      fc.assert(
        fc.property(fc.integer(), fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 30 }), (seed, items) => {
          const before = items.slice()
          const out = Rng.seeded(seed).shuffle(items)
          assert.deepStrictEqual(items, before)
          assert.strictEqual(out.length, items.length)
          assert.deepStrictEqual(out.slice().sort((a, b) => a - b), before.slice().sort((a, b) => a - b))
        }),
        { numRuns: 300 }
      )
    })

    it("shuffle reaches every permutation of three elements about equally often", () => {
      const rng = Rng.seeded(77)
      const counts = new Map<string, number>()
      const total = 12_000
      for (let i = 0; i < total; i++) {
        const key = rng.shuffle([1, 2, 3]).join("")
        counts.set(key, (counts.get(key) ?? 0) + 1)
      }
      assert.strictEqual(counts.size, 6)
      // df = 5 at 0.1%: 20.52
      expect(chiSquareUniform([...counts.values()])).toBeLessThan(20.52)
    })

    it("sample gives k distinct elements of the population", () => {
      fc.assert(
        fc.property(
          fc.integer(),
          fc.uniqueArray(fc.string({ maxLength: 3 }), { maxLength: 20 }),
          fc.nat({ max: 20 }),
          (seed, items, k0) => {
            const k = Math.min(k0, items.length)
            const out = Rng.seeded(seed).sample(items, k)
            assert.strictEqual(out.length, k)
            assert.strictEqual(new Set(out).size, k)
            for (const x of out) assert.include(items, x)
          }
        ),
        { numRuns: 300 }
      )
    })

    it("sample picks positions, so duplicated values may repeat but positions do not", () => {
      fc.assert(
        fc.property(fc.integer(), fc.integer({ min: 1, max: 15 }), (seed, n) => {
          const positions = Array.from({ length: n }, (_, i) => i)
          const out = Rng.seeded(seed).sample(positions, n)
          assert.deepStrictEqual(out.slice().sort((a, b) => a - b), positions)
        }),
        { numRuns: 100 }
      )
    })

    it("sample fails when k exceeds the population", () => {
      expect(() => Rng.seeded(1).sample([1, 2], 3)).toThrow(RangeError)
      assert.deepStrictEqual(Rng.seeded(1).sample([1, 2], 0), [])
    })
  })
})
