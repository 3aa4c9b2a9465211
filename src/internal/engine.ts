/**
 * The GEPA loop. The algorithm lives in the pure modules (State, Pareto,
 * Merge, selectors, sampler); this file orchestrates evaluation, reflection,
 * budget, events and persistence around them.
 *
 * Reproducibility with parallel proposals: all random draws happen in the
 * sequential planning and folding phases, never in the concurrent part, and
 * results are folded in proposal order.
 *
 * Strict budget: before any evaluation starts, its worst-case metric calls are
 * reserved; work whose reservation does not fit is not started. Unused
 * reservations (cache hits, skipped child evaluations) are released.
 *
 * @internal
 */
import { Duration, Effect, Either, Metric, Option, type Scope } from "effect"
import * as Acceptance from "../Acceptance.js"
import { type Adapter, type AdapterService, type ReflectiveDataset, type ReflectiveRecord, tag as adapterTag } from "../Adapter.js"
import * as BatchSampler from "../BatchSampler.js"
import * as Candidate from "../Candidate.js"
import * as CandidateSelector from "../CandidateSelector.js"
import * as ComponentSelector from "../ComponentSelector.js"
import * as DataLoader from "../DataLoader.js"
import {
  AdapterContractError,
  AllEvaluationsFailed,
  ConfigError,
  MissingObjectiveScores,
  ResumeConflict
} from "../Errors.js"
import { sum } from "../EvaluationBatch.js"
import * as EvaluationCache from "../EvaluationCache.js"
import * as EvaluationPolicy from "../EvaluationPolicy.js"
import { type EvaluationPurpose, GepaEvent } from "../Event.js"
import type { Config, OptimizeError, OptimizeResult } from "../Gepa.js"
import { type LanguageModel, ReflectionModel } from "../LanguageModel.js"
import * as Merge from "../Merge.js"
import * as Pareto from "../Pareto.js"
import { type Proposer, ProposalResult } from "../Proposal.js"
import * as Reflection from "../Reflection.js"
import * as Result from "../Result.js"
import { Rng } from "../Rng.js"
import * as RunDir from "../RunDir.js"
import type { RunStore } from "../RunStore.js"
import * as State from "../State.js"
import * as StopCondition from "../StopCondition.js"
import { evaluate, type Outcome, type Pool } from "./evaluate.js"

const metricCallsCounter = Metric.counter("gepa_metric_calls", { description: "examples evaluated by the adapter" })
const acceptedCounter = Metric.counter("gepa_proposals_accepted")
const rejectedCounter = Metric.counter("gepa_proposals_rejected")

type Emit = (event: GepaEvent) => Effect.Effect<void>

interface Usage {
  calls: number
  inputTokens: number
  outputTokens: number
  cost: number
}

interface Resolved<D, T, O> {
  readonly config: Config<D, T, O>
  readonly adapter: Adapter<D, T, O>
  readonly reflectionModel: LanguageModel | undefined
  readonly proposer: Proposer | undefined
  readonly train: DataLoader.DataLoader<D>
  readonly val: DataLoader.DataLoader<D>
  readonly trainIds: ReadonlyArray<string>
  readonly valIds: ReadonlyArray<string>
  readonly budget: number | undefined
  readonly stop: StopCondition.StopCondition
  readonly minibatchSize: number
  readonly parallelProposals: number
  readonly selectCandidate: CandidateSelector.CandidateSelector
  readonly selectComponents: ComponentSelector.ComponentSelector
  readonly policy: EvaluationPolicy.EvaluationPolicy
  readonly accept: Acceptance.AcceptanceCriterion
  readonly merge: { readonly maxInvocations: number; readonly overlapFloor: number; readonly subsampleSize: number } | undefined
  readonly skipPerfect: boolean
  readonly perfectScore: number
  readonly maxFailedIterations: number
  readonly trackBestOutputs: boolean
}

const isPositiveInt = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n > 0

const check = (ok: boolean, field: string, detail: string): Effect.Effect<void, ConfigError> =>
  ok ? Effect.void : Effect.fail(new ConfigError({ field, detail }))

const optionalPositiveInt = (value: unknown, field: string) =>
  check(value === undefined || isPositiveInt(value), field, `expected a positive integer, got ${String(value)}`)

const optionalNonNegativeInt = (value: unknown, field: string) =>
  check(
    value === undefined || (typeof value === "number" && Number.isInteger(value) && value >= 0),
    field,
    `expected a non-negative integer, got ${String(value)}`
  )

/** A strategy from a constructor that rejects bad arguments with a RangeError. */
const construct = <A>(field: string, make: () => A): Effect.Effect<A, ConfigError> =>
  Effect.try({ try: make, catch: (e) => new ConfigError({ field, detail: e instanceof Error ? e.message : String(e) }) })

