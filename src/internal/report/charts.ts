/**
 * The report's two SVG charts (best score against metric calls, every
 * candidate's score at discovery), drawn by hand: the page needs no script.
 *
 * @internal
 */
import type { GepaResult } from "../../Result.js"
import { type CurvePoint, esc, fmtInt, fmtScore, fmtTick, isFiniteNumber, kindOf, maxOf, minOf, px } from "./html.js"

const niceStep = (span: number, count: number): number => {
  const raw = span / count
  const magnitude = 10 ** Math.floor(Math.log10(raw))
  const norm = raw / magnitude
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude
}

interface Axis {
  readonly lo: number
  readonly hi: number
  readonly ticks: ReadonlyArray<number>
}

const axisFor = (lo: number, hi: number, count: number): Axis => {
  if (!(hi > lo)) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1
    return axisFor(lo - pad, hi + pad, count)
  }
  const step = niceStep(hi - lo, count)
  const start = Math.floor(lo / step) * step
  const end = Math.ceil(hi / step) * step
  const ticks: Array<number> = []
  for (let k = 0; start + k * step <= end + step * 1e-9; k++) ticks.push(start + k * step)
  return { lo: start, hi: end, ticks }
}

// Scores in [0, 1] (the common case) get a fixed unit axis so that runs are
// comparable at a glance; anything else gets a fitted axis.
const scoreAxis = (values: ReadonlyArray<number>): Axis => {
  if (values.length === 0) return axisFor(0, 1, 5)
  const lo = minOf(values, Infinity)
  const hi = maxOf(values, -Infinity)
  return lo >= 0 && hi <= 1 ? axisFor(0, 1, 5) : axisFor(Math.min(lo, 0), hi, 5)
}

const budgetAxis = (values: ReadonlyArray<number>): Axis => axisFor(0, maxOf(values, 1), 6)

export const W = 760
const H = 320
const M = { left: 60, right: 20, top: 20, bottom: 48 }

interface Frame {
  readonly x: (v: number) => number
  readonly y: (v: number) => number
  readonly svg: string
}

const frame = (xAxis: Axis, yAxis: Axis, xLabel: string, yLabel: string): Frame => {
  const plotW = W - M.left - M.right
  const plotH = H - M.top - M.bottom
  const x = (v: number) => M.left + ((v - xAxis.lo) / (xAxis.hi - xAxis.lo)) * plotW
  const y = (v: number) => M.top + plotH - ((v - yAxis.lo) / (yAxis.hi - yAxis.lo)) * plotH
  const parts: Array<string> = []
  for (const t of yAxis.ticks) {
    parts.push(`<line class="grid" x1="${px(M.left)}" x2="${px(W - M.right)}" y1="${px(y(t))}" y2="${px(y(t))}"/>`)
    parts.push(`<text class="tick" x="${px(M.left - 6)}" y="${px(y(t) + 4)}" text-anchor="end">${fmtTick(t)}</text>`)
  }
  for (const t of xAxis.ticks) {
    parts.push(`<line class="tickmark" x1="${px(x(t))}" x2="${px(x(t))}" y1="${px(H - M.bottom)}" y2="${px(H - M.bottom + 5)}"/>`)
    parts.push(`<text class="tick" x="${px(x(t))}" y="${px(H - M.bottom + 18)}" text-anchor="middle">${fmtTick(t)}</text>`)
  }
  parts.push(`<line class="axis" x1="${px(M.left)}" x2="${px(W - M.right)}" y1="${px(H - M.bottom)}" y2="${px(H - M.bottom)}"/>`)
  parts.push(`<line class="axis" x1="${px(M.left)}" x2="${px(M.left)}" y1="${px(M.top)}" y2="${px(H - M.bottom)}"/>`)
  parts.push(`<text class="axis-label" x="${px(M.left + plotW / 2)}" y="${px(H - 8)}" text-anchor="middle">${esc(xLabel)}</text>`)
  parts.push(
    `<text class="axis-label" x="14" y="${px(M.top + plotH / 2)}" text-anchor="middle" transform="rotate(-90 14 ${px(M.top + plotH / 2)})">${
      esc(yLabel)
    }</text>`
  )
  return { x, y, svg: parts.join("") }
}

