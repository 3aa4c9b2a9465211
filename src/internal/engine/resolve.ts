/**
 * Resolving a run's configuration: every check and default in one place, so
 * the loop starts from a complete, validated `Resolved` and never re-reads
 * the raw config. Also the check that a saved state belongs to this
 * configuration.
 *
 * @internal
 */
import { Effect, Option } from "effect"
import * as Acceptance from "../../Acceptance.js"
import { type Adapter, type AdapterService, tag as adapterTag } from "../../Adapter.js"
import * as CandidateSelector from "../../CandidateSelector.js"
import * as ComponentSelector from "../../ComponentSelector.js"
import * as DataLoader from "../../DataLoader.js"
import { ConfigError, ResumeConflict } from "../../Errors.js"
import * as EvaluationPolicy from "../../EvaluationPolicy.js"
import * as Fingerprint from "../../Fingerprint.js"
import type { Config } from "../../Gepa.js"
import { type LanguageModel, ReflectionModel } from "../../LanguageModel.js"
import type { Proposer } from "../../Proposal.js"
import * as Reflection from "../../Reflection.js"
import type * as State from "../../State.js"
import * as StopCondition from "../../StopCondition.js"
import { instrumentModel } from "../../Telemetry.js"

/** @internal */
export interface Resolved<D, T, O> {
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
  /** steps in flight at once (the pipeline depth) */
  readonly parallelProposals: number
  /** reflective proposals planned together as one step */
  readonly proposalsPerStep: number
  /** how a step picks its parents */
  readonly proposalSampling: "independent" | "same_parent"
  /** which accepted children of a step are validated */
  readonly proposalSelection: "best" | "all" | { readonly topK: number }
  /** judge a child on its parent's unsolved examples first (see `early.ts`) */
  readonly earlyRejection: boolean
  /** fold results in plan order (reproducible) or as they complete */
  readonly foldOrder: "plan" | "completion"
  readonly maxConcurrency: number
  readonly selectCandidate: CandidateSelector.CandidateSelector
  readonly selectComponents: ComponentSelector.ComponentSelector
  readonly policy: EvaluationPolicy.EvaluationPolicy
  readonly accept: Acceptance.AcceptanceCriterion
  readonly merge: { readonly maxInvocations: number; readonly overlapFloor: number; readonly subsampleSize: number } | undefined
  readonly skipPerfect: boolean
  readonly perfectScore: number
  readonly maxFailedIterations: number
  /** unusable reflection answers in a row that stop the run */
  readonly maxUnusableAnswers: number
  /** the run's tally of unusable reflection answers in a row (not persisted: a resumed run starts afresh) */
  readonly unusable: { streak: number }
  readonly trackBestOutputs: boolean
  /** content hashes of the examples and the meaning-changing settings */
  readonly fingerprint: Fingerprint.RunFingerprint
  /** example id -> content hash, per split: the evaluation cache's example keys */
  readonly exampleKeys: { readonly train: ReadonlyMap<string, string>; readonly val: ReadonlyMap<string, string> }
}

/**
 * The defaults of the algorithm's settings that concern proposals. They are
 * algorithm settings, never derived from `maxConcurrency`: concurrency is an
 * execution resource, and the same seed and settings give the same result at
 * any concurrency. Chosen by measurement (bench/ "concurrency": held-out
 * score per budget over 10 seeds, and wall time when calls are slow).
 *
 * @internal
 */
export const proposalDefaults = {
  parallelProposals: 1,
  proposalsPerStep: 1,
  proposalSampling: "independent",
  proposalSelection: "best"
} as const

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

