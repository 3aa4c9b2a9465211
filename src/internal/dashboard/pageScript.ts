/**
 * The page's script, plain browser JavaScript kept as a string (the library
 * compiles without the DOM types). Every text from the run goes in with
 * `textContent` or `createTextNode`; SVG is built with `createElementNS`.
 * Nothing here reads `innerHTML` from data.
 *
 * @internal
 */
export const script = String.raw`
"use strict";
(function () {
  var token = new URLSearchParams(location.search).get("token") || "";
  var q = function (path) { return path + (path.indexOf("?") < 0 ? "?" : "&") + "token=" + encodeURIComponent(token); };
  var $ = function (id) { return document.getElementById(id); };
  var SVG = "http://www.w3.org/2000/svg";
  var S = { seq: -1, run: null, candidates: [], events: [], rejected: new Map(), pareto: { examples: [], members: [], scores: [], best: [] }, progress: [] };
  var selected = null, connected = false, xAxis = "calls", expanded = new Set(), collapseTouched = false;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function sv(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function fmt(x) { return x === null || x === undefined ? "n/a" : (Math.round(x * 1000) / 1000).toFixed(3); }
  function dur(ms) {
    if (ms === null || ms === undefined || !isFinite(ms)) return "n/a";
    var s = Math.round(ms / 1000);
    if (s < 60) return s + "s";
    var m = Math.floor(s / 60); if (m < 60) return m + "m " + (s % 60) + "s";
    return Math.floor(m / 60) + "h " + (m % 60) + "m";
  }
  function color(score) {
    if (score === null || score === undefined) return "#c9ced6";
    var t = Math.max(0, Math.min(1, score));
    var h = Math.round(t * 120);
    return "hsl(" + h + ",62%," + (46 + (1 - t) * 8) + "%)";
  }

  // ---- data ----
  function apply(msg) {
    if (msg.reset) { reconnect(); return; }
    if (msg.snapshot) {
      S.seq = msg.seq; S.run = msg.run; S.candidates = msg.candidates.slice(); S.events = msg.events.slice();
      S.rejected = new Map(msg.rejected); S.pareto = msg.pareto; S.progress = msg.progress.slice();
      if (msg.title) { $("title").textContent = msg.title; document.title = msg.title; }
      S.mode = msg.mode;
      schedule(true); return;
    }
    if (msg.seq <= S.seq) return;
    S.seq = msg.seq;
    if (msg.run) S.run = msg.run;
    if (msg.progress) for (var i = 0; i < msg.progress.length; i++) S.progress.push(msg.progress[i]);
    if (msg.candidates) for (var j = 0; j < msg.candidates.length; j++) S.candidates[msg.candidates[j].i] = msg.candidates[j];
    if (msg.scores) for (var k = 0; k < msg.scores.length; k++) { var c = S.candidates[msg.scores[k][0]]; if (c) { c.score = msg.scores[k][1]; c.coverage = msg.scores[k][2]; } }
    if (msg.rejected) for (var r = 0; r < msg.rejected.length; r++) S.rejected.set(msg.rejected[r][0], msg.rejected[r][1]);
    if (msg.pareto) S.pareto = msg.pareto;
    if (msg.events) { for (var e = 0; e < msg.events.length; e++) S.events.push(msg.events[e]); if (S.events.length > 400) S.events.splice(0, S.events.length - 400); }
    schedule(!!(msg.candidates || msg.pareto || msg.scores));
  }

  var source = null;
  function connect() {
    source = new EventSource(q("/events"));
    source.onopen = function () { connected = true; renderHeader(); };
    source.onmessage = function (m) { try { apply(JSON.parse(m.data)); } catch (err) { console.error(err); } };
    source.onerror = function () { connected = false; renderHeader(); };
  }
  function reconnect() { if (source) source.close(); connect(); }

  // ---- rendering, throttled ----
  var pendingFull = false, timer = null, lastFull = 0;
  function schedule(full) {
    pendingFull = pendingFull || full;
    if (timer !== null) return;
    timer = setTimeout(function () {
      timer = null;
      renderHeader(); renderEvents();
      var now = Date.now();
      // the graphs are redrawn whole: at most once a second, less often for big runs
      if (pendingFull && now - lastFull > Math.max(1000, S.candidates.length * 2)) {
        pendingFull = false; lastFull = now;
        renderChart(); renderLineage(); renderPareto();
        document.body.setAttribute("data-candidates", String(S.candidates.length));
      } else if (pendingFull) schedule(true);
    }, 120);
  }

  function best() {
    var b = null;
    for (var i = 0; i < S.candidates.length; i++) { var c = S.candidates[i]; if (c && c.score !== null && (b === null || c.score > b.score)) b = c; }
    return b;
  }

  function eta() {
    var r = S.run; if (!r || r.budget === null || r.status !== "running") return null;
    var p = S.progress; if (p.length < 2) return null;
    var last = p[p.length - 1], first = p[0];
    for (var i = p.length - 1; i >= 0; i--) { if (last[0] - p[i][0] > 60000) { first = p[i]; break; } first = p[i]; }
    var rate = (last[1] - first[1]) / Math.max(1, last[0] - first[0]);
    if (!(rate > 0)) return null;
    return Math.max(0, (r.budget - r.metricCalls) / rate);
  }

  function renderHeader() {
    var r = S.run; var st = $("status");
    var status = !connected && (!r || (r.status !== "finished" && r.status !== "stopped")) ? "disconnected" : r ? r.status : "connecting";
    st.textContent = status + (r && (status === "stopped" || status === "finished") && r.stopReason ? ": " + r.stopReason : "") + (S.mode === "watch" ? " (watching folder)" : "");
    st.className = "pill " + status;
    if (!r) return;
    $("calls").textContent = String(r.metricCalls);
    $("budget-of").textContent = r.budget === null ? "" : " / " + r.budget;
    $("budget-bar").style.width = r.budget ? Math.min(100, 100 * r.metricCalls / r.budget) + "%" : "0";
    $("eta").textContent = r.status === "running" ? dur(eta()) : "n/a";
    $("elapsed").textContent = dur(r.now);
    var b = best(); $("best").textContent = b ? fmt(b.score) + " (#" + b.i + ")" : "n/a";
    $("count").textContent = String(S.candidates.length);
    $("ar").textContent = r.accepted + "/" + r.rejected;
    var stop = $("stop");
    stop.disabled = !(r.status === "running" || r.status === "starting");
    if (r.status === "stopping") stop.textContent = "Stopping…"; else if (r.status !== "running") stop.textContent = "Run " + r.status; else stop.textContent = "Stop run";
  }

  function renderEvents() {
    var ul = $("events"); clear(ul);
    var n = Math.min(S.events.length, 200);
    for (var i = S.events.length - 1; i >= S.events.length - n; i--) {
      var e = S.events[i]; var li = el("li");
      li.appendChild(el("span", { "class": "t" }, dur(e.t)));
      li.appendChild(el("span", { "class": "tag " + e.tag }, e.tag));
      li.appendChild(el("span", null, e.text));
      ul.appendChild(li);
    }
    $("events-note").textContent = S.events.length + " shown (newest first)";
  }

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

  // ---- candidate detail ----
  function words(s) { return s.split(/(\s+)/).filter(function (w) { return w !== ""; }); }
  function diff(a, b) {
    var A = words(a), B = words(b), n = A.length, m = B.length;
    if (n * m > 4000000) { A = a.split(/(\n)/); B = b.split(/(\n)/); n = A.length; m = B.length; }
    if (n * m > 4000000) return [["del", a], ["ins", b]];
    var dp = new Array(n + 1);
    for (var i = 0; i <= n; i++) { dp[i] = new Uint32Array(m + 1); }
    for (var i2 = n - 1; i2 >= 0; i2--) for (var j = m - 1; j >= 0; j--) dp[i2][j] = A[i2] === B[j] ? dp[i2 + 1][j + 1] + 1 : Math.max(dp[i2 + 1][j], dp[i2][j + 1]);
    var out = [], x = 0, y = 0;
    var push = function (kind, t) { if (out.length && out[out.length - 1][0] === kind) out[out.length - 1][1] += t; else out.push([kind, t]); };
    while (x < n && y < m) {
      if (A[x] === B[y]) { push("same", A[x]); x++; y++; }
      else if (dp[x + 1][y] >= dp[x][y + 1]) { push("del", A[x]); x++; }
      else { push("ins", B[y]); y++; }
    }
    while (x < n) push("del", A[x++]);
    while (y < m) push("ins", B[y++]);
    return out;
  }
  function diffView(a, b) {
    var pre = el("div", { "class": "text diff" });
    var parts = diff(a, b);
    for (var i = 0; i < parts.length; i++) {
      if (parts[i][0] !== "same") { pre.appendChild(el(parts[i][0], null, parts[i][1])); continue; }
      // long unchanged stretches fold to their edges, so the change shows without scrolling
      var lines = parts[i][1].split("\n");
      if (lines.length <= 7) { pre.appendChild(document.createTextNode(parts[i][1])); continue; }
      var head = i === 0 ? 0 : 2, tail = i === parts.length - 1 ? 0 : 2;
      pre.appendChild(document.createTextNode(lines.slice(0, head + 1).join("\n") + "\n"));
      pre.appendChild(el("span", { "class": "fold-note" }, "⋯ " + (lines.length - head - tail - 2) + " unchanged lines ⋯"));
      pre.appendChild(document.createTextNode("\n" + lines.slice(lines.length - tail - 1).join("\n")));
    }
    return pre;
  }
  function show(v) {
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v : JSON.stringify(v, null, 2);
  }
  function select(i) {
    selected = i; schedule(true);
    fetch(q("/candidate.json?i=" + i)).then(function (r) { return r.ok ? r.json() : null; }).then(function (d) { if (d && selected === i) renderDetail(d); });
  }
  function renderDetail(d) {
    var body = $("detail-body"); clear(body);
    $("detail-title").textContent = "#" + d.i + " · score " + fmt(d.score) + " · " + d.coverage + " examples · found at " + d.calls + " metric calls";
    var prop = d.proposal;
    var kind = d.parents.length === 0 ? "seed" : d.parents.length > 1 ? "merge of " + d.parents.map(function (p) { return "#" + p.i; }).join(" and ") : "child of #" + d.parents[0].i;
    body.appendChild(el("p", null, kind + (prop ? " · iteration " + prop.iteration : "") + (S.pareto.members.indexOf(d.i) >= 0 ? " · Pareto member" : "")));
    var names = Object.keys(d.components || {});
    for (var n = 0; n < names.length; n++) {
      var name = names[n], text = d.components[name];
      body.appendChild(el("h3", null, name));
      if (d.parents.length === 0) body.appendChild(el("div", { "class": "text" }, text));
      for (var p = 0; p < d.parents.length; p++) {
        var parent = d.parents[p], before = parent.components[name];
        if (d.parents.length > 1) body.appendChild(el("div", { "class": "muted" }, "against #" + parent.i + (before === text ? " (same text)" : "")));
        var changes = parent.changes && parent.changes[name];
        if (changes && changes.length) {
          var list = el("ul", { "class": "changes" });
          for (var c = 0; c < changes.length; c++) list.appendChild(el("li", null, changes[c]));
          body.appendChild(list);
        }
        body.appendChild(before === undefined ? el("div", { "class": "text" }, text) : diffView(before, text));
      }
    }
    if (prop && prop.before && prop.after) {
      body.appendChild(el("h3", null, prop.kind === "merge" ? "Subsample scores (parents, merged)" : "Minibatch scores (parent → child)"));
      var t = el("table", { "class": "mb" }), hr = el("tr");
      hr.appendChild(el("th", null, "example")); hr.appendChild(el("th", null, "before")); hr.appendChild(el("th", null, "after")); t.appendChild(hr);
      var ids = prop.ids || [];
      if (prop.kind === "merge") {
        var sum = function (xs) { return xs.reduce(function (a, b) { return a + b; }, 0); };
        var tr0 = el("tr"); tr0.appendChild(el("td", null, "sum")); tr0.appendChild(el("td", null, prop.before.map(fmt).join(" / "))); tr0.appendChild(el("td", null, fmt(sum(prop.after)))); t.appendChild(tr0);
      } else for (var k = 0; k < prop.after.length; k++) {
        var tr = el("tr"), bv = prop.before[k], av = prop.after[k];
        tr.appendChild(el("td", null, ids[k] === undefined ? String(k) : ids[k])); tr.appendChild(el("td", null, fmt(bv)));
        tr.appendChild(el("td", { "class": av > bv ? "up" : av < bv ? "down" : "" }, fmt(av))); t.appendChild(tr);
      }
      body.appendChild(t);
    }
    if (d.usage) {
      body.appendChild(el("h3", null, "Proposal cost"));
      body.appendChild(el("p", null, d.usage.calls + " reflection call(s) · " + d.usage.inputTokens + " input + " + d.usage.outputTokens + " output tokens · cost " + (Math.round(d.usage.cost * 1e6) / 1e6)));
    } else if (d.parents.length === 1) body.appendChild(el("p", { "class": "muted" }, "proposal cost: not recorded"));
    if (d.feedback) {
      body.appendChild(el("h3", null, "Feedback shown to the reflection model"));
      var comps = Object.keys(d.feedback);
      for (var c = 0; c < comps.length; c++) {
        var recs = d.feedback[comps[c]] || [];
        body.appendChild(el("div", { "class": "muted" }, comps[c] + ": " + recs.length + " record(s)"));
        for (var r = 0; r < recs.length; r++) {
          var box = el("div", { "class": "record" }), keys = Object.keys(recs[r]);
          for (var z = 0; z < keys.length; z++) { box.appendChild(el("div", { "class": "k" }, keys[z])); box.appendChild(el("div", { "class": "text" }, show(recs[r][keys[z]]))); }
          body.appendChild(box);
        }
      }
    } else if (d.parents.length === 1) body.appendChild(el("p", { "class": "muted" }, "feedback: not recorded"));
  }

  // ---- controls ----
  Array.prototype.forEach.call(document.querySelectorAll("input[name=x]"), function (r) {
    r.addEventListener("change", function () { xAxis = r.value; renderChart(); });
  });
  $("stop").addEventListener("click", function () {
    var b = $("stop"); b.disabled = true; b.textContent = "Stopping…";
    fetch(q("/stop"), { method: "POST" }).then(function (r) { return r.json(); }).then(function (o) {
      S.events.push({ t: S.run ? S.run.now : 0, tag: "StopRequested", text: o.message }); renderEvents();
    }).catch(function () { b.disabled = false; b.textContent = "Stop run"; });
  });
  window.addEventListener("resize", function () { schedule(true); });
  setInterval(function () { if (S.run && S.run.status === "running") { renderHeader(); } }, 1000);
  connect();
})();
`
