/**
 * Resolving a run's configuration: every check and default in one place, so
 * the loop starts from a complete, validated `Resolved` and never re-reads
 * the raw config (a `Resolved` does not hold it). The defaults come from one
 * table, `Config.defaults`.
 *
 * @internal
 */
import type * as ComponentProposer from "../../ComponentProposer.js"
import { Duration, Effect, type Either, Option, type Schedule, type Scope } from "effect"
import * as Acceptance from "../../Acceptance.js"
import { type Adapter, type AdapterService, tag as adapterTag } from "../../Adapter.js"
import type { Candidate } from "../../Candidate.js"
import * as CandidateSelector from "../../CandidateSelector.js"
import * as ComponentSelector from "../../ComponentSelector.js"
import { type Config, defaults, defaultStrategy, mergeDefaults } from "../../Config.js"
import * as DataLoader from "../../DataLoader.js"
import { type AdapterError, ConfigError, type EvaluationTimeout, type PersistenceError } from "../../Errors.js"
import type { EvaluationCache } from "../../EvaluationCache.js"
import * as EvaluationPolicy from "../../EvaluationPolicy.js"
import type { GepaEvent } from "../../Event.js"
import * as Fingerprint from "../../Fingerprint.js"
import type { FrontierType } from "../../Frontier.js"
import { type LanguageModel, ReflectionModel } from "../../LanguageModel.js"
import type { Proposer } from "../../Proposal.js"
import * as Reflection from "../../Reflection.js"
import type { RunStore } from "../../RunStore.js"
import * as StopCondition from "../../StopCondition.js"
import { instrumentModel, type ObserverOptions } from "../../Telemetry.js"

