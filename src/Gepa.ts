/**
 * The optimizer: `Gepa.optimize(config)` runs GEPA and returns the best
 * candidate; `Gepa.stream(config)` runs it as a stream of events that a
 * consumer can inspect step by step and stop early.
 *
 * The engine loop, the evaluation pool and the event delivery run as fibers
 * in one scope: nothing outlives the call, and interrupting it stops in-flight
 * evaluations and model calls.
 *
 * @since 0.1.0
 */
import { Effect, Either, Stream } from "effect"
import type { Adapter, AdapterService, ProposingAdapter } from "./Adapter.js"
import type * as CandidateSchema from "./CandidateSchema.js"
import type { Config } from "./Config.js"
import type { OptimizeError } from "./Errors.js"
import type { GepaEvent, StructuredEvent } from "./Event.js"
import * as engine from "./internal/engine/optimize.js"
import * as Typed from "./internal/engine/typed.js"
import type { LanguageModel, ReflectionModel } from "./LanguageModel.js"
import type { Proposer } from "./Proposal.js"
import type { OptimizeResult } from "./Result.js"

export type {
  /**
   * The configuration of a run. Only `seedCandidate`, `trainset` and a stop
   * condition (`maxMetricCalls` or `stop`) are required; the adapter and the
   * reflection model come from here or from the context.
   *
   * @since 0.1.0
   * @category models
   */
  Config,
  /**
   * Merge (crossover) options.
   *
   * @since 0.1.0
   * @category models
   */
  MergeConfig
} from "./Config.js"

export type {
  /**
   * Every way `optimize` can fail (declared in `Errors`).
   *
   * @since 0.1.0
   * @category errors
   */
  OptimizeError
} from "./Errors.js"

export type {
  /**
   * The result of `optimize` (declared in `Result`).
   *
   * @since 0.1.0
   * @category models
   */
  OptimizeResult
} from "./Result.js"

/**
 * The configuration of a run over typed candidates (since 0.3.0): the
 * candidate's shape is `candidateSchema` (see `CandidateSchema.make`), the
 * seed is a typed value, the adapter receives decoded candidates, and
 * `componentProposers` give components (typically the structured ones) a
 * proposer of their own; the others are rewritten by reflection. Every other
 * setting is as in `Config`.
 *
 * @since 0.3.0
 * @category models
 */
export interface StructuredConfig<A, D, T = unknown, O = unknown>
  extends Omit<Config<D, T, O>, "seedCandidate" | "adapter" | "componentProposers" | "componentSchemas" | "readComponent">
{
  readonly candidateSchema: CandidateSchema.CandidateSchema<A>
  readonly seedCandidate: NoInfer<A>
  readonly adapter: CandidateSchema.TypedAdapter<A, D, T, O>
  readonly componentProposers?: CandidateSchema.Proposers<A>
}

export type {
  /**
   * The events of `stream` over typed candidates (declared in `Event`).
   *
   * @since 0.3.0
   * @category models
   */
  StructuredEvent
} from "./Event.js"
export type {
  /**
   * The result the `OptimizationEnded` event of a typed `stream` carries
   * (declared in `Result`).
   *
   * @since 0.3.0
   * @category models
   */
  StructuredGepaResult
} from "./Result.js"

/**
 * The result of a run over typed candidates: decoded candidates, and each
 * component's version and origin per candidate.
 *
 * @since 0.3.0
 * @category models
 */
export type StructuredResult<A, O> = Omit<OptimizeResult<O>, "bestCandidate" | "candidates"> & CandidateSchema.ResultFields<A>

