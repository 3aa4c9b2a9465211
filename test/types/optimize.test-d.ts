/**
 * Type tests: what a user's code infers from `Gepa.optimize`, `Gepa.stream`,
 * `Gepa.optimizePromise` and the adapter constructors, without type
 * parameters. Checked by `npm test` (vitest typecheck mode) and by
 * `npm run typecheck`.
 */
import { Effect, Layer, type Stream } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import * as Adapter from "../../src/Adapter.js"
import * as DefaultAdapter from "../../src/DefaultAdapter.js"
import type { OptimizeError, OptimizeResult } from "../../src/Gepa.js"
import * as Gepa from "../../src/Gepa.js"
import * as LanguageModel from "../../src/LanguageModel.js"
import type { ConfigError } from "../../src/Errors.js"
import type { Proposer } from "../../src/Proposal.js"
import type { GepaEvent } from "../../src/Event.js"

interface Example {
  readonly question: string
  readonly answer: string
}
declare const trainset: ReadonlyArray<Example>
declare const reflectionModel: LanguageModel.LanguageModel
declare const proposer: Proposer

const adapter = Adapter.fromExample((example: Example, candidate) => Effect.succeed({ output: `${candidate["prompt"]}: ${example.question}`, score: 1 }))
type Trace = Adapter.ExampleTrace<Example, never, string>

const proposing = Adapter.fromExample(
  (example: Example) => Effect.succeed({ output: example.question, score: 0 }),
  { proposeNewTexts: (_candidate, _dataset, components) => Effect.succeed({ [components[0]!]: "new" }) }
)

const seedCandidate = { prompt: "Answer." }

describe("Adapter constructors", () => {
  it("fromExample infers the example, trace and output types", () => {
    expectTypeOf(adapter).toEqualTypeOf<Adapter.Adapter<Example, Trace, string>>()
  })

  it("an adapter with proposeNewTexts is a ProposingAdapter", () => {
    expectTypeOf(proposing).toEqualTypeOf<Adapter.ProposingAdapter<Example, Trace, string>>()
    expectTypeOf(Adapter.fromBatch({
      evaluate: (batch: ReadonlyArray<Example>) => Effect.succeed({ outputs: batch.map(() => 1), scores: batch.map(() => 1) }),
      makeReflectiveDataset: () => Effect.succeed({}),
      proposeNewTexts: () => Effect.succeed({})
    })).toEqualTypeOf<Adapter.ProposingAdapter<Example, unknown, number>>()
  })

  it("fromPromise takes plain functions returning values or Promises", () => {
    const sync = Adapter.fromPromise((example: Example) => ({ output: example.answer.length, score: 1 }))
    expectTypeOf(sync).toEqualTypeOf<Adapter.Adapter<Example, Adapter.ExampleTrace<Example, never, number>, number>>()
    const async = Adapter.fromPromise(async (example: Example, _candidate, signal) => {
      expectTypeOf(signal).toEqualTypeOf<AbortSignal>()
      return { output: example.answer, score: 0, feedback: "wrong" }
    }, { proposeNewTexts: async () => ({ prompt: "better" }) })
    expectTypeOf(async).toEqualTypeOf<Adapter.ProposingAdapter<Example, Trace, string>>()
  })

  it("layer provides the adapter service under the adapter's own types", () => {
    expectTypeOf(Adapter.layer(adapter)).toEqualTypeOf<Layer.Layer<Adapter.AdapterService<Example, Trace, string>>>()
  })
})

