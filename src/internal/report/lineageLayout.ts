/**
 * The layered layout of a lineage tree: each candidate sits on the row of
 * its depth (generations from the seed, through first parents) and in a
 * column such that no two nodes of a row share a column. Subtrees are
 * packed side by side by their contours (the leftmost and rightmost column
 * of each of their rows), in the manner of Reingold and Tilford, so a deep
 * tree stays narrow. A parent sits above its first child, and the children
 * `first` picks (the path to the best candidate) come first: that path is
 * one straight column at the left edge, where a reader starts.
 *
 * @internal
 */

import { at, defined } from "../shared/invariant.js"

/** A node's place: `column` and `depth` (row). */
export interface Placed {
  readonly column: number
  readonly depth: number
}

export interface Layout {
  /** per candidate */
  readonly nodes: ReadonlyArray<Placed>
  /** columns spanned (the width is `columns` slots) */
  readonly columns: number
  /** rows (deepest depth + 1) */
  readonly rows: number
}

interface Subtree {
  /** per row below the subtree's root (row 0 is the root's), the leftmost and rightmost column, relative to the root */
  readonly left: Array<number>
  readonly right: Array<number>
}

/**
 * Lays out the forest given by `primaryParent` (undefined for a root;
 * parents always have smaller indices than their children).
 */
export const layout = (
  count: number,
  primaryParent: (i: number) => number | undefined,
  first: (i: number) => boolean = () => false
): Layout => {
  const children: Array<Array<number>> = Array.from({ length: count }, () => [])
  const roots: Array<number> = []
  for (let i = 0; i < count; i++) {
    const p = primaryParent(i)
    if (p === undefined || p < 0 || p >= i) roots.push(i)
    else at(children, p).push(i)
  }
  for (const kids of children) if (kids.some(first)) kids.sort((a, b) => Number(first(b)) - Number(first(a)) || a - b)
  // offset of each node relative to its parent, decided bottom-up
  const offset = new Float64Array(count)
  const shapes: Array<Subtree | undefined> = Array.from({ length: count }, () => undefined)

  // children of several subtrees packed left to right: each goes as far left
  // as its contour allows (one column apart from everything on its rows)
  const pack = (members: ReadonlyArray<number>): { readonly positions: ReadonlyArray<number>; readonly shape: Subtree } => {
    const accLeft: Array<number> = []
    const accRight: Array<number> = []
    const positions: Array<number> = []
    for (const m of members) {
      // a member's shape is set when its subtree was laid out, before its parent's pack
      const s = defined(shapes[m], "the shape of a packed subtree")
      const last = positions.at(-1)
      let shift = last === undefined ? 0 : -Infinity
      const common = Math.min(accRight.length, s.left.length)
      for (let k = 0; k < common; k++) shift = Math.max(shift, at(accRight, k) + 1 - at(s.left, k))
      if (shift === -Infinity && last !== undefined) shift = last + 1
      positions.push(shift)
      s.left.forEach((left, k) => {
        const right = at(s.right, k) + shift
        if (k >= accLeft.length) {
          accLeft.push(left + shift)
          accRight.push(right)
        } else accRight[k] = Math.max(at(accRight, k), right)
      })
      shapes[m] = undefined // no longer needed: keeps memory to the live frontier
    }
    return { positions, shape: { left: accLeft, right: accRight } }
  }

  // post-order without recursion (depth may be in the thousands)
  const order: Array<number> = []
  const stack = [...roots].reverse()
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    order.push(n)
    const kids = at(children, n)
    for (let c = kids.length - 1; c >= 0; c--) stack.push(at(kids, c))
  }
  for (let k = order.length - 1; k >= 0; k--) {
    const n = at(order, k)
    const kids = at(children, n)
    if (kids.length === 0) {
      shapes[n] = { left: [0], right: [0] }
      continue
    }
    const { positions, shape } = pack(kids)
    const centre = at(positions, 0)
    kids.forEach((kid, c) => offset[kid] = at(positions, c) - centre)
    shapes[n] = { left: [0, ...shape.left.map((x) => x - centre)], right: [0, ...shape.right.map((x) => x - centre)] }
  }
  const top = pack(roots)
  roots.forEach((root, r) => offset[root] = at(top.positions, r))

  // absolute columns, top-down
  const column = new Float64Array(count)
  const depth = new Int32Array(count)
  for (const n of order) {
    const p = primaryParent(n)
    const isRoot = p === undefined || p < 0 || p >= n
    column[n] = isRoot ? at(offset, n) : at(column, p) + at(offset, n)
    depth[n] = isRoot ? 0 : at(depth, p) + 1
  }
  let min = Infinity
  let max = -Infinity
  let rows = 0
  for (const c of column) {
    min = Math.min(min, c)
    max = Math.max(max, c)
  }
  for (const d of depth) rows = Math.max(rows, d + 1)
  const nodes: Array<Placed> = []
  column.forEach((c, i) => nodes.push({ column: c - min, depth: at(depth, i) }))
  return { nodes, columns: count === 0 ? 0 : max - min + 1, rows }
}
