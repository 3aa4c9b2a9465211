/**
 * Fault injection for any adapter or language model: seeded failures,
 * latency and hangs (which the engine's timeouts turn into timeouts). Used by
 * the tests and benchmarks, and offered to users who want to check that
 * their optimization survives a flaky system.
 *
 * Faults draw from their own seeded generator, never from the optimizer's,
 * so injecting faults does not change the optimizer's random choices.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Layer } from "effect"
import { type Adapter, type AdapterService, tag as adapterTag } from "./Adapter.js"
import { AdapterError } from "./Errors.js"
import { type LanguageModel, LlmTransportError, ReflectionModel, TaskModel } from "./LanguageModel.js"
import { Rng } from "./Rng.js"

/**
 * How a wrapped model or adapter misbehaves: how often a call fails or
 * hangs, the latency added to every call, and the seed of the draws.
 *
 * @since 0.1.0
 * @category models
 */
export interface FaultOptions {
  /** probability that a call fails (0..1) */
  readonly failureRate?: number
  /** probability that a call hangs until interrupted (0..1) */
  readonly hangRate?: number
  /** base latency added to every call */
  readonly latency?: Duration.DurationInput
  /** uniform extra latency in [0, jitter) */
  readonly jitter?: Duration.DurationInput
  /** seed of the fault generator (default 0) */
  readonly seed?: number
}

/**
 * Counters of what was injected.
 *
 * @since 0.1.0
 * @category models
 */
export interface FaultStats {
  calls: number
  failures: number
  hangs: number
}

type Fault = "ok" | "fail" | "hang"

const plan = (options: FaultOptions) => {
  const rng = Rng.seeded(options.seed ?? 0)
  const failureRate = options.failureRate ?? 0
  const hangRate = options.hangRate ?? 0
  const base = options.latency === undefined ? 0 : Duration.toMillis(Duration.decode(options.latency))
  const jitter = options.jitter === undefined ? 0 : Duration.toMillis(Duration.decode(options.jitter))
  const stats: FaultStats = { calls: 0, failures: 0, hangs: 0 }
  // draws happen synchronously at call time so the fault sequence only
  // depends on the order of calls
  const next = (): readonly [Fault, number] => {
    stats.calls++
    const r = rng.nextFloat()
    const delay = base + (jitter > 0 ? rng.nextFloat() * jitter : 0)
    if (r < failureRate) {
      stats.failures++
      return ["fail", delay]
    }
    if (r < failureRate + hangRate) {
      stats.hangs++
      return ["hang", delay]
    }
    return ["ok", delay]
  }
  return { next, stats }
}

const inject = <A, E>(
  fault: Fault,
  delayMillis: number,
  call: Effect.Effect<A, E>,
  failure: () => E
): Effect.Effect<A, E> => {
  const delayed = <X, Y>(eff: Effect.Effect<X, Y>) => delayMillis > 0 ? Effect.zipRight(Effect.sleep(Duration.millis(delayMillis)), eff) : eff
  switch (fault) {
    case "ok":
      return delayed(call)
    case "fail":
      return delayed(Effect.fail(failure()))
    case "hang":
      return delayed(Effect.never)
  }
}

/**
 * An adapter whose `evaluate` calls fail, hang or slow down as configured.
 *
 * @since 0.1.0
 * @category constructors
 */
export const adapter = <D, T, O>(
  inner: Adapter<D, T, O>,
  options: FaultOptions
): { readonly adapter: Adapter<D, T, O>; readonly stats: FaultStats } => {
  const faults = plan(options)
  return {
    stats: faults.stats,
    adapter: {
      ...inner,
      evaluate: (batch, candidate, opts) =>
        Effect.suspend(() => {
          const [fault, delay] = faults.next()
          return inject(fault, delay, inner.evaluate(batch, candidate, opts), () => new AdapterError({ call: "evaluate", detail: "injected failure" }))
        })
    }
  }
}

/**
 * A language model whose calls fail, hang or slow down as configured.
 *
 * @since 0.1.0
 * @category constructors
 */
export const languageModel = (
  inner: LanguageModel,
  options: FaultOptions & { readonly model?: string }
): { readonly model: LanguageModel; readonly stats: FaultStats } => {
  const faults = plan(options)
  return {
    stats: faults.stats,
    model: {
      complete: (prompt) =>
        Effect.suspend(() => {
          const [fault, delay] = faults.next()
          return inject(fault, delay, inner.complete(prompt), () => new LlmTransportError({ model: options.model ?? "injected", detail: "injected failure" }))
        }),
      ...(inner.contextWindow === undefined ? {} : { contextWindow: inner.contextWindow })
    }
  }
}

/**
 * Wraps the adapter provided by another layer:
 * `FaultInjection.layerAdapter<D, T, O>(options).pipe(Layer.provide(AdapterLive))`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAdapter = <D, T, O>(
  options: FaultOptions
): Layer.Layer<AdapterService<D, T, O>, never, AdapterService<D, T, O>> =>
  Layer.effect(adapterTag<D, T, O>(), Effect.map(adapterTag<D, T, O>(), (inner) => adapter(inner, options).adapter))

/**
 * Wraps the reflection model provided by another layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerReflection = (
  options: FaultOptions & { readonly model?: string }
): Layer.Layer<ReflectionModel, never, ReflectionModel> =>
  Layer.effect(ReflectionModel, Effect.map(ReflectionModel, (inner) => languageModel(inner, options).model))

/**
 * Wraps the task model provided by another layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTask = (
  options: FaultOptions & { readonly model?: string }
): Layer.Layer<TaskModel, never, TaskModel> => Layer.effect(TaskModel, Effect.map(TaskModel, (inner) => languageModel(inner, options).model))