/**
 * Runs GEPA and returns the best candidate. What the context must provide
 * follows from the config, and the types say so without type parameters:
 *
 * - the adapter (`Adapter.AdapterService`, met by `Adapter.layer(...)`)
 *   unless `adapter` is set; the example type comes from `trainset`;
 * - the `ReflectionModel` unless `reflectionModel` or `proposer` is set, or
 *   the adapter in the config proposes itself (`Adapter.ProposingAdapter`,
 *   e.g. `Adapter.fromExample(run, { proposeNewTexts })`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Adapter, Gepa, LanguageModel } from "effect-gepa"
 *
 * // the system under optimization: it shouts when its instructions ask for capital letters
 * const adapter = Adapter.fromExample((example: { readonly text: string }, candidate) =>
 *   Effect.sync(() => {
 *     const output = /capital/i.test(candidate["instructions"] ?? "") ? example.text.toUpperCase() : example.text
 *     const score = output === example.text.toUpperCase() ? 1 : 0
 *     return { output, score, feedback: score === 1 ? "Correct." : `Expected capital letters, got "${output}".` }
 *   })
 * )
 *
 * // an offline stand-in for a reflection model, answering in the fenced block reflection asks for
 * const reflectionModel = LanguageModel.fromFunction(() => "```\nRepeat the text in capital letters.\n```")
 *
 * // Effect<OptimizeResult<string>, OptimizeError>: nothing left for the context to provide
 * const program = Gepa.optimize({
 *   seedCandidate: { instructions: "Repeat the text." },
 *   trainset: [{ text: "hello" }, { text: "ship it" }, { text: "pareto" }],
 *   valset: [{ text: "effect" }, { text: "gepa" }],
 *   adapter,
 *   reflectionModel,
 *   maxMetricCalls: 40
 * })
 *
 * Effect.runPromise(program).then((result) => console.log(result.bestScore, result.bestCandidate["instructions"]))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export function optimize<A, D, T, O>(
  config: StructuredConfig<A, D, T, O> & { readonly reflectionModel: LanguageModel }
): Effect.Effect<StructuredResult<A, O>, OptimizeError>
export function optimize<A, D, T, O>(
  config: StructuredConfig<A, D, T, O> & { readonly proposer: Proposer }
): Effect.Effect<StructuredResult<A, O>, OptimizeError>
export function optimize<A, D, T, O>(
  config: StructuredConfig<A, D, T, O>
): Effect.Effect<StructuredResult<A, O>, OptimizeError, ReflectionModel>
export function optimize<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: ProposingAdapter<D, T, O> }
): Effect.Effect<OptimizeResult<O>, OptimizeError>
export function optimize<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: Adapter<D, T, O>; readonly reflectionModel: LanguageModel }
): Effect.Effect<OptimizeResult<O>, OptimizeError>
export function optimize<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: Adapter<D, T, O>; readonly proposer: Proposer }
): Effect.Effect<OptimizeResult<O>, OptimizeError>
export function optimize<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: Adapter<D, T, O> }
): Effect.Effect<OptimizeResult<O>, OptimizeError, ReflectionModel>
export function optimize<D, T = unknown, O = unknown>(
  config: Config<D, T, O> & { readonly reflectionModel: LanguageModel }
): Effect.Effect<OptimizeResult<O>, OptimizeError, AdapterService<D, T, O>>
export function optimize<D, T = unknown, O = unknown>(
  config: Config<D, T, O> & { readonly proposer: Proposer }
): Effect.Effect<OptimizeResult<O>, OptimizeError, AdapterService<D, T, O>>
export function optimize<D, T = unknown, O = unknown>(
  config: Config<D, T, O>
): Effect.Effect<OptimizeResult<O>, OptimizeError, AdapterService<D, T, O> | ReflectionModel>
export function optimize<D, T, O>(
  config: Config<D, T, O> | StructuredConfig<unknown, D, T, O>
): Effect.Effect<
  OptimizeResult<O> | StructuredResult<unknown, O>,
  OptimizeError,
  AdapterService<D, T, O> | ReflectionModel
> {
  if ("candidateSchema" in config) return optimizeStructured(config)
  return engine.optimize(config)
}

// a typed run is a text run with the schema's conversions at its edges
const optimizeStructured = <D, T, O>(config: StructuredConfig<unknown, D, T, O>) =>
  Effect.gen(function*() {
    const { candidateSchema, ...rest } = config
    const fields = yield* Either.match(Typed.toTextFields(config), { onLeft: Effect.fail, onRight: Effect.succeed })
    const result = yield* engine.optimize<D, T, O>({ ...rest, ...fields })
    return yield* Either.match(Typed.decodeResult(candidateSchema, result), { onLeft: Effect.fail, onRight: Effect.succeed })
  })

/**
 * Runs GEPA as a stream of events. `IterationEnded` events carry the state
 * after each iteration; the run waits while the consumer is busy (a small
 * buffer), and ending the stream early interrupts the run. Requirements
 * follow the same rules as `optimize`.
 *
 * @since 0.1.0
 * @category running
 */
