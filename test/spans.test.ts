import { assert, describe, it } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import { makeTask } from "../bench/task.js"
import * as Gepa from "../src/Gepa.js"

const run = Effect.suspend(() => {
  const task = makeTask({ components: 2, keywordsPerComponent: 4, trainSize: 20, valSize: 6, learnPermille: 500 })
  return Gepa.optimize({
    seedCandidate: task.seedCandidate,
    trainset: task.trainset,
    valset: task.valset,
    adapter: task.adapter,
    reflectionModel: task.reflectionModel,
    maxMetricCalls: 60,
    seed: 1
  })
})

describe("engine spans", () => {
  it.effect("are opened under a tracer of the user's, and the run is the same without one", () =>
    Effect.gen(function*() {
      const builtIn = yield* Effect.tracer
      const names: Array<string> = []
      const recording = Tracer.make({
        span: (name, parent, context, links, startTime, kind, options) => {
          names.push(name)
          return builtIn.span(name, parent, context, links, startTime, kind, options)
        },
        context: builtIn.context
      })
      const traced = yield* Effect.withTracer(run, recording)
      const plain = yield* run
      for (const name of ["gepa.optimize", "gepa.evaluate", "gepa.propose", "gepa.reflect", "gepa.model"]) {
        assert.include(names, name)
      }
      assert.deepStrictEqual(plain.state, traced.state)
    }))
})
