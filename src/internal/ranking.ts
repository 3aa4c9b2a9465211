/**
 * How candidates compare on validation (`State.bestIndex`,
 * `State.scoredAbove`): on the same examples when one was scored on a subset
 * of the other's, otherwise by mean. On the state's columns only, so that it
 * needs nothing of `State`.
 *
 * @internal
 */

/** The validation columns of a run's state. @internal */
export interface Scored {
  readonly candidates: { readonly length: number }
  readonly valScores: ReadonlyArray<Readonly<Record<string, number>>>
  readonly valAverages: ReadonlyArray<number>
  readonly valCoverage: ReadonlyArray<number>
}

const meanOf = (state: Scored, program: number): number => (state.valCoverage[program] ?? 0) > 0 ? state.valAverages[program] ?? -Infinity : -Infinity

/**
 * How much better candidate `i` did than candidate `j` on validation. When
 * they were scored on different numbers of examples and the one scored on
 * more covers every example of the other, the difference of their sums on
 * the smaller set (`paired: true`): means over different examples are not
 * comparable (a child validated on a sample of what the budget had left
 * against the best scored on the whole set). Otherwise the difference of
 * their means (`-Infinity` for a candidate never scored).
 */
const compared = (state: Scored, i: number, j: number): { readonly difference: number; readonly paired: boolean } => {
  const ci = state.valCoverage[i] ?? 0
  const cj = state.valCoverage[j] ?? 0
  if (ci > 0 && cj > 0 && ci !== cj) {
    const mine = state.valScores[i]
    const theirs = state.valScores[j]
    if (mine !== undefined && theirs !== undefined) {
      const [small, large] = ci < cj ? [mine, theirs] : [theirs, mine]
      let sumSmall = 0
      let sumLarge = 0
      let covered = true
      for (const id in small) {
        const other = large[id]
        if (other === undefined) {
          covered = false
          break
        }
        sumSmall += small[id] ?? 0
        sumLarge += other
      }
      if (covered) return { difference: ci < cj ? sumSmall - sumLarge : sumLarge - sumSmall, paired: true }
    }
  }
  return { difference: meanOf(state, i) - meanOf(state, j), paired: false }
}

/** @internal */
export const scoredAbove = (state: Scored, i: number, j: number): boolean => {
  if ((state.valCoverage[i] ?? 0) === 0) return false
  if ((state.valCoverage[j] ?? 0) === 0) return true
  return compared(state, i, j).difference > 0
}

const bestMemo = new WeakMap<ReadonlyArray<number>, { readonly coverage: ReadonlyArray<number>; readonly n: number; readonly best: number }>()

/** @internal */
export const bestIndex = (state: Scored): number => {
  const n = state.candidates.length
  // asked for on every iteration (stop conditions, acceptance): a run's
  // arrays only grow, in place while the run owns them, so for the same
  // arrays the scan goes on where the last one stopped
  const memo = bestMemo.get(state.valAverages)
  const resume = memo !== undefined && memo.coverage === state.valCoverage && memo.n <= n
  let best = resume ? memo.best : 0
  for (let i = resume ? memo.n : 1; i < n; i++) {
    const ci = state.valCoverage[i] ?? 0
    const cb = state.valCoverage[best] ?? 0
    // never scored: the seed stays among unscored ones, any scored one wins
    if (ci === 0) continue
    if (cb === 0) {
      best = i
      continue
    }
    const { difference, paired } = compared(state, i, best)
    // equals: the newer one (on a paired comparison, or with at least the coverage)
    if (difference > 0 || (difference === 0 && (paired || ci >= cb))) best = i
  }
  bestMemo.set(state.valAverages, { coverage: state.valCoverage, n, best })
  return best
}
