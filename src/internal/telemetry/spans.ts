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
import { Effect, identity, type Tracer } from "effect"

// the tracer a fiber has when no layer provides one
const builtIn: Tracer.Tracer = Effect.runSync(Effect.tracer)

/** `Effect.withSpan`, skipped under the built-in tracer. @internal */
export const withSpan = (name: string, options?: Tracer.SpanOptions) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => (tracer === builtIn ? self : Effect.withSpan(self, name, options)))

/** Opens a span around an effect, or runs it as it is (see `opener`). @internal */
export type Open = (name: string, options?: Tracer.SpanOptions) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const skip: Open = () => identity

/**
 * `withSpan` decided once: a run's fibers all have the tracer of the fiber
 * that started the run (a tracer is provided around the run, and nothing a
 * run calls can change it for the engine's fibers), so the run asks once
 * instead of at every span, several times per proposal.
 *
 * @internal
 */
export const opener: Effect.Effect<Open> = Effect.map(
  Effect.tracer,
  (tracer): Open => tracer === builtIn ? skip : (name, options) => (self) => Effect.withSpan(self, name, options)
)
