/**
 * Part of the page's script (`pageScript.ts` joins the parts): the three
 * drawings, each redrawn whole: the score chart, the lineage graph with its
 * zoom and pan, and the Pareto grid. Plain browser JavaScript in a string;
 * it uses the helpers and the state of the script's opening.
 *
 * @internal
 */
export const graphs = String.raw`
  // ---- score chart ----
  function renderChart() {
    var svg = $("chart"); clear(svg);
    var W = svg.clientWidth || 600, H = svg.clientHeight || 300, L = 44, R = 12, T = 10, B = 30;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    var cs = S.candidates.filter(function (c) { return c; });
    var xOf = function (c) { return xAxis === "calls" ? c.calls : c.t; };
    var xmax = 1;
    for (var i = 0; i < cs.length; i++) xmax = Math.max(xmax, xOf(cs[i]));
    if (S.run) xmax = Math.max(xmax, xAxis === "calls" ? (S.run.budget || S.run.metricCalls) : S.run.now);
    var ymin = 1, ymax = 0;
    for (var j = 0; j < cs.length; j++) if (cs[j].score !== null) { ymin = Math.min(ymin, cs[j].score); ymax = Math.max(ymax, cs[j].score); }
    if (ymin > ymax) { ymin = 0; ymax = 1; }
    ymin = Math.max(0, Math.floor(ymin * 10) / 10 - 0.05); ymax = Math.min(Math.max(1, ymax), Math.ceil(ymax * 10) / 10 + 0.05);
    var X = function (x) { return L + (W - L - R) * x / xmax; };
    var Y = function (y) { return T + (H - T - B) * (1 - (y - ymin) / Math.max(1e-9, ymax - ymin)); };
    for (var g = 0; g <= 4; g++) {
      var yv = ymin + (ymax - ymin) * g / 4;
      svg.appendChild(sv("line", { x1: L, x2: W - R, y1: Y(yv), y2: Y(yv), stroke: "#eef1f5" }));
      svg.appendChild(sv("text", { x: L - 6, y: Y(yv) + 4, "text-anchor": "end" }, yv.toFixed(2)));
    }
    for (var gx = 0; gx <= 4; gx++) {
      var xv = xmax * gx / 4;
      svg.appendChild(sv("text", { x: X(xv), y: H - 10, "text-anchor": gx === 4 ? "end" : gx === 0 ? "start" : "middle" }, xAxis === "calls" ? String(Math.round(xv)) : dur(xv)));
    }
    svg.appendChild(sv("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: "#99a" }));
    svg.appendChild(sv("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#99a" }));
    if (xAxis === "calls" && S.run && S.run.budget) {
      svg.appendChild(sv("line", { x1: X(S.run.budget), x2: X(S.run.budget), y1: T, y2: H - B, stroke: "#cf222e", "stroke-dasharray": "4 3" }));
      svg.appendChild(sv("line", { x1: X(S.run.metricCalls), x2: X(S.run.metricCalls), y1: T, y2: H - B, stroke: "#2f6feb", "stroke-opacity": 0.35 }));
    }
    var sorted = cs.filter(function (c) { return c.score !== null; }).sort(function (a, b) { return xOf(a) - xOf(b); });
    var d = "", top = null;
    for (var k = 0; k < sorted.length; k++) {
      var c = sorted[k];
      if (top === null || c.score > top) {
        d += (d === "" ? "M" : "L") + X(xOf(c)) + " " + (top === null ? Y(c.score) : Y(top)) + " L" + X(xOf(c)) + " " + Y(c.score) + " ";
        top = c.score;
      }
    }
    if (top !== null) d += "L" + X(S.run ? (xAxis === "calls" ? S.run.metricCalls : S.run.now) : xmax) + " " + Y(top);
    if (d) svg.appendChild(sv("path", { d: d, fill: "none", stroke: "#2f6feb", "stroke-width": 2, "class": "best-line" }));
    var g2 = sv("g", { "class": "points" });
    for (var p = 0; p < sorted.length; p++) {
      var cc = sorted[p];
      var dot = sv("circle", { cx: X(xOf(cc)), cy: Y(cc.score), r: cc.i === selected ? 5 : 3.2, fill: color(cc.score), stroke: cc.i === selected ? "#111" : "#fff", "stroke-width": 1, "class": "pt", "data-i": cc.i });
      dot.appendChild(sv("title", null, "#" + cc.i + "  score " + fmt(cc.score) + "  at " + cc.calls + " calls, " + dur(cc.t)));
      dot.addEventListener("click", select.bind(null, cc.i));
      g2.appendChild(dot);
    }
    svg.appendChild(g2);
  }

  // ---- lineage ----
  var view = { k: 1, x: 20, y: 20 }, layout = null;
  function members() { var m = new Set(S.pareto.members); return m; }
  function computeLayout() {
    var cs = S.candidates, n = cs.length, depth = new Array(n), kids = new Array(n);
    for (var i = 0; i < n; i++) kids[i] = [];
    for (var j = 0; j < n; j++) {
      var c = cs[j]; if (!c) { depth[j] = 0; continue; }
      var d = 0; for (var p = 0; p < c.parents.length; p++) { var pp = c.parents[p]; if (pp < j) { d = Math.max(d, depth[pp] + 1); kids[pp].push(j); } }
      depth[j] = d;
    }
    var m = members(); var b = best(); if (b) m.add(b.i);
    // alive: an ancestor of (or) a Pareto member or the best
    var alive = new Array(n).fill(false), stack = Array.from(m);
    while (stack.length) { var x = stack.pop(); if (x === undefined || x >= n || alive[x] || !cs[x]) continue; alive[x] = true; for (var q2 = 0; q2 < cs[x].parents.length; q2++) stack.push(cs[x].parents[q2]); }
    var collapse = $("collapse").checked, shown = new Array(n).fill(true), folded = new Map();
    if (collapse) {
      // a folded node counts on its first shown ancestor; "+k" there unfolds the subtree
      var open = new Array(n).fill(false);
      for (var v = 0; v < n; v++) {
        if (!cs[v]) continue;
        var ps = cs[v].parents, viaOpen = ps.some(function (x) { return open[x]; });
        shown[v] = alive[v] || v === selected || viaOpen || ps.length === 0;
        open[v] = shown[v] && (expanded.has(v) || viaOpen);
        if (shown[v]) continue;
        var root = ps[0]; while (root !== undefined && !shown[root]) root = cs[root].parents[0];
        if (root !== undefined) folded.set(root, (folded.get(root) || 0) + 1);
      }
    }
    var layers = [];
    for (var w = 0; w < n; w++) { if (!cs[w] || !shown[w]) continue; (layers[depth[w]] = layers[depth[w]] || []).push(w); }
    var pos = new Array(n);
    for (var L = 0; L < layers.length; L++) {
      var layer = layers[L]; if (!layer) continue;
      var key = function (u) { var ps2 = cs[u].parents, s = 0, c2 = 0; for (var z = 0; z < ps2.length; z++) if (pos[ps2[z]]) { s += pos[ps2[z]].y; c2++; } return c2 ? s / c2 : 0; };
      layer.sort(function (a, b2) { return key(a) - key(b2) || a - b2; });
      for (var r = 0; r < layer.length; r++) pos[layer[r]] = { x: L * 46, y: r * 24 };
    }
    return { pos: pos, depth: depth, alive: alive, folded: folded, members: m, layers: layers.length, rows: layers.reduce(function (a, l) { return Math.max(a, l ? l.length : 0); }, 0) };
  }
  function applyView() { $("viewport").setAttribute("transform", "translate(" + view.x + "," + view.y + ") scale(" + view.k + ")"); }
  // "all": the whole graph; "latest": a readable scale at the newest generations
  function fit(mode) {
    if (!layout) return;
    var wrap = $("lineage-wrap"), W = wrap.clientWidth || 600, H = wrap.clientHeight || 400;
    var w = Math.max(1, layout.layers * 46), h = Math.max(1, layout.rows * 24);
    var whole = Math.min(2, Math.min((W - 40) / w, (H - 40) / h));
    if (mode !== "all" && whole < 0.45) {
      view.k = Math.max(0.45, Math.min(1, (H - 40) / h));
      view.x = Math.min(20, W - 30 - w * view.k);
    } else { view.k = Math.max(0.02, whole); view.x = 20; }
    // a graph lower than the view sits in its middle
    view.y = Math.max(20, (H - h * view.k) / 2);
    applyView();
  }
  var fitted = false;
  function renderLineage() {
    if (!collapseTouched) $("collapse").checked = S.candidates.length > 150;
    layout = computeLayout();
    var g = $("viewport"); clear(g);
    var cs = S.candidates, pos = layout.pos, edges = sv("g", { "class": "edges" }), nodes = sv("g", { "class": "nodes" });
    var b = best();
    for (var i = 0; i < cs.length; i++) {
      var c = cs[i]; if (!c || !pos[i]) continue;
      for (var p = 0; p < c.parents.length; p++) {
        var pp = pos[c.parents[p]]; if (!pp) continue;
        var mx = (pp.x + pos[i].x) / 2;
        edges.appendChild(sv("path", { d: "M" + pp.x + " " + pp.y + " C" + mx + " " + pp.y + " " + mx + " " + pos[i].y + " " + pos[i].x + " " + pos[i].y,
          fill: "none", stroke: layout.alive[i] ? "#8c96a8" : "#c9ced6", "stroke-width": 1.2, "stroke-dasharray": c.parents.length > 1 ? "4 3" : "" }));
      }
    }
    for (var j = 0; j < cs.length; j++) {
      var cj = cs[j]; if (!cj || !pos[j]) continue;
      var isMember = layout.members.has(j), node = sv("g", { "class": "node" + (j === selected ? " sel" : ""), "data-i": j, transform: "translate(" + pos[j].x + "," + pos[j].y + ")" });
      if (b && b.i === j) node.appendChild(sv("circle", { r: 11, fill: "none", stroke: "#d4a72c", "stroke-width": 2 }));
      node.appendChild(sv("circle", { r: 7, fill: color(cj.score), stroke: isMember ? "#d4a72c" : "#fff", "stroke-width": isMember ? 3 : 1, "class": isMember ? "member" : "" }));
      node.appendChild(sv("text", { x: 0, y: -10, "text-anchor": "middle" }, String(j)));
      var rej = S.rejected.get(j);
      var fold = layout.folded.get(j);
      if (fold) {
        var box = sv("g", { "class": "fold", transform: "translate(10,2)" });
        box.appendChild(sv("rect", { x: 0, y: 0, width: 26, height: 12, rx: 3, fill: "#eef1f5", stroke: "#b7bfcc" }));
        box.appendChild(sv("text", { x: 13, y: 10, "text-anchor": "middle" }, "+" + fold));
        box.addEventListener("click", (function (x) { return function (ev) { ev.stopPropagation(); expanded.add(x); renderLineage(); }; })(j));
        node.appendChild(box);
      }
      node.appendChild(sv("title", null, "#" + j + "  score " + fmt(cj.score) + "  depth " + layout.depth[j] + "  parents " + (cj.parents.join(", ") || "none") +
        (rej ? "  · " + rej + " rejected children" : "") + (isMember ? "  · Pareto member" : "") + (fold ? "  · " + fold + " folded descendants" : "")));
      node.addEventListener("click", select.bind(null, j));
      nodes.appendChild(node);
    }
    g.appendChild(edges); g.appendChild(nodes);
    if (!fitted && cs.length > 0) { fit("latest"); if (cs.length > 3) fitted = true; } else applyView();
  }
  (function zoomPan() {
    var wrap = $("lineage-wrap"), drag = null;
    wrap.addEventListener("wheel", function (e) {
      e.preventDefault();
      var r = wrap.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top, f = Math.exp(-e.deltaY * 0.0015), k = Math.max(0.02, Math.min(6, view.k * f));
      view.x = mx - (mx - view.x) * k / view.k; view.y = my - (my - view.y) * k / view.k; view.k = k; applyView(); fitted = true;
    }, { passive: false });
    wrap.addEventListener("pointerdown", function (e) { drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y }; });
    window.addEventListener("pointermove", function (e) { if (!drag) return; view.x = drag.vx + e.clientX - drag.x; view.y = drag.vy + e.clientY - drag.y; applyView(); fitted = true; });
    window.addEventListener("pointerup", function () { drag = null; });
    var zoom = function (f) { var W = wrap.clientWidth / 2, H = wrap.clientHeight / 2, k = Math.max(0.02, Math.min(6, view.k * f)); view.x = W - (W - view.x) * k / view.k; view.y = H - (H - view.y) * k / view.k; view.k = k; applyView(); fitted = true; };
    $("zin").addEventListener("click", function () { zoom(1.4); });
    $("zout").addEventListener("click", function () { zoom(1 / 1.4); });
    $("fit").addEventListener("click", function () { fit("all"); });
    $("latest").addEventListener("click", function () { fit("latest"); });
    $("collapse").addEventListener("change", function () { collapseTouched = true; expanded.clear(); renderLineage(); fit("latest"); });
  })();

  // ---- Pareto grid ----
  function renderPareto() {
    var wrap = $("pareto-wrap"); clear(wrap);
    var P = S.pareto, ex = P.examples, rows = P.members.slice(0, 60);
    $("pareto-note").textContent = P.members.length + " members × " + ex.length + " examples" + (P.members.length > rows.length ? " (first " + rows.length + ")" : "") + " · ★ holds the example's best";
    if (ex.length === 0) { wrap.appendChild(el("p", { "class": "muted" }, "no validation scores yet")); return; }
    var cw = Math.max(8, Math.min(22, Math.floor(560 / ex.length))), ch = 18, left = 96, topH = 16;
    var svg = sv("svg", { width: left + cw * ex.length + 10, height: topH + ch * rows.length + 6, id: "pareto" });
    for (var e = 0; e < ex.length; e++) {
      var head = sv("rect", { x: left + e * cw, y: 0, width: cw - 1, height: topH - 3, fill: "#eef1f5" });
      head.appendChild(sv("title", null, "example " + ex[e] + " · best " + fmt(P.best[e])));
      svg.appendChild(head);
    }
    for (var r = 0; r < rows.length; r++) {
      var i = rows[r], c = S.candidates[i], y = topH + r * ch;
      var label = sv("text", { x: 4, y: y + 13, "class": "row-label" }, "#" + i + "  " + fmt(c ? c.score : null));
      label.addEventListener("click", select.bind(null, i)); label.style.cursor = "pointer";
      svg.appendChild(label);
      for (var e2 = 0; e2 < ex.length; e2++) {
        var s = P.scores[r] ? P.scores[r][e2] : null, holds = s !== null && P.best[e2] !== null && P.best[e2] > 0 && s >= P.best[e2];
        var cell = sv("rect", { x: left + e2 * cw, y: y, width: cw - 1, height: ch - 2, fill: color(s), "fill-opacity": holds ? 1 : 0.35, stroke: holds ? "#1d2330" : "none", "stroke-width": 0.6, "class": holds ? "holds" : "" });
        cell.appendChild(sv("title", null, "#" + i + " on " + ex[e2] + ": " + fmt(s) + (holds ? " (holds the best)" : "")));
        cell.addEventListener("click", select.bind(null, i));
        svg.appendChild(cell);
        if (holds && cw >= 12) svg.appendChild(sv("text", { x: left + e2 * cw + cw / 2 - 0.5, y: y + 12, "text-anchor": "middle", "font-size": 9 }, "★"));
      }
    }
    wrap.appendChild(svg);
  }
`
