/**
 * What one run shares across its steps: the evaluation pool (one semaphore
 * bounds adapter calls across every proposal in flight), the cache, the run
 * store, and event delivery. Steps receive the session; they never assign the
 * run's state.
 *
 * Events are built only for a sink that wants them: `onEvent`, a stream, a
 * store with an event log and a monitor want every event; the telemetry
 * observer only those its metrics, span attributes and logs at the run's
 * minimum log level read (`tagsWanted`). An event nobody wants is never
 * allocated (`emit` is `Effect.void`), which matters on the hot path of a
 * fast adapter.
 *
 * @internal
 */
import { Effect, type Fiber, Option, type Scope } from "effect"
import type { Adapter } from "../../Adapter.js"
import type { Candidate } from "../../Candidate.js"
import type { DataLoader, DataLoaderError } from "../../DataLoader.js"
import type { AdapterContractError, ConfigError, ModelUnrecoverable, PersistenceError } from "../../Errors.js"
import * as EvaluationCache from "../../EvaluationCache.js"
import { type EvaluationPurpose, GepaEvent } from "../../Event.js"
import { RunMonitor } from "../../RunMonitor.js"
import * as RunStoreModule from "../../RunStore.js"
import type { RunStore } from "../../RunStore.js"
import type * as State from "../../State.js"
import * as StopCondition from "../../StopCondition.js"
import * as Observer from "../telemetry/observer.js"
import * as AppendOnly from "./appendOnly.js"
import { evaluate, type Evaluation, hashOf, makePace, type Outcome, type Pool } from "./evaluate.js"
import * as Permits from "./permits.js"
import * as Spans from "../telemetry/spans.js"
import type { Resolved } from "./resolved.js"

/** An event's tag. @internal */
export type EventTag = GepaEvent["_tag"]

/** Whether some sink receives events of a tag: a step builds such an event only then. @internal */
export type Wants = (tag: EventTag) => boolean

/** Delivers the event of a tag, built only when some sink wants that tag. @internal */
export type Emit = <K extends EventTag>(tag: K, event: () => Extract<GepaEvent, { readonly _tag: K }>) => Effect.Effect<void>

/**
 * Failures seen by one step, returned with its result (never a shared
 * mutable tally): the loop folds them into the consecutive-failure count.
 *
 * @internal
 */
export interface Failures {
  readonly evaluated: number
  readonly failed: number
  readonly lastError: string | undefined
}

/** @internal */
export const noFailures: Failures = { evaluated: 0, failed: 0, lastError: undefined }

/** @internal */
export const addFailures = (a: Failures, b: Failures): Failures => ({
  evaluated: a.evaluated + b.evaluated,
  failed: a.failed + b.failed,
  lastError: b.lastError ?? a.lastError
})

/** An evaluation with its failures counted. @internal */
export interface Evaluated<T, O> extends Evaluation<T, O> {
  readonly failures: Failures
}

/** The best output seen per validation example (with the candidate that gave it), when the run tracks them. @internal */
export type Best<O> = Map<string, { candidate: number; output: O; score: number }>

/** @internal */
export interface Session<D, T, O> {
  readonly r: Resolved<D, T, O>
  /** the best outputs so far (`recordBest`); the run's own cache keeps only outputs that could still join them */
  readonly best: Best<O>
  readonly store: RunStore<O> | undefined
  readonly emit: Emit
  /** delivers events already built, in order (each to the sinks that want its tag) */
  readonly deliver: (events: ReadonlyArray<GepaEvent>) => Effect.Effect<void>
  /** whether anyone receives events of a tag (steps skip building the others) */
  readonly wants: Wants
  /**
   * the run's owner of the state's growing arrays (see internal/engine/appendOnly.ts);
   * `seal` before a state goes where it may be kept (a save)
   */
  readonly owner: AppendOnly.Owner
  /** seals the run's state before it is saved, when the store may keep it */
  readonly sealSaved: () => void
  /** names the stop condition that fired, in words */
  readonly stopCheck: StopCondition.Explain
  /** opens the engine's spans, when the run's tracer records them (`Spans.opener`) */
  readonly span: Spans.Open
  /** a stop asked for by the context's `RunMonitor` (the dashboard's Stop button), with the monitor's name */
  readonly monitorStop: Effect.Effect<string | undefined>
  readonly evaluate: (options: {
    readonly iteration: number
    readonly purpose: EvaluationPurpose
    readonly candidate: Candidate
    readonly ids: ReadonlyArray<string>
    readonly captureTraces: boolean
    readonly call: string
    /** cached results paid for by iterations after this one (other than `iteration`) are not served */
    readonly visibleUpTo?: number | undefined
  }) => Effect.Effect<Evaluated<T, O>, AdapterContractError | DataLoaderError | PersistenceError | ModelUnrecoverable>
  /**
   * The training scores the cache already holds for `candidate` (what an
   * evaluation by `iteration` would be served), without paying or charging
   * anything; `undefined` when the cache cannot be read so (off, or a cache
   * of the user's).
   */
  readonly known: (
    candidate: Candidate,
    ids: ReadonlyArray<string>,
    iteration: number,
    visibleUpTo: number | undefined
  ) => ReadonlyArray<number | undefined> | undefined
}