/** @internal */
export const resolve = <D, T, O>(
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
    yield* optionalPositiveInt(config.proposalsPerStep, "proposalsPerStep")
    yield* check(
      config.proposalSampling === undefined || config.proposalSampling === "independent" || config.proposalSampling === "same_parent",
      "proposalSampling",
      `expected "independent" or "same_parent", got ${String(config.proposalSampling)}`
    )
    const selection = config.proposalSelection
    yield* check(
      selection === undefined || selection === "best" || selection === "all" ||
        (typeof selection === "object" && selection !== null && isPositiveInt(selection.topK)),
      "proposalSelection",
      `expected "best", "all" or { topK: a positive integer }, got ${
        typeof selection === "object" ? Fingerprint.stableStringify(selection) : String(selection)
      }`
    )
    yield* check(
      config.foldOrder === undefined || config.foldOrder === "plan" || config.foldOrder === "completion",
      "foldOrder",
      `expected "plan" or "completion", got ${String(config.foldOrder)}`
    )
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
    const givenModel = config.reflectionModel ??
      (proposer === undefined ? Option.getOrUndefined(yield* Effect.serviceOption(ReflectionModel)) : undefined)
    // [TELEMETRY HOOK] a span and the model metrics per reflection call
    // (a model already instrumented by its layer is kept as is)
    const reflectionModel = givenModel === undefined || config.telemetry === false
      ? givenModel
      : instrumentModel(givenModel, { role: "reflection" })
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

    const minibatchSize = config.minibatchSize ?? 3
    const maxConcurrency = config.maxConcurrency ?? 8
    const parallelProposals = config.parallelProposals ?? proposalDefaults.parallelProposals
    const proposalsPerStep = config.proposalsPerStep ?? proposalDefaults.proposalsPerStep
    const proposalSampling = config.proposalSampling ?? proposalDefaults.proposalSampling
    const proposalSelection = config.proposalSelection ?? proposalDefaults.proposalSelection
    const foldOrder = config.foldOrder ?? "plan"
    // every example is hashed once, at the start: the hashes key the cache and
    // are checked on resume
    const hashData = (loader: DataLoader.DataLoader<D>, ids: ReadonlyArray<string>) =>
      Effect.flatMap(loader.fetch(ids), (examples) =>
        // a loader that breaks its contract would attach hashes to the wrong ids
        examples.length === ids.length
          ? Effect.succeed<Fingerprint.DataFingerprint>({ ids, hashes: examples.map(Fingerprint.exampleHash) })
          : Effect.fail(
            new DataLoader.DataLoaderError({ loader: loader.name, detail: `fetch returned ${examples.length} examples for ${ids.length} ids` })
          ))
    const trainPrint = yield* hashData(train, trainIds)
    const valPrint = val === train ? trainPrint : yield* hashData(val, valIds)
    const keysOf = (p: Fingerprint.DataFingerprint) => new Map(p.ids.map((id, i) => [id, p.hashes[i]!] as const))
    const trainKeys = keysOf(trainPrint)
    const fingerprint: Fingerprint.RunFingerprint = {
      settings: settingsOf(config, { minibatchSize, parallelProposals, foldOrder, merge, proposalsPerStep, proposalSampling, proposalSelection }),
      trainset: trainPrint,
      valset: valPrint
    }
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
      minibatchSize,
      parallelProposals,
      proposalsPerStep,
      proposalSampling,
      proposalSelection,
      earlyRejection: config.earlyRejection ?? true,
      foldOrder,
      maxConcurrency,
      selectCandidate: yield* resolveSelector(config.candidateSelector as Config<unknown>["candidateSelector"]),
      selectComponents,
      policy,
      accept,
      merge,
      skipPerfect: config.skipPerfectScore ?? true,
      perfectScore: config.perfectScore ?? 1,
      maxFailedIterations: config.maxConsecutiveFailedIterations ?? 5,
      maxUnusableAnswers: config.reflection?.maxUnusableAnswers ?? Reflection.defaultMaxUnusableAnswers,
      unusable: { streak: 0 },
      trackBestOutputs: config.trackBestOutputs ?? true,
      fingerprint,
      exampleKeys: { train: trainKeys, val: val === train ? trainKeys : keysOf(valPrint) }
    }
  })

/** A setting as text: a name or plain options as they are, a function as "custom". */
const named = (setting: unknown, fallback: string): string =>
  setting === undefined
    ? fallback
    : typeof setting === "function"
    ? "custom"
    : typeof setting === "string"
    ? setting
    : Fingerprint.stableStringify(setting)

/**
 * The settings that change what a run computes: its random draws, what it
 * evaluates and when, what it accepts, and the order results are folded in.
 * Budget, stop conditions, models, timeouts, retries and concurrency may
 * change between a stop and a resume.
 */
