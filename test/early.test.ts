import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { makeTask } from "../bench/task.js"
import * as Acceptance from "../src/Acceptance.js"
import * as Gepa from "../src/Gepa.js"
import * as StopCondition from "../src/StopCondition.js"
import * as Early from "../src/internal/engine/early.js"

const settings = (accept: Acceptance.AcceptanceCriterion) => ({ accept, perfectScore: 1, earlyRejection: true })

describe("early rejection", () => {
  it("rejects early only children the whole minibatch would reject (property)", () => {
    const score = fc.oneof(fc.constantFrom(0, 1), fc.double({ min: 0, max: 1, noNaN: true }))
    fc.assert(
      fc.property(
        fc.array(fc.tuple(score, score), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(Acceptance.strictImprovement, Acceptance.improvementOrEqual),
        (pairs, accept) => {
          const ids = pairs.map((_, i) => `e${i}`)
          const before = pairs.map(([b]) => b)
          const after = pairs.map(([, a]) => a)
          const split = Early.split(settings(accept), ids, before)
          if (split === undefined) return
          const partial = split.open.map((id) => after[ids.indexOf(id)]!)
          if (Early.hopeless(settings(accept), before, partial, split)) assert.isFalse(accept(before, after))
          const solved = split.solved.map((id) => after[ids.indexOf(id)]!)
          assert.deepStrictEqual(Early.combine(ids, split, partial, solved), after)
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("names how many examples a child was judged on, with one string per count kept for every line", () => {
    const split = Early.split(settings(Acceptance.strictImprovement), ["a", "b", "c"], [1, 0, 1])!
    const reason = Early.rejectionReason(split)
    assert.strictEqual(reason, "rejected after 1 of 3 minibatch examples: perfect scores on the other 2 could not beat the parent")
    assert.strictEqual(Early.rejectionReason({ open: ["x"], solved: ["y", "z"] }), reason)
    assert.strictEqual(
      Early.rejectionReason({ open: ["x", "y"], solved: ["z"] }),
      "rejected after 2 of 3 minibatch examples: perfect scores on the other 1 could not beat the parent"
    )
  })

  it("does not apply to custom criteria, scores above the perfect score, or when turned off", () => {
    assert.isUndefined(Early.split(settings((b, a) => a[0]! > b[0]!), ["a", "b"], [1, 0]))
    assert.isUndefined(Early.split(settings(Acceptance.strictImprovement), ["a", "b"], [1.5, 0]))
    assert.isUndefined(Early.split({ ...settings(Acceptance.strictImprovement), earlyRejection: false }, ["a", "b"], [1, 0]))
    assert.isUndefined(Early.split(settings(Acceptance.strictImprovement), ["a", "b"], [0, 0]))
    assert.deepStrictEqual(Early.split(settings(Acceptance.strictImprovement), ["a", "b", "c"], [1, 0, 1]), {
      open: ["b"],
      solved: ["a", "c"]
    })
  })

  it.effect("spends less for the same decisions: the trace says where a child was rejected early", () =>
    Effect.gen(function*() {
      const task = makeTask({ components: 2, keywordsPerComponent: 8, trainSize: 40, valSize: 12, learnPermille: 300 })
      const run = (earlyRejection: boolean) =>
        Gepa.optimize({
          seedCandidate: task.seedCandidate,
          trainset: task.trainset,
          valset: task.valset,
          adapter: task.adapter,
          reflectionModel: task.reflectionModel,
          stop: StopCondition.maxIterations(40),
          earlyRejection,
          seed: 1
        })
      const on = yield* run(true)
      const off = yield* run(false)
      // the same path: the same children accepted, the same candidates
      assert.deepStrictEqual(on.candidates, off.candidates)
      assert.deepStrictEqual(
        on.state.trace.map((t) => t.outcome),
        off.state.trace.map((t) => t.outcome)
      )
      assert.isBelow(on.totalMetricCalls, off.totalMetricCalls)
      const early = on.state.trace.filter((t) => t.reason?.startsWith("rejected after") === true)
      assert.isAbove(early.length, 0)
      for (const t of early) assert.strictEqual(t.outcome, "rejected")
    }))
})