const resolveSelector = (
  s: Config<unknown>["candidateSelector"]
): Effect.Effect<CandidateSelector.CandidateSelector, ConfigError> => {
  if (s === undefined || s === "pareto") return Effect.succeed(CandidateSelector.pareto)
  if (s === "current_best") return Effect.succeed(CandidateSelector.currentBest)
  if (typeof s === "function") return Effect.succeed(s)
  return construct("candidateSelector", () =>
    "epsilonGreedy" in s ? CandidateSelector.epsilonGreedy(s.epsilonGreedy) : CandidateSelector.topKPareto(s.topKPareto))
}

const resolve = <D, T, O>(
  config: Config<D, T, O>
): Effect.Effect<Resolved<D, T, O>, ConfigError | DataLoader.DataLoaderError, AdapterService<D, T, O> | ReflectionModel> =>
  Effect.gen(function*() {
    const names = Object.keys(config.seedCandidate ?? {})
    yield* check(names.length > 0, "seedCandidate", "needs at least one named component")
    for (const name of names) {
      yield* check(typeof config.seedCandidate[name] === "string", `seedCandidate.${name}`, "must be a string")
    }
    yield* optionalPositiveInt(config.minibatchSize, "minibatchSize")
    yield* optionalPositiveInt(config.maxConcurrency, "maxConcurrency")
    yield* optionalPositiveInt(config.chunkSize, "chunkSize")
    yield* optionalPositiveInt(config.parallelProposals, "parallelProposals")
    yield* optionalPositiveInt(config.maxConsecutiveFailedIterations, "maxConsecutiveFailedIterations")
    yield* optionalNonNegativeInt(config.maxMetricCalls, "maxMetricCalls")
    yield* check(config.perfectScore === undefined || Number.isFinite(config.perfectScore), "perfectScore", "must be a finite number")
    yield* check(config.fallbackScore === undefined || Number.isFinite(config.fallbackScore), "fallbackScore", "must be a finite number")

    const conditions: Array<StopCondition.StopCondition> = config.stop === undefined
      ? []
      : Array.isArray(config.stop) ? [...config.stop] : [config.stop as StopCondition.StopCondition]
    if (config.maxMetricCalls !== undefined) conditions.unshift(StopCondition.maxMetricCalls(config.maxMetricCalls))
    yield* check(
      conditions.length > 0,
      "stop",
      "at least one stop condition is required: set maxMetricCalls or give stop conditions (StopCondition.*)"
    )
    const stop = StopCondition.any(...conditions)

    let merge: Resolved<D, T, O>["merge"]
    if (config.merge !== undefined && config.merge !== false) {
      const m = config.merge === true ? {} : config.merge
      yield* optionalPositiveInt(m.overlapFloor, "merge.overlapFloor")
      yield* optionalPositiveInt(m.subsampleSize, "merge.subsampleSize")
      yield* optionalNonNegativeInt(m.maxInvocations, "merge.maxInvocations")
      merge = { maxInvocations: m.maxInvocations ?? 5, overlapFloor: m.overlapFloor ?? 5, subsampleSize: m.subsampleSize ?? 5 }
    }

    const policy = config.evaluationPolicy === undefined || config.evaluationPolicy === "full"
      ? EvaluationPolicy.full
      : typeof config.evaluationPolicy === "function"
      ? config.evaluationPolicy
      : yield* construct("evaluationPolicy.incremental", () =>
        EvaluationPolicy.incremental((config.evaluationPolicy as { readonly incremental: number }).incremental))
    const accept = config.acceptance === undefined || config.acceptance === "strict_improvement"
      ? Acceptance.strictImprovement
      : config.acceptance === "improvement_or_equal"
      ? Acceptance.improvementOrEqual
      : config.acceptance
    const selectComponents = config.componentSelector === undefined || config.componentSelector === "round_robin"
      ? ComponentSelector.roundRobin
      : config.componentSelector === "all"
      ? ComponentSelector.all
      : config.componentSelector

    if (config.reflection !== undefined) yield* Reflection.validateConfig(config.reflection)

    const adapter = config.adapter ?? (yield* adapterTag<D, T, O>())
    const proposer = adapter.proposeNewTexts ?? config.proposer
    const reflectionModel = config.reflectionModel ??
      (proposer === undefined ? Option.getOrUndefined(yield* Effect.serviceOption(ReflectionModel)) : undefined)
    yield* check(
      proposer !== undefined || reflectionModel !== undefined,
      "reflectionModel",
      "no way to propose new texts: give reflectionModel (or provide ReflectionModel), a proposer, or an adapter with proposeNewTexts"
    )

    const train = DataLoader.ensure(config.trainset, "trainset")
    const val = config.valset === undefined ? train : DataLoader.ensure(config.valset, "valset")
    const trainIds = yield* train.ids
    const valIds = yield* val.ids
    yield* check(trainIds.length > 0, "trainset", "is empty")
    yield* check(valIds.length > 0, "valset", "is empty")
    const budget = stop.budget
    yield* check(
      budget === undefined || budget >= valIds.length,
      "maxMetricCalls",
      `the budget (${budget}) is smaller than the validation set (${valIds.length} examples), which the seed candidate must be scored on`
    )

    return {
      config,
      adapter,
      reflectionModel,
      proposer,
      train,
      val,
      trainIds,
      valIds,
      budget,
      stop,
      minibatchSize: config.minibatchSize ?? 3,
      parallelProposals: config.parallelProposals ?? 1,
      selectCandidate: yield* resolveSelector(config.candidateSelector as Config<unknown>["candidateSelector"]),
      selectComponents,
      policy,
      accept,
      merge,
      skipPerfect: config.skipPerfectScore ?? true,
      perfectScore: config.perfectScore ?? 1,
      maxFailedIterations: config.maxConsecutiveFailedIterations ?? 5,
      trackBestOutputs: config.trackBestOutputs ?? true
    }
  })

