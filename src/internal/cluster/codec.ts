/**
 * Encoding of the values that cross the wire: examples, outputs and
 * trajectories. With a user schema a value travels in the schema's encoded
 * form; without one it must be JSON-safe and travels as its JSON round trip,
 * so that a single-process run and a cluster run see the same values.
 *
 * @internal
 */
import { Effect, ParseResult, Schema, type SchemaAST } from "effect"

/** @internal */
export interface Codec<A> {
  readonly encode: (value: A) => Effect.Effect<unknown, string>
  readonly decode: (encoded: unknown) => Effect.Effect<A, string>
}

const jsonRoundTrip = (value: unknown): Effect.Effect<unknown, string> =>
  Effect.try({
    try: () => {
      const text = JSON.stringify(value)
      return text === undefined ? null : JSON.parse(text) as unknown
    },
    catch: (e) => `not JSON-serializable (${e instanceof Error ? e.message : String(e)}); give a schema for it`
  })

/**
 * A schema as `ClusterEvaluation.WireSchema` describes it: its decoded type,
 * and an AST that says everything else (a schema's behaviour is its AST).
 *
 * @internal
 */
export interface Described<A> {
  readonly Type: A
  readonly ast: SchemaAST.AST
}

/** @internal */
export const make = <A>(described: Described<A> | undefined): Codec<A> => {
  // the encoded side is only ever passed on (as JSON), so it is `unknown` here
  const schema = described === undefined ? undefined : Schema.make<A, unknown, never>(described.ast)
  return schema === undefined
    ? {
      encode: jsonRoundTrip,
      decode: (encoded) => Effect.succeed(encoded as A)
    }
    : {
      encode: (value) =>
        Schema.encode(schema)(value).pipe(
          Effect.mapError((e) => ParseResult.TreeFormatter.formatErrorSync(e)),
          Effect.flatMap(jsonRoundTrip)
        ),
      decode: (encoded) => Schema.decodeUnknown(schema)(encoded).pipe(Effect.mapError((e) => ParseResult.TreeFormatter.formatErrorSync(e)))
    }
}

/** Encodes every value; the first failure names its position. @internal */
export const encodeAll = <A>(codec: Codec<A>, what: string, values: ReadonlyArray<A>) =>
  Effect.forEach(values, (v, i) => Effect.mapError(codec.encode(v), (e) => `${what} at position ${i}: ${e}`))

/** Decodes every value; the first failure names its position. @internal */
export const decodeAll = <A>(codec: Codec<A>, what: string, values: ReadonlyArray<unknown>) =>
  Effect.forEach(values, (v, i) => Effect.mapError(codec.decode(v), (e) => `${what} at position ${i}: ${e}`))
