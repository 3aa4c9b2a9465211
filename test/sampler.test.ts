import { assert, describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import fc from "fast-check"
import * as BatchSampler from "../src/BatchSampler.js"
import { Rng } from "../src/Rng.js"

const ids = (n: number) => Array.from({ length: n }, (_, i) => `id${i}`)

const countOf = (xs: ReadonlyArray<string>) => {
  const m = new Map<string, number>()
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1)
  return m
}

const drawMany = (
  state: BatchSampler.SamplerState,
  trainIds: ReadonlyArray<string>,
  size: number,
  rng: Rng,
  count: number
) => {
  const batches: Array<ReadonlyArray<string>> = []
  let s = state
  for (let i = 0; i < count; i++) {
    const [batch, next] = BatchSampler.next(s, trainIds, size, rng)
    batches.push(batch)
    s = next
  }
  return { batches, state: s }
}

const trainSize = fc.integer({ min: 1, max: 50 })
const minibatchSize = fc.integer({ min: 1, max: 10 })

describe("BatchSampler", () => {
  describe("epochOrder", () => {
    it("pads to a multiple of the size with the least frequent ids, latest shuffled first", () => {
      fc.assert(
        fc.property(fc.integer(), trainSize, minibatchSize, (seed, n, size) => {
          const train = ids(n)
          const order = BatchSampler.epochOrder(train, size, Rng.seeded(seed))
          const pad = (size - (n % size)) % size
          assert.strictEqual(order.length, n + pad)
          assert.strictEqual(order.length % size, 0)
          // the unpadded prefix is a permutation of the ids
          assert.deepStrictEqual(order.slice(0, n).sort(), train.slice().sort())
          // least-frequent padding keeps every count within one of each other
          const counts = [...countOf(order).values()]
          assert.strictEqual(counts.length, n)
          assert.isAtMost(Math.max(...counts) - Math.min(...counts), 1)
          // while every id still has count 1, the pads are the last ids of the shuffle, latest first
          if (pad <= n) assert.deepStrictEqual(order.slice(n), order.slice(n - pad, n).reverse())
        }),
        { numRuns: 300 }
      )
    })

    it("is a deterministic function of the generator and does not pad exact multiples", () => {
      const a = BatchSampler.epochOrder(ids(12), 4, Rng.seeded(3))
      const b = BatchSampler.epochOrder(ids(12), 4, Rng.seeded(3))
      assert.deepStrictEqual(a, b)
      assert.strictEqual(a.length, 12)
      assert.deepStrictEqual(BatchSampler.epochOrder([], 3, Rng.seeded(1)), [])
    })

    it("pads a single id up to the minibatch size", () => {
      assert.deepStrictEqual(BatchSampler.epochOrder(["only"], 3, Rng.seeded(1)), ["only", "only", "only"])
    })
  })

  describe("next", () => {
    it("each epoch hands out every id at least once, in full minibatches", () => {
      fc.assert(
        fc.property(fc.integer(), trainSize, minibatchSize, (seed, n, size) => {
          const train = ids(n)
          const rng = Rng.seeded(seed)
          const batchesPerEpoch = Math.ceil(n / size)
          let state = BatchSampler.initial
          for (let epoch = 0; epoch < 3; epoch++) {
            const seen = new Set<string>()
            for (let b = 0; b < batchesPerEpoch; b++) {
              const [batch, next] = BatchSampler.next(state, train, size, rng)
              assert.strictEqual(batch.length, size)
              assert.strictEqual(next.epoch, epoch)
              for (const id of batch) seen.add(id)
              state = next
            }
            assert.strictEqual(seen.size, n, `epoch ${epoch} missed ids`)
            assert.strictEqual(state.order.length, batchesPerEpoch * size)
          }
        }),
        { numRuns: 200 }
      )
    })

    it("a persisted sampler and generator continue identically", () => {
      fc.assert(
        fc.property(
          fc.integer(),
          trainSize,
          minibatchSize,
          fc.integer({ min: 1, max: 40 }),
          fc.nat({ max: 40 }),
          (seed, n, size, total, splitRaw) => {
            const split = splitRaw % (total + 1)
            const train = ids(n)
            const straight = drawMany(BatchSampler.initial, train, size, Rng.seeded(seed), total)

            const rng = Rng.seeded(seed)
            const first = drawMany(BatchSampler.initial, train, size, rng, split)
            // persist both through JSON as the optimizer state would
            const samplerJson = JSON.stringify(Schema.encodeSync(BatchSampler.SamplerState)(first.state))
            const rngJson = JSON.stringify(rng.snapshot())
            const restoredState = Schema.decodeUnknownSync(BatchSampler.SamplerState)(JSON.parse(samplerJson))
            const restoredRng = Rng.fromState(JSON.parse(rngJson))
            const second = drawMany(restoredState, train, size, restoredRng, total - split)

            assert.deepStrictEqual([...first.batches, ...second.batches], straight.batches)
            assert.deepStrictEqual(second.state, straight.state)
          }
        ),
        { numRuns: 200 }
      )
    })

    it("starts a new epoch when the training set changes size", () => {
      const rng = Rng.seeded(11)
      const [b1, s1] = BatchSampler.next(BatchSampler.initial, ids(10), 3, rng)
      assert.strictEqual(b1.length, 3)
      assert.strictEqual(s1.epoch, 0)
      assert.strictEqual(s1.trainSize, 10)
      assert.strictEqual(s1.position, 3)
      const [b2, s2] = BatchSampler.next(s1, ids(11), 3, rng)
      assert.strictEqual(s2.epoch, 1)
      assert.strictEqual(s2.trainSize, 11)
      assert.strictEqual(s2.position, 3)
      assert.strictEqual(s2.order.length, 12)
      assert.include(s2.order, "id10")
      assert.deepStrictEqual(b2, s2.order.slice(0, 3))
      // same size again: stays in the epoch
      const [, s3] = BatchSampler.next(s2, ids(11), 3, rng)
      assert.strictEqual(s3.epoch, 1)
      assert.strictEqual(s3.position, 6)
    })

    it("starts a new epoch with a fresh shuffle once the order is used up", () => {
      const rng = Rng.seeded(12)
      const { batches, state } = drawMany(BatchSampler.initial, ids(6), 2, rng, 3)
      assert.strictEqual(state.epoch, 0)
      assert.strictEqual(state.position, 6)
      const [next, s] = BatchSampler.next(state, ids(6), 2, rng)
      assert.strictEqual(s.epoch, 1)
      assert.deepStrictEqual(next, s.order.slice(0, 2))
      assert.deepStrictEqual(batches.flat().sort(), ids(6).sort())
    })

    it("consumes no randomness within an epoch", () => {
      const rng = Rng.seeded(13)
      const [, s1] = BatchSampler.next(BatchSampler.initial, ids(9), 3, rng)
      const before = rng.snapshot()
      BatchSampler.next(s1, ids(9), 3, rng)
      assert.deepStrictEqual(rng.snapshot(), before)
    })

    it("rejects an empty training set", () => {
      expect(() => BatchSampler.next(BatchSampler.initial, [], 3, Rng.seeded(1))).toThrow(RangeError)
    })
  })
})
