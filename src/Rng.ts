/**
 * A seeded pseudo-random generator whose whole state is four 32-bit integers.
 *
 * Every algorithmic choice of the optimizer (parent selection, minibatch
 * shuffling, merge pairing, tie-breaks) draws from one `Rng`. Because the
 * state is plain data it lives inside the optimizer state, so a persisted
 * run resumes the exact same random stream.
 *
 * The generator is xoshiro128** seeded through splitmix32.
 *
 * @since 0.1.0
 */
import { Array as Arr, Schema } from "effect"

/**
 * The persisted state of a generator.
 *
 * @since 0.1.0
 * @category models
 */
export const RngState = Schema.Tuple(Schema.Number, Schema.Number, Schema.Number, Schema.Number)

/**
 * The generator's four words of state, as decoded from `RngState`.
 *
 * @since 0.1.0
 * @category models
 */
export type RngState = typeof RngState.Type

const splitmix32 = (seed: number): () => number => {
  let s = seed >>> 0
  return () => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
}

const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0

/**
 * A generator cursor. Strategies receive one and draw from it; the engine
 * snapshots it back into the optimizer state after each step.
 *
 * @since 0.1.0
 * @category models
 */
export class Rng {
  private s0: number
  private s1: number
  private s2: number
  private s3: number

  private constructor(state: RngState) {
    this.s0 = state[0] >>> 0
    this.s1 = state[1] >>> 0
    this.s2 = state[2] >>> 0
    this.s3 = state[3] >>> 0
    // xoshiro must not start from the all-zero state
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1
  }

  /**
   * A generator for an integer seed.
   *
   * @since 0.1.0
   */
  static seeded(seed: number): Rng {
    const next = splitmix32(Math.trunc(seed))
    return new Rng([next(), next(), next(), next()])
  }

  /**
   * A generator that continues from a persisted state.
   *
   * @since 0.1.0
   */
  static fromState(state: RngState): Rng {
    return new Rng(state)
  }

  /**
   * The current state as plain data.
   *
   * @since 0.1.0
   */
  snapshot(): RngState {
    return [this.s0, this.s1, this.s2, this.s3]
  }

  /**
   * An independent copy at the same position.
   *
   * @since 0.1.0
   */
  clone(): Rng {
    return new Rng(this.snapshot())
  }

  /**
   * A uniform 32-bit unsigned integer.
   *
   * @since 0.1.0
   */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0
    const t = (this.s1 << 9) >>> 0
    this.s2 = (this.s2 ^ this.s0) >>> 0
    this.s3 = (this.s3 ^ this.s1) >>> 0
    this.s1 = (this.s1 ^ this.s2) >>> 0
    this.s0 = (this.s0 ^ this.s3) >>> 0
    this.s2 = (this.s2 ^ t) >>> 0
    this.s3 = rotl(this.s3, 11)
    return result
  }

  /**
   * A uniform float in [0, 1) with 53 bits of precision.
   *
   * @since 0.1.0
   */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5
    const lo = this.nextUint32() >>> 6
    return (hi * 67108864 + lo) / 9007199254740992
  }

  /**
   * A uniform integer in [0, n). Unbiased (rejection sampling).
   *
   * @since 0.1.0
   */
  nextInt(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new RangeError(`Rng.nextInt: n must be a positive integer, got ${n}`)
    if (n === 1) return 0
    const limit = 0x100000000 - (0x100000000 % n)
    for (;;) {
      const x = this.nextUint32()
      if (x < limit) return x % n
    }
  }

  /**
   * A uniformly chosen element.
   *
   * @since 0.1.0
   */
  pick<A>(items: ReadonlyArray<A>): A {
    if (items.length === 0) throw new RangeError("Rng.pick: empty array")
    return Arr.unsafeGet(items, this.nextInt(items.length))
  }

  /**
   * An element chosen with probability proportional to its weight. Weights
   * that are all zero (or not finite and positive) fall back to a uniform
   * choice instead of failing.
   *
   * @since 0.1.0
   */
  weightedPick<A>(items: ReadonlyArray<A>, weights: ReadonlyArray<number>): A {
    if (items.length === 0) throw new RangeError("Rng.weightedPick: empty array")
    let total = 0
    for (const w of weights) if (Number.isFinite(w) && w > 0) total += w
    if (total <= 0) return this.pick(items)
    let r = this.nextFloat() * total
    let last = 0
    for (let i = 0; i < items.length; i++) {
      const w = weights[i]
      if (w === undefined || !(Number.isFinite(w) && w > 0)) continue
      last = i
      if (r < w) return Arr.unsafeGet(items, i)
      r -= w
    }
    return Arr.unsafeGet(items, last)
  }

  /**
   * A new array with the elements in random order (Fisher-Yates).
   *
   * @since 0.1.0
   */
  shuffle<A>(items: ReadonlyArray<A>): Array<A> {
    const out = items.slice()
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.nextInt(i + 1)
      const tmp = Arr.unsafeGet(out, i)
      out[i] = Arr.unsafeGet(out, j)
      out[j] = tmp
    }
    return out
  }

  /**
   * `k` distinct elements chosen uniformly, in selection order.
   *
   * @since 0.1.0
   */
  sample<A>(items: ReadonlyArray<A>, k: number): Array<A> {
    if (k > items.length) throw new RangeError(`Rng.sample: k=${k} exceeds population ${items.length}`)
    const pool = items.slice()
    const out: Array<A> = []
    for (let i = 0; i < k; i++) {
      const j = i + this.nextInt(pool.length - i)
      const picked = Arr.unsafeGet(pool, j)
      pool[j] = Arr.unsafeGet(pool, i)
      pool[i] = picked
      out.push(picked)
    }
    return out
  }
}