const svgOpen = (id: string, label: string): string =>
  `<svg id="${id}" class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(label)}"><title>${esc(label)}</title>`

// A step path: the best score holds until the next improvement, then jumps.
const stepPath = (points: ReadonlyArray<CurvePoint>, f: Frame, xEnd: number): string => {
  const [first, ...rest] = points
  if (first === undefined) return ""
  let d = `M${px(f.x(first.metricCalls))} ${px(f.y(first.bestScore))}`
  for (const point of rest) d += ` H${px(f.x(point.metricCalls))} V${px(f.y(point.bestScore))}`
  d += ` H${px(f.x(Math.max(xEnd, (rest.at(-1) ?? first).metricCalls)))}`
  return d
}

export const bestChart = (result: GepaResult, curve: ReadonlyArray<CurvePoint>, fromProgress: boolean): string => {
  const xEnd = maxOf(curve.map((p) => p.metricCalls), result.totalMetricCalls)
  const xAxis = budgetAxis([xEnd])
  const yAxis = scoreAxis(curve.map((p) => p.bestScore))
  const f = frame(xAxis, yAxis, "metric calls", "best validation score")
  const parts = [svgOpen("chart-best", "Best validation score against metric calls"), f.svg]
  if (curve.length > 0) {
    parts.push(`<path class="best-line" d="${stepPath(curve, f, xEnd)}"/>`)
    // Progress logs can have hundreds of points; markers only make sense
    // for the derived curve, where each point is a discovered candidate.
    if (!fromProgress) {
      for (const p of curve) {
        const label = `candidate #${p.candidate ?? "?"}: ${fmtScore(p.bestScore)} after ${fmtInt(p.metricCalls)} metric calls`
        parts.push(
          `<circle class="best-point" cx="${px(f.x(p.metricCalls))}" cy="${px(f.y(p.bestScore))}" r="4"><title>${esc(label)}</title></circle>`
        )
      }
    }
  } else {
    parts.push(`<text class="empty" x="${W / 2}" y="${H / 2}" text-anchor="middle">no scored candidates</text>`)
  }
  parts.push("</svg>")
  return parts.join("")
}

export const scatterChart = (result: GepaResult, curve: ReadonlyArray<CurvePoint>): string => {
  const scored = result.candidates
    .map((_, i) => ({ i, budget: result.discoveryBudget[i] ?? 0, score: result.valAggregateScores[i] }))
    .filter((c): c is { i: number; budget: number; score: number } => isFiniteNumber(c.score))
  const xEnd = maxOf(scored.map((c) => c.budget), result.totalMetricCalls)
  const xAxis = budgetAxis([xEnd])
  const yAxis = scoreAxis(scored.map((c) => c.score))
  const f = frame(xAxis, yAxis, "metric calls at discovery", "validation score")
  const parts = [svgOpen("chart-candidates", "Every candidate's validation score against the metric calls spent when it was found"), f.svg]
  if (curve.length > 0) parts.push(`<path class="best-line faint" d="${stepPath(curve, f, xEnd)}"/>`)
  for (const c of scored) {
    const kind = kindOf(result, c.i)
    const best = c.i === result.bestIndex ? " best" : ""
    const label = `#${c.i} (${kind}): score ${fmtScore(c.score)}, found after ${fmtInt(c.budget)} metric calls`
    parts.push(
      `<circle class="pt ${kind}${best}" data-index="${c.i}" cx="${px(f.x(c.budget))}" cy="${px(f.y(c.score))}" r="${best ? 6 : 4.5}"><title>${
        esc(label)
      }</title></circle>`
    )
  }
  parts.push("</svg>")
  return parts.join("")
}

export const legend = (): string =>
  `<p class="legend"><span class="swatch seed"></span>seed <span class="swatch reflective"></span>reflective mutation <span class="swatch merge"></span>merge <span class="swatch best-ring"></span>best</p>`
