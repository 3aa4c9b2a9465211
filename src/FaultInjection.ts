/**
 * Fault injection for any adapter or language model: seeded failures,
 * latency and hangs (which the engine's timeouts turn into timeouts). Used by
 * the tests and benchmarks, and offered to users who want to check that
 * their optimization survives a flaky system.
 *
 * A call's fault and latency are drawn from the seed, the call's content
 * (the candidate and the examples of an adapter call, the prompt of a model
 * call) and how many times the same call failed or hung before. So the
 * same seed gives the same faults whatever order concurrent calls arrive in
 * (a run at any `maxConcurrency` meets the same failures), a retried call
 * draws again, and a call made again after it answered answers again. The
 * draws never touch the optimizer's random choices.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Layer } from "effect"
import { type Adapter, type AdapterService, tag as adapterTag } from "./Adapter.js"
import * as Candidate from "./Candidate.js"
import { AdapterError } from "./Errors.js"
import { stableStringify } from "./Fingerprint.js"
import { type LanguageModel, LlmTransportError, promptText, ReflectionModel, TaskModel } from "./LanguageModel.js"

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
  /** seed of the draws (default 0) */
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

// FNV-1a of the text, then a 32-bit finalizer (fmix32) so that texts which
// differ in one character give unrelated hashes
const hash32 = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

// a float in [0, 1)
const draw = (text: string): number => hash32(text) / 4294967296

// a 53-bit number naming a call's content: what the attempt counts are kept
// under (a long run makes many calls; a number costs less than their text)
const callId = (key: string): number => hash32(`a\u0000${key}`) * 2097152 + (hash32(`b\u0000${key}`) >>> 11)

const plan = (options: FaultOptions) => {
  const seed = options.seed ?? 0
  const failureRate = options.failureRate ?? 0
  const hangRate = options.hangRate ?? 0
  const base = options.latency === undefined ? 0 : Duration.toMillis(Duration.decode(options.latency))
  const jitter = options.jitter === undefined ? 0 : Duration.toMillis(Duration.decode(options.jitter))
  const stats: FaultStats = { calls: 0, failures: 0, hangs: 0 }
  // per call (by content), how many of its draws failed or hung: a retry
  // draws again, and a call made again after it answered answers again
  // (only calls that failed are kept)
  const attempts = new Map<number, number>()
  // drawn synchronously at call time, from the seed, the call's content and its attempt
  const next = (key: string): readonly [Fault, number] => {
    stats.calls++
    const id = callId(key)
    const attempt = attempts.get(id) ?? 0
    const at = `${seed}\u0000${attempt}\u0000${key}`
    const r = draw(`f\u0000${at}`)
    const delay = base + (jitter > 0 ? draw(`l\u0000${at}`) * jitter : 0)
    if (r < failureRate + hangRate) attempts.set(id, attempt + 1)
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
          const [fault, delay] = faults.next(`${Candidate.hash(candidate)}\u0000${stableStringify(batch)}`)
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
          const [fault, delay] = faults.next(promptText(prompt))
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
