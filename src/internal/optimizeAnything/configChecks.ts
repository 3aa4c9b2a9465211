/**
 * Every check of `optimizeAnything`'s configuration, made before anything
 * is written or called, and what the checks settle: the side-information
 * limits, the evaluation timeout, the reflection model and the mode.
 *
 * @internal
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the run reads the user's configuration untyped (every value as unknown); the public optimizeAnything keeps the types */
import { Duration, Effect, Option } from "effect"
import { ConfigError } from "../../Errors.js"
import { type LanguageModel, ReflectionModel } from "../../LanguageModel.js"
import type * as OA from "./types.js"
import { defaultLimits, type Limits } from "./sideInfo.js"

/**
 * A `ConfigError` on `field` unless `ok`.
 *
 * @internal
 */
export const check = (ok: boolean, field: string, detail: string): Effect.Effect<void, ConfigError> =>
  ok ? Effect.void : Effect.fail(new ConfigError({ field, detail }))

/**
 * Checks that `value`, when given, is a positive integer.
 *
 * @internal
 */
export const positiveInt = (value: number | undefined, field: string) =>
  check(value === undefined || (Number.isInteger(value) && value > 0), field, "must be a positive integer")

const limitsOf = (given: OA.SideInfoLimits | undefined): Effect.Effect<Limits, ConfigError> =>
  Effect.gen(function*() {
    yield* positiveInt(given?.maxStringLength, "sideInfo.maxStringLength")
    yield* positiveInt(given?.maxListItems, "sideInfo.maxListItems")
    yield* positiveInt(given?.maxDepth, "sideInfo.maxDepth")
    yield* positiveInt(given?.maxRecordLength, "sideInfo.maxRecordLength")
    yield* positiveInt(given?.promptStringLength, "sideInfo.promptStringLength")
    yield* positiveInt(given?.promptRecordLength, "sideInfo.promptRecordLength")
    yield* positiveInt(given?.promptBudget, "sideInfo.promptBudget")
    return { ...defaultLimits, ...given }
  })

/**
 * What the checks settle before anything is written or called.
 *
 * @internal
 */
export interface Checked {
  readonly seedless: boolean
  readonly limits: Limits
  readonly timeout: Duration.Duration | undefined
  readonly model: LanguageModel | undefined
  readonly mode: OA.Mode
}

/**
 * Every check of the configuration, before anything is written or called.
 *
 * @internal
 */
export const checkConfig = (config: OA.Config<any, any, any, any>): Effect.Effect<Checked, ConfigError> =>
  Effect.gen(function*() {
    const { background, dataset, evaluationTimeout, evaluator, objective, seedAttempts, seedCandidate, testSeed, testset, valset } = config
    yield* check(typeof evaluator === "function", "evaluator", "must be a function (candidate, example) => Effect")
    yield* check(objective === undefined || typeof objective === "string", "objective", "must be a string")
    yield* check(background === undefined || typeof background === "string", "background", "must be a string")
    const seedless = seedCandidate === undefined
    yield* check(
      !seedless || (objective !== undefined && objective.trim() !== ""),
      "objective",
      "is required without a seedCandidate: the reflection model writes the first candidate from it"
    )
    yield* check(
      seedless || typeof seedCandidate === "string" || (typeof seedCandidate === "object" && seedCandidate !== null),
      "seedCandidate",
      "must be a string or a record of named texts"
    )
    yield* check(dataset !== undefined || valset === undefined, "valset", "needs a dataset (generalization mode)")
    yield* check(dataset !== undefined || testset === undefined, "testset", "needs a dataset (single-task mode has no examples)")
    yield* check(testSeed === undefined || typeof testSeed === "boolean", "testSeed", "must be true or false")
    yield* positiveInt(seedAttempts, "seedAttempts")
    const limits = yield* limitsOf(config.sideInfo)
    const timeout = evaluationTimeout === undefined ? undefined : Duration.decodeUnknown(evaluationTimeout)
    if (evaluationTimeout !== undefined) {
      yield* check(
        timeout !== undefined && Option.isSome(timeout) && Duration.toMillis(timeout.value) > 0,
        "evaluationTimeout",
        "must be a positive duration"
      )
    }
    const model: LanguageModel | undefined = config.reflectionModel ??
      Option.getOrUndefined(yield* Effect.serviceOption(ReflectionModel))
    yield* check(
      model !== undefined || (config.proposer !== undefined && !seedless),
      "reflectionModel",
      seedless
        ? "a seedless start needs a reflection model: set reflectionModel or provide ReflectionModel"
        : "set reflectionModel or proposer, or provide ReflectionModel"
    )
    const mode: OA.Mode = dataset === undefined ? "single-task" : valset === undefined ? "multi-task" : "generalization"
    return { seedless, limits, timeout: timeout === undefined ? undefined : Option.getOrUndefined(timeout), model, mode }
  })
