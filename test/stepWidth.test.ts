/**
 * Adaptive step width (`stepWidth: "adaptive"`; the default for one
 * component before `rewritesPerMinibatch`): one proposal per step while proposals are accepted, wider
 * steps once few are; the width comes from the saved trace alone, so the
 * result is the same at any maxConcurrency and a paused run resumes as the
 * uninterrupted one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import fc from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeTask } from "../bench/task.js"
import { fingerprint, resumedView, runOf, twoComponents } from "./fixtures/keywordTask.js"
import type * as Adapter from "../src/Adapter.js"
import type { GepaEvent } from "../src/Event.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Gepa from "../src/Gepa.js"
import * as RunStore from "../src/RunStore.js"
import type * as State from "../src/State.js"
import * as StopCondition from "../src/StopCondition.js"
import { adaptiveWidth, adaptiveWindow } from "../src/internal/engine/width.js"

type AdapterOf = Adapter.Adapter<unknown, unknown, string>

const entry = (outcome: State.TraceEntry["outcome"], kind: State.TraceEntry["kind"] = "reflective"): State.TraceEntry => ({
  iteration: 0,
  kind,
  parents: [0],
  outcome,
  metricCalls: 0
})

/** the keyword task with its 16 keywords owned by one component */
const oneComponent = () => makeTask({ ...twoComponents, components: 1, keywordsPerComponent: 16 })

/** Wraps `onEvent` to tell the most proposals that were started and not yet ended at once. */
const widest = () => {
  let open = 0
  let most = 0
  const onEvent = (e: GepaEvent) => {
    if (e._tag === "ProposalStarted") most = Math.max(most, ++open)
    if (e._tag === "ProposalEnded") open--
  }
  return { onEvent, most: () => most }
}