describe("Gepa.optimize", () => {
  it("needs nothing with an adapter and a reflection model in the config", () => {
    expectTypeOf(Gepa.optimize({ seedCandidate, trainset, adapter, reflectionModel, maxMetricCalls: 10 }))
      .toEqualTypeOf<Effect.Effect<OptimizeResult<string>, OptimizeError>>()
    expectTypeOf(Gepa.optimize({ seedCandidate, trainset, adapter, proposer, maxMetricCalls: 10 }))
      .toEqualTypeOf<Effect.Effect<OptimizeResult<string>, OptimizeError>>()
  })

  it("needs no ReflectionModel when the adapter proposes", () => {
    expectTypeOf(Gepa.optimize({ seedCandidate, trainset, adapter: proposing, maxMetricCalls: 10 }))
      .toEqualTypeOf<Effect.Effect<OptimizeResult<string>, OptimizeError>>()
  })

  it("needs the ReflectionModel when only the adapter is given", () => {
    expectTypeOf(Gepa.optimize({ seedCandidate, trainset, adapter, maxMetricCalls: 10 }))
      .toEqualTypeOf<Effect.Effect<OptimizeResult<string>, OptimizeError, LanguageModel.ReflectionModel>>()
  })

  it("needs the adapter service for the trainset's examples when no adapter is given", () => {
    const program = Gepa.optimize({ seedCandidate, trainset, maxMetricCalls: 10 })
    expectTypeOf(program).toEqualTypeOf<
      Effect.Effect<OptimizeResult<unknown>, OptimizeError, Adapter.AdapterService<Example> | LanguageModel.ReflectionModel>
    >()
    expectTypeOf(Gepa.optimize({ seedCandidate, trainset, proposer, maxMetricCalls: 10 }))
      .toEqualTypeOf<Effect.Effect<OptimizeResult<unknown>, OptimizeError, Adapter.AdapterService<Example>>>()
  })

  it("is satisfied by the adapter's layer without type parameters", () => {
    const program = Gepa.optimize({ seedCandidate, trainset, maxMetricCalls: 10 }).pipe(
      Effect.provide(Layer.merge(Adapter.layer(adapter), LanguageModel.layerReflection(reflectionModel)))
    )
    expectTypeOf(program).toEqualTypeOf<Effect.Effect<OptimizeResult<unknown>, OptimizeError>>()
    const withModel = Gepa.optimize({ seedCandidate, trainset, reflectionModel, maxMetricCalls: 10 }).pipe(
      Effect.provide(Adapter.layer(proposing))
    )
    expectTypeOf(withModel).toEqualTypeOf<Effect.Effect<OptimizeResult<unknown>, OptimizeError>>()
  })

  it("is satisfied by a layer for a wider example type, not by one for another type", () => {
    const wide = Adapter.fromExample((example: { readonly question: string }) => Effect.succeed({ output: example.question, score: 1 }))
    const served = Gepa.optimize({ seedCandidate, trainset, reflectionModel, maxMetricCalls: 10 }).pipe(
      Effect.provide(Adapter.layer(wide))
    )
    expectTypeOf(served).toEqualTypeOf<Effect.Effect<OptimizeResult<unknown>, OptimizeError>>()
    const other = Adapter.fromExample((n: number) => Effect.succeed({ output: n, score: 1 }))
    const unserved = Gepa.optimize({ seedCandidate, trainset, reflectionModel, maxMetricCalls: 10 }).pipe(
      Effect.provide(Adapter.layer(other))
    )
    expectTypeOf(unserved).toEqualTypeOf<
      Effect.Effect<OptimizeResult<unknown>, OptimizeError, Adapter.AdapterService<Example>>
    >()
  })

  it("is satisfied by DefaultAdapter.layer and by a layer built on the tag", () => {
    const fromDefault = Gepa.optimize({ seedCandidate, trainset, reflectionModel, maxMetricCalls: 10 }).pipe(
      Effect.provide(DefaultAdapter.layer({ input: (e: Example) => e.question, metric: () => ({ score: 1 }) }))
    )
    expectTypeOf(fromDefault).toEqualTypeOf<
      Effect.Effect<OptimizeResult<unknown>, OptimizeError | ConfigError, LanguageModel.TaskModel>
    >()
    const fromTag = Gepa.optimize({ seedCandidate, trainset, reflectionModel, maxMetricCalls: 10 }).pipe(
      Effect.provide(Layer.effect(Adapter.tag<Example, Trace, string>(), Effect.succeed(adapter)))
    )
    expectTypeOf(fromTag).toEqualTypeOf<Effect.Effect<OptimizeResult<unknown>, OptimizeError>>()
  })

  it("rejects an adapter for another example type in the config", () => {
    const other = Adapter.fromExample((n: number) => Effect.succeed({ output: n, score: 1 }))
    // @ts-expect-error the adapter evaluates numbers, the trainset holds Examples
    Gepa.optimize({ seedCandidate, trainset, adapter: other, reflectionModel, maxMetricCalls: 10 })
  })
})

describe("Gepa.stream", () => {
  it("follows the same requirement rules", () => {
    expectTypeOf(Gepa.stream({ seedCandidate, trainset, adapter: proposing, maxMetricCalls: 10 }))
      .toEqualTypeOf<Stream.Stream<GepaEvent, OptimizeError>>()
    expectTypeOf(Gepa.stream({ seedCandidate, trainset, maxMetricCalls: 10 }))
      .toEqualTypeOf<Stream.Stream<GepaEvent, OptimizeError, Adapter.AdapterService<Example> | LanguageModel.ReflectionModel>>()
  })
})

describe("Gepa.optimizePromise", () => {
  it("takes a proposing adapter without a reflection model", () => {
    expectTypeOf(Gepa.optimizePromise({ seedCandidate, trainset, adapter: proposing, maxMetricCalls: 10 }))
      .toEqualTypeOf<Promise<OptimizeResult<string>>>()
    expectTypeOf(Gepa.optimizePromise({
      seedCandidate,
      trainset,
      adapter: Adapter.fromPromise(async (example: Example) => ({ output: example.answer, score: 1 })),
      reflectionModel: LanguageModel.fromPromise(async (prompt) => `\`\`\`\n${LanguageModel.promptText(prompt)}\n\`\`\``),
      maxMetricCalls: 10
    })).toEqualTypeOf<Promise<OptimizeResult<string>>>()
  })

  it("needs a way to propose when the adapter does not", () => {
    // @ts-expect-error neither a reflectionModel nor a proposer, and the adapter does not propose
    Gepa.optimizePromise({ seedCandidate, trainset, adapter, maxMetricCalls: 10 })
  })
})
