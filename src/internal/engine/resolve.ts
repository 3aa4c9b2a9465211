/**
 * Resolving a run's configuration: every check and default in one place, so
 * the loop starts from a complete, validated `Resolved` and never re-reads
 * the raw config (a `Resolved` does not hold it). The defaults come from one
 * table, `Config.defaults`.
 *
 * The `Resolved` settings are in `resolved.ts`; the steps this module runs
 * in `settingChecks.ts` (the plain settings), `resolveStrategies.ts` (stop,
 * merge, selection, evaluation, acceptance, proposer) and
 * `settingsFingerprint.ts` (the settings a resume must keep).
 *
 * @internal
 */
import { Duration, Effect } from "effect"
import type { AdapterService } from "../../Adapter.js"
import { type Config, defaults } from "../../Config.js"
import * as DataLoader from "../../DataLoader.js"
import type { ConfigError } from "../../Errors.js"
import * as Fingerprint from "../../Fingerprint.js"
import type { ReflectionModel } from "../../LanguageModel.js"
import * as Reflection from "../../Reflection.js"
import * as Strategy from "../../Strategy.js"
import type { ObserverOptions } from "../../Telemetry.js"
import { readsProposal } from "./currentProposal.js"
import type { Resolved } from "./resolved.js"
import { resolveMerge, resolveProposer, resolveSelector, resolveStop, resolveStrategies } from "./resolveStrategies.js"
import { check, checkSettings } from "./settingChecks.js"
import { settingsOf } from "./settingsFingerprint.js"

/**
 * The observer options of the `telemetry` setting: `undefined` when off.
 * The engine's default logs summaries at debug, not info: a library run
 * under Effect's default logger (minimum info) stays quiet.
 */
const telemetryOptions = (setting: boolean | ObserverOptions | undefined): ObserverOptions | undefined =>
  setting === false ? undefined : { summaryLevel: "debug", ...(setting === true || setting === undefined ? {} : setting) }

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
    const strategy = Strategy.defaultFor(Object.keys(config.seedCandidate).length, {
      minibatchSize: config.minibatchSize,
      trainsetSize: data.trainIds.length,
      budget,
      valsetSize: data.valIds.length
    })
    const onChild = config.buildOnChild ??
      (strategy.buildOnChild === true && config.proposalsPerStep === undefined && config.proposalSampling === undefined &&
        config.proposalSelection === undefined && config.rewritesPerMinibatch === undefined && config.stepWidth === undefined &&
        (config.parallelProposals ?? defaults.parallelProposals) === 1 && (config.foldOrder ?? defaults.foldOrder) === "plan")
    yield* check(
      config.reuseChildMinibatch !== true || onChild,
      "reuseChildMinibatch",
      "needs buildOnChild: it is what the step built on a child reflects on"
    )
    const settings = {
      seed: config.seed ?? defaults.seed,
      frontierType: config.frontierType ?? defaults.frontierType,
      minibatchSize: config.minibatchSize ?? defaults.minibatchSize,
      parallelProposals: config.parallelProposals ?? defaults.parallelProposals,
      proposalsPerStep: config.proposalsPerStep ?? strategy.proposalsPerStep,
      // a step size the config gives is a fixed one unless it says otherwise
      stepWidth: config.stepWidth ?? (config.proposalsPerStep === undefined ? strategy.stepWidth ?? "fixed" : "fixed"),
      proposalSampling: config.proposalSampling ?? strategy.proposalSampling,
      proposalSelection: config.proposalSelection ?? strategy.proposalSelection,
      rewritesPerMinibatch: config.rewritesPerMinibatch ?? strategy.rewritesPerMinibatch ?? 1,
      earlyRejection: config.earlyRejection ?? defaults.earlyRejection,
      reuseMinibatch: config.reuseMinibatch ?? defaults.reuseMinibatch,
      foldOrder: config.foldOrder ?? defaults.foldOrder,
      // part of the default strategy: not with steps the config shapes, nor where it cannot apply
      // (`checkSettings` refuses a given one there)
      buildOnChild: onChild,
      // only with buildOnChild (checked above when given)
      reuseChildMinibatch: onChild && (config.reuseChildMinibatch ?? defaults.reuseChildMinibatch),
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
      readsProposal: readsProposal(adapter),
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
        stepWidth: config.stepWidth !== undefined || config.proposalsPerStep !== undefined,
        proposalSampling: config.proposalSampling !== undefined,
        proposalSelection: config.proposalSelection !== undefined,
        rewritesPerMinibatch: config.rewritesPerMinibatch !== undefined,
        earlyRejection: config.earlyRejection !== undefined,
        reuseMinibatch: config.reuseMinibatch !== undefined,
        buildOnChild: config.buildOnChild !== undefined,
        reuseChildMinibatch: config.reuseChildMinibatch !== undefined
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
