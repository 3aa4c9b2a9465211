import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeTask } from "../bench/task.js"
import { fingerprint, runOf, twoComponents } from "./fixtures/keywordTask.js"
import type { GepaEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"
import * as RunStore from "../src/RunStore.js"
import * as StopCondition from "../src/StopCondition.js"
import { onePerStep } from "./fixtures/strategy.js"

/** A run of the bench task with what its events say about each iteration. */
const observed = (options: { readonly reuseMinibatch?: boolean; readonly components?: number }) =>
  Effect.gen(function*() {
    const task = makeTask({ ...twoComponents, components: options.components ?? 2 })
    const minibatch = new Map<number, string>()
    const proposal = new Map<number, { parent: number; components: string }>()
    const parentEvaluated = new Set<number>()
    const onEvent = (e: GepaEvent) => {
      if (e._tag === "MinibatchSampled") minibatch.set(e.iteration, e.ids.join(","))
      if (e._tag === "ProposalStarted") proposal.set(e.iteration, { parent: e.parent, components: e.components.join(",") })
      if (e._tag === "EvaluationStarted" && e.purpose === "parent-minibatch") parentEvaluated.add(e.iteration)
    }
    const result = yield* Gepa.optimize({
      ...runOf(task),
      ...onePerStep,
      maxMetricCalls: 400,
      seed: 3,
      onEvent,
      ...(options.reuseMinibatch === undefined ? {} : { reuseMinibatch: options.reuseMinibatch })
    })
    const outcome = new Map(result.state.trace.map((t) => [t.iteration, t]))
    /** iterations that reflected on the minibatch of the iteration before, with the parent's evaluation not paid again */
    const reused: Array<number> = []
    for (const [iteration, ids] of minibatch) {
      const before = outcome.get(iteration - 1)
      if (before === undefined || minibatch.get(iteration - 1) !== ids) continue
      assert.strictEqual(before.kind, "reflective")
      assert.strictEqual(before.outcome, "rejected", `iteration ${iteration} took the minibatch of iteration ${iteration - 1}, which was not rejected`)
      assert.strictEqual(proposal.get(iteration)?.parent, proposal.get(iteration - 1)?.parent, `iteration ${iteration}: another parent`)
      assert.notStrictEqual(proposal.get(iteration)?.components, proposal.get(iteration - 1)?.components, `iteration ${iteration}: the same component`)
      assert.isFalse(parentEvaluated.has(iteration), `iteration ${iteration} paid for its parent's evaluation again`)
      reused.push(iteration)
    }
    // every reflective proposal not reflecting on a kept minibatch paid for its parent's evaluation (or skipped a perfect one)
    for (const t of result.state.trace) {
      if (t.kind !== "reflective" || reused.includes(t.iteration) || t.outcome === "skipped") continue
      assert.isTrue(parentEvaluated.has(t.iteration), `iteration ${t.iteration} reflected without an evaluation of its parent`)
    }
    return { result, reused }
  })

describe("reuseMinibatch", () => {
  it.effect("a rejected proposal's minibatch serves the next proposal from the same parent, on the other component, without paying for the parent again", () =>
    Effect.gen(function*() {
      const { reused, result } = yield* observed({})
      assert.isAbove(reused.length, 5)
      assert.isAtMost(result.totalMetricCalls, 400)
      // what was saved went to more proposals: more iterations than without it, on the same budget
      const off = yield* observed({ reuseMinibatch: false })
      assert.strictEqual(off.reused.length, 0)
      assert.isAbove(result.iterations, off.result.iterations)
    }))

  it.effect("a candidate of one component draws a minibatch for every proposal, as without it", () =>
    Effect.gen(function*() {
      const on = yield* observed({ components: 1 })
      const off = yield* observed({ components: 1, reuseMinibatch: false })
      assert.strictEqual(on.reused.length, 0)
      assert.deepStrictEqual(fingerprint(on.result), fingerprint(off.result))
    }))

  it.effect("the same result at maxConcurrency 1 and 16", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      const run = (maxConcurrency: number) => Gepa.optimize({ ...runOf(task), ...onePerStep, maxMetricCalls: 300, seed: 5, maxConcurrency })
      assert.deepStrictEqual(fingerprint(yield* run(1)), fingerprint(yield* run(16)))
    }))

  it.effect("a run stopped after any iteration and resumed from its run directory ends as the uninterrupted run (an adapter without a trace codec)", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      const config = { ...runOf(task), ...onePerStep, maxMetricCalls: 200, seed: 3 }
      const full = yield* Gepa.optimize(config)
      const reusedAt = full.state.trace.filter((t, i) => t.outcome === "rejected" && full.state.trace[i + 1]?.parents[0] === t.parents[0])
      assert.isAbove(reusedAt.length, 0)
      // stopped right after rejected proposals: the next one may reflect on the same minibatch
      let kept = 0
      for (const t of reusedAt.slice(0, 5)) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-reuse-"))
        try {
          const stopped = yield* Gepa.optimize({ ...config, runDir: dir, stop: StopCondition.maxIterations(t.iteration) })
          assert.strictEqual(stopped.iterations, t.iteration)
          if (stopped.state.minibatchReuse !== undefined) kept++
          const resumed = yield* Gepa.optimize({ ...config, runDir: dir })
          assert.deepStrictEqual(fingerprint(resumed), fingerprint(full), `stopped after iteration ${t.iteration}`)
        } finally {
          fs.rmSync(dir, { recursive: true, force: true })
        }
      }
      assert.isAbove(kept, 0)
    }))

  it.effect("a run saved without the setting resumes without it, unless it is given", () =>
    Effect.gen(function*() {
      const task = makeTask(twoComponents)
      const ref = yield* RunStore.MemoryRef
      const forget = Ref.update(ref, (m) => ({
        ...m,
        state: Option.map(m.state, (state) => {
          const { reuseMinibatch: _, ...older } = state.fingerprint?.settings ?? {}
          return { ...state, fingerprint: state.fingerprint === undefined ? undefined : { ...state.fingerprint, settings: older } }
        })
      }))
      const reflectedAgain = (events: Array<GepaEvent>) =>
        events.some((e, i) => e._tag === "MinibatchSampled" && events.slice(0, i).some((x) => x._tag === "MinibatchSampled" && x.ids.join() === e.ids.join()))
      const run = (iterations: number, more: { readonly reuseMinibatch?: boolean } = {}) =>
        Effect.gen(function*() {
          const events: Array<GepaEvent> = []
          const result = yield* Gepa.optimize({
            ...runOf(task),
            ...onePerStep,
            maxMetricCalls: 2000,
            seed: 3,
            stop: StopCondition.maxIterations(iterations),
            onEvent: (e) => void events.push(e),
            ...more
          })
          return { result, reused: reflectedAgain(events) }
        })
      yield* run(2)
      yield* forget
      const older = yield* run(20)
      assert.strictEqual(older.result.iterations, 20)
      assert.isFalse(older.reused)
      assert.strictEqual(older.result.state.fingerprint?.settings["reuseMinibatch"], "false")
      yield* forget
      const given = yield* run(40, { reuseMinibatch: true })
      assert.strictEqual(given.result.iterations, 40)
      assert.isTrue(given.reused)
      assert.strictEqual(given.result.state.fingerprint?.settings["reuseMinibatch"], "true")
    }).pipe(Effect.provide(RunStore.layerMemory)))
})
