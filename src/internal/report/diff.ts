/**
 * A line diff from a longest common subsequence of lines (the report's
 * "best candidate against the seed" section; `Report.diffLines`).
 *
 * @internal
 */
import { at } from "../shared/invariant.js"

/** One line of a line diff. @internal */
export interface DiffLine {
  readonly op: "same" | "add" | "del"
  readonly line: string
}

// An empty text has no lines; otherwise splitting on "\n" alone keeps any
// "\r" inside the line, so joining the lines back gives the exact text.
const splitLines = (text: string): ReadonlyArray<string> => (text === "" ? [] : text.split("\n"))

// Above this many table cells the quadratic table costs more memory than a
// report is worth; the diff then degrades to "remove all, add all", which is
// still a correct (if unhelpful) edit script.
const MAX_LCS_CELLS = 16_000_000

/**
 * A line diff of `a` into `b` from a longest common subsequence of lines.
 * Keeping the `same` and `del` lines gives back `a`; keeping the `same` and
 * `add` lines gives back `b` (joined with "\n"). Within a changed block,
 * removals come before additions.
 *
 * @internal
 */
export const diffLines = (a: string, b: string): ReadonlyArray<DiffLine> => {
  const left = splitLines(a)
  const right = splitLines(b)
  // The common head and tail need no table; trimming them keeps the
  // quadratic part to the region that actually changed.
  let head = 0
  while (head < left.length && head < right.length && left[head] === right[head]) head++
  let tail = 0
  while (
    tail < left.length - head &&
    tail < right.length - head &&
    left[left.length - 1 - tail] === right[right.length - 1 - tail]
  ) tail++

  const out: Array<DiffLine> = []
  for (const line of left.slice(0, head)) out.push({ op: "same", line })

  const x = left.slice(head, left.length - tail)
  const y = right.slice(head, right.length - tail)
  const n = x.length
  const m = y.length
  if ((n + 1) * (m + 1) > MAX_LCS_CELLS) {
    for (const line of x) out.push({ op: "del", line })
    for (const line of y) out.push({ op: "add", line })
  } else {
    // lcs[i * (m + 1) + j] is the LCS length of x[i..] and y[j..]; filling it
    // from the end lets the walk below run forwards.
    const w = m + 1
    const lcs = new Uint32Array((n + 1) * w)
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = x[i] === y[j]
          ? at(lcs, (i + 1) * w + j + 1) + 1
          : Math.max(at(lcs, (i + 1) * w + j), at(lcs, i * w + j + 1))
      }
    }
    let i = 0
    let j = 0
    while (i < n && j < m) {
      const del = at(x, i)
      const add = at(y, j)
      if (del === add) {
        out.push({ op: "same", line: del })
        i++
        j++
      } else if (at(lcs, (i + 1) * w + j) >= at(lcs, i * w + j + 1)) {
        out.push({ op: "del", line: del })
        i++
      } else {
        out.push({ op: "add", line: add })
        j++
      }
    }
    for (const line of x.slice(i)) out.push({ op: "del", line })
    for (const line of y.slice(j)) out.push({ op: "add", line })
  }

  for (const line of left.slice(left.length - tail)) out.push({ op: "same", line })
  return out
}
