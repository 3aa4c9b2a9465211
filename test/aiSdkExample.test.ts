/**
 * examples/ai-sdk.ts runs offline: the AI SDK agent's system prompt and
 * tool description are both improved, with the SDK's own mock models.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Example from "../examples/ai-sdk.js"
import { tmpDir } from "./fixtures/tmp.js"

describe("examples/ai-sdk.ts", () => {
  it.effect("optimizes the agent's system prompt and tool description offline, from a seed that scores 0 to 1 on validation", () =>
    Effect.gen(function*() {
      const models = Example.simulatedModels()
      const runDir = path.join(tmpDir("gepa-ai-sdk-example-"), "run")
      const result = yield* Example.optimizeAgent({ models, runDir })
      expect(result.valAggregateScores[0]).toBe(0)
      expect(result.bestScore).toBe(1)
      expect(result.totalMetricCalls).toBeLessThanOrEqual(200)
      // both texts changed, each with the lesson that belongs to it
      expect(result.bestCandidate["system_prompt"]).toMatch(/call the lookup_order tool/)
      expect(result.bestCandidate["system_prompt"]).toMatch(/delivery date/)
      expect(result.bestCandidate["lookup_order_tool"]).toMatch(/A-<digits>/)
      // the reflection model went through AiSdkLanguageModel: its usage was counted
      expect(result.reflectionCalls).toBeGreaterThan(0)
      expect(result.state.reflectionUsage.inputTokens).toBeGreaterThan(0)
      expect(fs.existsSync(runDir)).toBe(true)
      // the seed agent answers without its tool; the best one looks the order up under the right id
      const agent = Example.supportAgent(Example.simulatedTaskModel())
      const seed = yield* Effect.promise(() =>
        agent("Where is my order #1001?", { system: Example.seedCandidate.system_prompt, lookupOrderDescription: Example.seedCandidate.lookup_order_tool })
      )
      expect(seed.lookups).toEqual([])
      const best = yield* Effect.promise(() =>
        agent("Where is my order #1001?", {
          system: result.bestCandidate["system_prompt"]!,
          lookupOrderDescription: result.bestCandidate["lookup_order_tool"]!
        })
      )
      expect(best).toEqual({ text: "Your order is shipped. Delivery date: 2026-05-03.", lookups: ["A-1001"] })
      expect(Example.metric({ question: "Where is my order #1001?", orderId: "A-1001" }, best).score).toBe(1)
    }))

  it("is an npm script", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, "..", "package.json"), "utf8")) as { scripts: Record<string, string> }
    expect(pkg.scripts["example:ai-sdk"]).toBe("tsx examples/ai-sdk.ts")
  })
})
