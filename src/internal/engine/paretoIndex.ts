/**
 * Parent selection's analysis of the Pareto fronts, kept up to date as
 * candidates are added instead of rebuilt on every plan.
 *
 * `Pareto.selectionWeights` removes dominated programs with one pass in
 * removal order (lowest score first, ties by lowest index): a program is
 * removed when every front it is on still holds another program. A program
 * survives exactly when one of its fronts would be left empty without it, and
 * at its turn every program after it in removal order is still there; so it
 * survives exactly when it is the *last* member of some front (in removal
 * order) and no other member of that front survives. Each program's fate
 * then depends only on programs before it, and a change to the fronts is
 * propagated by re-deciding the programs it touches in removal order: the
 * members that joined or left a changed front, its last member before and
 * after, and, whenever a program's fate flips, the last members of its
 * fronts. The weights (a survivor's number of fronts) sit in a Fenwick tree,
 * so a draw is logarithmic and picks the same program as the linear walk of
 * `Pareto.draw`.
 *
 * The index is updated by diffing the fronts it holds against the ones asked
 * about: program lists are compared by reference and length first (the
 * front tables share every list a new candidate did not change, and the
 * engine appends a new candidate to a list in place, which only adds
 * entries at its end), so after adding a candidate the work is proportional
 * to the fronts it changed, and a front it joined costs only its new entry. Any fronts
 * and scores give the same answer as the full computation; unrelated ones
 * only cost a larger diff. A property test compares both.
 *
 * @internal
 */
import type { Rng } from "../../Rng.js"
import { at, defined } from "../shared/invariant.js"

/** The fronts as tables of key -> program list (one table per tracked front family). @internal */
export type FrontTables = ReadonlyArray<Readonly<Record<string, ReadonlyArray<number>>>>

interface Front {
  /**
   * members, ascending, distinct: the first `size` entries of this list (the
   * engine appends to a front's list in place, so the list may have grown
   * since; its first `size` entries never change)
   */
  members: ReadonlyArray<number>
  size: number
  /** the member last in removal order, or -1 */
  last: number
  /** surviving members */
  kept: number
}

/** @internal */
export interface ParetoIndex {
  /** the tables last synchronised with (by reference) */
  tables: Array<Readonly<Record<string, ReadonlyArray<number>>>>
  /** the score arrays last verified (by reference), and the scores of indexed programs */
  scoresRefs: ReadonlyArray<unknown>
  score: Array<number>
  fronts: Map<string, Front>
  /** per program: the fronts it is on */
  on: Array<Set<Front> | undefined>
  kept: Array<boolean>
  /** Fenwick tree over program index of kept ? fronts : 0 */
  tree: Float64Array
  weight: Array<number>
  total: number
}

/** @internal */
export const make = (): ParetoIndex => ({
  tables: [],
  scoresRefs: [],
  score: [],
  fronts: new Map(),
  on: [],
  kept: [],
  tree: new Float64Array(64),
  weight: [],
  total: 0
})

const before = (ix: ParetoIndex, a: number, b: number): boolean => {
  // a program beyond the scores given has none (as `State.scoreOf` says)
  const sa = ix.score[a] ?? -Infinity
  const sb = ix.score[b] ?? -Infinity
  return sa === sb ? a < b : sa < sb
}

// ---- Fenwick tree

const treeAdd = (ix: ParetoIndex, p: number, delta: number): void => {
  const tree = ix.tree
  for (let i = p + 1; i < tree.length; i += i & -i) tree[i] = at(tree, i) + delta
  ix.total += delta
}

const setWeight = (ix: ParetoIndex, p: number): void => {
  if (p + 1 >= ix.tree.length) {
    let size = ix.tree.length
    while (p + 1 >= size) size *= 2
    // a larger tree, built from the weights (linear construction)
    const tree = new Float64Array(size)
    ix.weight.forEach((w, i) => tree[i + 1] = w)
    for (let i = 1; i < size; i++) {
      const j = i + (i & -i)
      if (j < size) tree[j] = at(tree, j) + at(tree, i)
    }
    ix.tree = tree
  }
  while (ix.weight.length <= p) ix.weight.push(0)
  const w = ix.kept[p] === true ? (ix.on[p]?.size ?? 0) : 0
  const old = at(ix.weight, p)
  if (w === old) return
  ix.weight[p] = w
  treeAdd(ix, p, w - old)
}

