/**
 * "Did you mean" for misspelled flags and config fields: the closest known
 * name by edit distance, when it is close enough to be a typo.
 *
 * @since 0.2.0
 */
import { at } from "../internal/shared/invariant.js"

// Damerau-Levenshtein (optimal string alignment): a swapped pair of letters
// ("trian") is one edit, as people make it
const distance = (a: string, b: string): number => {
  // the table's rows i - 2, i - 1 and i (a swap looks two rows back)
  let older: Array<number> = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(at(previous, j) + 1, at(row, j - 1) + 1, at(previous, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(older, j - 2) + 1)
      row.push(best)
    }
    older = previous
    previous = row
  }
  return at(previous, b.length)
}

/**
 * The known name closest to `name` (letter case and `-`/`_` ignored), when
 * it is within a third of its length in edits (at least 1, at most 3), or
 * when one is a prefix of the other.
 *
 * @since 0.2.0
 * @category suggestions
 */
export const closest = (name: string, known: ReadonlyArray<string>): string | undefined => {
  const norm = (s: string) => s.toLowerCase().replace(/[-_]/g, "")
  const n = norm(name)
  if (n === "") return undefined
  let best: { readonly name: string; readonly d: number } | undefined
  for (const k of known) {
    const d = distance(n, norm(k))
    if (best === undefined || d < best.d) best = { name: k, d }
  }
  if (best === undefined) return undefined
  const limit = Math.min(3, Math.max(1, Math.floor(n.length / 3)))
  if (best.d <= limit) return best.name
  const prefix = known.filter((k) => norm(k).startsWith(n) && n.length >= 4)
  return prefix.length === 1 ? prefix[0] : undefined
}

/**
 * ` (did you mean "x"?)`, or nothing.
 *
 * @since 0.2.0
 * @category suggestions
 */
export const didYouMean = (name: string, known: ReadonlyArray<string>, quote: (s: string) => string = (s) => `"${s}"`): string => {
  const found = closest(name, known)
  return found === undefined ? "" : ` (did you mean ${quote(found)}?)`
}
