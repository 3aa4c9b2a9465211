/**
 * Resolving the strategies a run's configuration names or gives: when it
 * stops, whether and how it merges, how it selects candidates and
 * components, how it evaluates and accepts, and who proposes new texts.
 *
 * @internal
 */
import { Effect, Option } from "effect"
import * as Acceptance from "../../Acceptance.js"
import { tag as adapterTag } from "../../Adapter.js"
import * as CandidateSelector from "../../CandidateSelector.js"
import * as ComponentSelector from "../../ComponentSelector.js"
import { type Config, mergeDefaults } from "../../Config.js"
import type { ConfigError } from "../../Errors.js"
import * as EvaluationPolicy from "../../EvaluationPolicy.js"
import { ReflectionModel } from "../../LanguageModel.js"
import * as StopCondition from "../../StopCondition.js"
import { instrumentModel } from "../../Telemetry.js"
import type { Resolved } from "./resolved.js"
import { check, construct, optionalNonNegativeInt, optionalPositiveInt } from "./settingChecks.js"

/**
 * The stop conditions: `maxMetricCalls` first, then the config's `stop`; at least one.
 *
 * @internal
 */
export const resolveStop = <D, T, O>(config: Config<D, T, O>): Effect.Effect<StopCondition.StopCondition, ConfigError> => {
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

/**
 * The merge settings: `undefined` when merging is off, else each one given or its default.
 *
 * @internal
 */
export const resolveMerge = <D, T, O>(config: Config<D, T, O>): Effect.Effect<Resolved<D, T, O>["merge"], ConfigError> =>
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

/**
 * The candidate selector: by name, as options, or given as a function.
 *
 * @internal
 */
export const resolveSelector = (
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

/**
 * The strategies named by the config (or given as functions).
 *
 * @internal
 */
export const resolveStrategies = <D, T, O>(config: Config<D, T, O>) =>
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
 *
 * @internal
 */
export const resolveProposer = <D, T, O>(config: Config<D, T, O>) =>
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
