import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import type { Candidate } from "../src/Candidate.js"
import * as Report from "../src/Report.js"
import * as Result from "../src/Result.js"
import * as State from "../src/State.js"

const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"])

// A small structural check: every non-void element is closed in order, no
// stray "<" sits in text, and attribute values are quoted. Enough to catch an
// unescaped user string or a forgotten closing tag.
const wellFormedProblems = (html: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const stack: Array<string> = []
  const body = html.replace(/^<!DOCTYPE html>/i, "")
  const token = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z_:][-a-zA-Z0-9_:.]*(?:="[^"<>]*")?)*)\s*(\/?)>/y
  let i = 0
  while (i < body.length) {
    const lt = body.indexOf("<", i)
    if (lt < 0) break
    token.lastIndex = lt
    const m = token.exec(body)
    if (m === null) {
      problems.push(`stray "<" at ${lt}: ${JSON.stringify(body.slice(lt, lt + 40))}`)
      i = lt + 1
      continue
    }
    const [, closing, rawName, , selfClosing] = m
    const name = rawName!.toLowerCase()
    if (closing === "/") {
      const open = stack.pop()
      if (open !== name) problems.push(`</${name}> closes <${open ?? "nothing"}>`)
    } else if (selfClosing !== "/" && !VOID.has(name)) {
      stack.push(name)
    }
    i = token.lastIndex
  }
  if (stack.length > 0) problems.push(`unclosed: ${stack.join(" > ")}`)
  return problems
}

const get = <A, E>(e: Either.Either<A, E>): A => Either.getOrThrowWith(e, (err) => new Error(String(err)))

const ids = Array.from({ length: 8 }, (_, k) => `ex-${k}`)
const scoresOf = (hits: ReadonlyArray<number>): Record<string, number> => Object.fromEntries(ids.map((id, k) => [id, hits.includes(k) ? 1 : 0]))

const seed: Candidate = {
  system_prompt: "You route support tickets.\nReply with the queue name.",
  format: "plain"
}

// seed -> 1 (reflective) -> 3 (reflective); seed -> 2 (reflective); 4 = merge(3, 2)
const buildResult = () => {
  let state = get(State.initial({
    seed: 7,
    seedCandidate: seed,
    frontierType: "instance",
    valset: { scores: scoresOf([0, 1]) },
    metricCalls: 8
  }))
  const add = (candidate: Candidate, parents: ReadonlyArray<number>, hits: ReadonlyArray<number>, budget: number) => {
    const [next] = get(State.addCandidate(state, { candidate, parents, valset: { scores: scoresOf(hits) }, discoveryBudget: budget }))
    state = { ...next, metricCalls: budget + 8, iteration: state.iteration + 1 }
  }
  add(
    {
      system_prompt: "You route support tickets.\nReply with the queue name.\n- If the ticket mentions 'chargeback', route it to billing-disputes.",
      format: "plain"
    },
    [0],
    [0, 1, 2, 3],
    20
  )
  add(
    {
      system_prompt: "You route support tickets.\nReply with the queue name.\n- If the ticket mentions 'hacked', route it to account-security.",
      format: "plain"
    },
    [0],
    [0, 1, 4, 5],
    32
  )
  add(
    {
      system_prompt:
        "You route support tickets.\nReply with the queue name only.\n- If the ticket mentions 'chargeback', route it to billing-disputes.\n<script>alert('x')</script>",
      format: "plain"
    },
    [1],
    [0, 1, 2, 3, 6],
    50
  )
  add(
    {
      system_prompt:
        "You route support tickets.\nReply with the queue name only.\n- If the ticket mentions 'chargeback', route it to billing-disputes.\n- If the ticket mentions 'hacked', route it to account-security.\n<script>alert('x')</script>",
      format: "plain"
    },
    [3, 2],
    [0, 1, 2, 3, 4, 5, 6],
    70
  )
  state = { ...state, merge: { ...state.merge, attempted: 1, accepted: 1 }, acceptedProposals: 4, reflectionCalls: 3 }
  return Result.fromState(state, "max_metric_calls <reached> & \"done\"")
}

const section = (html: string, id: string): string => {
  const start = html.indexOf(`<section id="${id}"`)
  expect(start).toBeGreaterThanOrEqual(0)
  return html.slice(start, html.indexOf("</section>", start))
}

const count = (text: string, needle: string): number => text.split(needle).length - 1