export function stream<A, D, T, O>(
  config: StructuredConfig<A, D, T, O> & { readonly reflectionModel: LanguageModel }
): Stream.Stream<StructuredEvent<A>, OptimizeError>
export function stream<A, D, T, O>(
  config: StructuredConfig<A, D, T, O> & { readonly proposer: Proposer }
): Stream.Stream<StructuredEvent<A>, OptimizeError>
export function stream<A, D, T, O>(
  config: StructuredConfig<A, D, T, O>
): Stream.Stream<StructuredEvent<A>, OptimizeError, ReflectionModel>
export function stream<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: ProposingAdapter<D, T, O> }
): Stream.Stream<GepaEvent, OptimizeError>
export function stream<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: Adapter<D, T, O>; readonly reflectionModel: LanguageModel }
): Stream.Stream<GepaEvent, OptimizeError>
export function stream<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: Adapter<D, T, O>; readonly proposer: Proposer }
): Stream.Stream<GepaEvent, OptimizeError>
export function stream<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: Adapter<D, T, O> }
): Stream.Stream<GepaEvent, OptimizeError, ReflectionModel>
export function stream<D, T = unknown, O = unknown>(
  config: Config<D, T, O> & { readonly reflectionModel: LanguageModel }
): Stream.Stream<GepaEvent, OptimizeError, AdapterService<D, T, O>>
export function stream<D, T = unknown, O = unknown>(
  config: Config<D, T, O> & { readonly proposer: Proposer }
): Stream.Stream<GepaEvent, OptimizeError, AdapterService<D, T, O>>
export function stream<D, T = unknown, O = unknown>(
  config: Config<D, T, O>
): Stream.Stream<GepaEvent, OptimizeError, AdapterService<D, T, O> | ReflectionModel>
export function stream<D, T, O>(
  config: Config<D, T, O> | StructuredConfig<unknown, D, T, O>
): Stream.Stream<GepaEvent | StructuredEvent<unknown>, OptimizeError, AdapterService<D, T, O> | ReflectionModel> {
  if ("candidateSchema" in config) return streamStructured(config)
  return engine.stream(config)
}

// the typed stream: the text engine's events with their candidates decoded
const streamStructured = <D, T, O>(config: StructuredConfig<unknown, D, T, O>) =>
  Stream.unwrap(Effect.suspend(() => {
    const { candidateSchema, ...rest } = config
    return Either.match(Typed.toTextFields(config), {
      onLeft: (e) => Effect.fail(e),
      onRight: (fields) => {
        const decode = Typed.eventDecoder(candidateSchema)
        return Effect.succeed(
          engine.stream<D, T, O>({ ...rest, ...fields }).pipe(
            Stream.mapEffect((event) => Either.match(decode(event), { onLeft: Effect.fail, onRight: Effect.succeed }))
          )
        )
      }
    })
  }))

/**
 * `optimize` for Promise-based callers: resolves with the result, or rejects
 * with the tagged error itself (not a FiberFailure wrapper). The config
 * carries everything: the adapter (`Adapter.fromPromise` builds one from
 * plain functions), and a `reflectionModel` (`LanguageModel.fromPromise`) or
 * a `proposer` unless the adapter proposes itself.
 *
 * @since 0.1.0
 * @category running
 */
export function optimizePromise<A, D, T, O>(
  config: StructuredConfig<A, D, T, O> & { readonly reflectionModel: LanguageModel }
): Promise<StructuredResult<A, O>>
export function optimizePromise<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: ProposingAdapter<D, T, O> }
): Promise<OptimizeResult<O>>
export function optimizePromise<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: Adapter<D, T, O>; readonly reflectionModel: LanguageModel }
): Promise<OptimizeResult<O>>
export function optimizePromise<D, T, O>(
  config: Config<D, T, O> & { readonly adapter: Adapter<D, T, O>; readonly proposer: Proposer }
): Promise<OptimizeResult<O>>
export function optimizePromise<D, T, O>(
  config: (Config<D, T, O> & { readonly adapter: Adapter<D, T, O> }) | StructuredConfig<unknown, D, T, O>
): Promise<OptimizeResult<O> | StructuredResult<unknown, O>> {
  // The adapter is in the config, so the tag is never read; the engine reads
  // `ReflectionModel` only as an option, and the overloads above admit only
  // configs that propose without it. Were one to slip through, the run fails
  // with a ConfigError naming `reflectionModel`, not with a missing service.
  const run = ("candidateSchema" in config ? optimizeStructured(config) : engine.optimize(config)) as Effect.Effect<
    OptimizeResult<O> | StructuredResult<unknown, O>,
    OptimizeError
  >
  return Effect.runPromise(Effect.either(run)).then((result) => {
    if (result._tag === "Left") throw result.left
    return result.right
  })
}

export {
  /**
   * Runs GEPA on the artifact the evaluator scores. The reflection model comes
   * from `reflectionModel` or from the context (`ReflectionModel`); a custom
   * `proposer` replaces it after the seed (a seedless start still needs the
   * model). The evaluator's requirements `R` flow to the result.
   *
   * @since 0.2.0
   * @category running
   */
  optimizeAnything,
  /**
   * `optimizeAnything` for Promise-based callers: resolves with the result or
   * rejects with the tagged error itself.
   *
   * @since 0.2.0
   * @category running
   */
  optimizeAnythingPromise
} from "./OptimizeAnything.js"