/** Checks that a saved state belongs to this configuration. */
const checkResume = (
  state: State.GepaState,
  r: Resolved<unknown, unknown, unknown>
): Effect.Effect<void, ResumeConflict> => {
  const conflict = (field: string, saved: string, requested: string) =>
    Effect.fail(new ResumeConflict({ field, saved, requested }))
  const seedNames = Object.keys(r.config.seedCandidate).sort()
  const savedNames = [...state.componentNames].sort()
  if (seedNames.join("\u0000") !== savedNames.join("\u0000")) {
    return conflict("seedCandidate", `components [${savedNames.join(", ")}]`, `components [${seedNames.join(", ")}]`)
  }
  for (const name of seedNames) {
    if (state.candidates[0]?.[name] !== r.config.seedCandidate[name]) {
      return conflict(`seedCandidate.${name}`, "a different seed text", "this seed text")
    }
  }
  const frontierType = r.config.frontierType ?? "instance"
  if (state.frontierType !== frontierType) return conflict("frontierType", state.frontierType, frontierType)
  const savedVal = new Set<string>()
  for (const scores of state.valScores) for (const id in scores) savedVal.add(id)
  const valSet = new Set(r.valIds)
  const unknownVal = [...savedVal].find((id) => !valSet.has(id))
  if (unknownVal !== undefined) {
    return conflict("valset", `contains example id "${unknownVal}"`, `${r.valIds.length} examples without that id`)
  }
  if (state.sampler.trainSize !== 0 && state.sampler.trainSize !== r.trainIds.length) {
    return conflict("trainset", `${state.sampler.trainSize} examples`, `${r.trainIds.length} examples`)
  }
  const trainSet = new Set(r.trainIds)
  const unknownTrain = state.sampler.order.find((id) => !trainSet.has(id))
  if (unknownTrain !== undefined) {
    return conflict("trainset", `contains example id "${unknownTrain}"`, `${r.trainIds.length} examples without that id`)
  }
  return Effect.void
}

const describeError = (e: unknown): string => (e instanceof Error ? e.message : String(e))

interface Tally {
  evaluated: number
  failed: number
  lastError: string | undefined
}

/**
 * One run. `extraEmit` receives events in addition to the config's
 * `onEvent` (used by `Gepa.stream`).
 */