describe("Report", () => {
  const result = buildResult()
  const html = Report.render({ result, title: "Run <1>", generatedAt: "2025-01-01T00:00:00Z" })

  it("builds the expected fixture", () => {
    expect(result.candidates).toHaveLength(5)
    expect(result.bestIndex).toBe(4)
    expect(result.parents[4]).toEqual([3, 2])
  })

  it("renders well-formed, script-free HTML", () => {
    expect(wellFormedProblems(html)).toEqual([])
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true)
    expect(html).not.toMatch(/<script/i)
    expect(html).not.toMatch(/\bhttps?:\/\/(?!www\.w3\.org\/2000\/svg)/)
  })

  it("has the charts", () => {
    expect(html).toMatch(/<svg id="chart-best"/)
    expect(html).toMatch(/<svg id="chart-candidates"/)
    const scatter = html.slice(html.indexOf(`<svg id="chart-candidates"`))
    expect(count(scatter.slice(0, scatter.indexOf("</svg>")), `class="pt `)).toBe(result.candidates.length)
  })

  it("derives a monotone best-score curve from discovery budgets", () => {
    const curve = Report.bestScoreCurve(result)
    expect(curve.map((p) => p.candidate)).toEqual([0, 1, 3, 4])
    expect(curve.map((p) => p.metricCalls)).toEqual([0, 20, 50, 70])
    for (let k = 1; k < curve.length; k++) expect(curve[k]!.bestScore).toBeGreaterThan(curve[k - 1]!.bestScore)
  })

  it("uses the given progress instead of the derived curve", () => {
    const withProgress = Report.render({
      result,
      progress: [{ metricCalls: 0, bestScore: 0.25 }, { metricCalls: 40, bestScore: 0.5 }, { metricCalls: 78, bestScore: 0.875 }]
    })
    expect(wellFormedProblems(withProgress)).toEqual([])
    expect(withProgress).toContain("as logged during the run")
  })

  it("draws one lineage node per candidate and marks merges", () => {
    const tree = section(html, "lineage")
    for (let i = 0; i < result.candidates.length; i++) expect(count(tree, `data-candidate="${i}"`)).toBe(1)
    expect(count(html, "data-candidate=")).toBe(result.candidates.length)
    expect(tree).toMatch(/class="node merge[^"]*" data-candidate="4"/)
    expect(tree).toContain(`merge of <a href="#node-3">#3</a> + <a href="#node-2">#2</a>`)
  })

  it("lists the Pareto front per example with its best score", () => {
    const pareto = section(html, "pareto")
    for (const id of ids) expect(pareto).toContain(`<td class="id">${id}</td>`)
    expect(pareto).toContain(`<td class="id">ex-7</td><td class="num">0.000</td>`)
    expect(pareto).toContain(`<td class="id">ex-4</td><td class="num">1.000</td><td><a href="#node-2">#2</a> <a href="#node-4">#4</a></td>`)
  })

  it("escapes user text", () => {
    expect(html).toContain("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;")
    expect(html).toContain("<title>Run &lt;1&gt;</title>")
    expect(html).toContain("max_metric_calls &lt;reached&gt; &amp; &quot;done&quot;")
  })

  it("diffs the best candidate against the seed", () => {
    const best = section(html, "best")
    expect(best).toContain(`<ins class="line add">+ Reply with the queue name only.\n</ins>`)
    expect(best).toContain(`<del class="line del">- Reply with the queue name.\n</del>`)
    expect(best).toContain(`<ins class="line add">+ - If the ticket mentions &#39;hacked&#39;, route it to account-security.\n</ins>`)
    expect(best).toContain(`<span class="line same">  You route support tickets.\n</span>`)
    // an unchanged component is shown once, without a diff
    expect(best).toContain("Unchanged from the seed.")
  })

  it("tabulates every candidate", () => {
    const table = section(html, "candidates")
    for (let i = 0; i < result.candidates.length; i++) expect(table).toContain(`<tr id="cand-${i}"`)
    expect(table).toContain(`<td class="num">70</td>`)
  })

  it("renders the trace when given, and a single-candidate result", () => {
    const single = Result.fromState(
      get(State.initial({
        seed: 1,
        seedCandidate: { p: "x" },
        frontierType: "instance",
        valset: { scores: {} },
        metricCalls: 0
      })),
      "no data"
    )
    const out = Report.render({
      result: single,
      trace: [{ iteration: 1, kind: "reflective", parents: [0], outcome: "rejected", reason: "no <gain>", metricCalls: 3 }]
    })
    expect(wellFormedProblems(out)).toEqual([])
    expect(out).toContain(`<section id="trace">`)
    expect(out).toContain("no &lt;gain&gt;")
    expect(out).toContain("no scored candidates")
  })
})

describe("diffLines", () => {
  const keep = (diff: ReadonlyArray<Report.DiffLine>, drop: "add" | "del") => diff.filter((d) => d.op !== drop).map((d) => d.line).join("\n")

  it("marks added and removed lines", () => {
    expect(Report.diffLines("a\nb\nc", "a\nx\nc\nd")).toEqual([
      { op: "same", line: "a" },
      { op: "del", line: "b" },
      { op: "add", line: "x" },
      { op: "same", line: "c" },
      { op: "add", line: "d" }
    ])
    expect(Report.diffLines("", "")).toEqual([])
    expect(Report.diffLines("", "x")).toEqual([{ op: "add", line: "x" }])
  })

  it("reconstructs both texts and keeps a longest common subsequence", () => {
    const line = fc.constantFrom("a", "b", "c", "", " ", "a\r", "ü")
    const text = fc.array(line, { maxLength: 12 }).map((ls) => ls.join("\n"))
    fc.assert(
      fc.property(text, text, (a, b) => {
        const diff = Report.diffLines(a, b)
        expect(keep(diff, "add")).toBe(a)
        expect(keep(diff, "del")).toBe(b)
        if (a === b) expect(diff.every((d) => d.op === "same")).toBe(true)
      }),
      { numRuns: 500 }
    )
  })

  it("finds the minimal edit for a single inserted line", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 4 }).filter((s) => !s.includes("\n")), { minLength: 1, maxLength: 10 }), fc.nat(), (ls, k) => {
        const at = k % (ls.length + 1)
        const b = [...ls.slice(0, at), "\u0000inserted", ...ls.slice(at)]
        const diff = Report.diffLines(ls.join("\n"), b.join("\n"))
        expect(diff.filter((d) => d.op === "add")).toEqual([{ op: "add", line: "\u0000inserted" }])
        expect(diff.filter((d) => d.op === "del")).toEqual([])
      })
    )
  })
})