/** The smallest program whose prefix weight exceeds `r` (`r` < total). */
const find = (ix: ParetoIndex, r: number): number => {
  let pos = 0
  let step = 1
  while (step * 2 < ix.tree.length) step *= 2
  for (; step > 0; step >>= 1) {
    const next = pos + step
    const weight = ix.tree[next]
    if (weight !== undefined && weight <= r) {
      pos = next
      r -= weight
    }
  }
  return pos // tree positions are 1-based: position pos + 1 is program pos
}

// ---- fates

/** A min-heap of programs in removal order. */
class Queue {
  readonly items: Array<number> = []
  readonly queued = new Set<number>()
  constructor(readonly ix: ParetoIndex) {}
  push(p: number): void {
    if (p < 0 || this.queued.has(p)) return
    this.queued.add(p)
    const a = this.items
    a.push(p)
    let i = a.length - 1
    while (i > 0) {
      const up = (i - 1) >> 1
      const child = at(a, i)
      const parent = at(a, up)
      if (!before(this.ix, child, parent)) break
      a[i] = parent
      a[up] = child
      i = up
    }
  }
  pop(): number | undefined {
    const a = this.items
    const top = a[0]
    const last = a.pop()
    if (top === undefined || last === undefined) return undefined
    if (a.length > 0) {
      a[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        const self = at(a, i)
        let m = i
        let least = self
        const left = a[l]
        if (left !== undefined && before(this.ix, left, least)) {
          m = l
          least = left
        }
        const right = a[r]
        if (right !== undefined && before(this.ix, right, least)) {
          m = r
          least = right
        }
        if (m === i) break
        a[i] = least
        a[m] = self
        i = m
      }
    }
    this.queued.delete(top)
    return top
  }
}

const lastOf = (ix: ParetoIndex, members: ReadonlyArray<number>): number => {
  let last = -1
  for (const p of members) if (last < 0 || before(ix, last, p)) last = p
  return last
}

/** Re-decides the queued programs in removal order, following flips. */
const settle = (ix: ParetoIndex, queue: Queue): void => {
  for (let p = queue.pop(); p !== undefined; p = queue.pop()) {
    const fronts = ix.on[p]
    let keep = false
    if (fronts !== undefined) {
      const mine = ix.kept[p] === true ? 1 : 0
      for (const f of fronts) {
        if (f.last === p && f.kept - mine === 0) {
          keep = true
          break
        }
      }
    }
    if (keep !== (ix.kept[p] === true)) {
      ix.kept[p] = keep
      if (fronts !== undefined) {
        for (const f of fronts) {
          f.kept += keep ? 1 : -1
          if (f.last !== p) queue.push(f.last)
        }
      }
    }
    setWeight(ix, p)
  }
}

// ---- synchronisation

const isStrictlyAscending = (xs: ReadonlyArray<number>): boolean => {
  for (let i = 1; i < xs.length; i++) if (!(at(xs, i) > at(xs, i - 1))) return false
  return true
}

// lists only ever grow at their end (by the front tables, never here): an ascending one is kept as it is
const normalized = (xs: ReadonlyArray<number>): ReadonlyArray<number> => [...new Set(xs)].sort((a, b) => a - b)

const join = (ix: ParetoIndex, f: Front, p: number): void => {
  let on = ix.on[p]
  if (on === undefined) {
    while (ix.on.length <= p) ix.on.push(undefined)
    on = new Set()
    ix.on[p] = on
  }
  on.add(f)
  if (ix.kept[p] === true) f.kept++
}

const leave = (ix: ParetoIndex, f: Front, p: number): void => {
  // a program leaves only a front it was on (the diff saw it in the old members)
  const on = defined(ix.on[p], "the fronts of a leaving program")
  on.delete(f)
  if (on.size === 0) ix.on[p] = undefined
  if (ix.kept[p] === true) f.kept--
}

/** Whether `xs` is strictly ascending from position `from` on (the entries before it are known to be). */
const ascendingFrom = (xs: ReadonlyArray<number>, from: number): boolean => {
  for (let i = Math.max(1, from); i < xs.length; i++) if (!(at(xs, i) > at(xs, i - 1))) return false
  return true
}

