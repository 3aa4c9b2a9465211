/**
 * The page's script, plain browser JavaScript kept as a string (the library
 * compiles without the DOM types). Every text from the run goes in with
 * `textContent` or `createTextNode`; SVG is built with `createElementNS`.
 * Nothing here reads `innerHTML` from data.
 *
 * One function scope (an IIFE) in four parts, joined here in order: this
 * module's opening (helpers, the data the server sends, the throttled
 * rendering, the header and the event list), the drawings
 * (`pageScriptGraphs.ts`), the candidate detail (`pageScriptDetail.ts`),
 * and this module's closing (the controls). The parts share the scope's
 * variables and functions, so none of them is a script on its own.
 *
 * @internal
 */
import { detail } from "./pageScriptDetail.js"
import { graphs } from "./pageScriptGraphs.js"

const opening = String.raw`
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
`

const closing = String.raw`
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

/**
 * The whole script: its parts, joined in order.
 *
 * @internal
 */
export const script = opening + graphs + detail + closing
