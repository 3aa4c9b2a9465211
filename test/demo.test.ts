import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { defaultMaxMetricCalls, patience, runDemo, simulatedModels, stopExplanation } from "../examples/demo/run.js"
import * as Task from "../examples/demo/task.js"
import type { GepaEvent } from "../src/Event.js"
import * as LanguageModel from "../src/LanguageModel.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"
import { onePerStep } from "./fixtures/strategy.js"

describe("demo", () => {
  it.effect("improves on the seed prompt with a small budget and writes its report", () =>
    Effect.gen(function*() {
      const runDir = path.join(makeTmpDir("gepa-demo-"), "run")
      const tags = new Set<GepaEvent["_tag"]>()
      const demo = yield* runDemo({ maxMetricCalls: 300, runDir, onEvent: (e) => void tags.add(e._tag) })
      const { result } = demo
      expect(result.seedScore).not.toBeNull()
      expect(result.bestScore!).toBeGreaterThan(result.seedScore!)
      expect(result.totalMetricCalls).toBeLessThanOrEqual(300)
      expect(demo.models.kind).toBe("simulated")
      expect(tags.has("IterationEnded")).toBe(true)
      expect(demo.reportPath).toBe(path.join(runDir, "report.html"))
      expect(fs.readFileSync(demo.reportPath!, "utf8")).toContain("<!DOCTYPE html>")
      expect(fs.existsSync(path.join(runDir, "gepa_state.json"))).toBe(true)
    }))

  // The demo settings with a smaller budget and one proposal per step, two steps in flight, which
  // leaves lineages that improved different components (the default combines
  // both components' changes within a step, so the demo's own run needs no
  // merge); the run is deterministic, so this does not flake.
  it.effect("merges lineages that improved different components, and accepts the merge", () =>
    Effect.gen(function*() {
      const runDir = path.join(makeTmpDir("gepa-demo-"), "run")
      const { result } = yield* runDemo({ maxMetricCalls: 500, seed: 0, runDir, writeReport: false, strategy: { ...onePerStep, parallelProposals: 2 } })
      expect(result.mergesAttempted).toBeGreaterThanOrEqual(1)
      expect(result.mergesAccepted).toBeGreaterThanOrEqual(1)
      const merged = result.parents.flatMap((ps, i) => (ps.length === 2 ? [i] : []))
      expect(merged.length).toBe(result.mergesAccepted)
      let crossovers = 0
      for (const m of merged) {
        const [p1, p2] = result.parents[m]! as readonly [number, number]
        const child = result.candidates[m]!
        for (const name of Task.componentNames) {
          expect([result.candidates[p1]![name], result.candidates[p2]![name]]).toContain(child[name])
        }
        // the engine may also accept a merge that reproduces one parent (when
        // that parent changed every component since the common ancestor);
        // at least one must really combine the two lineages
        const fromBoth = Task.componentNames.some((n) => child[n] !== result.candidates[p1]![n]) &&
          Task.componentNames.some((n) => child[n] !== result.candidates[p2]![n])
        if (fromBoth) crossovers++
      }
      expect(crossovers).toBeGreaterThanOrEqual(1)
      expect(result.bestScore!).toBeGreaterThan(result.seedScore!)
    }))

  // The budget is an upper bound: the demo stops once it cannot improve.
  it.effect("stops at a perfect validation score, before the budget, and says so", () =>
    Effect.gen(function*() {
      const runDir = path.join(makeTmpDir("gepa-demo-"), "run")
      const { result } = yield* runDemo({ runDir, writeReport: false })
      expect(result.bestScore).toBe(1)
      expect(result.totalMetricCalls).toBeLessThan(defaultMaxMetricCalls)
      expect(stopExplanation(result)).toBe("early: the validation score is perfect, nothing left to improve")
    }))

  it.effect("stops after the patience runs out when no proposal improves, and says so", () =>
    Effect.gen(function*() {
      const runDir = path.join(makeTmpDir("gepa-demo-"), "run")
      const stuck = LanguageModel.fromFunction(() => "```\nRoute every ticket to general.\n```")
      const { result } = yield* runDemo({ runDir, writeReport: false, models: { ...simulatedModels(0), reflectionModel: stuck } })
      expect(result.bestIndex).toBe(0)
      expect(result.totalMetricCalls).toBeLessThan(defaultMaxMetricCalls)
      expect(result.state.iteration - result.state.lastImprovementIteration).toBe(patience)
      expect(stopExplanation(result)).toBe(`early: no new best in the last ${patience} iterations, it can no longer improve`)
    }))
})
