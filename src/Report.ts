/**
 * A self-contained HTML report of an optimization run: summary, score
 * charts, candidate lineage, the per-example Pareto front, the best
 * candidate's texts diffed against the seed, and a table of every candidate.
 *
 * The page carries its own CSS and inline SVG and needs neither scripts nor
 * network access, so it can be archived next to a run's state file and
 * opened anywhere. It uses the window's width; the lineage is a layered tree
 * at its natural size in a scrolling box (a CSS-only "fit to width" shows
 * it whole), which stays readable at hundreds of generations.
 *
 * @since 0.1.0
 */
import type { Candidate } from "./Candidate.js"
import * as CandidateSchema from "./CandidateSchema.js"
import { at } from "./internal/invariant.js"
import * as LineageLayout from "./internal/lineageLayout.js"
import type { GepaResult } from "./Result.js"
import { formatScore, lineage } from "./Result.js"
import type { TraceEntry } from "./State.js"

/**
 * What the report is built from. `seedCandidate` defaults to the first
 * candidate of the result; `progress`, when given, replaces the best-score
 * curve that is otherwise derived from the candidates' discovery budgets.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReportInput {
  readonly result: GepaResult
  readonly trace?: ReadonlyArray<TraceEntry> | undefined
  readonly seedCandidate?: Candidate | undefined
  readonly title?: string | undefined
  readonly generatedAt?: string | undefined
  readonly progress?: ReadonlyArray<{ readonly metricCalls: number; readonly bestScore: number }> | undefined
}

/**
 * One line of a line diff.
 *
 * @since 0.1.0
 * @category models
 */
export interface DiffLine {
  readonly op: "same" | "add" | "del"
  readonly line: string
}

/**
 * A point of the best-score curve: after `metricCalls` metric calls the best
 * validation score was `bestScore`, reached by `candidate` (absent when the
 * point comes from caller-supplied progress).
 *
 * @since 0.1.0
 * @category models
 */
export interface CurvePoint {
  readonly metricCalls: number
  readonly bestScore: number
  readonly candidate?: number | undefined
}

// ---------------------------------------------------------------------------
// Line diff
// ---------------------------------------------------------------------------

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
 * @since 0.1.0
 * @category utils
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

// ---------------------------------------------------------------------------
// Derived data
// ---------------------------------------------------------------------------

const isFiniteNumber = (v: number | null | undefined): v is number => typeof v === "number" && Number.isFinite(v)

