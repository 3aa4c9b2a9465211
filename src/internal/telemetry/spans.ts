/**
 * The engine's spans, opened only when someone can see them.
 *
 * Under Effect's built-in tracer (no tracing layer provided) a span is
 * recorded nowhere, yet opening one costs a span object, a clock reading and
 * a copy of the fiber's context, several times per proposal. The engine's
 * spans are therefore opened only when the context holds another tracer (an
 * OpenTelemetry layer, a test's recording tracer); without one the effect
 * runs as it is.
 *
 * @internal
 */
import { Effect, type Tracer } from "effect"

// the tracer a fiber has when no layer provides one
const builtIn: Tracer.Tracer = Effect.runSync(Effect.tracer)

/** `Effect.withSpan`, skipped under the built-in tracer. @internal */
export const withSpan = (name: string, options?: Tracer.SpanOptions) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => (tracer === builtIn ? self : Effect.withSpan(self, name, options)))
