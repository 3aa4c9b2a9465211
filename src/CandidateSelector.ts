/**
 * Parent selection strategies: pure functions of (state, rng).
 *
 * @since 0.1.0
 */
import * as ParetoIndex from "./internal/engine/paretoIndex.js"
import * as ParetoState from "./internal/engine/paretoState.js"
import * as Pareto from "./Pareto.js"
import type { Rng } from "./Rng.js"
import * as State from "./State.js"

/**
 * Picks the index of the candidate to mutate next.
 *
 * @since 0.1.0
 * @category models
 */
export type CandidateSelector = (state: State.GepaState, rng: Rng) => number

// The analysis is kept per run and brought up to date with each state
// asked about (see internal/engine/paretoState.ts). The choices are those
// of `Pareto.selectionWeights` and `Pareto.draw`, which a property test checks.

/**
 * Frequency-weighted selection over the Pareto fronts (the default): a
 * candidate that is best on more examples is picked more often, and every
 * specialist keeps a chance.
 *
 * @since 0.1.0
 * @category selectors
 */
export const pareto: CandidateSelector = (state, rng) => ParetoIndex.draw(ParetoState.indexOf(state), rng) ?? State.bestIndex(state)

/**
 * Always the candidate with the best mean validation score.
 *
 * @since 0.1.0
 * @category selectors
 */
export const currentBest: CandidateSelector = (state) => State.bestIndex(state)

/**
 * With probability `epsilon` a uniformly random candidate, otherwise the
 * current best.
 *
 * @since 0.1.0
 * @category selectors
 */
export const epsilonGreedy = (epsilon: number): CandidateSelector => {
  if (!(epsilon >= 0 && epsilon <= 1)) throw new RangeError(`epsilonGreedy: epsilon must be in [0, 1], got ${epsilon}`)
  return (state, rng) => rng.nextFloat() < epsilon ? rng.nextInt(state.candidates.length) : State.bestIndex(state)
}

/**
 * Pareto selection restricted to the `k` candidates with the best mean
 * validation score; falls back to the best candidate when none of them is on
 * a front.
 *
 * @since 0.1.0
 * @category selectors
 */
export const topKPareto = (k: number): CandidateSelector => {
  if (!(Number.isInteger(k) && k > 0)) throw new RangeError(`topKPareto: k must be a positive integer, got ${k}`)
  return (state, rng) => {
    const score = State.scoreOf(state)
    const order = state.candidates.map((_, i) => i).sort((a, b) => score(b) - score(a) || a - b)
    const top = new Set(order.slice(0, k))
    const fronts = State.frontSets(state)
      .map((front) => front.filter((p) => top.has(p)))
      .filter((front) => front.length > 0)
    if (fronts.length === 0) return State.bestIndex(state)
    return Pareto.selectFromFronts(fronts, score, rng) ?? State.bestIndex(state)
  }
}