/**
 * The running best validation score over metric calls: one point per
 * candidate that improved on every candidate discovered before it (in order
 * of discovery budget, then index).
 *
 * @since 0.1.0
 * @category utils
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
const validParents = (result: GepaResult, i: number): ReadonlyArray<number> => (result.parents[i] ?? []).filter((p) => Number.isInteger(p) && p >= 0 && p < i)

const frontCounts = (result: GepaResult): ReadonlyArray<number> => {
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

const esc = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c)

// one score format across the summary, show and the report (Result.formatScore)
const fmtScore = formatScore

// Spreading a long array into Math.max can overflow the call stack; a fold
// cannot.
const maxOf = (values: ReadonlyArray<number>, floor: number): number => values.reduce((m, v) => (v > m ? v : m), floor)

const minOf = (values: ReadonlyArray<number>, ceiling: number): number => values.reduce((m, v) => (v < m ? v : m), ceiling)

const fmtInt = (v: number): string => (Number.isFinite(v) ? String(Math.round(v)) : "—")

const fmtTick = (v: number): string => String(Number(v.toPrecision(6)))

const px = (v: number): string => (Math.round(v * 10) / 10).toString()

const naturalCompare = (a: string, b: string): number => a.localeCompare(b, "en", { numeric: true })

const candidateRef = (i: number): string => `<a href="#node-${i}">#${i}</a>`

// ---------------------------------------------------------------------------
// Charts
// ---------------------------------------------------------------------------

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

const W = 760
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

const bestChart = (result: GepaResult, curve: ReadonlyArray<CurvePoint>, fromProgress: boolean): string => {
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

const kindOf = (result: GepaResult, i: number): "seed" | "reflective" | "merge" => {
  const ps = validParents(result, i)
  return ps.length === 0 ? "seed" : ps.length > 1 ? "merge" : "reflective"
}

const scatterChart = (result: GepaResult, curve: ReadonlyArray<CurvePoint>): string => {
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

const legend = (): string =>
  `<p class="legend"><span class="swatch seed"></span>seed <span class="swatch reflective"></span>reflective mutation <span class="swatch merge"></span>merge <span class="swatch best-ring"></span>best</p>`

// ---------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------

const summarySection = (result: GepaResult, trace: ReadonlyArray<TraceEntry> | undefined): string => {
  const gain = isFiniteNumber(result.bestScore) && isFiniteNumber(result.seedScore)
    ? result.bestScore - result.seedScore
    : null
  const rows: Array<readonly [string, string]> = [
    ["Seed score", fmtScore(result.seedScore)],
    [
      "Best score",
      `${fmtScore(result.bestScore)} (candidate ${candidateRef(result.bestIndex)}${
        gain === null ? "" : `, ${gain >= 0 ? "+" : ""}${fmtScore(gain)} over the seed`
      })`
    ],
    ["Candidates", fmtInt(result.candidates.length)],
    ["Metric calls", fmtInt(result.totalMetricCalls)],
    ["Full validation evaluations", fmtInt(result.fullValEvals)],
    ["Iterations", fmtInt(result.iterations)],
    ["Reflection calls", fmtInt(result.reflectionCalls)],
    ["Proposals accepted / rejected", `${fmtInt(result.acceptedProposals)} / ${fmtInt(result.rejectedProposals)}`],
    ["Merges accepted / attempted", `${fmtInt(result.mergesAccepted)} / ${fmtInt(result.mergesAttempted)}`],
    ["Stop reason", esc(result.stopReason)]
  ]
  if (trace !== undefined && trace.length > 0) {
    const count = (o: TraceEntry["outcome"]) => trace.filter((t) => t.outcome === o).length
    rows.push([
      "Trace entries",
      `${trace.length} (${count("accepted")} accepted, ${count("rejected")} rejected, ${count("skipped")} skipped, ${count("failed")} failed)`
    ])
  }
  return `<section id="summary"><h2>Summary</h2><dl class="summary">${rows.map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`).join("")}</dl></section>`
}

const chartsSection = (result: GepaResult, progress: ReportInput["progress"]): string => {
  const derived = bestScoreCurve(result)
  const fromProgress = progress !== undefined && progress.length > 0
  const curve: ReadonlyArray<CurvePoint> = fromProgress
    ? progress
      .filter((p) => Number.isFinite(p.metricCalls) && Number.isFinite(p.bestScore))
      .map((p) => ({ metricCalls: p.metricCalls, bestScore: p.bestScore }))
      .sort((p, q) => p.metricCalls - q.metricCalls)
    : derived
  return `<section id="charts"><h2>Progress</h2>` +
    `<figure>${bestChart(result, curve, fromProgress)}<figcaption>Best validation score against metric calls${
      fromProgress ? " (as logged during the run)" : " (running best at each candidate's discovery)"
    }.</figcaption></figure>` +
    `<figure>${
      scatterChart(result, derived)
    }${legend()}<figcaption>Each candidate's mean validation score against the metric calls spent when it was discovered.</figcaption></figure>` +
    `</section>`
}

// The lineage as a layered tree (internal/lineageLayout.ts): one row per
// generation, subtrees packed by their contours, in an SVG at its natural
// size inside a scrolling box, so that labels keep their size however deep
// or wide the run; a "fit" zoom (CSS only, no script) shows it whole.
const SLOT = 92
const ROW = 46
const NODE_W = 84
const NODE_H = 26
const PAD = 12

const lineageSection = (result: GepaResult, trace: ReadonlyArray<TraceEntry> | undefined): string => {
  const n = result.candidates.length
  const onBestPath = new Set(n > 0 ? lineage(result, result.bestIndex) : [])
  const placed = LineageLayout.layout(n, (i) => validParents(result, i)[0], (i) => onBestPath.has(i))
  const fronts = frontCounts(result)
  const foundAt = new Map<number, number>()
  for (const t of trace ?? []) {
    if (t.outcome === "accepted" && t.candidate !== undefined && !foundAt.has(t.candidate)) foundAt.set(t.candidate, t.iteration)
  }
  const width = Math.max(1, placed.columns) * SLOT + 2 * PAD
  const height = Math.max(1, placed.rows) * ROW + 2 * PAD
  const cx = (i: number) => PAD + at(placed.nodes, i).column * SLOT + SLOT / 2
  const top = (i: number) => PAD + at(placed.nodes, i).depth * ROW + (ROW - NODE_H) / 2

  const edges: Array<string> = []
  const nodes: Array<string> = []
  for (let i = 0; i < n; i++) {
    const ps = validParents(result, i)
    ps.forEach((p, k) => {
      const path = onBestPath.has(i) && onBestPath.has(p) && k === 0 ? " on-path" : ""
      // the first parent's link is the tree's; a merge's other parents are dashed
      edges.push(
        `<path class="edge${k > 0 ? " second" : ""}${path}" d="M${px(cx(p))} ${px(top(p) + NODE_H)} C${px(cx(p))} ${px(top(p) + NODE_H + 16)} ${px(cx(i))} ${
          px(top(i) - 16)
        } ${px(cx(i))} ${px(top(i))}"/>`
      )
    })
    const kind = kindOf(result, i)
    const classes = ["node", kind]
    if (i === result.bestIndex) classes.push("best")
    if (onBestPath.has(i)) classes.push("on-path")
    const parent = ps[0]
    const changed = parent === undefined
      ? []
      : Object.keys(result.candidates[i] ?? {}).filter((k) => result.candidates[parent]?.[k] !== result.candidates[i]?.[k])
    const iteration = foundAt.get(i)
    const about = [
      `#${i} ${kind}${ps.length > 0 ? ` of ${ps.map((p) => `#${p}`).join(" + ")}` : ""}`,
      `score ${formatScore(result.valAggregateScores[i])}`,
      `coverage ${fmtInt(result.valCoverage[i] ?? 0)}`,
      `found at ${fmtInt(result.discoveryBudget[i] ?? 0)} calls${iteration === undefined ? "" : `, iteration ${fmtInt(iteration)}`}`,
      `Pareto front on ${fmtInt(fronts[i] ?? 0)} examples`,
      ...(changed.length > 0 ? [`changed: ${changed.join(", ")}`] : [])
    ].join("\n")
    const x = cx(i) - NODE_W / 2
    nodes.push(
      `<a href="#cand-${i}"><g id="node-${i}" class="${classes.join(" ")}" data-candidate="${i}"><title>${esc(about)}</title>` +
        `<rect x="${px(x)}" y="${px(top(i))}" width="${NODE_W}" height="${NODE_H}" rx="6"/>` +
        `<text class="label" x="${px(cx(i))}" y="${px(top(i) + NODE_H / 2 + 4)}" text-anchor="middle">#${i} ${
          formatScore(result.valAggregateScores[i])
        }</text></g></a>`
    )
  }
  const merges = result.candidates.map((_, i) => i).filter((i) => kindOf(result, i) === "merge")
  const mergeList = merges.length === 0 ?
    "" :
    `<details><summary>${fmtInt(merges.length)} merges</summary><p class="note">${
      merges.map((i) => `${candidateRef(i)} is a merge of ${validParents(result, i).map(candidateRef).join(" + ")}`).join("; ")
    }.</p></details>`
  const best = n > 0 ? lineage(result, result.bestIndex) : []
  const path = best.length <= 12
    ? best.map(candidateRef).join(" → ")
    : `${best.slice(0, 3).map(candidateRef).join(" → ")} → … → ${best.slice(-3).map(candidateRef).join(" → ")}`
  return `<section id="lineage"><h2>Lineage</h2><p class="note">One row per generation (${fmtInt(placed.rows)}), ${
    fmtInt(n)
  } candidates, each under its first parent; a merge's other parents are linked by dashed lines. The path from the seed to the best candidate runs down the left edge, highlighted: ${path} (${
    fmtInt(best.length)
  } candidates). Hover a node for its details; click it for its row in the table.</p>` +
    (best.length > 12 ? `<details><summary>The whole path</summary><p class="note">${best.map(candidateRef).join(" → ")}</p></details>` : "") +
    mergeList +
    `<div class="zoom"><input type="radio" name="lineage-zoom" id="zoom-full" checked><label for="zoom-full">Actual size</label>` +
    `<input type="radio" name="lineage-zoom" id="zoom-fit"><label for="zoom-fit">Fit to width</label>` +
    `<div class="lineage-scroll"><svg id="lineage-tree" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="Lineage of ${n} candidates">` +
    `<g class="edges">${edges.join("")}</g><g class="nodes">${nodes.join("")}</g></svg></div></div></section>`
}

const paretoSection = (result: GepaResult): string => {
  const ids = Object.keys(result.perInstanceBest).sort(naturalCompare)
  if (ids.length === 0) return `<section id="pareto"><h2>Pareto front per example</h2><p class="note">No validation examples were recorded.</p></section>`
  const rows = ids.map((id) => {
    const programs = result.perInstanceBest[id] ?? []
    let best: number | null = null
    for (const p of programs) {
      const s = result.valScores[p]?.[id]
      if (isFiniteNumber(s) && (best === null || s > best)) best = s
    }
    return `<tr><td class="id">${esc(id)}</td><td class="num">${fmtScore(best)}</td><td>${programs.map(candidateRef).join(" ")}</td></tr>`
  })
  return `<section id="pareto"><h2>Pareto front per example</h2><div class="scroll"><table><thead><tr><th>Example</th><th>Best score</th><th>Candidates reaching it</th></tr></thead><tbody>${
    rows.join("")
  }</tbody></table></div></section>`
}

const diffBlock = (diff: ReadonlyArray<DiffLine>): string =>
  `<pre class="diff">${
    diff.map((d) =>
      d.op === "add"
        ? `<ins class="line add">+ ${esc(d.line)}\n</ins>`
        : d.op === "del"
        ? `<del class="line del">- ${esc(d.line)}\n</del>`
        : `<span class="line same">  ${esc(d.line)}\n</span>`
    ).join("")
  }</pre>`

const bestSection = (result: GepaResult, seed: Candidate): string => {
  const best = result.bestCandidate
  const names = [...Object.keys(seed), ...Object.keys(best).filter((k) => !(k in seed))]
  const parts = [`<section id="best"><h2>Best candidate (${candidateRef(result.bestIndex)}) against the seed</h2>`]
  for (const name of names) {
    // a structured component (stored as canonical JSON) is shown indented,
    // with its changes listed path by path above the line diff
    const storedBefore = seed[name] ?? ""
    const storedAfter = best[name] ?? ""
    const before = CandidateSchema.format(storedBefore)
    const after = CandidateSchema.format(storedAfter)
    parts.push(`<article class="component"><h3>${esc(name)}</h3>`)
    if (storedBefore === storedAfter) {
      parts.push(`<p class="note">Unchanged from the seed.</p><pre class="text">${esc(after)}</pre>`)
    } else {
      if (before !== storedBefore && after !== storedAfter) {
        const changes = CandidateSchema.diff(storedBefore, storedAfter)
        parts.push(`<ul class="changes">${changes.map((c) => `<li><code>${esc(c)}</code></li>`).join("")}</ul>`)
      }
      const diff = diffLines(before, after)
      const added = diff.filter((d) => d.op === "add").length
      const removed = diff.filter((d) => d.op === "del").length
      parts.push(`<p class="note"><span class="plus">+${added}</span> / <span class="minus">−${removed}</span> lines against the seed.</p>`)
      parts.push(diffBlock(diff))
      parts.push(`<details><summary>Full text</summary><pre class="text">${esc(after)}</pre></details>`)
    }
    parts.push(`</article>`)
  }
  parts.push(`</section>`)
  return parts.join("")
}

const candidatesSection = (result: GepaResult): string => {
  const fronts = frontCounts(result)
  const rows = result.candidates.map((_, i) => {
    const ps = validParents(result, i)
    return `<tr id="cand-${i}"${i === result.bestIndex ? ` class="best"` : ""}><td class="num">${candidateRef(i)}</td><td>${kindOf(result, i)}</td><td>${
      ps.length === 0 ? "—" : ps.map(candidateRef).join(", ")
    }</td><td class="num">${fmtScore(result.valAggregateScores[i])}</td><td class="num">${fmtInt(result.valCoverage[i] ?? 0)}</td><td class="num">${
      fmtInt(result.discoveryBudget[i] ?? 0)
    }</td><td class="num">${fmtInt(fronts[i] ?? 0)}</td></tr>`
  })
  return `<section id="candidates"><h2>All candidates</h2><div class="scroll"><table><thead><tr><th>#</th><th>Kind</th><th>Parents</th><th>Score</th><th>Coverage</th><th>Discovery budget</th><th>On front</th></tr></thead><tbody>${
    rows.join("")
  }</tbody></table></div></section>`
}

const traceSection = (trace: ReadonlyArray<TraceEntry>): string => {
  const sum = (xs: ReadonlyArray<number> | undefined) => (xs === undefined ? null : xs.reduce((a, b) => a + b, 0))
  const rows = trace.map((t) => {
    const before = sum(t.scoresBefore)
    const after = sum(t.scoresAfter)
    return `<tr class="${t.outcome}"><td class="num">${fmtInt(t.iteration)}</td><td>${t.kind}</td><td>${
      t.parents.map(candidateRef).join(", ")
    }</td><td>${t.outcome}</td><td>${t.candidate === undefined ? "—" : candidateRef(t.candidate)}</td><td>${
      esc((t.components ?? []).join(", "))
    }</td><td class="num">${before === null ? "—" : fmtScore(before)} → ${after === null ? "—" : fmtScore(after)}</td><td>${
      esc(t.reason ?? "")
    }</td><td class="num">${fmtInt(t.metricCalls)}</td></tr>`
  })
  return `<section id="trace"><h2>Iterations</h2><details><summary>${trace.length} trace entries</summary><div class="scroll"><table><thead><tr><th>Iteration</th><th>Kind</th><th>Parents</th><th>Outcome</th><th>Candidate</th><th>Components</th><th>Minibatch sum</th><th>Reason</th><th>Metric calls</th></tr></thead><tbody>${
    rows.join("")
  }</tbody></table></div></details></section>`
}

const CSS = `
:root{--fg:#1d2330;--muted:#5d6677;--line:#d8dde6;--bg:#fff;--panel:#f6f8fb;--accent:#2563eb;--seed:#6b7280;--refl:#2563eb;--merge:#c2410c;--best:#15803d;--add:#e6f6ea;--addfg:#14532d;--del:#fdecec;--delfg:#7f1d1d}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px 64px;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
#charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,520px),1fr));gap:0 24px}#charts h2{grid-column:1/-1}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}h3{font-size:14px;margin:16px 0 6px;font-family:ui-monospace,Menlo,Consolas,monospace}
.sub,.note{color:var(--muted);margin:4px 0}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
dl.summary{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:8px;margin:0}
dl.summary div{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:8px 10px}
dt{color:var(--muted);font-size:12px}dd{margin:2px 0 0;font-weight:600}
figure{margin:12px 0 20px}figcaption{color:var(--muted);font-size:12px}
svg.chart{width:100%;max-width:${W}px;height:auto;background:var(--panel);border:1px solid var(--line);border-radius:6px}
.grid{stroke:var(--line);stroke-width:1}.axis{stroke:var(--fg);stroke-width:1}.tickmark{stroke:var(--fg)}
.tick{font-size:11px;fill:var(--muted)}.axis-label{font-size:12px;fill:var(--fg)}.empty{fill:var(--muted)}
.best-line{fill:none;stroke:var(--best);stroke-width:2.5}.best-line.faint{stroke-opacity:.35;stroke-dasharray:4 3}
.best-point{fill:var(--best)}
.pt{fill-opacity:.8;stroke:#fff;stroke-width:1}.pt.seed{fill:var(--seed)}.pt.reflective{fill:var(--refl)}.pt.merge{fill:var(--merge)}.pt.best{stroke:var(--best);stroke-width:3}
.legend{font-size:12px;color:var(--muted);margin:4px 0}.swatch{display:inline-block;width:10px;height:10px;border-radius:50%;margin:0 4px 0 10px;vertical-align:middle}
.swatch.seed{background:var(--seed)}.swatch.reflective{background:var(--refl)}.swatch.merge{background:var(--merge)}.swatch.best-ring{border:3px solid var(--best)}
.zoom>input{position:absolute;opacity:0}.zoom>label{display:inline-block;margin:0 6px 6px 0;padding:2px 10px;border:1px solid var(--line);border-radius:12px;cursor:pointer;font-size:12px;color:var(--muted)}
.zoom>input:checked+label{background:var(--panel);color:var(--fg);border-color:var(--accent)}
.lineage-scroll{overflow:auto;max-height:80vh;border:1px solid var(--line);border-radius:6px;background:var(--bg)}
#zoom-fit:checked~.lineage-scroll svg{width:100%;height:auto}
#lineage-tree .edge{fill:none;stroke:#aab3c2;stroke-width:1.2}#lineage-tree .edge.second{stroke:var(--merge);stroke-dasharray:4 3;stroke-opacity:.55}#lineage-tree .edge.on-path{stroke:var(--best);stroke-width:2.5}
#lineage-tree .node rect{fill:var(--panel);stroke:var(--line);stroke-width:1}#lineage-tree .node.reflective rect{stroke:var(--refl)}
#lineage-tree .node.merge rect{stroke:var(--merge);stroke-width:2;stroke-dasharray:5 3}#lineage-tree .node.seed rect{stroke:var(--seed);stroke-width:2}
#lineage-tree .node.on-path rect{fill:#eef8f1}#lineage-tree .node.best rect{stroke:var(--best);stroke-width:3}
#lineage-tree .label{font:600 12px ui-monospace,Menlo,Consolas,monospace;fill:var(--fg)}#lineage-tree a:hover rect{stroke:var(--accent);stroke-width:2}
.scroll{max-height:460px;overflow:auto;border:1px solid var(--line);border-radius:6px}
table{border-collapse:collapse;width:100%}th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{position:sticky;top:0;background:var(--panel);font-size:12px;color:var(--muted)}td.num{text-align:right;font-variant-numeric:tabular-nums}td.id{font-family:ui-monospace,Menlo,Consolas,monospace}
tr.best td{background:#eef8f1}tr.rejected td,tr.skipped td{color:var(--muted)}tr.failed td{color:var(--delfg)}
pre{margin:0;padding:10px 12px;background:var(--panel);border:1px solid var(--line);border-radius:6px;overflow:auto;font:12px/1.45 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}
pre.diff .line{display:block;text-decoration:none}pre.diff ins{background:var(--add);color:var(--addfg)}pre.diff del{background:var(--del);color:var(--delfg)}
.plus{color:var(--addfg);font-weight:600}.minus{color:var(--delfg);font-weight:600}
details{margin-top:8px}summary{cursor:pointer;color:var(--accent)}
`

/**
 * The HTML report of a run, as one self-contained document. Every text that
 * comes from the run (component texts and names, example ids, reasons, the
 * title) is escaped.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (input: ReportInput): string => {
  const { result } = input
  const seed = input.seedCandidate ?? result.candidates[0] ?? {}
  const title = input.title ?? "GEPA run report"
  const sub = [
    `${result.candidates.length} candidates`,
    `${fmtInt(result.totalMetricCalls)} metric calls`,
    `stopped: ${esc(result.stopReason)}`,
    ...(input.generatedAt === undefined ? [] : [`generated ${esc(input.generatedAt)}`])
  ].join(" · ")
  return [
    "<!DOCTYPE html>",
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${esc(title)}</title><style>${CSS}</style></head><body>`,
    `<header><h1>${esc(title)}</h1><p class="sub">${sub}</p></header>`,
    summarySection(result, input.trace),
    chartsSection(result, input.progress),
    lineageSection(result, input.trace),
    paretoSection(result),
    bestSection(result, seed),
    candidatesSection(result),
    input.trace !== undefined && input.trace.length > 0 ? traceSection(input.trace) : "",
    "</body></html>",
    ""
  ].join("\n")
}
