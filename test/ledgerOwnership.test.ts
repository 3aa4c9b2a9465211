/**
 * One module counts metric calls: outside `src/internal/engine/ledger.ts` no code
 * adds, subtracts or increments a count of metric calls (spent, paid, owed,
 * lost, reserved, on record). The scan reads `src/` line by line; the few
 * lines it flags that do not count (a sort, the dashboard's browser script)
 * are listed below by their text, so any new one fails until it goes through
 * the ledger or is explained here.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

// names the code base gives to counts of metric calls
const counter = String.raw`(?:\w*[mM]etricCalls|spent|paid|owed\w*|onRecord|reserved\w*|lost\w*|counted)`
const patterns = [
  // x += n, x -= n, x++, x--
  new RegExp(String.raw`\b${counter}\s*(?:\+=|-=|\+\+|--)`),
  new RegExp(String.raw`(?:\+\+|--)\s*${counter}\b`),
  // x + n, x - n
  new RegExp(String.raw`\b${counter}\s*[+\-](?![+\-=>])`),
  // n + a.b.x, n - x
  new RegExp(String.raw`(?<![+\-=])[+\-](?![+\-=])\s*(?:\w+(?:\?\.|!?\.))*${counter}\b`),
  // a metric-call count computed in place: metricCalls: a * b
  /\bmetricCalls:\s*[^,}]*[+\-*/](?!\/)/
]

/** The lines of a source text that do arithmetic on a metric-call count. */
const counting = (text: string): Array<{ readonly line: number; readonly text: string }> =>
  text.split("\n").flatMap((l, i) => {
    const code = l.replace(/\/\/.*$/, "").replace(/^\s*\/?\*.*$/, "")
    return patterns.some((p) => p.test(code)) ? [{ line: i + 1, text: l.trim() }] : []
  })

const root = path.join(import.meta.dirname, "..", "src")
const sources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []
  )

const LEDGER = "internal/engine/ledger.ts"
// flagged lines that do not count metric calls, and why
const notCounting: ReadonlyArray<readonly [file: string, text: string, why: string]> = [
  ["internal/report/sections.ts", ".sort((p, q) => p.metricCalls - q.metricCalls)", "orders a chart's points by their total"],
  [
    "internal/dashboard/pageScript.ts",
    "return Math.max(0, (r.budget - r.metricCalls) / rate);",
    "the browser's time-left estimate, from the totals the run reported"
  ],
  [
    "internal/engine/evaluate.ts",
    "if (hit.owed === true) owedHits++",
    "tallies the owed cache hits an evaluation found; what they cost is Ledger.charge's to say"
  ]
]

describe("the ledger owns the count", () => {
  it("the scan flags the counting the ledger replaced (so it can fail)", () => {
    const before = [
      "metricCalls: state.metricCalls + f.spent,",
      "next = { ...next, metricCalls: next.metricCalls + validation.spent }",
      "for (const n of owed.values()) owedLeft += n",
      "lostAtLoad = Math.max(0, onRecord - counted)",
      "const counted = loaded.state.metricCalls + loaded.state.lostMetricCalls + owedLeft",
      "if (meter !== undefined) meter.paid += to - from",
      "reserved: reserved - plans.reduce((n, p) => n + p.reserved, 0),",
      "parentEval.spent + (first?.spent ?? 0) + rest.spent,",
      "metricCalls: ids.length * (seedScore === undefined ? 1 : 2)",
      "const delta = total - counted",
      "reservedCalls += more"
    ]
    for (const line of before) expect(counting(line), line).toHaveLength(1)
    for (const line of ["metricCalls: Ledger.sum([a.spent, b.spent]),", "state = Ledger.spend(state, f.spent)", "// spent + reserved", "x => x.metricCalls"]) {
      expect(counting(line), line).toHaveLength(0)
    }
  })

  it("no module but the ledger adds up metric calls", () => {
    const found: Array<string> = []
    let inLedger = 0
    for (const file of sources(root)) {
      const rel = path.relative(root, file).split(path.sep).join("/")
      const hits = counting(fs.readFileSync(file, "utf8"))
      if (rel === LEDGER) {
        inLedger = hits.length
        continue
      }
      for (const h of hits) {
        if (notCounting.some(([f, t]) => f === rel && t === h.text)) continue
        found.push(`src/${rel}:${h.line}: ${h.text}`)
      }
    }
    expect(found, "count metric calls through src/internal/engine/ledger.ts (or explain the line in this test)").toEqual([])
    // the scan sees the ledger's own arithmetic: it reads what it should
    expect(inLedger).toBeGreaterThan(5)
  })
})
