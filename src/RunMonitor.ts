/**
 * Something that watches a run from the context rather than from its
 * config: every run started while a `RunMonitor` is provided sends it its
 * events and asks it, at each safe point, whether a stop was requested. The
 * live dashboard (`Dashboard.layer`) is one; an app provides it around
 * `Gepa.optimize` (or `optimizeAnything`) without touching the run's config.
 *
 * A monitor's `onEvent` runs on the engine's fiber for every event, so it
 * must be cheap and must never wait on anything slow (a network client,
 * a disk): buffer and hand the work to a fiber of its own.
 *
 * A stop requested through `stopRequested` takes the same path as Ctrl-C
 * (`StopCondition.onSignal`): no new proposal starts, the ones in flight
 * finish and are folded, the state is saved, and a run directory can be
 * resumed. The result's `stopReason` is `"stopped by request (<name>)"`.
 *
 * @since 0.2.0
 */
import { Context, Effect, Layer } from "effect"
import type { GepaEvent } from "./Event.js"

/**
 * Something that watches a run and may stop it (the dashboard's stop
 * button): it receives every event and says when a graceful stop was
 * requested.
 *
 * @since 0.2.0
 * @category models
 */
export interface Monitor {
  /** names the monitor in the stop reason, e.g. "dashboard" */
  readonly name: string
  /** receives every event of the run; must not block (see the module's docs) */
  readonly onEvent: (event: GepaEvent) => Effect.Effect<void>
  /** true once a graceful stop was requested */
  readonly stopRequested: Effect.Effect<boolean>
}

/**
 * The monitor of the runs started in its context.
 *
 * @since 0.2.0
 * @category tags
 */
export class RunMonitor extends Context.Tag("effect-gepa/RunMonitor")<RunMonitor, Monitor>() {}

/**
 * A monitor from its parts; `stopRequested` defaults to never.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: {
  readonly name: string
  readonly onEvent: (event: GepaEvent) => Effect.Effect<void>
  readonly stopRequested?: Effect.Effect<boolean> | undefined
}): Monitor => ({
  name: options.name,
  onEvent: options.onEvent,
  stopRequested: options.stopRequested ?? Effect.succeed(false)
})

/**
 * Provides a monitor to the runs started in the layer's context.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (monitor: Monitor): Layer.Layer<RunMonitor> => Layer.succeed(RunMonitor, monitor)
