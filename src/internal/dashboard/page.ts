/**
 * The dashboard's page: one self-contained HTML document (no CDN, no
 * external file, works offline). Its script (`pageScript.ts`) inserts every
 * text of the run with `textContent`, never as markup, so a candidate or
 * feedback containing `<script>` shows as text.
 *
 * @internal
 */
import { script } from "./pageScript.js"

const escapeHtml = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const style = String.raw`
:root { --bg:#f6f7f9; --panel:#fff; --ink:#1d2330; --mute:#667085; --line:#d9dee7; --accent:#2f6feb; --good:#1a7f37; --bad:#cf222e; --gold:#d4a72c; }
* { box-sizing: border-box; }
body { margin:0; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color:var(--ink); background:var(--bg); }
header { display:flex; flex-wrap:wrap; align-items:center; gap:8px 14px; padding:10px 16px; background:var(--panel); border-bottom:1px solid var(--line); position:sticky; top:0; z-index:5; }
header h1 { font-size:15px; margin:0; font-weight:600; }
.pill { padding:2px 8px; border-radius:10px; font-weight:600; font-size:12px; background:#e7ecf3; }
.pill.running { background:#dafbe1; color:var(--good); } .pill.stopping { background:#fff8c5; color:#7d4e00; }
.pill.finished { background:#ddf4ff; color:#0969da; } .pill.stopped,.pill.failed,.pill.disconnected { background:#ffebe9; color:var(--bad); }
.stat { color:var(--mute); } .stat b { color:var(--ink); font-variant-numeric: tabular-nums; }
.budget { width:90px; height:8px; background:#e7ecf3; border-radius:4px; overflow:hidden; display:inline-block; vertical-align:middle; }
.budget > div { height:100%; background:var(--accent); width:0; }
button { font:inherit; padding:4px 10px; border:1px solid var(--line); border-radius:6px; background:#fff; cursor:pointer; }
button:hover { background:#f0f3f7; } button:disabled { opacity:.5; cursor:default; }
button.stop { border-color:#f5a3a3; color:var(--bad); font-weight:600; margin-left:auto; }
main { display:grid; grid-template-columns: minmax(0,1fr) minmax(0,1fr); gap:12px; padding:12px; }
section { background:var(--panel); border:1px solid var(--line); border-radius:8px; padding:10px 12px; min-width:0; }
section h2 { font-size:13px; margin:0 0 6px; display:flex; gap:10px; align-items:center; flex-wrap:wrap; }
section h2 .tools { margin-left:auto; display:flex; gap:6px; align-items:center; font-weight:400; }
#lineage-wrap { height:420px; border:1px solid var(--line); border-radius:6px; overflow:hidden; position:relative; background:#fbfcfd; cursor:grab; touch-action:none; }
#lineage { width:100%; height:100%; display:block; }
#chart { width:100%; height:400px; display:block; }
.fold-note { color:var(--mute); font-style:italic; }
.wide { grid-column: 1 / -1; }
#pareto-wrap { overflow:auto; max-height:420px; }
#events { list-style:none; margin:0; padding:0; max-height:260px; overflow:auto; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size:12px; }
#events li { padding:2px 4px; border-bottom:1px solid #eef1f5; display:flex; gap:8px; }
#events li .t { color:var(--mute); min-width:58px; text-align:right; }
#events li .tag { min-width:150px; font-weight:600; }
.tag.CandidateAccepted,.tag.MergeAccepted { color:var(--good); } .tag.CandidateRejected,.tag.MergeRejected,.tag.Error { color:var(--bad); }
.tag.OptimizationEnded,.tag.StopRequested { color:#8250df; }
#detail .empty { color:var(--mute); }
#detail pre, .text { white-space:pre-wrap; word-break:break-word; background:#f6f8fa; border:1px solid #eef1f5; border-radius:6px; padding:8px; margin:4px 0 10px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size:12px; max-height:260px; overflow:auto; }
ins { background:#dafbe1; text-decoration:none; } del { background:#ffebe9; color:#82071e; }
table.mb { border-collapse:collapse; margin:4px 0 10px; } table.mb td, table.mb th { border:1px solid #eef1f5; padding:2px 8px; text-align:right; font-variant-numeric: tabular-nums; }
table.mb th { background:#f6f8fa; } .up { color:var(--good); } .down { color:var(--bad); }
.record { border-left:3px solid var(--line); padding-left:8px; margin:6px 0; }
.record .k { font-weight:600; color:var(--mute); font-size:11px; text-transform:uppercase; letter-spacing:.03em; }
.legend { color:var(--mute); font-size:12px; }
.muted { color:var(--mute); }
ul.changes { margin:2px 0 6px; padding-left:18px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size:12px; }
svg text { font: 11px system-ui, "DejaVu Sans", sans-serif; fill:#445; }
.node { cursor:pointer; } .node.sel circle { stroke:#111 !important; stroke-width:3px !important; }
@media (max-width: 1000px) { main { grid-template-columns: minmax(0,1fr); } #lineage-wrap { height:360px; } header { gap:6px 12px; } }
`

/** The page, with `nonce` on its script and style (the Content-Security-Policy allows only those). */
export const page = (nonce: string, title: string): string =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${style}</style></head>
<body>
<header>
  <h1 id="title">${escapeHtml(title)}</h1>
  <span id="status" class="pill">connecting</span>
  <span class="stat">metric calls <b id="calls">0</b><span id="budget-of"></span> <span class="budget"><div id="budget-bar"></div></span></span>
  <span class="stat">ETA <b id="eta">n/a</b></span>
  <span class="stat">elapsed <b id="elapsed">0s</b></span>
  <span class="stat">best <b id="best">n/a</b></span>
  <span class="stat">candidates <b id="count">0</b></span>
  <span class="stat">accepted/rejected <b id="ar">0/0</b></span>
  <button id="stop" class="stop" title="Stop the run gracefully: the state is saved and the run can be resumed">Stop run</button>
</header>
<main>
  <section><h2>Validation score <span class="tools"><label><input type="radio" name="x" value="calls" checked> metric calls</label><label><input type="radio" name="x" value="time"> wall time</label></span></h2>
    <svg id="chart" role="img" aria-label="validation score chart"></svg>
    <div class="legend">dots: candidates (click one) · line: best so far · dashed: budget</div></section>
  <section><h2>Lineage <span class="tools"><label title="fold subtrees that hold no Pareto member"><input type="checkbox" id="collapse"> collapse dead branches</label><button id="fit" title="the whole graph">all</button><button id="latest" title="the newest generations, readable">latest</button><button id="zin">+</button><button id="zout">−</button></span></h2>
    <div id="lineage-wrap"><svg id="lineage" role="img" aria-label="lineage graph"><g id="viewport"></g></svg></div>
    <div class="legend">left to right by depth · gold ring: Pareto member · double ring: best · dashed: merge · grey box: folded branch (click) · wheel: zoom · drag: pan</div></section>
  <section><h2>Pareto coverage <span class="tools legend" id="pareto-note"></span></h2><div id="pareto-wrap"></div></section>
  <section id="detail"><h2>Candidate <span id="detail-title" class="muted"></span></h2><div id="detail-body"><p class="empty">Click a candidate in the chart, the lineage or the grid.</p></div></section>
  <section class="wide"><h2>Events <span class="tools legend" id="events-note"></span></h2><ul id="events"></ul></section>
</main>
<script nonce="${nonce}">${script}</script>
</body></html>
`