export const run = <D, T, O>(
  config: Config<D, T, O>,
  extraEmit: Emit | undefined
): Effect.Effect<OptimizeResult<O>, OptimizeError, AdapterService<D, T, O> | ReflectionModel | Scope.Scope> =>
  Effect.gen(function*() {
    const r = yield* resolve(config)
    const store: RunStore<O> | undefined = config.store !== undefined
      ? yield* config.store
      : config.runDir !== undefined
      ? yield* RunDir.make<O>(config.runDir, {
        // a cache object of the caller's own replaces the persistent one
        cache: config.cache === undefined || config.cache === true,
        trackBestOutputs: r.trackBestOutputs
      })
      : undefined
    const cache: EvaluationCache.EvaluationCache<O> | undefined = config.cache === false
      ? undefined
      : typeof config.cache === "object"
      ? config.cache
      : store?.cache ?? EvaluationCache.memory<O>()

    const emit: Emit = (event) =>
      Effect.gen(function*() {
        if (config.onEvent !== undefined) {
          const out = config.onEvent(event)
          if (Effect.isEffect(out)) yield* out
        }
        if (store?.onEvent !== undefined) yield* store.onEvent(event)
        if (extraEmit !== undefined) yield* extraEmit(event)
      })

    const semaphore = yield* Effect.makeSemaphore(config.maxConcurrency ?? 8)
    const pool: Pool<D, T, O> = {
      adapter: r.adapter,
      withPermit: semaphore.withPermits(1),
      chunkSize: config.chunkSize ?? 1,
      timeout: config.evaluationTimeout === undefined ? undefined : Duration.decode(config.evaluationTimeout),
      retry: config.evaluationRetry,
      cache,
      fallbackScore: config.fallbackScore ?? 0
    }
    const stopCheck = yield* r.stop.make
    const bestOutputs: Record<string, { candidate: number; output: O; score: number }> = {}

    const recordBest = (candidate: number, outcomes: ReadonlyArray<Outcome<T, O>>) => {
      if (!r.trackBestOutputs) return
      for (const o of outcomes) {
        if (Option.isNone(o.output)) continue
        const prev = bestOutputs[o.id]
        if (prev === undefined || o.score > prev.score) bestOutputs[o.id] = { candidate, output: o.output.value, score: o.score }
      }
    }

    /** Runs an evaluation and reports it. */
    const runEvaluation = (
      iteration: number,
      purpose: EvaluationPurpose,
      candidate: Candidate.Candidate,
      loader: DataLoader.DataLoader<D>,
      ids: ReadonlyArray<string>,
      captureTraces: boolean,
      tally: Tally,
      call: string
    ) =>
      Effect.gen(function*() {
        yield* emit(GepaEvent.EvaluationStarted({ iteration, purpose, size: ids.length }))
        const result = yield* evaluate(pool, candidate, {
          loader: loader as DataLoader.DataLoader<unknown>,
          ids,
          split: purpose === "parent-minibatch" || purpose === "child-minibatch" ? "train" : "val",
          captureTraces,
          call
        })
        let failures = 0
        for (const o of result.outcomes) {
          if (o.error !== undefined) {
            failures++
            tally.lastError = o.error
            yield* emit(GepaEvent.ExampleFailed({ iteration, purpose, id: o.id, error: o.error }))
          }
        }
        tally.evaluated += result.spent
        tally.failed += result.outcomes.filter((o) => o.error !== undefined && !o.cached).length
        yield* Metric.incrementBy(metricCallsCounter, result.spent)
        yield* emit(GepaEvent.EvaluationEnded({
          iteration,
          purpose,
          scores: result.outcomes.map((o) => o.score),
          failures,
          cacheHits: result.outcomes.filter((o) => o.cached).length
        }))
        return result
      }).pipe(Effect.withSpan("gepa.evaluate", { attributes: { purpose, size: ids.length }, captureStackTrace: false }))

    const valsetOf = (outcomes: ReadonlyArray<Outcome<T, O>>): State.ValsetEvaluation => {
      const scores: Record<string, number> = {}
      for (const o of outcomes) scores[o.id] = o.score
      const withObjectives = outcomes.filter((o) => o.objectiveScores !== undefined)
      return withObjectives.length === 0
        ? { scores }
        : { scores, objectiveScores: Object.fromEntries(withObjectives.map((o) => [o.id, o.objectiveScores!])) }
    }

    // ---- start: resume or score the seed ----
    const loaded = store === undefined ? Option.none<State.GepaState>() : yield* store.load
    let state: State.GepaState
    if (Option.isSome(loaded)) {
      yield* checkResume(loaded.value, r as unknown as Resolved<unknown, unknown, unknown>)
      state = loaded.value
      yield* emit(GepaEvent.OptimizationStarted({ resumed: true, trainSize: r.trainIds.length, valSize: r.valIds.length, budget: r.budget }))
    } else {
      yield* emit(GepaEvent.OptimizationStarted({ resumed: false, trainSize: r.trainIds.length, valSize: r.valIds.length, budget: r.budget }))
      const tally: Tally = { evaluated: 0, failed: 0, lastError: undefined }
      const seedEval = yield* runEvaluation(0, "seed-validation", config.seedCandidate, r.val, r.valIds, false, tally, "evaluate(seed candidate, valset)")
      recordBest(0, seedEval.outcomes)
      state = yield* Either.match(
        State.initial({
          seed: config.seed ?? 0,
          seedCandidate: config.seedCandidate,
          frontierType: config.frontierType ?? "instance",
          valset: valsetOf(seedEval.outcomes),
          metricCalls: seedEval.spent
        }),
        { onLeft: Effect.fail, onRight: Effect.succeed }
      )
      if (tally.evaluated > 0 && tally.failed === tally.evaluated) {
        return yield* Effect.fail(new AllEvaluationsFailed({ iterations: 0, lastError: tally.lastError ?? "unknown" }))
      }
      yield* emit(GepaEvent.ValsetEvaluated({ iteration: 0, candidate: 0, score: state.valAverages[0]!, coverage: state.valCoverage[0]! }))
      yield* emit(GepaEvent.BudgetUpdated({ metricCalls: state.metricCalls, budget: r.budget }))
      if (store !== undefined) {
        yield* store.save(state)
        yield* emit(GepaEvent.StateSaved({ iteration: 0, path: store.location }))
      }
    }

    const remaining = (reserved: number) =>
      r.budget === undefined ? Number.POSITIVE_INFINITY : r.budget - state.metricCalls - reserved

    /** Validation of accepted candidates: ids chosen and budget reserved in order, evaluated concurrently. */
    const validate = (
      iteration: number,
      children: ReadonlyArray<Candidate.Candidate>,
      rng: Rng,
      tally: Tally
    ) =>
      Effect.gen(function*() {
        let reserved = 0
        const plans: Array<ReadonlyArray<string> | undefined> = []
        for (const _ of children) {
          const ids = r.policy(state, r.valIds, rng)
          if (ids.length <= remaining(reserved)) {
            reserved += ids.length
            plans.push(ids)
          } else plans.push(undefined)
        }
        return yield* Effect.forEach(children, (child, i) =>
          plans[i] === undefined
            ? Effect.succeed(undefined)
            : runEvaluation(iteration, "validation", child, r.val, plans[i]!, false, tally, "evaluate(new candidate, valset)"), {
          concurrency: "unbounded"
        })
      })

    /** Adds a validated candidate to the state and reports it. */
    const addValidated = (
      iteration: number,
      child: Candidate.Candidate,
      parents: ReadonlyArray<number>,
      outcomes: ReadonlyArray<Outcome<T, O>>,
      discoveryBudget: number
    ) =>
      Effect.gen(function*() {
        const [next, idx] = yield* Either.match(
          State.addCandidate(state, { candidate: child, parents, valset: valsetOf(outcomes), discoveryBudget }),
          { onLeft: (e: MissingObjectiveScores) => Effect.fail(e), onRight: Effect.succeed }
        )
        state = next
        recordBest(idx, outcomes)
        yield* emit(GepaEvent.ValsetEvaluated({ iteration, candidate: idx, score: state.valAverages[idx]!, coverage: state.valCoverage[idx]! }))
        const joined = Object.values(state.fronts.instance.programs).filter((ps) => ps.includes(idx)).length
        yield* emit(GepaEvent.ParetoFrontUpdated({ iteration, candidate: idx, frontsJoined: joined }))
        return idx
      })

    // ---- merge step ----
    const mergeStep = (iteration: number, rng: Rng, tally: Tally) =>
      Effect.gen(function*() {
        const m = r.merge!
        const score = State.scoreOf(state)
        const dominators = Pareto.dominators(State.frontSets(state), score)
        const input: Merge.MergeInput = {
          candidates: state.candidates,
          componentNames: state.componentNames,
          parents: state.parents,
          scores: state.candidates.map((_, i) => score(i)),
          merge: state.merge
        }
        const hasOverlap = (i: number, j: number) => {
          let n = 0
          const sj = state.valScores[j]!
          for (const id in state.valScores[i]!) if (id in sj) n++
          return n >= m.overlapFloor
        }
        const attempt = Merge.propose(input, dominators, hasOverlap, rng)
        if (attempt === undefined) return false
        const ids = Merge.subsample(state.valScores[attempt.id1]!, state.valScores[attempt.id2]!, m.subsampleSize, rng)
        state = { ...state, merge: attempt.merge }
        const parents = [attempt.id1, attempt.id2]
        if (ids.length === 0 || new Set(ids).size > remaining(0)) return false
        yield* emit(GepaEvent.MergeAttempted({ iteration, parents, ancestor: attempt.ancestor }))
        const ev = yield* runEvaluation(iteration, "merge-subsample", attempt.candidate, r.val, ids, false, tally, "evaluate(merged candidate, valset subsample)")
        state = { ...state, metricCalls: state.metricCalls + ev.spent }
        const after = ev.outcomes.map((o) => o.score)
        const before1 = sum(ids.map((id) => state.valScores[attempt.id1]![id]!))
        const before2 = sum(ids.map((id) => state.valScores[attempt.id2]![id]!))
        const base: State.TraceEntry = {
          iteration,
          kind: "merge",
          parents,
          outcome: "rejected",
          subsampleIds: ids,
          scoresBefore: [before1, before2],
          scoresAfter: after,
          metricCalls: state.metricCalls
        }
        if (sum(after) >= Math.max(before1, before2)) {
          const discovery = state.metricCalls
          const [val] = yield* validate(iteration, [attempt.candidate], rng, tally)
          if (val !== undefined) {
            state = { ...state, metricCalls: state.metricCalls + val.spent }
            const idx = yield* addValidated(iteration, attempt.candidate, parents, val.outcomes, discovery)
            state = {
              ...state,
              merge: Merge.recordAttempt(state.merge, true),
              trace: [...state.trace, { ...base, outcome: "accepted", candidate: idx, metricCalls: state.metricCalls }]
            }
            yield* emit(GepaEvent.MergeAccepted({ iteration, candidate: idx, parents }))
            yield* emit(GepaEvent.CandidateAccepted({ iteration, candidate: idx, parents, score: state.valAverages[idx]!, components: attempt.candidate }))
            return true
          }
          state = {
            ...state,
            merge: Merge.recordAttempt(state.merge, false),
            trace: [...state.trace, { ...base, outcome: "skipped", reason: "budget exhausted before validation", metricCalls: state.metricCalls }]
          }
          yield* emit(GepaEvent.MergeRejected({ iteration, parents, reason: "budget exhausted before validation" }))
          return true
        }
        const reason = `merged subsample score ${sum(after)} is below both parents (${before1}, ${before2})`
        state = {
          ...state,
          merge: Merge.recordAttempt(state.merge, false),
          trace: [...state.trace, { ...base, reason }]
        }
        yield* emit(GepaEvent.MergeRejected({ iteration, parents, reason }))
        return true
      }).pipe(Effect.withSpan("gepa.merge", { captureStackTrace: false }))

    // ---- reflective proposal (runs concurrently with its siblings) ----
    interface Plan {
      readonly parent: number
      readonly ids: ReadonlyArray<string>
      readonly components: ReadonlyArray<string>
    }

    const proposeTexts = (
      parent: Candidate.Candidate,
      dataset: ReflectiveDataset,
      components: ReadonlyArray<string>,
      usage: Usage
    ): Effect.Effect<Either.Either<{ readonly texts: Readonly<Record<string, string>>; readonly skipped: ReadonlyArray<string> }, string>> =>
      Effect.gen(function*() {
        if (r.proposer !== undefined) {
          const texts = yield* r.proposer(parent, dataset, components).pipe(Effect.mapError(describeError), Effect.either)
          return Either.map(texts, (t) => ({ texts: t, skipped: [] }))
        }
        const proposals = yield* Reflection.proposeAll(r.reflectionModel!, parent, dataset, components, config.reflection ?? {}).pipe(
          Effect.mapError(describeError),
          Effect.either
        )
        if (Either.isLeft(proposals)) return Either.left(proposals.left)
        const texts: Record<string, string> = {}
        const skipped: Array<string> = []
        for (const p of proposals.right) {
          const completion = p.completion
          if (completion !== undefined) {
            usage.calls++
            usage.inputTokens += completion.usage?.inputTokens ?? 0
            usage.outputTokens += completion.usage?.outputTokens ?? 0
            usage.cost += completion.cost ?? 0
          }
          if (p._tag === "Proposed") texts[p.component] = p.text
          else skipped.push(`${p.component}: ${p.reason}`)
        }
        return Either.right({ texts, skipped })
      })

    const reflect = (iteration: number, plan: Plan, parentCandidate: Candidate.Candidate, tally: Tally, usage: Usage) =>
      Effect.gen(function*() {
        const { parent, ids, components } = plan
        const kind = "reflective" as const
        yield* emit(GepaEvent.ProposalStarted({ iteration, parent, components }))
        const parentEval = yield* runEvaluation(
          iteration,
          "parent-minibatch",
          parentCandidate,
          r.train,
          ids,
          true,
          tally,
          `evaluate(candidate ${parent}, minibatch, captureTraces)`
        )
        let spent = parentEval.spent
        const before = parentEval.outcomes.map((o) => o.score)
        const ok = parentEval.outcomes.filter((o) => o.error === undefined)
        if (ok.length === 0) {
          const error = parentEval.outcomes[0]?.error ?? "no example evaluated"
          return [ProposalResult.Failed({ kind, parents: [parent], error: `every minibatch evaluation failed: ${error}`, allEvaluationsFailed: true }), spent] as const
        }
        if (r.skipPerfect && before.every((s) => s >= r.perfectScore)) {
          yield* emit(GepaEvent.EvaluationSkipped({ iteration, candidate: parent, reason: "all minibatch scores are perfect" }))
          return [ProposalResult.Skipped({ kind, parents: [parent], reason: "all minibatch scores are perfect" }), spent] as const
        }
        const batch = {
          outputs: ok.map((o) => Option.getOrThrow(o.output)),
          scores: ok.map((o) => o.score),
          trajectories: ok.map((o) => Option.getOrThrow(o.trajectory)),
          objectiveScores: ok.every((o) => o.objectiveScores !== undefined) ? ok.map((o) => o.objectiveScores!) : undefined
        }
        const built = yield* Effect.either(r.adapter.makeReflectiveDataset(parentCandidate, batch, components))
        if (Either.isLeft(built)) {
          return [ProposalResult.Failed({ kind, parents: [parent], error: describeError(built.left), allEvaluationsFailed: false }), spent] as const
        }
        const failures = parentEval.outcomes.filter((o) => o.error !== undefined)
        const dataset: Record<string, ReadonlyArray<ReflectiveRecord>> = {}
        for (const component of components) {
          const records = built.right[component]
          if (!Array.isArray(records)) {
            return yield* Effect.fail(new AdapterContractError({
              call: "makeReflectiveDataset",
              detail: `no record list for component "${component}"`
            }))
          }
          // failed examples still teach something: the reflection sees the error
          dataset[component] = [
            ...records,
            ...failures.map((f): ReflectiveRecord => ({
              "Example": f.id,
              "Feedback": `The system failed on this example before producing an output: ${f.error}`
            }))
          ]
        }
        yield* emit(GepaEvent.ReflectiveDatasetBuilt({ iteration, components, records: sum(components.map((c) => dataset[c]!.length)) }))
        const proposed = yield* proposeTexts(parentCandidate, dataset, components, usage).pipe(Effect.withSpan("gepa.reflect", { captureStackTrace: false }))
        if (Either.isLeft(proposed)) {
          return [ProposalResult.Failed({ kind, parents: [parent], error: proposed.left, allEvaluationsFailed: false }), spent] as const
        }
        const unknown = Object.keys(proposed.right.texts).find((k) => !(k in parentCandidate))
        if (unknown !== undefined) {
          return yield* Effect.fail(new AdapterContractError({
            call: "proposeNewTexts",
            detail: `returned text for unknown component "${unknown}"`
          }))
        }
        const child = { ...parentCandidate, ...proposed.right.texts }
        if (Candidate.equals(child, parentCandidate)) {
          const reason = proposed.right.skipped.length > 0
            ? `no new text adopted (${proposed.right.skipped.join("; ")})`
            : "the proposal did not change any component"
          return [ProposalResult.Skipped({ kind, parents: [parent], reason }), spent] as const
        }
        const childEval = yield* runEvaluation(
          iteration,
          "child-minibatch",
          child,
          r.train,
          ids,
          false,
          tally,
          `evaluate(child of candidate ${parent}, minibatch)`
        )
        spent += childEval.spent
        const after = childEval.outcomes.map((o) => o.score)
        const fields = {
          kind,
          candidate: child,
          parents: [parent],
          components: Candidate.changedComponents(parentCandidate, child),
          subsampleIds: ids,
          scoresBefore: before,
          scoresAfter: after
        }
        return [r.accept(before, after) ? ProposalResult.Accepted(fields) : ProposalResult.Rejected(fields), spent] as const
      }).pipe(Effect.withSpan("gepa.propose", { attributes: { parent: plan.parent }, captureStackTrace: false }))

    // ---- the loop ----
    let stopReason = ""
    for (;;) {
      const snap = StopCondition.snapshot(state)
      if (yield* stopCheck(snap)) {
        stopReason = `stop condition met: ${r.stop.name}`
        break
      }
      if (store?.stopRequested !== undefined && (yield* store.stopRequested)) {
        stopReason = "stop requested (stop file)"
        break
      }
      // a reflective proposal may need a parent and a child minibatch evaluation
      if (remaining(0) < 2 * r.minibatchSize) {
        stopReason = `budget exhausted: ${remaining(0)} metric calls left, a proposal needs up to ${2 * r.minibatchSize}`
        break
      }

      const iteration = state.iteration + 1
      state = { ...state, iteration }
      yield* emit(GepaEvent.IterationStarted({ iteration, metricCalls: state.metricCalls }))
      const rng = Rng.fromState(state.rng)
      const tally: Tally = { evaluated: 0, failed: 0, lastError: undefined }
      const usage: Usage = { calls: 0, inputTokens: 0, outputTokens: 0, cost: 0 }
      let acceptedCount = 0

      const iterationEffect = Effect.gen(function*() {
        if (r.merge !== undefined && Merge.isDue(state.merge, r.merge.maxInvocations)) {
          const handled = yield* mergeStep(iteration, rng, tally)
          if (handled) {
            if (state.trace.at(-1)?.outcome === "accepted") acceptedCount++
            return
          }
        }
        if (r.merge !== undefined) state = { ...state, merge: { ...state.merge, lastIterFoundNew: false } }

        // plan: sequential draws, worst-case budget reserved per proposal
        const plans: Array<Plan> = []
        let reserved = 0
        let nextComponent = state.nextComponent
        for (let p = 0; p < r.parallelProposals; p++) {
          if (remaining(reserved) < 2 * r.minibatchSize) break
          const parent = r.selectCandidate(state, rng)
          yield* emit(GepaEvent.CandidateSelected({ iteration, candidate: parent, score: State.scoreOf(state)(parent) }))
          const [ids, sampler] = BatchSampler.next(state.sampler, r.trainIds, r.minibatchSize, rng)
          yield* emit(GepaEvent.MinibatchSampled({ iteration, ids }))
          const selection = r.selectComponents({
            state: { ...state, nextComponent, sampler },
            candidateIdx: parent,
            candidate: state.candidates[parent]!,
            iteration,
            rng
          })
          if (selection.nextPointer !== undefined) {
            nextComponent = nextComponent.map((v, i) => (i === parent ? selection.nextPointer! : v))
          }
          state = { ...state, sampler, nextComponent }
          reserved += 2 * r.minibatchSize
          plans.push({ parent, ids, components: selection.components })
        }
        if (plans.length === 0) return

        const candidatesAtPlan = state.candidates
        const results = yield* Effect.forEach(
          plans,
          (plan) => reflect(iteration, plan, candidatesAtPlan[plan.parent]!, tally, usage),
          { concurrency: r.parallelProposals }
        )
        const spent = sum(results.map(([, s]) => s))
        state = { ...state, metricCalls: state.metricCalls + spent }

        const acceptedChildren = results.flatMap(([res]) => (res._tag === "Accepted" ? [res.candidate] : []))
        const discovery = state.metricCalls
        const validations = yield* validate(iteration, acceptedChildren, rng, tally)
        state = { ...state, metricCalls: state.metricCalls + sum(validations.map((v) => v?.spent ?? 0)) }

        let v = 0
        for (const [result] of results) {
          const entry = { iteration, kind: "reflective" as const, parents: result.parents, metricCalls: state.metricCalls }
          yield* ProposalResult.$match(result, {
            Accepted: (a) =>
              Effect.gen(function*() {
                const val = validations[v++]
                if (val === undefined) {
                  state = { ...state, trace: [...state.trace, { ...entry, outcome: "skipped", reason: "budget exhausted before validation" }] }
                  yield* emit(GepaEvent.ProposalEnded({ iteration, parent: a.parents[0]!, outcome: "skipped", reason: "budget exhausted before validation" }))
                  return
                }
                const idx = yield* addValidated(iteration, a.candidate, a.parents, val.outcomes, discovery)
                acceptedCount++
                state = {
                  ...state,
                  acceptedProposals: state.acceptedProposals + 1,
                  merge: r.merge === undefined ? state.merge : Merge.schedule(state.merge, r.merge.maxInvocations),
                  trace: [...state.trace, {
                    ...entry,
                    outcome: "accepted",
                    candidate: idx,
                    components: a.components,
                    subsampleIds: a.subsampleIds,
                    scoresBefore: a.scoresBefore,
                    scoresAfter: a.scoresAfter
                  }]
                }
                yield* Metric.increment(acceptedCounter)
                yield* emit(GepaEvent.CandidateAccepted({ iteration, candidate: idx, parents: a.parents, score: state.valAverages[idx]!, components: a.candidate }))
                yield* emit(GepaEvent.ProposalEnded({ iteration, parent: a.parents[0]!, outcome: "accepted" }))
              }),
            Rejected: (rej) =>
              Effect.gen(function*() {
                state = {
                  ...state,
                  rejectedProposals: state.rejectedProposals + 1,
                  trace: [...state.trace, {
                    ...entry,
                    outcome: "rejected",
                    components: rej.components,
                    subsampleIds: rej.subsampleIds,
                    scoresBefore: rej.scoresBefore,
                    scoresAfter: rej.scoresAfter
                  }]
                }
                yield* Metric.increment(rejectedCounter)
                yield* emit(GepaEvent.CandidateRejected({ iteration, parents: rej.parents, before: sum(rej.scoresBefore), after: sum(rej.scoresAfter) }))
                yield* emit(GepaEvent.ProposalEnded({ iteration, parent: rej.parents[0]!, outcome: "rejected" }))
              }),
            Skipped: (s) =>
              Effect.gen(function*() {
                state = { ...state, trace: [...state.trace, { ...entry, outcome: "skipped", reason: s.reason }] }
                yield* emit(GepaEvent.ProposalEnded({ iteration, parent: s.parents[0]!, outcome: "skipped", reason: s.reason }))
              }),
            Failed: (f) =>
              Effect.gen(function*() {
                state = { ...state, trace: [...state.trace, { ...entry, outcome: "failed", reason: f.error }] }
                yield* emit(GepaEvent.Error({ iteration, message: f.error, willContinue: true }))
                yield* emit(GepaEvent.ProposalEnded({ iteration, parent: f.parents[0]!, outcome: "failed", reason: f.error }))
              })
          })
        }
      })

      yield* iterationEffect.pipe(Effect.withSpan("gepa.iteration", { attributes: { iteration }, captureStackTrace: false }))

      const allFailed = tally.evaluated > 0 && tally.failed === tally.evaluated
      state = {
        ...state,
        rng: rng.snapshot(),
        reflectionCalls: state.reflectionCalls + usage.calls,
        reflectionUsage: {
          inputTokens: state.reflectionUsage.inputTokens + usage.inputTokens,
          outputTokens: state.reflectionUsage.outputTokens + usage.outputTokens,
          cost: state.reflectionUsage.cost + usage.cost
        },
        consecutiveFailedIterations: allFailed ? state.consecutiveFailedIterations + 1 : 0
      }
      yield* emit(GepaEvent.BudgetUpdated({ metricCalls: state.metricCalls, budget: r.budget }))
      if (store !== undefined) {
        yield* store.save(state)
        yield* emit(GepaEvent.StateSaved({ iteration, path: store.location }))
      }
      yield* emit(GepaEvent.IterationEnded({ iteration, accepted: acceptedCount, state }))
      if (state.consecutiveFailedIterations >= r.maxFailedIterations) {
        return yield* Effect.fail(new AllEvaluationsFailed({
          iterations: state.consecutiveFailedIterations,
          lastError: tally.lastError ?? "unknown"
        }))
      }
    }

    if (store?.finish !== undefined) yield* store.finish(state, stopReason)
    const result = Result.fromState(state, stopReason)
    yield* emit(GepaEvent.OptimizationEnded({ result }))
    const outputs: Record<string, { candidate: number; output: O }> = {}
    for (const [id, b] of Object.entries(bestOutputs)) outputs[id] = { candidate: b.candidate, output: b.output }
    return { ...result, state, bestOutputs: outputs }
  })
