/**
 * Type tests of `OptimizeAnything.optimizeAnything`: what a caller's code
 * infers without type parameters, and which configurations do not compile.
 * Checked by `npm test` (vitest typecheck mode) and `npm run typecheck`.
 */
import { Effect } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import type * as LanguageModel from "../../src/LanguageModel.js"
import * as OptimizeAnything from "../../src/OptimizeAnything.js"
import type { ReflectionModel } from "../../src/LanguageModel.js"

declare const reflectionModel: LanguageModel.LanguageModel
interface Case {
  readonly text: string
  readonly valid: boolean
}
declare const dataset: ReadonlyArray<Case>

describe("optimizeAnything: seed or objective", () => {
  it("a seedless run without an objective does not compile", () => {
    // @ts-expect-error: neither seedCandidate nor objective
    OptimizeAnything.optimizeAnything({ evaluator: (text: string) => Effect.succeed(text.length), reflectionModel, maxMetricCalls: 10 })
    // @ts-expect-error: an explicit undefined seed is no seed either
    OptimizeAnything.optimizeAnything({ seedCandidate: undefined, evaluator: () => Effect.succeed(1), reflectionModel, maxMetricCalls: 10 })
    // @ts-expect-error: the Promise form too
    void OptimizeAnything.optimizeAnythingPromise({ evaluator: () => Effect.succeed(1), reflectionModel, maxMetricCalls: 10 })
    // @ts-expect-error: through the context as well
    OptimizeAnything.optimizeAnything({ evaluator: () => Effect.succeed(1), maxMetricCalls: 10 })
  })

  it("a seedless run with an objective infers a text candidate", () => {
    const run = OptimizeAnything.optimizeAnything({
      objective: "a greeting",
      evaluator: (text, example: Case) => {
        expectTypeOf(text).toEqualTypeOf<string>()
        return Effect.succeed(example.valid ? text.length : 0)
      },
      dataset,
      reflectionModel,
      maxMetricCalls: 10
    })
    expectTypeOf(run).toEqualTypeOf<
      Effect.Effect<OptimizeAnything.Result<string>, OptimizeAnything.OptimizeAnythingError, never>
    >()
  })

  it("a seeded run needs no objective; a record seed gives a record candidate", () => {
    const text = OptimizeAnything.optimizeAnything({ seedCandidate: "x", evaluator: (t) => Effect.succeed(t.length), maxMetricCalls: 5 })
    expectTypeOf(text).toEqualTypeOf<
      Effect.Effect<OptimizeAnything.Result<string>, OptimizeAnything.OptimizeAnythingError, ReflectionModel>
    >()
    const record = OptimizeAnything.optimizeAnything({
      seedCandidate: { rule: "a", note: "b" },
      evaluator: (c) => {
        expectTypeOf(c).toEqualTypeOf<{ readonly rule: string; readonly note: string }>()
        return Effect.succeed(1)
      },
      reflectionModel,
      maxMetricCalls: 5
    })
    expectTypeOf(record).toEqualTypeOf<
      Effect.Effect<OptimizeAnything.Result<{ readonly rule: string; readonly note: string }>, OptimizeAnything.OptimizeAnythingError, never>
    >()
  })

  it("the test set's seed score is there only when asked", () => {
    expectTypeOf<OptimizeAnything.TestResult["seed"]>().toEqualTypeOf<OptimizeAnything.TestScore | undefined>()
    expectTypeOf<OptimizeAnything.TestResult["best"]>().toEqualTypeOf<OptimizeAnything.TestScore>()
  })
})