describe("adaptive step width", () => {
  it("is one proposal until the window is full, then follows the share of accepted proposals", () => {
    const window = (accepted: number, skipped = 0) => [
      ...Array.from({ length: accepted }, () => entry("accepted")),
      ...Array.from({ length: skipped }, () => entry("skipped")),
      ...Array.from({ length: adaptiveWindow - accepted - skipped }, () => entry("rejected"))
    ]
    assert.strictEqual(adaptiveWidth([], 8), 1)
    assert.strictEqual(adaptiveWidth(window(0).slice(1), 8), 1)
    assert.strictEqual(adaptiveWidth(window(2), 8), 1)
    assert.strictEqual(adaptiveWidth(window(1), 8), 4)
    assert.strictEqual(adaptiveWidth(window(0), 8), 8)
    // skipped proposals count as proposals that did not pass
    assert.strictEqual(adaptiveWidth(window(0, adaptiveWindow), 8), 8)
    // merges and failed proposals are not counted: the window reaches further back
    assert.strictEqual(adaptiveWidth([...window(0), entry("accepted", "merge"), entry("failed")], 8), 8)
    assert.strictEqual(adaptiveWidth([entry("accepted"), entry("accepted"), ...window(0).slice(2)], 8), 1)
    assert.strictEqual(adaptiveWidth(window(0), 1), 1)
  })

  it("stays within 1 and the widest, and never widens when more proposals pass", () =>
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<State.TraceEntry["outcome"]>("accepted", "rejected", "skipped", "failed"), { maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.nat({ max: 59 }),
        (outcomes, most, at) => {
          const trace = outcomes.map((o) => entry(o))
          const width = adaptiveWidth(trace, most)
          assert.isAtLeast(width, 1)
          assert.isAtMost(width, most)
          // one more acceptance in the window never makes the step wider
          if (at < trace.length && trace[at]!.outcome !== "accepted") {
            const more = trace.map((t, i) => (i === at ? entry("accepted") : t))
            assert.isAtMost(adaptiveWidth(more, most), width)
          }
        }
      )
    ))

  it.live("widens the steps of a one-component run once few proposals pass, with the same result at maxConcurrency 1, 8 and 16", () =>
    Effect.gen(function*() {
      const task = oneComponent()
      const run = (maxConcurrency: number) => {
        const seen = widest()
        return Effect.map(
          Gepa.optimize({
            ...runOf(task),
            adapter: FaultInjection.adapter(task.adapter, { latency: "0 millis", jitter: "2 millis", seed: maxConcurrency }).adapter,
            reflectionModel: FaultInjection.languageModel(task.reflectionModel, { latency: "0 millis", jitter: "2 millis", seed: maxConcurrency + 1 }).model,
            maxMetricCalls: 900,
            seed: 2,
            maxConcurrency,
            proposalsPerStep: 8,
            proposalSampling: "independent",
            stepWidth: "adaptive",
            // without the cache no proposal is skipped for free, and the run
            // goes on past the point where its parents are perfect
            cache: false,
            onEvent: seen.onEvent
          }),
          (result) => ({ result, most: seen.most() })
        )
      }
      const one = yield* run(1)
      // steps of up to eight, and some were wider than one
      assert.strictEqual(one.result.state.fingerprint?.settings["stepWidth"], "adaptive")
      assert.isAbove(one.most, 1)
      assert.isAtMost(one.most, 8)
      assert.isAtMost(one.result.totalMetricCalls, 900)
      assert.deepStrictEqual(fingerprint((yield* run(8)).result), fingerprint(one.result))
      assert.deepStrictEqual(fingerprint((yield* run(16)).result), fingerprint(one.result))
    }), 120_000)

  it.live("a pause in the middle of a wide step resumes as the uninterrupted run", () =>
    Effect.gen(function*() {
      const task = oneComponent()
      // without the cache every evaluation calls the adapter (a wide step late in a run is mostly cached skips)
      // (a budget that does not bind: the calls that hang at the pause are charged as lost work, which would end a binding budget sooner)
      const config = { ...runOf(task), maxMetricCalls: 3000, stop: StopCondition.maxIterations(110), seed: 2, cache: false }
      const full = yield* Gepa.optimize(config)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-width-pause-"))
      try {
        // once a step of several proposals has started, every call hangs: the deadline pauses the run mid-step
        let hang = false
        let open = 0
        const adapter = task.adapter as unknown as AdapterOf
        const hanging: AdapterOf = { ...adapter, evaluate: (batch, candidate, options) => hang ? Effect.never : adapter.evaluate(batch, candidate, options) }
        const onEvent = (e: GepaEvent) => {
          if (e._tag === "ProposalStarted" && ++open > 1) hang = true
          if (e._tag === "ProposalEnded") open--
        }
        const paused = yield* Gepa.optimize({
          ...config,
          adapter: hanging,
          runDir: dir,
          onEvent,
          stop: [StopCondition.maxIterations(110), StopCondition.timeout("3 seconds")]
        })
        assert.include(paused.stopReason, "time limit")
        assert.isTrue(hang)
        assert.isAbove(paused.state.pending.length, 1)
        const resumed = yield* Gepa.optimize({ ...config, runDir: dir })
        const strip = (r: Gepa.OptimizeResult<unknown>) => ({
          ...resumedView(r),
          outcomes: r.state.trace.map((t) => [t.iteration, t.outcome, t.subsampleIds])
        })
        assert.deepStrictEqual(strip(resumed), strip(full))
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }), 60_000)

  it.effect("a one-component run saved before the setting existed resumes with its fixed steps", () =>
    Effect.gen(function*() {
      const task = oneComponent()
      const older = yield* Gepa.optimize({ ...runOf(task), maxMetricCalls: 2000, seed: 3, stop: StopCondition.maxIterations(4), proposalsPerStep: 1 })
      assert.strictEqual(older.iterations, 4)
      // what an earlier release saved: one proposal per step, and no stepWidth
      const memory = yield* RunStore.MemoryRef
      yield* Ref.update(memory, (m) => {
        const state = Option.getOrThrow(m.state)
        const { stepWidth: _, ...settings } = state.fingerprint?.settings ?? {}
        return { ...m, state: Option.some({ ...state, fingerprint: { ...state.fingerprint!, settings } }) }
      })
      const resumed = yield* Gepa.optimize({ ...runOf(task), maxMetricCalls: 2000, seed: 3, stop: StopCondition.maxIterations(9) })
      assert.strictEqual(resumed.iterations, 9)
      const saved = Option.getOrThrow((yield* Ref.get(memory)).state).fingerprint?.settings ?? {}
      assert.deepStrictEqual([saved["proposalsPerStep"], saved["stepWidth"]], ["1", "fixed"])
    }).pipe(Effect.provide(RunStore.layerMemory)))

  it.effect("refuses a stepWidth it does not know, naming the field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Gepa.optimize({ ...runOf(oneComponent()), maxMetricCalls: 50, stepWidth: "wide" as unknown as "fixed" })
      )
      assert.include(String(error.message ?? error), "stepWidth")
    }))
})