/** Validation results of an evaluation, in the shape the state stores. @internal */
export const valsetOf = <T, O>(outcomes: ReadonlyArray<Outcome<T, O>>): State.ValsetEvaluation => {
  const scores: Record<string, number> = {}
  let objectiveScores: Record<string, NonNullable<Outcome<T, O>["objectiveScores"]>> | undefined
  for (const o of outcomes) {
    scores[o.id] = o.score
    if (o.objectiveScores !== undefined) (objectiveScores ??= {})[o.id] = o.objectiveScores
  }
  return objectiveScores === undefined ? { scores } : { scores, objectiveScores }
}

/**
 * Builds the session. `extraEmit` receives events in addition to the
 * config's `onEvent` (used by `Gepa.stream`); `store` is chosen by the
 * composition root (`optimize.ts`), not here.
 *
 * @internal
 */
export const make = <D, T, O>(
  r: Resolved<D, T, O>,
  store: RunStore<O>,
  extraEmit: ((event: GepaEvent) => Effect.Effect<void>) | undefined
): Effect.Effect<Session<D, T, O>, ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const best: Best<O> = new Map()
    const cache: EvaluationCache.EvaluationCache<O> | undefined = r.cache === "off"
      ? undefined
      : r.cache !== "default"
      ? r.cache
      // a cache that lives no longer than the run never serves a trajectory
      // (only a proposal re-launched after a crash asks for one), nor an
      // output the run cannot report (see `keepOutput`)
      : Option.getOrElse(store.cache, () => EvaluationCache.memory<O>(undefined, { trajectories: false, keepOutput: keepOutput(r, best) }))

    // sinks of every event; one that answers without an effect is done at once
    const sinks: Array<(event: GepaEvent) => void | Effect.Effect<void>> = []
    if (r.onEvent !== undefined) sinks.push(r.onEvent)
    // a store that keeps nothing is not a listener (events are built only for listeners)
    if (store.durable) sinks.push(store.onEvent)
    if (extraEmit !== undefined) sinks.push(extraEmit)
    // a monitor from the context (e.g. the live dashboard) sees every event
    const monitor = yield* Effect.serviceOption(RunMonitor)
    if (Option.isSome(monitor)) sinks.push(monitor.value.onEvent)
    const monitorStop: Effect.Effect<string | undefined> = Option.isNone(monitor)
      ? Effect.succeed(undefined)
      : Effect.map(monitor.value.stopRequested, (stop) => (stop ? monitor.value.name : undefined))
    const owner = AppendOnly.makeOwner()
    // a store that keeps nothing (RunStore.none) needs no seal before a save;
    // any other may keep the state it is given (the memory store does)
    const keepsSaves = !RunStoreModule.isNone(store)
    const sealSaved = keepsSaves ? () => AppendOnly.seal(owner) : () => {}
    // [TELEMETRY HOOK] the run's metrics and logs (Telemetry.observer), on
    // unless `telemetry: false`; library runs log summaries at debug. It
    // reads only some events unless debug lines pass the run's log level.
    const observer = r.telemetry === undefined ? undefined : yield* Observer.observe(r.telemetry)
    // A state in an event to any of the sinks above may be kept: it goes as
    // it is when emitted, copied only if the sink reads it (`AppendOnly.asOf`);
    // the telemetry observer reads it at once and keeps nothing.
    const forKeeps = (e: GepaEvent): GepaEvent => {
      if (e._tag !== "IterationEnded") return e
      // its entries change in place (the round-robin pointers): the next change copies it
      AppendOnly.release(owner, e.state.nextComponent)
      const state = AppendOnly.asOf(e.state)
      const kept = GepaEvent.IterationEnded({ iteration: e.iteration, accepted: e.accepted, state: e.state })
      Object.defineProperty(kept, "state", { get: state, enumerable: true, configurable: true })
      return kept
    }
    const wants: Wants = sinks.length > 0 ? () => true : observer === undefined ? () => false : observer.wants
    const observed = observer === undefined ? () => false : observer.wants
    // Delivery runs in one step of the emitting fiber for as long as every
    // sink answers synchronously (a plain `onEvent`, the observer without a
    // log line to write); an effect a sink returns runs before the next sink
    // is called, as if each event were delivered by its own effect. Each
    // event goes to the sinks in order, then to the observer if it reads it.
    const from = (
      events: ReadonlyArray<GepaEvent>,
      i: number,
      j: number,
      kept: GepaEvent | undefined,
      fiber: Fiber.RuntimeFiber<unknown, unknown>
    ): Effect.Effect<void> => {
      for (; i < events.length; i++, j = 0, kept = undefined) {
        const e = events[i]
        if (e === undefined) continue
        for (; j < sinks.length; j++) {
          const sink = sinks[j]
          if (sink === undefined) continue
          // built once for every sink
          kept ??= forKeeps(e)
          const out = sink(kept)
          if (Effect.isEffect(out)) return Effect.zipRight(out, resume(events, i, j + 1, kept))
        }
        if (observer !== undefined && observer.wants(e._tag)) {
          const line = observer.handle(e, fiber)
          if (line !== undefined) return Effect.zipRight(line, resume(events, i + 1, 0, undefined))
        }
      }
      return Effect.void
    }
    const resume = (events: ReadonlyArray<GepaEvent>, i: number, j: number, kept: GepaEvent | undefined) =>
      Effect.withFiberRuntime<void>((fiber) => from(events, i, j, kept, fiber))
    const deliver = (events: ReadonlyArray<GepaEvent>): Effect.Effect<void> =>
      events.length === 0 || (sinks.length === 0 && !events.some((e) => observed(e._tag))) ? Effect.void : resume(events, 0, 0, undefined)
    const emit: Emit = (tag, event) => (wants(tag) ? Effect.withFiberRuntime<void>((fiber) => from([event()], 0, 0, undefined, fiber)) : Effect.void)

    const permits = Permits.make(r.maxConcurrency)
    const pool: Pool<D, T, O> = {
      adapter: r.adapter as Adapter<D, T, O>,
      withPermit: permits.withPermit,
      withFirstPermit: permits.withFirstPermit,
      chunkSize: r.chunkSize,
      workers: r.maxConcurrency,
      timeout: r.evaluationTimeout,
      retry: r.evaluationRetry,
      cache,
      fallbackScore: r.fallbackScore,
      // cache keys by example content; the run store's write-ahead budget
      exampleKey: (split, id) => r.exampleKeys[split].get(id) ?? id,
      // write-ahead reservations only where a later process can read them
      reserve: store.durable ? (iteration, calls) => store.reserve({ iteration, calls }) : undefined,
      reserveBlock: r.maxConcurrency * r.chunkSize,
      pace: makePace()
    }
    const stopCheck = yield* StopCondition.explain(r.stop)
    const openSpan = yield* Spans.opener
    const wantsStarted = wants("EvaluationStarted")
    const wantsEnded = wants("EvaluationEnded")
    const wantsFailed = wants("ExampleFailed")

    // an evaluation's result as the steps read it (the failures counted)
    const evaluatedOf = (result: Evaluation<T, O>): Evaluated<T, O> => {
      let failed = 0
      let lastError: string | undefined
      for (const out of result.outcomes) {
        if (out.error !== undefined) {
          lastError = out.error
          if (!out.cached) failed++
        }
      }
      // (the result's fields last: V8 gives each field added after a leading spread a shape of its own)
      return { failures: { evaluated: result.spent, failed, lastError }, ...result }
    }
    // `emit`, then `value`: one step when nothing is delivered through an effect
    const emitThen = <A>(tag: GepaEvent["_tag"], event: () => GepaEvent, value: A): Effect.Effect<A> =>
      wants(tag)
        ? Effect.withFiberRuntime<A>((fiber) => {
          const out = from([event()], 0, 0, undefined, fiber)
          return out === Effect.void ? Effect.succeed(value) : Effect.as(out, value)
        })
        : Effect.succeed(value)

    const evaluateStep: Session<D, T, O>["evaluate"] = (o) => {
      const train = o.purpose === "parent-minibatch" || o.purpose === "child-minibatch"
      const raw = evaluate(pool, o.candidate, {
        loader: (train ? r.train : r.val) as DataLoader<unknown>,
        ids: o.ids,
        split: train ? "train" : "val",
        captureTraces: o.captureTraces,
        call: o.call,
        iteration: o.iteration,
        visibleUpTo: o.visibleUpTo
      })
      const span = openSpan("gepa.evaluate", {
        attributes: { purpose: o.purpose, size: o.ids.length, iteration: o.iteration },
        captureStackTrace: false
      })
      if (!wantsStarted && !wantsEnded && !wantsFailed) return span(Effect.map(raw, evaluatedOf))
      // the events of its end: each failed example's, then the evaluation's own
      const ended = (result: Evaluation<T, O>): Effect.Effect<Evaluated<T, O>> => {
        const evaluated = evaluatedOf(result)
        const failed: Array<Effect.Effect<void>> = []
        let failures = 0
        for (const out of result.outcomes) {
          const error = out.error
          if (error !== undefined) {
            failures++
            if (wantsFailed) {
              failed.push(emit("ExampleFailed", () => GepaEvent.ExampleFailed({ iteration: o.iteration, purpose: o.purpose, id: out.id, error })))
            }
          }
        }
        const event = () => {
          let cacheHits = 0
          const scores = result.outcomes.map((out) => {
            if (out.cached) cacheHits++
            return out.score
          })
          return GepaEvent.EvaluationEnded({ iteration: o.iteration, purpose: o.purpose, scores, failures, cacheHits })
        }
        const end = emitThen("EvaluationEnded", event, evaluated)
        // (an evaluation without failures, the common case, emits one event: no loop of effects)
        return failed.length === 0 ? end : Effect.zipRight(Effect.all(failed, { discard: true }), end)
      }
      const started = wantsStarted
        ? Effect.zipRight(emit("EvaluationStarted", () => GepaEvent.EvaluationStarted({ iteration: o.iteration, purpose: o.purpose, size: o.ids.length })), raw)
        : raw
      return span(Effect.flatMap(started, ended))
    }

    const peek = cache === undefined ? undefined : EvaluationCache.batchOf(cache)?.peek
    const known: Session<D, T, O>["known"] = (candidate, ids, iteration, visibleUpTo) => {
      if (peek === undefined) return undefined
      const candidateHash = hashOf(candidate)
      return peek(ids.map((id) => ({
        candidateHash,
        split: "train" as const,
        id,
        contentHash: r.exampleKeys.train.get(id) ?? id,
        // not the asker's own results: it has none, unless it is a proposal
        // re-launched after a crash, which must decide as it did the first time
        requestedBy: undefined,
        visibleUpTo
      }))).map((hit) => hit?.score)
    }

    return { r, best, store, emit, deliver, wants, owner, sealSaved, stopCheck, span: openSpan, monitorStop, evaluate: evaluateStep, known }
  })

