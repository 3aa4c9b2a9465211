import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Progress from "../../src/cli/progress.js"
import { GepaEvent } from "../../src/Event.js"
import * as LineageLayout from "../../src/internal/report/lineageLayout.js"
import type { GepaState } from "../../src/State.js"

// the fields of a state the progress display reads
const stateAt = (metricCalls: number, candidates: number) =>
  ({ metricCalls, candidates: Array.from({ length: candidates }, () => ({})) }) as unknown as GepaState

const run = (progress: Progress.Progress, clock: { t: number }, iterations: number) => {
  progress.onEvent(GepaEvent.OptimizationStarted({ resumed: false, trainSize: 6, valSize: 6, budget: 400 }))
  progress.onEvent(GepaEvent.ValsetEvaluated({ iteration: 0, candidate: 0, score: 0.25, coverage: 6 }))
  for (let i = 1; i <= iterations; i++) {
    clock.t += 1000
    progress.onEvent(GepaEvent.BudgetUpdated({ metricCalls: 6 + i * 10, budget: 400 }))
    if (i === 5) progress.onEvent(GepaEvent.ValsetEvaluated({ iteration: 5, candidate: 1, score: 0.5, coverage: 6 }))
    progress.onEvent(GepaEvent.IterationEnded({ iteration: i, accepted: 0, state: stateAt(6 + i * 10, i >= 5 ? 2 : 1) }))
  }
  progress.stop()
}

describe("progress", () => {
  it("without a terminal: plain lines, one per new best and one per interval with calls, best and ETA", () => {
    const lines: Array<string> = []
    const clock = { t: 0 }
    run(Progress.make({ write: (t) => lines.push(t), maxMetricCalls: 400, intervalMillis: 10_000, now: () => clock.t }), clock, 30)
    const text = lines.join("")
    expect(text).toContain("Starting: 6 training and 6 validation examples, budget 400 metric calls\n")
    expect(text).toContain("seed candidate: 0.250\n")
    expect(text).toContain("iteration 5: new best 0.500 (candidate 1)\n")
    // every 10 s of a 30 s run: at 10, 20 and 30 s
    const periodic = lines.filter((l) => /metric calls, best/.test(l))
    expect(periodic).toHaveLength(3)
    // 106 calls in 10 s, 294 left: 28 s
    expect(periodic[0]).toBe("iteration 10: 106/400 metric calls, best 0.500, 2 candidates, ETA 28 s\n")
    expect(text).not.toMatch(/\u001b\[/)
  })

  it("on a terminal: a cli-progress bar with calls of the budget, iteration, best and ETA; new bests above it", () => {
    let drawn = ""
    const terminal = Object.assign(
      { isTTY: true, columns: 120, write: (chunk: string) => ((drawn += chunk), true) },
      { on: () => terminal, once: () => terminal, removeListener: () => terminal, off: () => terminal, emit: () => false }
    ) as unknown as NodeJS.WritableStream & { isTTY: boolean; columns: number }
    const lines: Array<string> = []
    const clock = { t: 0 }
    run(Progress.make({ write: (t) => lines.push(t), terminal, maxMetricCalls: 400, now: () => clock.t }), clock, 30)
    // cli-progress draws with cursor movements and its bar characters
    expect(drawn).toMatch(/\u001b\[/)
    expect(drawn).toMatch(/[\u2588\u2591]{20} 306\/400 calls \| iteration 30 \| best 0\.500 \| ETA \d+ s/)
    expect(drawn).toContain("iteration 5: new best 0.500 (candidate 1)")
    // no periodic plain lines on a terminal
    expect(lines.join("")).not.toMatch(/metric calls, best/)
  })

  it("--quiet: nothing", () => {
    const lines: Array<string> = []
    const clock = { t: 0 }
    run(Progress.make({ write: (t) => lines.push(t), quiet: true, maxMetricCalls: 400, now: () => clock.t }), clock, 30)
    expect(lines).toEqual([])
  })
})

describe("the lineage layout", () => {
  // a forest: each node's first parent is an earlier node, or none
  const forest = fc.array(fc.option(fc.nat(), { nil: undefined, freq: 8 }), { minLength: 1, maxLength: 300 }).map((ps) =>
    ps.map((p, i) => (i === 0 || p === undefined ? undefined : p % i))
  )

  it("no two nodes of a row are less than a column apart; children are one row below their parent, the first under it", () => {
    fc.assert(fc.property(forest, fc.func(fc.boolean()), (parents, first) => {
      const { columns, nodes, rows } = LineageLayout.layout(parents.length, (i) => parents[i], first)
      const byRow = new Map<number, Array<number>>()
      nodes.forEach((n, i) => {
        const p = parents[i]
        expect(n.depth).toBe(p === undefined ? 0 : nodes[p]!.depth + 1)
        byRow.set(n.depth, [...(byRow.get(n.depth) ?? []), n.column])
        expect(n.column).toBeGreaterThanOrEqual(0)
        expect(n.column).toBeLessThanOrEqual(columns - 1)
      })
      for (const cols of byRow.values()) {
        const sorted = [...cols].sort((a, b) => a - b)
        for (let k = 1; k < sorted.length; k++) expect(sorted[k]! - sorted[k - 1]!).toBeGreaterThanOrEqual(1)
      }
      expect(rows).toBe(Math.max(...nodes.map((n) => n.depth)) + 1)
    }))
  })

  it("a chain of 200 generations with side branches stays narrow, the picked path in column 0", () => {
    const parents: Array<number | undefined> = [undefined]
    const spine = [0]
    for (let i = 1; i < 1000; i++) {
      if (i % 5 === 0) {
        parents.push(spine.at(-1)!)
        spine.push(i)
      } else parents.push(Math.max(0, i - 1 - (i % 7)))
    }
    const onSpine = new Set(spine)
    const { columns, nodes, rows } = LineageLayout.layout(parents.length, (i) => parents[i], (i) => onSpine.has(i))
    expect(rows).toBeGreaterThanOrEqual(200)
    for (const i of spine) expect(nodes[i]!.column).toBe(0)
    expect(columns).toBeLessThan(100)
  })
})