/** Brings a front to `next` (a program list), queueing every program whose fate may change. */
const updateFront = (ix: ParetoIndex, key: string, next: ReadonlyArray<number> | undefined, queue: Queue): void => {
  let f = ix.fronts.get(key)
  // the list the index holds, grown in place: only its new entries are new
  const grown = f !== undefined && next !== undefined && next === f.members
  // lists come ascending from the front tables; any other is sorted first
  const members = next === undefined
    ? []
    : (grown ? ascendingFrom(next, f?.size ?? 0) : isStrictlyAscending(next))
    ? next
    : normalized(next)
  if (f === undefined) {
    if (members.length === 0) return
    f = { members: [], size: 0, last: -1, kept: 0 }
    ix.fronts.set(key, f)
  }
  const old = f.members
  // only the first `size` entries of the old list were indexed (it may have
  // grown in place since; when it is `members` itself, they are unchanged)
  const oldSize = f.size
  let removed = false
  let last = f.last
  // merge diff of two ascending lists
  let i = members === old ? oldSize : 0
  let j = i
  while (i < oldSize || j < members.length) {
    const a = i < oldSize ? at(old, i) : Infinity
    const b = members[j] ?? Infinity
    if (a === b) {
      i++
      j++
    } else if (a < b) {
      leave(ix, f, a)
      queue.push(a)
      removed = true
      i++
    } else {
      join(ix, f, b)
      queue.push(b)
      if (last < 0 || before(ix, last, b)) last = b
      j++
    }
  }
  f.members = members
  f.size = members.length
  queue.push(f.last)
  // with members only added, the last is the later of the old last and the newcomers
  f.last = removed ? lastOf(ix, members) : last
  queue.push(f.last)
  if (members.length === 0) ix.fronts.delete(key)
}

/**
 * Brings the index to `tables` and `scoreOf` (the scores of programs
 * `0 .. programs - 1`, compared with the ones indexed when any of
 * `scoresRefs`, the arrays they are computed from, is a different object).
 *
 * @internal
 */
export const sync = (
  ix: ParetoIndex,
  tables: FrontTables,
  scoresRefs: ReadonlyArray<unknown>,
  programs: number,
  scoreOf: (program: number) => number
): void => {
  const queue = new Queue(ix)
  if (scoresRefs.length !== ix.scoresRefs.length || scoresRefs.some((x, i) => x !== ix.scoresRefs[i])) {
    // a program whose score changed moves in removal order: everything it
    // touches is decided again from scratch
    let changed = false
    for (let p = 0; p < Math.max(programs, ix.score.length); p++) {
      const s = p < programs ? scoreOf(p) : Number.NaN
      if (!Object.is(s, ix.score[p])) {
        changed = changed || p < ix.score.length && ix.on[p] !== undefined
        ix.score[p] = s
      }
    }
    ix.score.length = programs
    ix.scoresRefs = scoresRefs.slice()
    if (changed) Object.assign(ix, { ...make(), score: ix.score, scoresRefs: ix.scoresRefs })
  } else if (programs > ix.score.length) {
    // the same arrays, grown in place (the engine appends to arrays no
    // earlier state exposes): only the new programs have scores to read
    for (let p = ix.score.length; p < programs; p++) ix.score[p] = scoreOf(p)
  }
  const width = Math.max(tables.length, ix.tables.length)
  for (let t = 0; t < width; t++) {
    const next = tables[t]
    const prev = ix.tables[t]
    if (next === prev) continue
    const prefix = `${t}\u0000`
    if (prev !== undefined) {
      for (const key in prev) {
        if (next === undefined || !(key in next)) updateFront(ix, prefix + key, undefined, queue)
      }
    }
    if (next !== undefined) {
      for (const key in next) {
        const list = next[key]
        if (list === undefined) continue
        // an unchanged list (the same list, not grown since: the engine appends in place)
        const f = ix.fronts.get(prefix + key)
        if (prev !== undefined && prev[key] === list && (f === undefined ? list.length === 0 : f.members === list && f.size === list.length)) continue
        updateFront(ix, prefix + key, list, queue)
      }
    }
  }
  ix.tables = tables.slice()
  settle(ix, queue)
}

/**
 * The program `Pareto.draw(Pareto.selectionWeights(...), rng)` would pick:
 * one draw of `rng.nextInt(total)`, then the smallest program whose prefix
 * weight exceeds it. `undefined` (and no draw) when no program is on a front.
 *
 * @internal
 */
export const draw = (ix: ParetoIndex, rng: Rng): number | undefined => {
  if (ix.total <= 0) return undefined
  return find(ix, rng.nextInt(ix.total))
}

/**
 * The surviving programs ascending with their weights (for tests and
 * diagnostics: the same as `Pareto.selectionWeights`).
 *
 * @internal
 */
export const weights = (ix: ParetoIndex): { programs: Array<number>; weights: Array<number>; total: number } => {
  const programs: Array<number> = []
  const ws: Array<number> = []
  ix.kept.forEach((kept, p) => {
    if (kept) {
      programs.push(p)
      ws.push(at(ix.weight, p))
    }
  })
  return { programs, weights: ws, total: ix.total }
}