/** @internal */
export interface Resolved<D, T, O> {
  readonly seedCandidate: Candidate
  /** per component, its own proposer instead of reflection (see `Config.componentProposers`) */
  readonly componentProposers: Readonly<Record<string, ComponentProposer.TextProposer>>
  /** reads a saved or proposed component (see `Config.readComponent`) */
  readonly readComponent: ((component: string, text: string) => Either.Either<string, string>) | undefined
  /** seed of every random choice */
  readonly seed: number
  readonly frontierType: FrontierType
  readonly adapter: Adapter<D, T, O>
  readonly reflectionModel: LanguageModel | undefined
  readonly proposer: Proposer | undefined
  /** options of the reflection prompt */
  readonly reflection: Reflection.ReflectionConfig
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
  readonly proposalSampling: "independent" | "same_parent" | "same_minibatch"
  /** which accepted children of a step are validated */
  readonly proposalSelection: "best" | "all" | "combine" | { readonly topK: number }
  /** judge a child on its parent's unsolved examples first (see `early.ts`) */
  readonly earlyRejection: boolean
  /** reflect on a rejected proposal's minibatch again with the next component (see `plan.ts`) */
  readonly reuseMinibatch: boolean
  /** fold results in plan order (reproducible) or as they complete */
  readonly foldOrder: "plan" | "completion"
  /** which proposal settings the config gave (a resume keeps the saved ones otherwise) */
  readonly given: {
    readonly parallelProposals: boolean
    readonly proposalsPerStep: boolean
    readonly proposalSampling: boolean
    readonly proposalSelection: boolean
    readonly earlyRejection: boolean
    readonly reuseMinibatch: boolean
  }
  readonly maxConcurrency: number
  /** examples per adapter call */
  readonly chunkSize: number
  readonly evaluationTimeout: Duration.Duration | undefined
  readonly evaluationRetry: Schedule.Schedule<unknown, AdapterError | EvaluationTimeout> | undefined
  readonly fallbackScore: number
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
  /** the evaluation cache: the run's own (in memory, or the store's), none, or the caller's */
  readonly cache: "default" | "off" | EvaluationCache<O>
  readonly onEvent: ((event: GepaEvent) => void | Effect.Effect<void>) | undefined
  /** the observer options of the `telemetry` setting: `undefined` when off */
  readonly telemetry: ObserverOptions | undefined
  /** the persistence the caller chose: a store of its own, or a run directory */
  readonly store: Effect.Effect<RunStore<O>, PersistenceError | ConfigError, Scope.Scope> | undefined
  readonly runDir: string | undefined
  /** content hashes of the examples and the meaning-changing settings */
  readonly fingerprint: Fingerprint.RunFingerprint
  /** example id -> content hash, per split: the evaluation cache's example keys */
  readonly exampleKeys: { readonly train: ReadonlyMap<string, string>; readonly val: ReadonlyMap<string, string> }
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

/**
 * The observer options of the `telemetry` setting: `undefined` when off.
 * The engine's default logs summaries at debug, not info: a library run
 * under Effect's default logger (minimum info) stays quiet.
 */
const telemetryOptions = (setting: boolean | ObserverOptions | undefined): ObserverOptions | undefined =>
  setting === false ? undefined : { summaryLevel: "debug", ...(setting === true || setting === undefined ? {} : setting) }

/** The checks of the plain settings: names, numbers and choices. */
const checkSettings = <D, T, O>(config: Config<D, T, O>): Effect.Effect<void, ConfigError> =>
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
      config.proposalSampling === undefined || config.proposalSampling === "independent" || config.proposalSampling === "same_parent" ||
        config.proposalSampling === "same_minibatch",
      "proposalSampling",
      `expected "independent", "same_parent" or "same_minibatch", got ${String(config.proposalSampling)}`
    )
    const selection = config.proposalSelection
    yield* check(
      selection === undefined || selection === "best" || selection === "all" || selection === "combine" ||
        (typeof selection === "object" && selection !== null && isPositiveInt(selection.topK)),
      "proposalSelection",
      `expected "best", "all", "combine" or { topK: a positive integer }, got ${
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
  })

/** The stop conditions: `maxMetricCalls` first, then the config's `stop`; at least one. */
const resolveStop = <D, T, O>(config: Config<D, T, O>): Effect.Effect<StopCondition.StopCondition, ConfigError> => {
  const conditions: Array<StopCondition.StopCondition> = config.stop === undefined
    ? []
    : Array.isArray(config.stop)
    ? [...config.stop]
    : [config.stop as StopCondition.StopCondition]
  if (config.maxMetricCalls !== undefined) conditions.unshift(StopCondition.maxMetricCalls(config.maxMetricCalls))
  return Effect.as(
    check(
      conditions.length > 0,
      "stop",
      "at least one stop condition is required: set maxMetricCalls or give stop conditions (StopCondition.*)"
    ),
    StopCondition.any(...conditions)
  )
}

const resolveMerge = <D, T, O>(config: Config<D, T, O>): Effect.Effect<Resolved<D, T, O>["merge"], ConfigError> =>
  Effect.gen(function*() {
    if (config.merge === undefined || config.merge === false) return undefined
    const m = config.merge === true ? {} : config.merge
    yield* optionalPositiveInt(m.overlapFloor, "merge.overlapFloor")
    yield* optionalPositiveInt(m.subsampleSize, "merge.subsampleSize")
    yield* optionalNonNegativeInt(m.maxInvocations, "merge.maxInvocations")
    return {
      maxInvocations: m.maxInvocations ?? mergeDefaults.maxInvocations,
      overlapFloor: m.overlapFloor ?? mergeDefaults.overlapFloor,
      subsampleSize: m.subsampleSize ?? mergeDefaults.subsampleSize
    }
  })

const resolveSelector = (
  s: Config<unknown>["candidateSelector"]
): Effect.Effect<CandidateSelector.CandidateSelector, ConfigError> => {
  if (s === undefined || s === "pareto") return Effect.succeed(CandidateSelector.pareto)
  if (s === "current_best") return Effect.succeed(CandidateSelector.currentBest)
  if (typeof s === "function") return Effect.succeed(s)
  return construct(
    "candidateSelector",
    () => "epsilonGreedy" in s ? CandidateSelector.epsilonGreedy(s.epsilonGreedy) : CandidateSelector.topKPareto(s.topKPareto)
  )
}

/** The strategies named by the config (or given as functions). */
const resolveStrategies = <D, T, O>(config: Config<D, T, O>) =>
  Effect.gen(function*() {
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
    return { policy, accept, selectComponents }
  })

/**
 * Who proposes new texts: the adapter itself, the config's proposer, or the
 * reflection model (from the config, else from the context), instrumented
 * unless telemetry is off.
 */
const resolveProposer = <D, T, O>(config: Config<D, T, O>) =>
  Effect.gen(function*() {
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
    return { adapter, proposer, reflectionModel }
  })

/**
 * The data: loaders, ids, and every example hashed once, at the start (the
 * hashes key the cache and are checked on resume).
 */
const resolveData = <D, T, O>(config: Config<D, T, O>, budget: number | undefined) =>
  Effect.gen(function*() {
    const train = DataLoader.ensure(config.trainset, "trainset")
    const val = config.valset === undefined ? train : DataLoader.ensure(config.valset, "valset")
    const trainIds = yield* train.ids
    const valIds = yield* val.ids
    yield* check(trainIds.length > 0, "trainset", "is empty")
    yield* check(valIds.length > 0, "valset", "is empty")
    yield* check(
      budget === undefined || budget >= valIds.length,
      "maxMetricCalls",
      `the budget (${budget}) is smaller than the validation set (${valIds.length} examples), which the seed candidate must be scored on`
    )
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
    return {
      train,
      val,
      trainIds,
      valIds,
      trainPrint,
      valPrint,
      exampleKeys: { train: trainKeys, val: val === train ? trainKeys : keysOf(valPrint) }
    }
  })

/** @internal */
export const resolve = <D, T, O>(
  config: Config<D, T, O>
): Effect.Effect<Resolved<D, T, O>, ConfigError | DataLoader.DataLoaderError, AdapterService<D, T, O> | ReflectionModel> =>
  Effect.gen(function*() {
    yield* checkSettings(config)
    const stop = yield* resolveStop(config)
    const merge = yield* resolveMerge(config)
    const { accept, policy, selectComponents } = yield* resolveStrategies(config)
    if (config.reflection !== undefined) yield* Reflection.validateConfig(config.reflection)
    const { adapter, proposer, reflectionModel } = yield* resolveProposer(config)
    const budget = stop.budget
    const data = yield* resolveData(config, budget)
    // the default strategy follows the candidate's shape, never maxConcurrency
    const strategy = defaultStrategy(Object.keys(config.seedCandidate).length)
    const settings = {
      seed: config.seed ?? defaults.seed,
      frontierType: config.frontierType ?? defaults.frontierType,
      minibatchSize: config.minibatchSize ?? defaults.minibatchSize,
      parallelProposals: config.parallelProposals ?? defaults.parallelProposals,
      proposalsPerStep: config.proposalsPerStep ?? strategy.proposalsPerStep,
      proposalSampling: config.proposalSampling ?? strategy.proposalSampling,
      proposalSelection: config.proposalSelection ?? strategy.proposalSelection,
      earlyRejection: config.earlyRejection ?? defaults.earlyRejection,
      reuseMinibatch: config.reuseMinibatch ?? defaults.reuseMinibatch,
      foldOrder: config.foldOrder ?? defaults.foldOrder,
      skipPerfect: config.skipPerfectScore ?? defaults.skipPerfectScore,
      perfectScore: config.perfectScore ?? defaults.perfectScore,
      fallbackScore: config.fallbackScore ?? defaults.fallbackScore,
      merge
    }
    const fingerprint: Fingerprint.RunFingerprint = {
      settings: settingsOf(config, settings),
      trainset: data.trainPrint,
      valset: data.valPrint
    }
    return {
      ...settings,
      seedCandidate: config.seedCandidate,
      componentProposers: config.componentProposers ?? {},
      readComponent: config.readComponent,
      adapter,
      reflectionModel,
      proposer,
      reflection: config.reflection ?? {},
      train: data.train,
      val: data.val,
      trainIds: data.trainIds,
      valIds: data.valIds,
      budget,
      stop,
      given: {
        parallelProposals: config.parallelProposals !== undefined,
        proposalsPerStep: config.proposalsPerStep !== undefined,
        proposalSampling: config.proposalSampling !== undefined,
        proposalSelection: config.proposalSelection !== undefined,
        earlyRejection: config.earlyRejection !== undefined,
        reuseMinibatch: config.reuseMinibatch !== undefined
      },
      maxConcurrency: config.maxConcurrency ?? defaults.maxConcurrency,
      chunkSize: config.chunkSize ?? defaults.chunkSize,
      evaluationTimeout: config.evaluationTimeout === undefined ? undefined : Duration.decode(config.evaluationTimeout),
      evaluationRetry: config.evaluationRetry,
      selectCandidate: yield* resolveSelector(config.candidateSelector as Config<unknown>["candidateSelector"]),
      selectComponents,
      policy,
      accept,
      maxFailedIterations: config.maxConsecutiveFailedIterations ?? defaults.maxConsecutiveFailedIterations,
      maxUnusableAnswers: config.reflection?.maxUnusableAnswers ?? Reflection.defaultMaxUnusableAnswers,
      unusable: { streak: 0 },
      trackBestOutputs: config.trackBestOutputs ?? defaults.trackBestOutputs,
      cache: config.cache === false ? "off" : typeof config.cache === "object" ? config.cache : "default",
      onEvent: config.onEvent,
      telemetry: telemetryOptions(config.telemetry),
      store: config.store,
      runDir: config.runDir,
      fingerprint,
      exampleKeys: data.exampleKeys
    }
  })

/**
 * Whether a run reflects on a rejected proposal's minibatch again
 * (`reuseMinibatch`): only with one proposal in flight, where the last
 * folded proposal is the one planned just before.
 *
 * @internal
 */
export const reusesMinibatches = (r: Pick<Resolved<unknown, unknown, unknown>, "reuseMinibatch" | "proposalsPerStep" | "parallelProposals">) =>
  r.reuseMinibatch && r.proposalsPerStep === 1 && r.parallelProposals === 1

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
  resolved: Pick<
    Resolved<D, T, O>,
    | "seed"
    | "frontierType"
    | "minibatchSize"
    | "parallelProposals"
    | "proposalsPerStep"
    | "proposalSampling"
    | "proposalSelection"
    | "earlyRejection"
    | "reuseMinibatch"
    | "foldOrder"
    | "skipPerfect"
    | "perfectScore"
    | "fallbackScore"
    | "merge"
  >
): Record<string, string> => ({
  // a component's schema, as `schema.NAME`, so a changed schema is refused on resume
  ...Object.fromEntries(Object.entries(config.componentSchemas ?? {}).map(([name, d]) => [`schema.${name}`, d])),
  seed: String(resolved.seed),
  minibatchSize: String(resolved.minibatchSize),
  frontierType: resolved.frontierType,
  acceptance: named(config.acceptance, defaults.acceptance),
  merge: resolved.merge === undefined ? "off" : Fingerprint.stableStringify(resolved.merge),
  evaluationPolicy: named(config.evaluationPolicy, defaults.evaluationPolicy),
  candidateSelector: named(config.candidateSelector, defaults.candidateSelector),
  componentSelector: named(config.componentSelector, defaults.componentSelector),
  parallelProposals: String(resolved.parallelProposals),
  proposalsPerStep: String(resolved.proposalsPerStep),
  proposalSampling: resolved.proposalSampling,
  proposalSelection: named(resolved.proposalSelection, "best"),
  earlyRejection: String(resolved.earlyRejection),
  reuseMinibatch: String(resolved.reuseMinibatch),
  foldOrder: resolved.foldOrder,
  skipPerfectScore: String(resolved.skipPerfect),
  perfectScore: String(resolved.perfectScore),
  fallbackScore: String(resolved.fallbackScore)
})
