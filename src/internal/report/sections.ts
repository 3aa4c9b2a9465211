/**
 * The report's sections (summary, progress, lineage, Pareto front, best
 * candidate, all candidates, iterations) and its stylesheet; `Report.render`
 * puts them together.
 *
 * @internal
 */
import type { Candidate } from "../../Candidate.js"
import * as CandidateSchema from "../../CandidateSchema.js"
import type { GepaResult } from "../../Result.js"
import { formatScore, lineage } from "../../Result.js"
import type { TraceEntry } from "../../State.js"
import { at } from "../shared/invariant.js"
import * as LineageLayout from "./lineageLayout.js"
import { bestChart, legend, scatterChart, W } from "./charts.js"
import { type DiffLine, diffLines } from "./diff.js"
import {
  bestScoreCurve,
  candidateRef,
  type CurvePoint,
  esc,
  fmtInt,
  fmtScore,
  frontCounts,
  isFiniteNumber,
  kindOf,
  naturalCompare,
  px,
  validParents
} from "./html.js"

export const summarySection = (result: GepaResult, trace: ReadonlyArray<TraceEntry> | undefined): string => {
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

export const chartsSection = (
  result: GepaResult,
  progress: ReadonlyArray<{ readonly metricCalls: number; readonly bestScore: number }> | undefined
): string => {
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

// The lineage as a layered tree (internal/report/lineageLayout.ts): one row per
// generation, subtrees packed by their contours, in an SVG at its natural
// size inside a scrolling box, so that labels keep their size however deep
// or wide the run; a "fit" zoom (CSS only, no script) shows it whole.
const SLOT = 92
const ROW = 46
const NODE_W = 84
const NODE_H = 26
const PAD = 12

export const lineageSection = (result: GepaResult, trace: ReadonlyArray<TraceEntry> | undefined): string => {
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

export const paretoSection = (result: GepaResult): string => {
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

export const bestSection = (result: GepaResult, seed: Candidate): string => {
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

export const candidatesSection = (result: GepaResult): string => {
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

export const traceSection = (trace: ReadonlyArray<TraceEntry>): string => {
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

export const CSS = `
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
