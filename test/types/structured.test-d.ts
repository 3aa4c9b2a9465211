/**
 * Type tests of typed candidates: the candidate type declared by a
 * `CandidateSchema` flows into the adapter, the component proposers and the
 * result, with no annotation in the user's code.
 */
import { Effect, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import * as CandidateSchema from "../../src/CandidateSchema.js"
import { ComponentProposalFailed } from "../../src/ComponentProposer.js"
import * as Gepa from "../../src/Gepa.js"
import type * as Genealogy from "../../src/Genealogy.js"
import type * as LanguageModel from "../../src/LanguageModel.js"

interface Example {
  readonly input: number
  readonly expected: number
}
declare const trainset: ReadonlyArray<Example>
declare const reflectionModel: LanguageModel.LanguageModel

const Code = Schema.Struct({ branch: Schema.String, entry: Schema.String, attempts: Schema.Number })
const shape = CandidateSchema.make({ code: Code, prompt: Schema.String })
interface Expected {
  readonly code: { readonly branch: string; readonly entry: string; readonly attempts: number }
  readonly prompt: string
}

// what both entry points are given; the adapter's candidate type is inferred from the shape
const common = {
  seedCandidate: { code: { branch: "main", entry: "run.js", attempts: 0 }, prompt: "Add." },
  trainset,
  reflectionModel,
  maxMetricCalls: 100,
  adapter: CandidateSchema.fromExample(
    shape,
    (example: Example, candidate) => Effect.succeed({ output: candidate.prompt.length + example.expected, score: 0 })
  )
}

describe("typed candidates", () => {
  it("the shape's type is the decoded candidate", () => {
    expectTypeOf<CandidateSchema.Type<typeof shape>>().toEqualTypeOf<Expected>()
  })

  it("the adapter receives the decoded candidate", () => {
    const adapter = CandidateSchema.fromExample(shape, (example: Example, candidate) => {
      expectTypeOf(candidate).toEqualTypeOf<Expected>()
      return Effect.succeed({ output: candidate.code.branch.length + example.input, score: 1 })
    })
    expectTypeOf(adapter.evaluate).parameter(1).toEqualTypeOf<Expected>()
  })

  it("Gepa.optimize: proposers get the parent and return the component's type; the result has it", () => {
    const run = Gepa.optimize({
      candidateSchema: shape,
      ...common,
      componentProposers: {
        code: ({ parent }) => {
          expectTypeOf(parent).toEqualTypeOf<Expected>()
          return parent.code.attempts > 3
            ? Effect.fail(new ComponentProposalFailed({ component: "code", reason: "gave up" }))
            : Effect.succeed({ ...parent.code, attempts: parent.code.attempts + 1 })
        }
      }
    })
    type Result = Effect.Effect.Success<typeof run>
    expectTypeOf<Result["bestCandidate"]>().toEqualTypeOf<Expected>()
    expectTypeOf<Result["candidates"]>().toEqualTypeOf<ReadonlyArray<Expected>>()
    expectTypeOf<Result["versions"]>().toEqualTypeOf<ReadonlyArray<Genealogy.CandidateVersions>>()
    expectTypeOf<Effect.Effect.Context<typeof run>>().toEqualTypeOf<never>()
  })

  it("Gepa.optimizePromise: the result has the candidate type", () => {
    const run = Gepa.optimizePromise({
      candidateSchema: shape,
      ...common
    })
    expectTypeOf(run).resolves.toHaveProperty("bestCandidate").toEqualTypeOf<Expected>()
  })

  it("a proposer returning another component's type, or a seed of another shape, does not fit", () => {
    type CodeProposer = NonNullable<CandidateSchema.Proposers<Expected>["code"]>
    expectTypeOf<() => Effect.Effect<string>>().not.toMatchTypeOf<CodeProposer>()
    expectTypeOf<() => Effect.Effect<Expected["code"]>>().toMatchTypeOf<CodeProposer>()
    type Seed = Gepa.StructuredConfig<Expected, Example>["seedCandidate"]
    expectTypeOf<{ readonly code: string; readonly prompt: string }>().not.toMatchTypeOf<Seed>()
  })

  it("plain text candidates are unchanged", () => {
    const run = Gepa.optimize({
      seedCandidate: { prompt: "Add." },
      trainset,
      reflectionModel,
      maxMetricCalls: 100,
      adapter: { evaluate: () => Effect.die("unused"), makeReflectiveDataset: () => Effect.succeed({}) }
    })
    expectTypeOf<Effect.Effect.Success<typeof run>["bestCandidate"]>().toEqualTypeOf<{ readonly [x: string]: string }>()
  })
})
