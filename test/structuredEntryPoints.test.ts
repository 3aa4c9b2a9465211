/**
 * Typed candidates through every entry point besides `Gepa.optimize`:
 * `Gepa.stream` and `optimizeAnything` each run a two-component typed
 * candidate (a JSON configuration and a prompt) end to end, resume it from
 * its run folder exactly, and `gepa show` prints the structured component as
 * indented JSON.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Stream } from "effect"
import * as path from "node:path"
import * as CandidateSchema from "../src/CandidateSchema.js"
import * as Saved from "../src/cli/saved.js"
import type { StructuredEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"
import * as OptimizeAnything from "../src/OptimizeAnything.js"
import * as RunDir from "../src/RunDir.js"
import { onePerStep } from "./fixtures/strategy.js"
import { tmpDir } from "./fixtures/tmp.js"
import * as Task from "./fixtures/typedTask.js"

const adapter = CandidateSchema.fromExample(Task.shape, (example: Task.Example, c) =>
  Effect.succeed({
    output: c.settings.threshold,
    score: Task.score(c, example),
    feedback: `threshold ${c.settings.threshold} for ${example.n}; the prompt ${c.prompt.includes("precise") ? "asks" : "does not ask"} for precision`
  }))

const streamConfig = (options: { readonly runDir?: string; readonly maxMetricCalls: number; readonly invalid?: boolean }) => ({
  candidateSchema: Task.shape,
  seedCandidate: Task.seedCandidate,
  adapter,
  trainset: Task.dataset,
  reflectionModel: Task.reflectionModel({ invalid: options.invalid ?? false }),
  maxMetricCalls: options.maxMetricCalls,
  minibatchSize: 2,
  merge: false,
  // one proposal per step: the first run's budget of 24 then ends between steps, so its resume
  // continues as the uninterrupted run (a budget that binds mid-step shrinks that step, and the
  // continuation is the budget-limited one)
  ...onePerStep,
  ...(options.runDir === undefined ? {} : { runDir: options.runDir })
})

const collect = <A>(s: Stream.Stream<StructuredEvent<A>, Gepa.OptimizeError>) => Effect.map(Stream.runCollect(s), Chunk.toReadonlyArray)

const endOf = <A>(events: ReadonlyArray<StructuredEvent<A>>) => {
  const end = events.find((e) => e._tag === "OptimizationEnded")
  if (end?._tag !== "OptimizationEnded") throw new Error("no OptimizationEnded event")
  return end
}

describe("Gepa.stream over a typed candidate", () => {
  it.effect("events and the final result carry decoded candidates; the stored form is canonical JSON", () =>
    Effect.gen(function*() {
      const runDir = path.join(tmpDir("gepa-typed-stream-"), "run")
      const events = yield* collect(Gepa.stream(streamConfig({ runDir, maxMetricCalls: 40 })))
      const accepted = events.flatMap((e) => (e._tag === "CandidateAccepted" ? [e] : []))
      expect(accepted.length).toBeGreaterThan(1)
      // decoded: typed access without parsing or casts
      expect(accepted.some((e) => e.components.settings.threshold > 0)).toBe(true)
      expect(accepted.some((e) => e.components.prompt.includes("precise"))).toBe(true)
      const last = events.filter((e) => e._tag === "IterationEnded").at(-1)
      expect(last?._tag === "IterationEnded" && last.candidates.length).toBe(last?._tag === "IterationEnded" && last.state.candidates.length)
      const { result } = endOf(events)
      expect(result.candidates[0]).toEqual(Task.seedCandidate)
      expect(result.bestCandidate.settings.threshold).toBeGreaterThan(0)
      expect(result.bestCandidate.prompt).toContain("precise")
      expect(result.versions.length).toBe(result.candidates.length)
      // the run folder stores the structured component canonically (one line,
      // sorted keys) although the model answered indented JSON in another order
      const saved = yield* RunDir.readState(runDir)
      const stored = Option.getOrThrow(saved).candidates[result.bestIndex]!["settings"]!
      expect(stored).toBe(JSON.stringify({ labels: result.bestCandidate.settings.labels, threshold: result.bestCandidate.settings.threshold }))
    }), 60_000)

  it.effect("resumes from its run folder and ends exactly as an uninterrupted run", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-typed-stream-")
      const whole = endOf(yield* collect(Gepa.stream(streamConfig({ runDir: path.join(dir, "whole"), maxMetricCalls: 60 }))))
      const runDir = path.join(dir, "resumed")
      const first = endOf(yield* collect(Gepa.stream(streamConfig({ runDir, maxMetricCalls: 24 }))))
      expect(first.result.candidates.length).toBeLessThan(whole.result.candidates.length)
      const events = yield* collect(Gepa.stream(streamConfig({ runDir, maxMetricCalls: 60 })))
      const started = events.find((e) => e._tag === "OptimizationStarted")
      expect(started?._tag === "OptimizationStarted" && started.resumed).toBe(true)
      const resumed = endOf(events)
      expect(resumed.result.candidates).toEqual(whole.result.candidates)
      expect(resumed.result.versions).toEqual(whole.result.versions)
      expect(resumed.result.bestCandidate).toEqual(whole.result.bestCandidate)
      expect(resumed.result.totalMetricCalls).toBe(whole.result.totalMetricCalls)
    }), 60_000)

  it.effect("a structured value the model writes that fails its schema is a ComponentRejected event, never adopted", () =>
    Effect.gen(function*() {
      const events = yield* collect(Gepa.stream(streamConfig({ maxMetricCalls: 30, invalid: true })))
      const rejected = events.flatMap((e) => (e._tag === "ComponentRejected" ? [e] : []))
      expect(rejected.length).toBeGreaterThan(0)
      expect(rejected[0]?.component).toBe("settings")
      expect(rejected[0]?.reason).toMatch(/threshold/)
      const { result } = endOf(events)
      expect(result.candidates.every((c) => Number.isInteger(c.settings.threshold))).toBe(true)
      expect(result.bestCandidate.settings.threshold).toBeGreaterThan(0)
    }), 60_000)
})

const anythingConfig = (options: { readonly runDir?: string; readonly maxMetricCalls: number }) => ({
  candidateSchema: Task.shape,
  seedCandidate: Task.seedCandidate,
  // the evaluator receives the decoded candidate
  evaluator: (c: Task.Candidate, example: Task.Example) =>
    Effect.succeed({ score: Task.score(c, example), sideInfo: { threshold: c.settings.threshold, needed: example.n } }),
  dataset: Task.dataset,
  objective: "reach every example",
  reflectionModel: Task.reflectionModel(),
  maxMetricCalls: options.maxMetricCalls,
  minibatchSize: 2,
  merge: false as const,
  // one proposal per step: the first run's budget of 24 then ends between steps, so its resume
  // continues as the uninterrupted run (a budget that binds mid-step shrinks that step, and the
  // continuation is the budget-limited one)
  ...onePerStep,
  ...(options.runDir === undefined ? {} : { runDir: options.runDir })
})

describe("optimizeAnything over a typed artifact", () => {
  it.effect("the evaluator receives decoded candidates and the result returns them", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const result = yield* OptimizeAnything.optimizeAnything({
        ...anythingConfig({ maxMetricCalls: 40 }),
        evaluator: (c, example: Task.Example) => {
          seen.push(c)
          return Effect.succeed({ score: Task.score(c, example), sideInfo: { threshold: c.settings.threshold } })
        },
        testset: Task.dataset
      })
      expect(seen[0]).toEqual(Task.seedCandidate)
      expect(result.seedCandidate).toEqual(Task.seedCandidate)
      expect(result.bestCandidate.settings.threshold).toBeGreaterThan(0)
      expect(result.bestCandidate.prompt).toContain("precise")
      expect(result.candidates.length).toBe(result.versions.length)
      expect(result.bestComponents["settings"]).toBe(
        JSON.stringify({ labels: result.bestCandidate.settings.labels, threshold: result.bestCandidate.settings.threshold })
      )
      expect(result.test?.best.score).toBeGreaterThan(0.5)
      expect(result.mode).toBe("multi-task")
    }), 60_000)

  it.effect("resumes from its run folder and ends exactly as an uninterrupted run", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-typed-anything-")
      const whole = yield* OptimizeAnything.optimizeAnything(anythingConfig({ runDir: path.join(dir, "whole"), maxMetricCalls: 60 }))
      const runDir = path.join(dir, "resumed")
      const first = yield* OptimizeAnything.optimizeAnything(anythingConfig({ runDir, maxMetricCalls: 24 }))
      expect(first.candidates.length).toBeLessThan(whole.candidates.length)
      const resumed = yield* OptimizeAnything.optimizeAnything(anythingConfig({ runDir, maxMetricCalls: 60 }))
      expect(resumed.candidates).toEqual(whole.candidates)
      expect(resumed.versions).toEqual(whole.versions)
      expect(resumed.bestCandidate).toEqual(whole.bestCandidate)
      expect(resumed.totalMetricCalls).toBe(whole.totalMetricCalls)
    }), 60_000)

  it.effect("a typed run without a seed, or with a seed its schema rejects, is one ConfigError naming the field", () =>
    Effect.gen(function*() {
      const { seedCandidate: _, ...noSeed } = anythingConfig({ maxMetricCalls: 10 })
      const missing = yield* OptimizeAnything.optimizeAnything({ ...noSeed, seedCandidate: undefined as unknown as Task.Candidate }).pipe(Effect.flip)
      expect(missing._tag).toBe("ConfigError")
      expect(missing.message).toMatch(/seedCandidate/)
      const bad = yield* OptimizeAnything.optimizeAnything({
        ...anythingConfig({ maxMetricCalls: 10 }),
        seedCandidate: { settings: { threshold: 0.5, labels: [] }, prompt: "x" }
      }).pipe(Effect.flip)
      expect(bad._tag).toBe("ConfigError")
      expect(bad.message).toMatch(/seedCandidate\.settings/)
    }))

  it.effect("gepa show prints the structured component of a typed run as indented JSON, one block per component", () =>
    Effect.gen(function*() {
      const runDir = path.join(tmpDir("gepa-typed-show-"), "run")
      const result = yield* OptimizeAnything.optimizeAnything(anythingConfig({ runDir, maxMetricCalls: 30 }))
      const out = Saved.describeRun(yield* Saved.readRun(runDir), runDir)
      expect(out).toContain(
        "--- settings (JSON) ---\n" +
          JSON.stringify({ labels: result.bestCandidate.settings.labels, threshold: result.bestCandidate.settings.threshold }, null, 2)
      )
      expect(out).toContain(`--- prompt ---\n${result.bestCandidate.prompt}`)
    }), 60_000)
})
