/**
 * The composition root of a run, below the public faces: the persistence the
 * configuration asks for, the engine's scheduler, the log context and the
 * span. `Gepa.optimize` and `Gepa.stream` give it their types;
 * `optimizeAnything` runs the engine through it without importing `Gepa.ts`.
 *
 * @internal
 */
import { Effect, Stream } from "effect"
import type { AdapterService } from "../../Adapter.js"
import type { Config } from "../../Config.js"
import type { OptimizeError } from "../../Errors.js"
import type { GepaEvent } from "../../Event.js"
import type { ReflectionModel } from "../../LanguageModel.js"
import type { OptimizeResult } from "../../Result.js"
import * as RunDir from "../../RunDir.js"
import { none as noStore, RunStoreService } from "../../RunStore.js"
import { engineScheduler } from "./scheduler.js"
import * as loop from "./loop.js"
import type { Resolved } from "./resolved.js"

/**
 * The choice of persistence: the caller's store, a run directory, the
 * context's `RunStoreService`, or none.
 * The engine itself knows only `RunStore`.
 */
const chooseStore = <D, T, O>(r: Resolved<D, T, O>) =>
  r.store !== undefined
    ? r.store
    : r.runDir !== undefined
    ? RunDir.make<O>(r.runDir, {
      // a cache object of the caller's own replaces the persistent one
      cache: r.cache === "default",
      trackBestOutputs: r.trackBestOutputs
    })
    // a run store service from the context (e.g. `RunStore.layerMemory` in tests), else nothing is kept
    : Effect.flatMap(Effect.serviceOption(RunStoreService), (service) => service._tag === "Some" ? service.value.open<O>() : Effect.succeed(noStore<O>()))

/**
 * The run's log context: every log line of the run (the engine's, the
 * adapter's, the models') carries the `run` annotation (the run directory
 * when there is one, else a fresh id) and the `gepa.run` log span.
 */
const logContext = (config: { readonly runDir?: string | undefined }) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() =>
    effect.pipe(
      Effect.annotateLogs("run", config.runDir ?? `run-${globalThis.crypto.randomUUID().slice(0, 8)}`),
      Effect.withLogSpan("gepa.run")
    )
  )

/** @internal */
export const optimize = <D, T, O>(
  config: Config<D, T, O>
): Effect.Effect<OptimizeResult<O>, OptimizeError, AdapterService<D, T, O> | ReflectionModel> =>
  Effect.scoped(loop.run(config, chooseStore, undefined)).pipe(
    Effect.withScheduler(engineScheduler),
    logContext(config),
    Effect.withSpan("gepa.optimize")
  )

/** @internal */
export const stream = <D, T, O>(
  config: Config<D, T, O>
): Stream.Stream<GepaEvent, OptimizeError, AdapterService<D, T, O> | ReflectionModel> =>
  Stream.asyncScoped<GepaEvent, OptimizeError, AdapterService<D, T, O> | ReflectionModel>(
    (emit) =>
      Effect.scoped(loop.run(config, chooseStore, (event) => Effect.promise(() => emit.single(event)))).pipe(
        Effect.withScheduler(engineScheduler),
        logContext(config),
        Effect.matchCauseEffect({
          onSuccess: () => Effect.promise(() => emit.end()),
          onFailure: (cause) => Effect.promise(() => emit.halt(cause))
        }),
        Effect.forkScoped
      ),
    { bufferSize: 16, strategy: "suspend" }
  )
