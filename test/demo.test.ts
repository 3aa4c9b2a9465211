import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runDemo } from "../examples/demo/run.js"
import type { GepaEvent } from "../src/Event.js"

describe("demo", () => {
  it.effect("improves on the seed prompt with a small budget and writes its report", () =>
    Effect.gen(function*() {
      const runDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gepa-demo-")), "run")
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
})
