import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Task from "../examples/code-evolution/task.js"
import * as CandidateSchema from "../src/CandidateSchema.js"
import { ComponentProposalFailed } from "../src/ComponentProposer.js"
import type { GepaEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"
import * as Report from "../src/Report.js"
import * as Result from "../src/Result.js"
import { Rng } from "../src/Rng.js"
import * as State from "../src/State.js"
import { tmpDir } from "./fixtures/tmp.js"

const Settings = Schema.Struct({ limit: Schema.Int, tags: Schema.Array(Schema.String) })
const shape = CandidateSchema.make({ settings: Settings, prompt: Schema.String })

describe("CandidateSchema", () => {
  it("stores text components as is and structured ones as canonical JSON, whatever the key order", () => {
    const a = shape.encode({ settings: { limit: 3, tags: ["x"] }, prompt: "Hi." })
    const b = shape.encode({ settings: { tags: ["x"], limit: 3 }, prompt: "Hi." })
    expect(a).toEqual(Either.right({ settings: `{"limit":3,"tags":["x"]}`, prompt: "Hi." }))
    expect(b).toEqual(a)
    expect(shape.kind("prompt")).toBe("text")
    expect(shape.kind("settings")).toBe("structured")
    expect(Either.flatMap(a, shape.decode)).toEqual(Either.right({ settings: { limit: 3, tags: ["x"] }, prompt: "Hi." }))
  })

  it("a stored value that does not fit its schema is one error naming the component and the path", () => {
    const bad = shape.decode({ settings: `{"limit":1.5,"tags":[]}`, prompt: "Hi." })
    expect(Either.isLeft(bad)).toBe(true)
    if (Either.isLeft(bad)) {
      expect(bad.left.component).toBe("settings")
      expect(bad.left.message).toMatch(/^component "settings": limit: /)
      expect(bad.left.message).not.toContain("\n")
    }
    const notJson = shape.decode({ settings: "{", prompt: "Hi." })
    expect(Either.isLeft(notJson) && notJson.left.message).toMatch(/^component "settings": not JSON/)
  })

  it("kindSchedule gives structured components the code turns and text components the prompt turns", () => {
    const selector = CandidateSchema.kindSchedule(shape)
    const initial = State.initial({
      seed: 0,
      seedCandidate: { settings: "{}", prompt: "Hi." },
      frontierType: "instance",
      valset: { scores: { x: 0 } },
      metricCalls: 0
    })
    if (Either.isLeft(initial)) throw initial.left
    const state = initial.right
    const picked = [1, 2, 3, 4].map((iteration) =>
      selector({ state, candidateIdx: 0, candidate: state.candidates[0] ?? {}, iteration, rng: Rng.seeded(iteration) }).components[0]
    )
    expect(picked).toEqual(["settings", "prompt", "settings", "prompt"])
  })

  it("diffs structured values path by path and formats them as indented JSON", () => {
    expect(CandidateSchema.diff(`{"limit":3,"tags":["x"]}`, `{"limit":4,"tags":["x","y"]}`)).toEqual([
      "limit: 3 -> 4",
      `+ tags[1]: "y"`
    ])
    expect(CandidateSchema.diff("a", "b")).toEqual([`"a" -> "b"`])
    expect(CandidateSchema.format(`{"limit":3}`)).toBe(`{\n  "limit": 3\n}`)
    expect(CandidateSchema.format("plain text")).toBe("plain text")
  })
})

const repoIn = (dir: string) => Task.createRepository(dir)

describe("structured runs (examples/code-evolution)", () => {
  it("the example runs offline: code and prompt proposals, a merge, a resume", async () => {
    // asynchronously: a synchronous child blocks the test worker's event loop (vitest's calls to its main process time out)
    const { stdout: out } = await promisify(execFile)("npx", ["tsx", "examples/code-evolution.ts"], { encoding: "utf8", timeout: 120_000 })
    expect(out).toContain("iteration 1: code   proposal from candidate 0")
    expect(out).toContain("iteration 2: prompt proposal from candidate 0")
    expect(out).toMatch(/merge of candidates 1 and 2 over their ancestor 0/)
    expect(out).toContain("candidate 3 accepted (parents 1 + 2), validation score 1.000")
    expect(out).toContain("resumed from the run directory:")
    expect(out).toContain(`branch: "main" -> "evolve-`)
  }, 120_000)

  it.effect("versions: the merge takes the code from the code lineage and the prompt from the prompt lineage", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-structured-")
      const result = yield* Task.run(repoIn(dir), { maxMetricCalls: 200 })
      expect(result.bestScore).toBe(1)
      expect(result.parents[result.bestIndex]).toEqual([1, 2])
      expect(result.versions[result.bestIndex]).toEqual({ code: { version: 1, origin: 1 }, prompt: { version: 1, origin: 2 } })
      expect(result.bestCandidate.code.branch).toMatch(/^evolve-/)
      expect(result.bestCandidate.prompt).toMatch(/currency code/)
    }))

  it.effect("the report shows a structured component as indented JSON with its changes path by path", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-structured-")
      const result = yield* Task.run(repoIn(dir), { maxMetricCalls: 200 })
      const html = Report.render({ result: Result.fromState(result.state, "done"), seedCandidate: result.state.candidates[0] })
      expect(html).toContain(`<li><code>branch: &quot;main&quot; -&gt; &quot;${result.bestCandidate.code.branch}&quot;</code></li>`)
      expect(html).toContain(`  &quot;branch&quot;: &quot;${result.bestCandidate.code.branch}&quot;,`)
    }))

  it.effect("a resumed structured run ends exactly as an uninterrupted one", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-structured-")
      const repo = repoIn(dir)
      const whole = yield* Task.run(repo, { maxMetricCalls: 200, runDir: path.join(dir, "whole") })
      const runDir = path.join(dir, "resumed")
      const first = yield* Task.run(repo, { maxMetricCalls: 200, maxIterations: 2, runDir })
      expect(first.candidates.length).toBeLessThan(whole.candidates.length)
      const resumed = yield* Task.run(repo, { maxMetricCalls: 200, runDir })
      const essence = (r: typeof whole) => ({
        candidates: r.candidates,
        parents: r.parents,
        versions: r.versions,
        valScores: r.valScores,
        bestIndex: r.bestIndex,
        bestCandidate: r.bestCandidate,
        totalMetricCalls: r.totalMetricCalls,
        mergesAccepted: r.mergesAccepted
      })
      expect(essence(resumed)).toEqual(essence(whole))
    }), 60_000)

  it.effect("a resume with a changed schema is refused with one line naming the component", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-structured-")
      const repo = repoIn(dir)
      const runDir = path.join(dir, "run")
      yield* Task.run(repo, { maxMetricCalls: 200, maxIterations: 2, runDir })
      const Code2 = Schema.Struct({ ...Task.Code.fields, reviewer: Schema.optional(Schema.String) })
      const Shape2 = CandidateSchema.make({ code: Code2, prompt: Schema.String })
      const { candidateSchema: _, componentProposers: __, adapter: ___, ...rest } = Task.config(repo, { maxMetricCalls: 200, runDir })
      const error = yield* Gepa.optimize({
        ...rest,
        candidateSchema: Shape2,
        adapter: CandidateSchema.fromExample(Shape2, (_: Task.Example) => Effect.succeed({ output: "", score: 0 }))
      }).pipe(Effect.flip)
      expect(error._tag).toBe("ResumeConflict")
      expect(error.message).toMatch(/^Cannot resume: "schema\.code" differs from the saved run/)
      expect(error.message).not.toContain("\n")
    }), 60_000)

  it.effect("saved components are read back through their schema on resume: a bad one is refused, naming it", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-structured-")
      const repo = repoIn(dir)
      const runDir = path.join(dir, "run")
      yield* Task.run(repo, { maxMetricCalls: 200, maxIterations: 2, runDir })
      // hand-edit every saved copy of the evolved branch into a number
      let edited = 0
      const walk = (p: string): void => {
        if (fs.statSync(p).isDirectory()) return fs.readdirSync(p).forEach((f) => walk(path.join(p, f)))
        const text = fs.readFileSync(p, "utf8")
        const next = text.replaceAll(`\\"branch\\":\\"evolve-`, `\\"branch\\":7,\\"was\\":\\"evolve-`)
        if (next !== text) {
          edited++
          fs.writeFileSync(p, next)
        }
      }
      walk(runDir)
      expect(edited).toBeGreaterThan(0)
      const error = yield* Task.run(repo, { maxMetricCalls: 200, runDir }).pipe(Effect.flip)
      expect(error._tag).toBe("ResumeConflict")
      expect(error.message).toMatch(/^Cannot resume: "candidates\[1\]\.code" differs from the saved run \(saved: branch: Expected string, actual 7/)
    }), 60_000)

  it.effect("a proposed value failing its schema is a ComponentRejected event and a failed proposal, never adopted", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-structured-")
      const repo = repoIn(dir)
      const events: Array<GepaEvent> = []
      const result = yield* Gepa.optimize({
        ...Task.config(repo, { maxMetricCalls: 60, maxIterations: 4, onEvent: (e) => void events.push(e) }),
        merge: false,
        proposalsPerStep: 1,
        componentProposers: {
          // an empty branch name fails Schema.NonEmptyString
          code: ({ parent }) => Effect.succeed({ ...parent.code, branch: "" })
        }
      })
      const rejected = events.filter((e) => e._tag === "ComponentRejected")
      expect(rejected.length).toBeGreaterThan(0)
      expect(rejected[0]).toMatchObject({ component: "code" })
      expect(events.some((e) => e._tag === "ProposalEnded" && e.outcome === "failed" && /rejected by its schema/.test(e.reason ?? ""))).toBe(true)
      expect(result.candidates.every((c) => c.code.branch === "main")).toBe(true)
    }), 60_000)

  it.effect("Gepa.optimizePromise runs a typed configuration and resolves to decoded candidates, like Gepa.optimize", () =>
    Effect.gen(function*() {
      const repo = repoIn(tmpDir("gepa-structured-"))
      const settings = { ...Task.config(repo, { maxMetricCalls: 60, maxIterations: 2 }), merge: false }
      const viaPromise = yield* Effect.promise(() => Gepa.optimizePromise(settings))
      const viaEffect = yield* Gepa.optimize(settings)
      expect(viaPromise.candidates).toEqual(viaEffect.candidates)
      expect(viaPromise.versions).toEqual(viaEffect.versions)
      expect(typeof viaPromise.bestCandidate.code.branch).toBe("string")
    }), 60_000)

  it.effect("a proposer's tagged failure fails the proposal; the run goes on", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-structured-")
      const repo = repoIn(dir)
      const result = yield* Gepa.optimize({
        ...Task.config(repo, { maxMetricCalls: 60, maxIterations: 2 }),
        merge: false,
        componentProposers: { code: () => Effect.fail(new ComponentProposalFailed({ component: "code", reason: "the agent gave up" })) }
      })
      // the prompt proposal of the step still improved the seed
      expect(result.candidates.length).toBe(2)
      expect(result.candidates[1]!.code).toEqual(Task.seedCandidate.code)
    }), 60_000)
})
