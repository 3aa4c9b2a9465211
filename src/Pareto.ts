/**
 * Pareto utilities over a list of fronts (each front: the programs that reach
 * the best score on one key).
 *
 * A program is dominated when every front it belongs to also holds another
 * surviving program. The reference removes dominated programs by rescanning
 * the whole list after every removal (cubic in the number of programs). Here
 * removal is one pass in the same order, linear in the total size of the
 * fronts: removing a program only lowers front occupancies, so a program
 * that cannot be removed at some point can never become removable later, and
 * the first removable program of each rescan is exactly the next removable
 * program of a single pass. A property test checks both give the same set.
 *
 * @since 0.1.0
 */
import type { Rng } from "./Rng.js"

/**
 * Fronts as program sets (keys do not matter to domination).
 *
 * @since 0.1.0
 * @category models
 */
export type FrontSets = ReadonlyArray<ReadonlyArray<number>>

/**
 * The order in which programs are examined for removal: lowest score first,
 * ties by lowest index. Lower-scoring programs are removed first, so among
 * programs with identical front membership the best one survives.
 *
 * @since 0.1.0
 * @category utils
 */
export const removalOrder = (programs: Iterable<number>, scoreOf: (program: number) => number): Array<number> =>
  Array.from(programs).sort((a, b) => {
    const sa = scoreOf(a)
    const sb = scoreOf(b)
    return sa === sb ? a - b : sa < sb ? -1 : 1
  })

/**
 * The programs that survive dominated-program removal, in removal order.
 *
 * @since 0.1.0
 * @category pareto
 */
export const dominators = (fronts: FrontSets, scoreOf: (program: number) => number): Array<number> => {
  const alive = new Int32Array(fronts.length)
  const membership = new Map<number, Array<number>>()
  fronts.forEach((front, f) => {
    const unique = new Set(front)
    alive[f] = unique.size
    for (const p of unique) {
      let list = membership.get(p)
      if (list === undefined) membership.set(p, (list = []))
      list.push(f)
    }
  })
  const survivors: Array<number> = []
  for (const program of removalOrder(membership.keys(), scoreOf)) {
    const memberOf = membership.get(program)!
    let removable = true
    for (const f of memberOf) {
      if (alive[f]! < 2) {
        removable = false
        break
      }
    }
    if (removable) for (const f of memberOf) alive[f]!--
    else survivors.push(program)
  }
  return survivors
}

/**
 * The fronts with dominated programs removed. Every non-empty front keeps at
 * least one program.
 *
 * @since 0.1.0
 * @category pareto
 */
export const removeDominated = (fronts: FrontSets, scoreOf: (program: number) => number): FrontSets => {
  const keep = new Set(dominators(fronts, scoreOf))
  return fronts.map((front) => front.filter((p) => keep.has(p)))
}

/**
 * How many fronts each program belongs to.
 *
 * @since 0.1.0
 * @category pareto
 */
export const frequencies = (fronts: FrontSets): Map<number, number> => {
  const freq = new Map<number, number>()
  for (const front of fronts) for (const p of new Set(front)) freq.set(p, (freq.get(p) ?? 0) + 1)
  return freq
}

/**
 * Frequency-weighted parent selection: dominated programs are removed, then a
 * surviving program is drawn with probability proportional to the number of
 * fronts it is on. Returns `undefined` only when every front is empty.
 *
 * @since 0.1.0
 * @category pareto
 */
export const selectFromFronts = (
  fronts: FrontSets,
  scoreOf: (program: number) => number,
  rng: Rng
): number | undefined => {
  const freq = frequencies(removeDominated(fronts, scoreOf))
  const programs = Array.from(freq.keys()).sort((a, b) => a - b)
  if (programs.length === 0) return undefined
  let total = 0
  for (const p of programs) total += freq.get(p)!
  let r = rng.nextInt(total)
  for (const p of programs) {
    const w = freq.get(p)!
    if (r < w) return p
    r -= w
  }
  return programs[programs.length - 1]
}
