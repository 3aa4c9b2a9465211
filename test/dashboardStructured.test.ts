/**
 * The live dashboard's candidate detail shows a structured component (stored
 * as canonical JSON) indented, with its changes against each parent listed
 * path by path, as the report does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as State from "../src/State.js"
import * as Model from "../src/internal/dashboard/model.js"

describe("dashboard detail of a structured component", () => {
  it.effect("indents canonical JSON and lists the changed paths against the parent", () =>
    Effect.gen(function*() {
      const seed = { code: JSON.stringify({ branch: "main", files: ["a.ts"] }), prompt: "Fix the bug." }
      const initial = yield* State.initial({
        seed: 0,
        seedCandidate: seed,
        frontierType: "instance",
        valset: { scores: { v1: 0.5 } },
        metricCalls: 1
      })
      const child = { code: JSON.stringify({ branch: "evolve-1", files: ["a.ts", "b.ts"] }), prompt: "Fix the bug." }
      const [state] = yield* State.addCandidate(initial, { candidate: child, parents: [0], valset: { scores: { v1: 0.9 } }, discoveryBudget: 10 })
      const model = Model.make(() => 0)
      model.state(state)
      model.flush()
      const detail = model.detail(1) as {
        readonly components: Record<string, string>
        readonly parents: ReadonlyArray<{ readonly components: Record<string, string>; readonly changes: Record<string, ReadonlyArray<string>> }>
      }
      expect(detail.components["code"]).toBe(JSON.stringify({ branch: "evolve-1", files: ["a.ts", "b.ts"] }, null, 2))
      expect(detail.components["prompt"]).toBe("Fix the bug.")
      expect(detail.parents[0]?.components["code"]).toBe(JSON.stringify({ branch: "main", files: ["a.ts"] }, null, 2))
      expect(detail.parents[0]?.changes).toEqual({ code: ["branch: \"main\" -> \"evolve-1\"", "+ files[1]: \"b.ts\""] })
    }))
})
