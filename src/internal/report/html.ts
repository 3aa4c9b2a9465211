/**
 * What the report's pieces share: the run's derived data (valid parents,
 * front counts, kinds, the best-score curve) and HTML formatting.
 *
 * @internal
 */
import type { GepaResult } from "../../Result.js"
import { formatScore } from "../../Result.js"

/**
 * A point of the best-score curve: after `metricCalls` metric calls the best
 * validation score was `bestScore`, reached by `candidate` (absent when the
 * point comes from caller-supplied progress).
 *
 * @internal
 */
export interface CurvePoint {
  readonly metricCalls: number
  readonly bestScore: number
  readonly candidate?: number | undefined
}

export const isFiniteNumber = (v: number | null | undefined): v is number => typeof v === "number" && Number.isFinite(v)

/**
 * The running best validation score over metric calls: one point per
 * candidate that improved on every candidate discovered before it (in order
 * of discovery budget, then index).
 *
 * @internal
 */
export const bestScoreCurve = (
  result: Pick<GepaResult, "discoveryBudget" | "valAggregateScores">
): ReadonlyArray<CurvePoint> => {
  const order = result.valAggregateScores
    .map((_, i) => i)
    .sort((p, q) => (result.discoveryBudget[p] ?? 0) - (result.discoveryBudget[q] ?? 0) || p - q)
  const points: Array<CurvePoint> = []
  let best = -Infinity
  for (const i of order) {
    const score = result.valAggregateScores[i]
    if (!isFiniteNumber(score) || score <= best) continue
    best = score
    points.push({ metricCalls: result.discoveryBudget[i] ?? 0, bestScore: score, candidate: i })
  }
  return points
}

// Parents that are not earlier candidates would make the tree cyclic or
// dangling; a malformed result is still rendered, with such links dropped.
export const validParents = (result: GepaResult, i: number): ReadonlyArray<number> =>
  (result.parents[i] ?? []).filter((p) => Number.isInteger(p) && p >= 0 && p < i)

export const frontCounts = (result: GepaResult): ReadonlyArray<number> => {
  const counts = result.candidates.map(() => 0)
  for (const programs of Object.values(result.perInstanceBest)) {
    for (const p of programs) {
      const count = counts[p]
      if (count !== undefined) counts[p] = count + 1
    }
  }
  return counts
}

// ---------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\"": "&quot;",
  "'": "&#39;"
}

export const esc = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c)

// one score format across the summary, show and the report (Result.formatScore)
export const fmtScore = formatScore

// Spreading a long array into Math.max can overflow the call stack; a fold
// cannot.
export const maxOf = (values: ReadonlyArray<number>, floor: number): number => values.reduce((m, v) => (v > m ? v : m), floor)

export const minOf = (values: ReadonlyArray<number>, ceiling: number): number => values.reduce((m, v) => (v < m ? v : m), ceiling)

export const fmtInt = (v: number): string => (Number.isFinite(v) ? String(Math.round(v)) : "—")

export const fmtTick = (v: number): string => String(Number(v.toPrecision(6)))

export const px = (v: number): string => (Math.round(v * 10) / 10).toString()

export const naturalCompare = (a: string, b: string): number => a.localeCompare(b, "en", { numeric: true })

export const candidateRef = (i: number): string => `<a href="#node-${i}">#${i}</a>`

export const kindOf = (result: GepaResult, i: number): "seed" | "reflective" | "merge" => {
  const ps = validParents(result, i)
  return ps.length === 0 ? "seed" : ps.length > 1 ? "merge" : "reflective"
}