/**
 * Which outputs the run's own cache keeps. The run reads an output back from
 * its cache only for `recordBest`: a validation result served to a candidate
 * that is then added, which replaces the best output of its example when its
 * score is higher. Best scores only rise, so an output whose score is not above
 * the best recorded for its example when it is stored can never be read (and
 * none is when the run does not track best outputs). The cache's keys are
 * examples' contents, so a result paid on the training set serves the
 * validation examples with the same content.
 */
const keepOutput = <D, T, O>(r: Resolved<D, T, O>, best: Best<O>) => {
  const valIds = new Map<string, Array<string>>()
  for (const id of r.valIds) {
    const key = r.exampleKeys.val.get(id) ?? id
    const ids = valIds.get(key)
    if (ids === undefined) valIds.set(key, [id])
    else ids.push(id)
  }
  return (key: EvaluationCache.CacheKey, value: EvaluationCache.CachedEvaluation<O>): boolean => {
    if (!r.trackBestOutputs) return false
    // a key without a content hash (not one of the engine's): kept
    if (key.contentHash === undefined) return true
    const ids = valIds.get(key.contentHash)
    if (ids === undefined) return false
    for (const id of ids) {
      const b = best.get(id)
      if (b === undefined || value.score > b.score) return true
    }
    return false
  }
}

/** The best output seen per validation example, if the run tracks them. @internal */
export const recordBest = <T, O>(
  best: Best<O>,
  candidate: number,
  outcomes: ReadonlyArray<Outcome<T, O>>
): void => {
  for (const o of outcomes) {
    if (Option.isNone(o.output)) continue
    const prev = best.get(o.id)
    if (prev === undefined || o.score > prev.score) best.set(o.id, { candidate, output: o.output.value, score: o.score })
  }
}
