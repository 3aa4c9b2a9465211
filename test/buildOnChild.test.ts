import { assert, describe, it } from "@effect/vitest"
import { Data, Effect, Either, Equal, Fiber, Option, Ref, TestClock } from "effect"
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
import * as StopCondition from "../src/StopCondition.js"
import * as Permits from "../src/internal/engine/permits.js"

type AdapterOf = Adapter.Adapter<unknown, unknown, string>

/** the keyword task with its 16 keywords owned by one component */
const oneComponent = () => makeTask({ ...twoComponents, components: 1, keywordsPerComponent: 16 })

describe("buildOnChild (the one-component default)", () => {
  it.effect("the step after a validated child builds on it, planned while it is validated", () =>
    Effect.gen(function*() {
      const task = oneComponent()
      const events: Array<GepaEvent> = []
      const result = yield* Gepa.optimize({ ...runOf(task), maxMetricCalls: 600, seed: 3, onEvent: (e) => void events.push(e) })
      assert.strictEqual(result.state.fingerprint?.settings["buildOnChild"], "true")
      const started = events.find((e) => e._tag === "OptimizationStarted")
      assert.include(started?._tag === "OptimizationStarted" ? started.strategy : "", "next step on the validated child")
      const onChild = events.filter((e): e is Extract<GepaEvent, { _tag: "CandidateSelected" }> => e._tag === "CandidateSelected" && e.validating === true)
      assert.isAbove(onChild.length, 3)
      for (const selected of onChild) {
        // the parent joined the pool as the child of an earlier iteration, accepted
        const child = result.state.trace.find((t) => t.candidate === selected.candidate)
        assert.isDefined(child, `candidate ${selected.candidate}`)
        assert.strictEqual(child!.outcome, "accepted")
        assert.isBelow(child!.iteration, selected.iteration)
        // and the proposal was planned on it before its step was folded: its IterationStarted comes before that child's ValsetEvaluated
        const planned = events.findIndex((e) => e._tag === "IterationStarted" && e.iteration === selected.iteration)
        const validated = events.findIndex((e) => e._tag === "ValsetEvaluated" && e.candidate === selected.candidate)
        assert.isBelow(planned, validated, `iteration ${selected.iteration} planned after candidate ${selected.candidate} was folded`)
        const line = result.state.trace.find((t) => t.iteration === selected.iteration)
        assert.deepStrictEqual(line?.parents, [selected.candidate])
      }
      assert.isAtMost(result.totalMetricCalls, 600)
    }))

  it.effect("the step on a child reflects on the child's results on the minibatch it was judged on, and the step after draws a new one", () =>
    Effect.gen(function*() {
      const task = oneComponent()
      const run = (more: { readonly reuseChildMinibatch?: boolean }) =>
        Effect.gen(function*() {
          const events: Array<GepaEvent> = []
          const result = yield* Gepa.optimize({ ...runOf(task), maxMetricCalls: 600, seed: 3, onEvent: (e) => void events.push(e), ...more })
          const idsOf = new Map<number, ReadonlyArray<string>>()
          for (const e of events) if (e._tag === "MinibatchSampled") idsOf.set(e.iteration, e.ids)
          const parentEvaluated = new Set(
            events.flatMap((e) => e._tag === "EvaluationStarted" && e.purpose === "parent-minibatch" ? [e.iteration] : [])
          )
          const selected = events.flatMap((e) => e._tag === "CandidateSelected" && e.validating === true ? [e] : [])
          // the first proposal of each step (it pays for the step's evidence, when anything does)
          const steps = selected.filter((e) => !selected.some((o) => o.candidate === e.candidate && o.iteration === e.iteration - 1))
          return { result, idsOf, parentEvaluated, steps }
        })
      const { idsOf, parentEvaluated, result, steps } = yield* run({})
      assert.strictEqual(result.state.fingerprint?.settings["reuseChildMinibatch"], "true")
      const reused = new Set<number>()
      for (const selected of steps) {
        const child = result.state.trace.find((t) => t.candidate === selected.candidate)!
        const ids = idsOf.get(selected.iteration)!
        // the step of a child that was itself built on its parent's minibatch draws a new one
        if (reused.has(child.iteration)) {
          assert.notDeepEqual(ids, child.subsampleIds, `iteration ${selected.iteration}: a minibatch serves at most two steps`)
          continue
        }
        if (!Equal.equals(Data.array([...ids]), Data.array([...(child.subsampleIds ?? [])]))) continue
        reused.add(selected.iteration)
        // nothing paid for the child's evidence: no parent evaluation, and it is judged against the child's own scores
        assert.isFalse(parentEvaluated.has(selected.iteration), `iteration ${selected.iteration} evaluated its parent again`)
        const line = result.state.trace.find((t) => t.iteration === selected.iteration)!
        if (Equal.equals(Data.array([...(line.subsampleIds ?? [])]), Data.array([...ids]))) {
          assert.deepStrictEqual(line.scoresBefore, child.scoresAfter)
        }
      }
      assert.isAbove(reused.size, 2)
      // with the setting off, every step on a child evaluates it on a new minibatch
      const off = yield* run({ reuseChildMinibatch: false })
      assert.strictEqual(off.result.state.fingerprint?.settings["reuseChildMinibatch"], "false")
      assert.isAbove(off.steps.length, 2)
      for (const selected of off.steps) {
        const child = off.result.state.trace.find((t) => t.candidate === selected.candidate)!
        assert.notDeepEqual(off.idsOf.get(selected.iteration), child.subsampleIds)
        assert.isTrue(off.parentEvaluated.has(selected.iteration))
      }
      assert.isAtMost(result.totalMetricCalls, 600)
    }))

  it.effect("with steps the config shapes, only the step's first group reflects on the child's minibatch; the others draw their own", () =>
    Effect.gen(function*() {
      const task = oneComponent()
      for (
        const [shape, together] of [
          [{ proposalsPerStep: 6, proposalSampling: "same_minibatch", proposalSelection: "best", rewritesPerMinibatch: 3 }, 3],
          [{ proposalsPerStep: 3, proposalSampling: "independent", proposalSelection: "best" }, 1]
        ] as const
      ) {
        const events: Array<GepaEvent> = []
        const result = yield* Gepa.optimize({
          ...runOf(task),
          ...shape,
          buildOnChild: true,
          maxMetricCalls: 600,
          seed: 3,
          onEvent: (e) => void events.push(e)
        })
        const idsOf = new Map<number, string>()
        for (const e of events) if (e._tag === "MinibatchSampled") idsOf.set(e.iteration, e.ids.join(","))
        const selected = events.flatMap((e) => e._tag === "CandidateSelected" && e.validating === true ? [e] : [])
        const firsts = selected.filter((e) => !selected.some((o) => o.candidate === e.candidate && o.iteration === e.iteration - 1))
        let reused = 0
        for (const first of firsts) {
          const child = result.state.trace.find((t) => t.candidate === first.candidate)!
          const childIds = (child.subsampleIds ?? []).join(",")
          const step = selected.filter((e) => e.candidate === first.candidate).map((e) => idsOf.get(e.iteration))
          const onChildMinibatch = step.filter((ids) => ids === childIds).length
          // never more proposals on the child's minibatch than one group's rewrites
          assert.isAtMost(onChildMinibatch, together, `the step at ${first.iteration} (${JSON.stringify(shape)})`)
          if (onChildMinibatch > 0) {
            reused++
            // the first proposal is one of them, and the rest of the step drew minibatches of its own
            assert.strictEqual(step[0], childIds)
            if (step.length > together) assert.notStrictEqual(step[together], childIds)
          }
        }
        assert.isAbove(reused, 0, JSON.stringify(shape))
        assert.isAtMost(result.totalMetricCalls, 600)
      }
    }))

  it.live("the same result at maxConcurrency 1, 8 and 16 under random latencies", () =>
    Effect.gen(function*() {
      const task = oneComponent()
      const run = (maxConcurrency: number) =>
        Gepa.optimize({
          ...runOf(task),
          adapter: FaultInjection.adapter(task.adapter, { latency: "1 millis", jitter: "2 millis", seed: maxConcurrency }).adapter,
          maxMetricCalls: 300,
          seed: 11,
          merge: true,
          maxConcurrency
        })
      const one = fingerprint(yield* run(1))
      assert.deepStrictEqual(fingerprint(yield* run(8)), one)
      assert.deepStrictEqual(fingerprint(yield* run(16)), one)
    }), 60_000)

  it.live("a pause while a child is validated and the step on it is in flight resumes as the uninterrupted run", () =>
    Effect.gen(function*() {
      const task = oneComponent()
      const config = { ...runOf(task), maxMetricCalls: 2000, stop: StopCondition.maxIterations(30), seed: 3 }
      const full = yield* Gepa.optimize(config)
      let withEvidence = 0
      for (const at of [2, 4]) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-on-child-pause-"))
        try {
          // from the `at`-th step planned on a child being validated, every call hangs: the deadline pauses both steps
          let hang = false
          let seen = 0
          const adapter = task.adapter as unknown as AdapterOf
          const hanging: AdapterOf = { ...adapter, evaluate: (batch, candidate, options) => hang ? Effect.never : adapter.evaluate(batch, candidate, options) }
          const onEvent = (e: GepaEvent) => {
            if (e._tag === "CandidateSelected" && e.validating === true && ++seen === at) hang = true
          }
          const paused = yield* Gepa.optimize({
            ...config,
            adapter: hanging,
            runDir: dir,
            onEvent,
            stop: [StopCondition.maxIterations(30), StopCondition.timeout("2 seconds")]
          })
          assert.include(paused.stopReason, "time limit")
          assert.isTrue(hang)
          // the child's step and the step on it, both planned: the resumed run holds the second until the first picks its child again
          assert.isTrue(paused.state.pending.some((p) => p._tag === "Reflective" && p.onChildOf !== undefined))
          // (and, where it could, the child's own results on its minibatch, saved with the plan)
          if (paused.state.pending.some((p) => p._tag === "Reflective" && p.onChildOf !== undefined && p.reuses !== undefined)) withEvidence++
          const steps = new Set(paused.state.pending.map((p) => p._tag === "Reflective" ? p.step ?? p.iteration : p.iteration))
          assert.isAtLeast(steps.size, 2)
          const resumed = yield* Gepa.optimize({ ...config, runDir: dir })
          assert.deepStrictEqual(resumedView(resumed), resumedView(full), `paused at the step on child ${at}`)
        } finally {
          fs.rmSync(dir, { recursive: true, force: true })
        }
      }
      assert.isAbove(withEvidence, 0)
    }), 60_000)

  it.effect("given where it cannot apply: one line naming the setting", () =>
    Effect.gen(function*() {
      const one = oneComponent()
      const two = makeTask(twoComponents)
      const refused = <A, E extends { readonly _tag: string; readonly message: string }, R>(run: Effect.Effect<A, E, R>) =>
        Effect.map(Effect.either(run), (e) => Option.getOrThrow(Either.getLeft(e)))
      const several = yield* refused(Gepa.optimize({ ...runOf(two), maxMetricCalls: 100, buildOnChild: true }))
      assert.strictEqual(several._tag, "ConfigError")
      assert.include(several.message, "buildOnChild")
      const pipelined = yield* refused(Gepa.optimize({ ...runOf(one), maxMetricCalls: 100, buildOnChild: true, parallelProposals: 2 }))
      assert.include(pipelined.message, "buildOnChild")
      const completion = yield* refused(Gepa.optimize({ ...runOf(one), maxMetricCalls: 100, buildOnChild: true, foldOrder: "completion" }))
      assert.include(completion.message, "buildOnChild")
      // left to its default with a setting it cannot go with, or with steps the config shapes, it is off
      const deep = yield* Gepa.optimize({ ...runOf(one), maxMetricCalls: 100, parallelProposals: 2 })
      assert.strictEqual(deep.state.fingerprint?.settings["buildOnChild"], "false")
      const shaped = yield* Gepa.optimize({ ...runOf(one), maxMetricCalls: 100, proposalsPerStep: 3 })
      assert.strictEqual(shaped.state.fingerprint?.settings["buildOnChild"], "false")
      const given = yield* Gepa.optimize({ ...runOf(one), maxMetricCalls: 100, proposalsPerStep: 1, buildOnChild: true })
      assert.strictEqual(given.state.fingerprint?.settings["buildOnChild"], "true")
      // off by hand: every parent is selected after the fold
      const events: Array<GepaEvent> = []
      const off = yield* Gepa.optimize({ ...runOf(one), maxMetricCalls: 300, buildOnChild: false, onEvent: (e) => void events.push(e) })
      assert.strictEqual(off.state.fingerprint?.settings["buildOnChild"], "false")
      assert.isFalse(events.some((e) => e._tag === "CandidateSelected" && e.validating === true))
      assert.strictEqual(off.state.fingerprint?.settings["reuseChildMinibatch"], "false")
      // the child's minibatch only serves a step built on the child
      const alone = yield* refused(Gepa.optimize({ ...runOf(one), maxMetricCalls: 100, buildOnChild: false, reuseChildMinibatch: true }))
      assert.strictEqual(alone._tag, "ConfigError")
      assert.include(alone.message, "reuseChildMinibatch")
      const shapedToo = yield* refused(Gepa.optimize({ ...runOf(one), maxMetricCalls: 100, proposalsPerStep: 3, reuseChildMinibatch: true }))
      assert.include(shapedToo.message, "reuseChildMinibatch")
    }))

  it.effect("a run saved without the setting resumes without it, unless it is given", () =>
    Effect.gen(function*() {
      const task = oneComponent()
      const ref = yield* RunStore.MemoryRef
      const forget = Ref.update(ref, (m) => ({
        ...m,
        state: Option.map(m.state, (state) => {
          // (a run saved before either setting existed)
          const { buildOnChild: _, reuseChildMinibatch: __, ...older } = state.fingerprint?.settings ?? {}
          return { ...state, fingerprint: state.fingerprint === undefined ? undefined : { ...state.fingerprint, settings: older } }
        })
      }))
      const forgetReuse = Ref.update(ref, (m) => ({
        ...m,
        state: Option.map(m.state, (state) => {
          const { reuseChildMinibatch: _, ...older } = state.fingerprint?.settings ?? {}
          return { ...state, fingerprint: state.fingerprint === undefined ? undefined : { ...state.fingerprint, settings: older } }
        })
      }))
      const run = (iterations: number, more: { readonly buildOnChild?: boolean; readonly reuseChildMinibatch?: boolean } = {}) =>
        Effect.gen(function*() {
          const events: Array<GepaEvent> = []
          const result = yield* Gepa.optimize({
            ...runOf(task),
            maxMetricCalls: 2000,
            seed: 3,
            stop: StopCondition.maxIterations(iterations),
            onEvent: (e) => void events.push(e),
            ...more
          })
          return { result, onChild: events.some((e) => e._tag === "CandidateSelected" && e.validating === true) }
        })
      yield* run(3)
      yield* forget
      const older = yield* run(24)
      assert.isFalse(older.onChild)
      assert.strictEqual(older.result.state.fingerprint?.settings["buildOnChild"], "false")
      yield* forget
      const given = yield* run(48, { buildOnChild: true })
      assert.isTrue(given.onChild)
      assert.strictEqual(given.result.state.fingerprint?.settings["buildOnChild"], "true")
      // saved with buildOnChild but before the child's minibatch served its step: it resumes so, unless it is given
      assert.strictEqual(given.result.state.fingerprint?.settings["reuseChildMinibatch"], "false")
      yield* forgetReuse
      const fresh = yield* run(60)
      assert.strictEqual(fresh.result.state.fingerprint?.settings["buildOnChild"], "true")
      assert.strictEqual(fresh.result.state.fingerprint?.settings["reuseChildMinibatch"], "false")
      yield* forgetReuse
      const reusing = yield* run(72, { reuseChildMinibatch: true })
      assert.strictEqual(reusing.result.state.fingerprint?.settings["reuseChildMinibatch"], "true")
    }).pipe(Effect.provide(RunStore.layerMemory)))
})

