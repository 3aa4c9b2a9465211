/**
 * The checks of a run's configuration that need no other setting: the
 * seed's component names, the numbers and the named choices, and the
 * small checks the other resolution steps build on.
 *
 * @internal
 */
import { Effect } from "effect"
import type { Config } from "../../Config.js"
import { ConfigError } from "../../Errors.js"
import * as Fingerprint from "../../Fingerprint.js"

/**
 * A positive integer.
 *
 * @internal
 */
export const isPositiveInt = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n > 0

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
export const optionalPositiveInt = (value: unknown, field: string) =>
  check(value === undefined || isPositiveInt(value), field, `expected a positive integer, got ${String(value)}`)

/**
 * Checks that `value`, when given, is a non-negative integer.
 *
 * @internal
 */
export const optionalNonNegativeInt = (value: unknown, field: string) =>
  check(
    value === undefined || (typeof value === "number" && Number.isInteger(value) && value >= 0),
    field,
    `expected a non-negative integer, got ${String(value)}`
  )

/**
 * A strategy from a constructor that rejects bad arguments with a RangeError.
 *
 * @internal
 */
export const construct = <A>(field: string, make: () => A): Effect.Effect<A, ConfigError> =>
  Effect.try({ try: make, catch: (e) => new ConfigError({ field, detail: e instanceof Error ? e.message : String(e) }) })

/**
 * The checks of the plain settings: names, numbers and choices.
 *
 * @internal
 */
export const checkSettings = <D, T, O>(config: Config<D, T, O>): Effect.Effect<void, ConfigError> =>
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
    yield* optionalPositiveInt(config.rewritesPerMinibatch, "rewritesPerMinibatch")
    yield* check(
      config.stepWidth === undefined || config.stepWidth === "fixed" || config.stepWidth === "adaptive",
      "stepWidth",
      `expected "fixed" or "adaptive", got ${String(config.stepWidth)}`
    )
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
    if (config.buildOnChild === true) {
      yield* check(names.length === 1, "buildOnChild", `builds on one component's child only; the seed candidate has ${names.length}`)
      yield* check(
        (config.parallelProposals ?? 1) === 1,
        "buildOnChild",
        `needs one step in flight (parallelProposals 1), got parallelProposals ${config.parallelProposals}`
      )
      yield* check((config.foldOrder ?? "plan") === "plan", "buildOnChild", `needs foldOrder "plan", got "${config.foldOrder}"`)
    }
    yield* optionalPositiveInt(config.maxConsecutiveFailedIterations, "maxConsecutiveFailedIterations")
    yield* optionalNonNegativeInt(config.maxMetricCalls, "maxMetricCalls")
    yield* check(config.perfectScore === undefined || Number.isFinite(config.perfectScore), "perfectScore", "must be a finite number")
    yield* check(config.fallbackScore === undefined || Number.isFinite(config.fallbackScore), "fallbackScore", "must be a finite number")
  })