const settingsOf = <D, T, O>(
  config: Config<D, T, O>,
  resolved: {
    readonly minibatchSize: number
    readonly parallelProposals: number
    readonly foldOrder: string
    readonly merge: Resolved<D, T, O>["merge"]
    readonly proposalsPerStep: number
    readonly proposalSampling: string
    readonly proposalSelection: Resolved<D, T, O>["proposalSelection"]
  }
): Record<string, string> => ({
  // a component's schema, as `schema.NAME`, so a changed schema is refused on resume
  ...Object.fromEntries(Object.entries(config.componentSchemas ?? {}).map(([name, d]) => [`schema.${name}`, d])),
  seed: String(config.seed ?? 0),
  minibatchSize: String(resolved.minibatchSize),
  frontierType: config.frontierType ?? "instance",
  acceptance: named(config.acceptance, "strict_improvement"),
  merge: resolved.merge === undefined ? "off" : Fingerprint.stableStringify(resolved.merge),
  evaluationPolicy: named(config.evaluationPolicy, "full"),
  candidateSelector: named(config.candidateSelector, "pareto"),
  componentSelector: named(config.componentSelector, "round_robin"),
  parallelProposals: String(resolved.parallelProposals),
  proposalsPerStep: String(resolved.proposalsPerStep),
  proposalSampling: resolved.proposalSampling,
  proposalSelection: named(resolved.proposalSelection, "best"),
  earlyRejection: String(config.earlyRejection ?? true),
  foldOrder: resolved.foldOrder,
  skipPerfectScore: String(config.skipPerfectScore ?? true),
  perfectScore: String(config.perfectScore ?? 1),
  fallbackScore: String(config.fallbackScore ?? 0)
})

/**
 * The configuration a resume continues with. Runs saved by 0.2 derived the
 * pipeline depth from `maxConcurrency` and planned one proposal per step:
 * without explicit settings, such a run continues as it was planned (these
 * settings change the schedule, and so the result).
 */
export const adoptSaved = <D, T, O>(r: Resolved<D, T, O>, state: State.GepaState): Resolved<D, T, O> => {
  const settings = state.fingerprint?.settings
  if (settings === undefined) return r
  const saved = Number(settings["parallelProposals"])
  const depth = r.config.parallelProposals !== undefined || !isPositiveInt(saved) ? r.parallelProposals : saved
  // a fingerprint without the step settings was written by 0.2: one proposal per step
  const legacy = settings["proposalsPerStep"] === undefined
  const perStep = r.config.proposalsPerStep !== undefined || !legacy ? r.proposalsPerStep : 1
  // 0.2 judged every child on its whole minibatch
  const early = r.config.earlyRejection !== undefined || !legacy ? r.earlyRejection : false
  if (depth === r.parallelProposals && perStep === r.proposalsPerStep && early === r.earlyRejection) return r
  const next = { ...r, parallelProposals: depth, proposalsPerStep: perStep, earlyRejection: early }
  const fingerprintSettings: Record<string, string> = { ...r.fingerprint.settings, parallelProposals: String(depth) }
  if (legacy) {
    delete fingerprintSettings["proposalsPerStep"]
    delete fingerprintSettings["proposalSampling"]
    delete fingerprintSettings["proposalSelection"]
    delete fingerprintSettings["earlyRejection"]
  }
  return { ...next, fingerprint: { ...r.fingerprint, settings: fingerprintSettings } }
}

/** Checks that a saved state belongs to this configuration. */
export const checkResume = (
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
  if (state.fingerprint !== undefined) {
    const setting = Fingerprint.compareSettings(state.fingerprint.settings, r.fingerprint.settings)
    if (setting !== undefined) return conflict(setting.field, setting.saved, setting.requested)
    for (const split of ["trainset", "valset"] as const) {
      const data = Fingerprint.compareData(state.fingerprint[split], r.fingerprint[split])
      if (data !== undefined) return conflict(split, data.saved, data.requested)
    }
  }
  // a typed run reads every saved component back through its schema
  const validate = r.config.validateComponent
  if (validate !== undefined) {
    for (const [i, candidate] of state.candidates.entries()) {
      for (const name of state.componentNames) {
        const problem = validate(name, candidate[name] ?? "")
        if (problem !== undefined) return conflict(`candidates[${i}].${name}`, problem, "a value its schema accepts")
      }
    }
  }
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

