/**
 * The Promise face of the library, for code that does not use Effect:
 * `Adapter.fromPromise`, `LanguageModel.fromPromise` and `Gepa.optimizePromise`.
 */
import { describe, expect, it } from "vitest"
import * as Adapter from "../src/Adapter.js"
import { ConfigError } from "../src/Errors.js"
import * as Gepa from "../src/Gepa.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as Toy from "./fixtures/toy.js"

const trainset = Toy.makeExamples(12)
const valset = Toy.makeExamples(6, 100)

// the toy reflection model's answers, behind a Promise
const toyReflection = Toy.reflectionModel(6)
const reflectionModel = LanguageModel.fromPromise(async (prompt) => {
  const { Effect } = await import("effect")
  return (await Effect.runPromise(toyReflection.complete(prompt))).text
})

describe("Gepa.optimizePromise with plain-function adapters", () => {
  it("optimizes with an adapter of async functions and a Promise reflection model", async () => {
    const adapter = Adapter.fromPromise(async (example: Toy.Example, candidate) => Toy.solve(example, candidate))
    const result = await Gepa.optimizePromise({
      seedCandidate: Toy.seedCandidate,
      trainset,
      valset,
      adapter,
      reflectionModel,
      maxMetricCalls: 200
    })
    expect(result.seedScore).toBe(0)
    expect(result.bestScore).toBe(1)
    expect(result.bestOutputs[Object.keys(result.bestOutputs)[0]!]?.output).toBe("correct")
  })

  it("takes synchronous functions, and a proposing adapter needs no reflection model", async () => {
    const proposals: Array<ReadonlyArray<string>> = []
    const adapter = Adapter.fromPromise((example: Toy.Example, candidate) => Toy.solve(example, candidate), {
      describeInput: (example) => `question ${example.id}`,
      proposeNewTexts: (candidate, dataset, components) => {
        proposals.push(components)
        // learns every keyword its records ask for
        const asked = new Set<string>()
        for (const c of components) {
          for (const record of dataset[c] ?? []) {
            const m = /must mention '(\w+)'/.exec(String(record["Feedback"]))
            if (m) asked.add(m[1]!)
          }
        }
        return Object.fromEntries(components.map((c) => [c, `${candidate[c]} Mention ${[...asked].join(", ")}.`]))
      }
    })
    const result = await Gepa.optimizePromise({ seedCandidate: Toy.seedCandidate, trainset, valset, adapter, maxMetricCalls: 200 })
    expect(proposals.length).toBeGreaterThan(0)
    expect(result.bestScore).toBeGreaterThan(result.seedScore ?? 0)
  })

  it("scores a thrown error or a rejection like a failed evaluation, with its message", async () => {
    const failures: Array<string> = []
    const adapter = Adapter.fromPromise(async (example: Toy.Example, candidate) => {
      if (example.id % 4 === 0) throw new Error(`system down for ${example.id}`)
      return Toy.solve(example, candidate)
    })
    const result = await Gepa.optimizePromise({
      seedCandidate: Toy.seedCandidate,
      trainset,
      valset,
      adapter,
      reflectionModel,
      maxMetricCalls: 60,
      onEvent: (event) => {
        if (event._tag === "ExampleFailed") failures.push(event.error)
      }
    })
    expect(result.totalMetricCalls).toBeLessThanOrEqual(60)
    expect(failures.some((f) => f.includes("system down for"))).toBe(true)
  })

  it("rejects with the tagged error itself", async () => {
    const adapter = Adapter.fromPromise((example: Toy.Example, candidate) => Toy.solve(example, candidate))
    const error = await Gepa.optimizePromise({ seedCandidate: {}, trainset, adapter, reflectionModel, maxMetricCalls: 10 })
      .then(() => undefined, (e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).field).toBe("seedCandidate")
  })
})

describe("LanguageModel.fromPromise", () => {
  it("turns a rejection into an LlmTransportError naming the model", async () => {
    const { Effect } = await import("effect")
    const model = LanguageModel.fromPromise(() => Promise.reject(new Error("connection refused")), { model: "local" })
    const exit = await Effect.runPromise(Effect.either(model.complete("hi")))
    expect(exit._tag).toBe("Left")
    if (exit._tag === "Left") {
      expect(exit.left._tag).toBe("LlmTransportError")
      expect(exit.left.message).toContain("local")
      expect(exit.left.message).toContain("connection refused")
    }
  })
})
