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
import { at } from "./internal/shared/invariant.js"
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

interface Analysis {
  /** surviving programs, in removal order */
  readonly survivors: Array<number>
  /** per program id, the number of fronts it belongs to */
  readonly count: Int32Array
}

/**
 * Builds a flat membership index (program -> fronts) with two passes over the
 * fronts and typed arrays, then removes dominated programs in one pass. A
 * program listed twice in one front counts once.
 */
const analyze = (fronts: FrontSets, scoreOf: (program: number) => number): Analysis => {
  let maxProgram = -1
  for (const front of fronts) for (const p of front) if (p > maxProgram) maxProgram = p
  const count = new Int32Array(maxProgram + 1)
  const alive = new Int32Array(fronts.length)
  // stamp[p] = f + 1 once p was seen in front f: dedups without a Set per front
  const stamp = new Int32Array(maxProgram + 1)
  let entries = 0
  fronts.forEach((front, f) => {
    for (const p of front) {
      if (stamp[p] === f + 1) continue
      stamp[p] = f + 1
      count[p] = at(count, p) + 1
      alive[f] = at(alive, f) + 1
      entries++
    }
  })
  const offset = new Int32Array(maxProgram + 2)
  count.forEach((c, p) => offset[p + 1] = at(offset, p) + c)
  const cursor = offset.slice(0, maxProgram + 1)
  const membership = new Int32Array(entries)
  stamp.fill(0)
  fronts.forEach((front, f) => {
    for (const p of front) {
      if (stamp[p] === f + 1) continue
      stamp[p] = f + 1
      const slot = at(cursor, p)
      membership[slot] = f
      cursor[p] = slot + 1
    }
  })
  const programs: Array<number> = []
  count.forEach((c, p) => {
    if (c > 0) programs.push(p)
  })
  const survivors: Array<number> = []
  for (const program of removalOrder(programs, scoreOf)) {
    // the program's fronts: membership[offset[program] .. offset[program + 1])
    const own = membership.subarray(at(offset, program), at(offset, program + 1))
    if (own.every((f) => at(alive, f) >= 2)) { for (const f of own) alive[f] = at(alive, f) - 1 }
    else survivors.push(program)
  }
  return { survivors, count }
}

/**
 * The programs that survive dominated-program removal, in removal order.
 *
 * @since 0.1.0
 * @category pareto
 */
export const dominators = (fronts: FrontSets, scoreOf: (program: number) => number): Array<number> => analyze(fronts, scoreOf).survivors

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
 * A survivor keeps every front it was on (removal only drops other
 * programs), so its frequency in the cleaned fronts is its membership count.
 *
 * @since 0.1.0
 * @category pareto
 */
export const selectFromFronts = (
  fronts: FrontSets,
  scoreOf: (program: number) => number,
  rng: Rng
): number | undefined => draw(selectionWeights(fronts, scoreOf), rng)

/**
 * What parent selection draws from: the surviving programs in ascending
 * order, each weighted by the number of fronts it is on. Depends only on the
 * fronts and the scores, so a caller may keep it until they change.
 *
 * @since 0.2.0
 * @category pareto
 */
export interface SelectionWeights {
  readonly programs: ReadonlyArray<number>
  readonly weights: ReadonlyArray<number>
  readonly total: number
}

/**
 * How often each program on the fronts is drawn as a parent: dominated
 * programs removed, each survivor weighted by the number of fronts it is on.
 *
 * @since 0.2.0
 * @category pareto
 */
export const selectionWeights = (fronts: FrontSets, scoreOf: (program: number) => number): SelectionWeights => {
  const { count, survivors } = analyze(fronts, scoreOf)
  const programs = survivors.slice().sort((a, b) => a - b)
  const weights = programs.map((p) => at(count, p))
  let total = 0
  for (const w of weights) total += w
  return { programs, weights, total }
}

/**
 * A program drawn with probability proportional to its weight; `undefined`
 * when there is none.
 *
 * @since 0.2.0
 * @category pareto
 */
export const draw = (selection: SelectionWeights, rng: Rng): number | undefined => {
  const { programs, weights, total } = selection
  if (programs.length === 0) return undefined
  let r = rng.nextInt(total)
  for (let i = 0; i < programs.length; i++) {
    const w = at(weights, i)
    if (r < w) return programs[i]
    r -= w
  }
  return programs[programs.length - 1]
}
