/**
 * Part of the page's script (`pageScript.ts` joins the parts): the
 * candidate detail, fetched when a candidate is selected, with each
 * component's word diff against its parents, the minibatch scores, the
 * proposal's cost and the feedback the reflection model saw. Plain browser
 * JavaScript in a string; it uses the helpers and the state of the script's
 * opening.
 *
 * @internal
 */
export const detail = String.raw`
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
`
