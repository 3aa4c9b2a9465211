/**
 * Which validation examples an accepted candidate is evaluated on.
 *
 * @since 0.1.0
 */
import { defined } from "./internal/shared/invariant.js"
import type { Rng } from "./Rng.js"
import type { GepaState } from "./State.js"

/**
 * Chooses the validation ids for a new candidate. All policies rank
 * candidates by their mean over the examples they were evaluated on, ties by
 * coverage.
 *
 * @since 0.1.0
 * @category models
 */
export type EvaluationPolicy = (state: GepaState, valIds: ReadonlyArray<string>, rng: Rng) => ReadonlyArray<string>

/**
 * Every validation example (the default).
 *
 * @since 0.1.0
 * @category policies
 */
export const full: EvaluationPolicy = (_state, valIds) => valIds

/**
 * Sparse evaluation: `batchSize` examples per new candidate, preferring the
 * examples evaluated least so far (random among equals), so that coverage
 * spreads evenly over the validation set while each accepted candidate costs
 * a fixed number of metric calls.
 *
 * @since 0.1.0
 * @category policies
 */
export const incremental = (batchSize: number): EvaluationPolicy => {
  if (!(Number.isInteger(batchSize) && batchSize > 0)) {
    throw new RangeError(`incremental: batchSize must be a positive integer, got ${batchSize}`)
  }
  return (state, valIds, rng) => {
    if (batchSize >= valIds.length) return valIds
    const counts = new Map<string, number>()
    for (const scores of state.valScores) for (const id in scores) counts.set(id, (counts.get(id) ?? 0) + 1)
    const shuffled = rng.shuffle(valIds)
    // every id is in both maps: they are built from the ids being sorted
    const position = new Map(shuffled.map((id, i) => [id, i]))
    const original = new Map(valIds.map((id, i) => [id, i]))
    const indexIn = (map: Map<string, number>, id: string) => defined(map.get(id), "the index of a validation id")
    return shuffled
      .slice()
      .sort((a, b) => (counts.get(a) ?? 0) - (counts.get(b) ?? 0) || indexIn(position, a) - indexIn(position, b))
      .slice(0, batchSize)
      .sort((a, b) => indexIn(original, a) - indexIn(original, b))
  }
}
