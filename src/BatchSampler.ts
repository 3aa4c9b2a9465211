/**
 * Minibatch sampling over the training ids: each epoch shuffles all ids and
 * hands them out in consecutive minibatches, so every id is visited once per
 * epoch. When the number of ids is not a multiple of the minibatch size the
 * epoch is padded (reference rule) with the least frequent ids, latest in the
 * shuffled order first.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import type { Rng } from "./Rng.js"

/**
 * The sampler's position: the current epoch's padded order and the next
 * index into it. Persisted with the optimizer state so a resumed run draws
 * the same minibatches.
 *
 * @since 0.1.0
 * @category models
 */
export const SamplerState = Schema.Struct({
  epoch: Schema.Number,
  order: Schema.Array(Schema.String),
  position: Schema.Number,
  trainSize: Schema.Number
})

/**
 * The sampler's saved position, as decoded from `SamplerState`.
 *
 * @since 0.1.0
 * @category models
 */
export type SamplerState = typeof SamplerState.Type

/**
 * Before the first minibatch.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initial: SamplerState = { epoch: -1, order: [], position: 0, trainSize: 0 }

/**
 * Shuffles `ids` and pads the result to a multiple of `size`.
 *
 * @since 0.1.0
 * @category sampling
 */
export const epochOrder = (ids: ReadonlyArray<string>, size: number, rng: Rng): Array<string> => {
  const order = rng.shuffle(ids)
  const remainder = order.length % size
  if (remainder === 0 || order.length === 0) return order
  // per id, in order of first appearance: how often it appears and where last
  const seen = new Map<string, { readonly count: number; readonly last: number }>()
  order.forEach((id, i) => seen.set(id, { count: (seen.get(id)?.count ?? 0) + 1, last: i }))
  for (let n = size - remainder; n > 0; n--) {
    let chosen: string | undefined
    let chosenFreq = Infinity
    let chosenPos = -1
    for (const [id, { count: f, last: pos }] of seen) {
      if (f < chosenFreq || (f === chosenFreq && pos > chosenPos)) {
        chosen = id
        chosenFreq = f
        chosenPos = pos
      }
    }
    if (chosen === undefined) break // (not reached: `order` is not empty)
    order.push(chosen)
    seen.set(chosen, { count: chosenFreq + 1, last: order.length - 1 })
  }
  return order
}

/**
 * The next minibatch and the advanced sampler state. A new epoch (with a
 * fresh shuffle) starts when the current one is used up or the training set
 * changed size.
 *
 * @since 0.1.0
 * @category sampling
 */
export const next = (
  state: SamplerState,
  trainIds: ReadonlyArray<string>,
  size: number,
  rng: Rng
): readonly [ReadonlyArray<string>, SamplerState] => {
  if (trainIds.length === 0) throw new RangeError("BatchSampler.next: the training set is empty")
  let current = state
  if (current.order.length === 0 || current.position >= current.order.length || current.trainSize !== trainIds.length) {
    current = { epoch: current.epoch + 1, order: epochOrder(trainIds, size, rng), position: 0, trainSize: trainIds.length }
  }
  const batch = current.order.slice(current.position, current.position + size)
  return [batch, { ...current, position: current.position + size }]
}