describe("the run's permits", () => {
  it.effect("a permit that comes free goes to a waiting minibatch evaluation before a waiting validation; never more than n at once", () =>
    Effect.gen(function*() {
      const permits = Permits.make(2)
      const order: Array<string> = []
      let inFlight = 0
      let most = 0
      const job = (name: string) =>
        Effect.gen(function*() {
          inFlight++
          most = Math.max(most, inFlight)
          order.push(name)
          yield* Effect.sleep("10 millis")
          inFlight--
        })
      const fibers = [
        yield* Effect.fork(permits.withPermit(job("v1"))),
        yield* Effect.fork(permits.withPermit(job("v2"))),
        yield* Effect.fork(permits.withPermit(job("v3"))),
        yield* Effect.fork(permits.withPermit(job("v4")))
      ]
      yield* Effect.yieldNow()
      fibers.push(yield* Effect.fork(permits.withFirstPermit(job("m1"))))
      yield* Effect.yieldNow()
      yield* TestClock.adjust("100 millis")
      for (const f of fibers) yield* Fiber.join(f)
      assert.deepStrictEqual(order.slice(0, 3), ["v1", "v2", "m1"])
      assert.strictEqual(most, 2)
    }))

  it.effect("an interrupted waiter leaves no permit behind", () =>
    Effect.gen(function*() {
      const permits = Permits.make(1)
      const holder = yield* Effect.fork(permits.withPermit(Effect.sleep("10 millis")))
      yield* Effect.yieldNow()
      const waiting = yield* Effect.fork(permits.withFirstPermit(Effect.void))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(waiting)
      yield* TestClock.adjust("20 millis")
      yield* Fiber.join(holder)
      // both permits' worth of work still runs, one at a time
      const ran = yield* Ref.make(0)
      const a = yield* Effect.fork(permits.withPermit(Ref.update(ran, (n) => n + 1)))
      const b = yield* Effect.fork(permits.withFirstPermit(Ref.update(ran, (n) => n + 1)))
      yield* Fiber.join(a)
      yield* Fiber.join(b)
      assert.strictEqual(yield* Ref.get(ran), 2)
    }))
})
