/**
 * Type tests: what `ClusterEvaluation.define` infers and accepts. A schema's
 * encoded form is the user's choice (a string, a struct, a date's string
 * form); its decoded side must match the adapter's types, and a schema with
 * requirements cannot cross the wire.
 */
import { Context, Effect, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import * as Adapter from "../../src/Adapter.js"
import * as ClusterEvaluation from "../../src/ClusterEvaluation.js"

const Example = Schema.Struct({ question: Schema.String, asked: Schema.DateFromString })
type Example = typeof Example.Type

const adapter = Adapter.fromExample((example: Example, candidate) => Effect.succeed({ output: `${candidate["prompt"]}: ${example.question}`, score: 1 }))
type Trace = Adapter.ExampleTrace<Example, never, string>

describe("ClusterEvaluation.define", () => {
  it("takes schemas of any encoded form and infers the adapter's types", () => {
    const definition = ClusterEvaluation.define({ adapter, example: Example, output: Schema.String })
    expectTypeOf(definition).toEqualTypeOf<ClusterEvaluation.Definition<Example, Trace, string, never>>()
    expectTypeOf(Example).toMatchTypeOf<ClusterEvaluation.WireSchema<Example>>()
    expectTypeOf(Schema.NumberFromString).toMatchTypeOf<ClusterEvaluation.WireSchema<number>>()
  })

  it("refuses a schema of another type than the adapter's", () => {
    // @ts-expect-error: outputs are strings, not numbers
    ClusterEvaluation.define({ adapter, output: Schema.Number })
  })

  it("refuses a schema with requirements", () => {
    class Lookup extends Context.Tag("Lookup")<Lookup, { readonly find: (s: string) => string }>() {}
    const needsLookup = Schema.transformOrFail(Schema.String, Schema.String, {
      decode: (s) => Effect.map(Lookup, (l) => l.find(s)),
      encode: (s) => Effect.succeed(s)
    })
    expectTypeOf(needsLookup).not.toMatchTypeOf<ClusterEvaluation.WireSchema<string>>()
  })
})
