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
import { type Duration, Effect, Either, type Schedule, type Scope, Stream } from "effect"
import type * as Acceptance from "./Acceptance.js"
import type { Adapter, AdapterService, ProposingAdapter } from "./Adapter.js"
import type { Candidate } from "./Candidate.js"
import type * as CandidateSchema from "./CandidateSchema.js"
import type * as CandidateSelector from "./CandidateSelector.js"
import type * as ComponentProposer from "./ComponentProposer.js"
import type * as ComponentSelector from "./ComponentSelector.js"
import type { DataLoader, DataLoaderError } from "./DataLoader.js"
import type {
  AdapterContractError,
  AdapterError,
  AllEvaluationsFailed,
  ConfigError,
  EvaluationTimeout,
  MissingObjectiveScores,
  ModelUnrecoverable,
  ReflectionUnusable,
  PersistenceError,
  ProposalsFailed,
  ResumeConflict
} from "./Errors.js"
import type { EvaluationCache } from "./EvaluationCache.js"
import type * as EvaluationPolicy from "./EvaluationPolicy.js"
import type { GepaEvent } from "./Event.js"
import type { FrontierType } from "./Frontier.js"
import * as loop from "./internal/engine/loop.js"
import * as Typed from "./internal/typed.js"
import type { Resolved } from "./internal/engine/resolve.js"
import { engineScheduler } from "./internal/scheduler.js"
import type { LanguageModel, ReflectionModel } from "./LanguageModel.js"
import type { Proposer } from "./Proposal.js"
import type { ObserverOptions } from "./Telemetry.js"
import type { ReflectionConfig } from "./Reflection.js"
import type { GepaResult } from "./Result.js"
import * as RunDir from "./RunDir.js"
import { none as noStore, type RunStore, RunStoreService } from "./RunStore.js"
import type { GepaState } from "./State.js"
import type { StopCondition } from "./StopCondition.js"

/**
 * Merge (crossover) options.
 *
 * @since 0.1.0
 * @category models
 */
export interface MergeConfig {
  /** the most merge proposals evaluated in a run (default 5) */
  readonly maxInvocations?: number
  /** validation examples two parents must share (default 5) */
  readonly overlapFloor?: number
  /** size of the validation subsample a merged candidate is tested on (default 5) */
  readonly subsampleSize?: number
}

/**
 * The configuration of a run. Only `seedCandidate`, `trainset` and a stop
 * condition (`maxMetricCalls` or `stop`) are required; the adapter and the
 * reflection model come from here or from the context.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config<D, T = unknown, O = unknown> {
  /** the starting texts */
  readonly seedCandidate: Candidate
  /** examples the reflection learns from */
  readonly trainset: ReadonlyArray<D> | DataLoader<D>
  /** examples candidates are ranked on (default: the trainset) */
  readonly valset?: ReadonlyArray<D> | DataLoader<D>
  /** the adapter; when absent it is read from the context (`Adapter.tag`) */
  readonly adapter?: Adapter<D, T, O>
  /** the reflection model; when absent it is read from the context (`ReflectionModel`) */
  readonly reflectionModel?: LanguageModel
  /** a custom proposer used instead of the reflection model */
  readonly proposer?: Proposer
  /** options of the default reflection prompt */
  readonly reflection?: ReflectionConfig
  /**
   * per component, its own proposer, used for that component instead of the
   * reflection model or `proposer` (since 0.3.0; see `CandidateSchema` for
   * typed ones)
   */
  readonly componentProposers?: Readonly<Record<string, ComponentProposer.TextProposer>>
  /**
   * per component, a description of its schema, recorded with the run and
   * compared on resume (since 0.3.0; set by `CandidateSchema`)
   */
  readonly componentSchemas?: Readonly<Record<string, string>>
  /**
   * checks a saved component on resume: why its stored text is not a value
   * of the component, or `undefined` (since 0.3.0; set by `CandidateSchema`)
   */
  readonly validateComponent?: (component: string, stored: string) => string | undefined
  /** the strict metric-call budget: examples evaluated, never exceeded */
  readonly maxMetricCalls?: number
  /** stop conditions; the run stops when any of them holds */
  readonly stop?: StopCondition | ReadonlyArray<StopCondition>
  /** seed of every random choice (default 0) */
  readonly seed?: number
  /** training examples per reflection (default 3) */
  readonly minibatchSize?: number
  /** parent selection (default "pareto") */
  readonly candidateSelector?:
    | "pareto"
    | "current_best"
    | { readonly epsilonGreedy: number }
    | { readonly topKPareto: number }
    | CandidateSelector.CandidateSelector
  /** which components a proposal rewrites (default "round_robin") */
  readonly componentSelector?: "round_robin" | "all" | ComponentSelector.ComponentSelector
  /** which validation examples a new candidate is scored on (default "full") */
  readonly evaluationPolicy?: "full" | { readonly incremental: number } | EvaluationPolicy.EvaluationPolicy
  /** when a child beats its parent (default "strict_improvement") */
  readonly acceptance?: "strict_improvement" | "improvement_or_equal" | Acceptance.AcceptanceCriterion
  /** frontier used for selection and merge (default "instance") */
  readonly frontierType?: FrontierType
  /** skip reflecting on minibatches where every score is perfect (default true) */
  readonly skipPerfectScore?: boolean
  /** the perfect score (default 1) */
  readonly perfectScore?: number
  /** merge options; `true` for defaults, `false` (default) to disable */
  readonly merge?: boolean | MergeConfig
  /** adapter calls in flight at most, over the whole run (default 8) */
  readonly maxConcurrency?: number
  /** examples per adapter call (default 1) */
  readonly chunkSize?: number
  /** timeout of one adapter call; starts when the call starts */
  readonly evaluationTimeout?: Duration.DurationInput
  /** retry schedule for failed or timed-out adapter calls */
  readonly evaluationRetry?: Schedule.Schedule<unknown, AdapterError | EvaluationTimeout>
  /** score given to an example whose evaluation failed (default 0) */
  readonly fallbackScore?: number
  /**
   * steps in flight at once: the depth of the proposal pipeline (default 1,
   * the GEPA loop). Each step is planned from the freshest folded state;
   * whenever one is folded, the next one is planned. An accepted child whose
   * parent was superseded while it was in flight is rebased on the better
   * descendant when their changes touch different components, and dropped
   * when they overlap. An algorithm setting, like every setting here but
   * `maxConcurrency`: deeper pipelines keep more calls in flight and plan
   * from staler states (bench/: held-out score and wall time per depth).
   */
  readonly parallelProposals?: number
  /**
   * reflective proposals planned together as one step (default 1). They run
   * side by side (parent minibatch, reflection, child minibatch), then the
   * step's `proposalSelection` decides which accepted children are
   * validated. More proposals per step spend more on minibatches for each
   * validation and finish a budget in fewer, wider steps.
   */
  readonly proposalsPerStep?: number
  /**
   * how a step's proposals get their parents (default `"independent"`):
   * each selects its own with the candidate selector, or `"same_parent"`:
   * one parent, a minibatch each (with `"round_robin"` components, each
   * rewrites the next component)
   */
  readonly proposalSampling?: "independent" | "same_parent"
  /**
   * which accepted children of a step are validated (default `"best"`): the
   * one that improved its minibatch most (ties: the first planned), the `topK`
   * that improved most, or `"all"`. Children of the step that are not
   * selected are rejected (the trace says why); identical children are
   * validated once.
   */
  readonly proposalSelection?: "best" | "all" | { readonly topK: number }
  /**
   * judge a child first on the minibatch examples its parent did not solve
   * perfectly, and reject it without paying for the others when even perfect
   * scores on them could not make it pass (default true). The decision is the
   * one the whole minibatch would give, for the built-in acceptance criteria,
   * provided `perfectScore` is the highest score the metric gives (a score
   * above it turns it off for that proposal). Saves metric calls; costs a
   * second round of calls for children that pass the first.
   */
  readonly earlyRejection?: boolean
  /**
   * the order finished proposals are folded into the state (default `"plan"`).
   * `"plan"`: in the order they were planned, through a reorder window, so a
   * deterministic adapter and model give the same result for the same seed
   * whatever the timing. `"completion"`: as they finish, so the next plan
   * sees results a little sooner; the result then depends on timing.
   */
  readonly foldOrder?: "plan" | "completion"
  /**
   * proposals in a row that failed before the run fails (default 5): every
   * evaluation of the proposal failed, or the reflection model (or proposer)
   * failed
   */
  readonly maxConsecutiveFailedIterations?: number
  /** the evaluation cache: `true` (default) in memory, `false` off, or a cache */
  readonly cache?: boolean | EvaluationCache<O>
  /** keep each validation example's best output in the result (default true) */
  readonly trackBestOutputs?: boolean
  /**
   * a run directory (see `RunDir`): the state is saved there after every
   * iteration and the run resumes from it; the evaluation cache is persisted
   * there unless `cache` is `false` or a cache of your own. Ignored when
   * `store` is set.
   */
  readonly runDir?: string
  /** persistence of the run (a run directory); see `RunDir` */
  readonly store?: Effect.Effect<RunStore<O>, PersistenceError | ConfigError, Scope.Scope>
  /** receives every event */
  readonly onEvent?: (event: GepaEvent) => void | Effect.Effect<void>
  /**
   * the run's own metrics and logs (see `Telemetry.observer`): `true`
   * (default) updates the `Telemetry` metrics and logs through Effect's
   * Logger with the run's start and end and the iteration summaries at
   * debug (so a run under Effect's default logger prints nothing; give
   * `{ summaryLevel: "info" }` to log them at info), details at debug and
   * errors at warning; an object picks what is on; `false` turns it off.
   * The model calls of the reflection model are instrumented
   * (`Telemetry.instrumentModel`) unless this is `false`.
   *
   * @since 0.2.0
   */
  readonly telemetry?: boolean | ObserverOptions
}

/**
 * The result of `optimize`: the serializable result, the final state, and
 * the best output seen for each validation example.
 *
 * @since 0.1.0
 * @category models
 */
export interface OptimizeResult<O> extends GepaResult {
  readonly state: GepaState
  /** per validation example: the candidate with the best score on it, and its output */
  readonly bestOutputs: Readonly<Record<string, { readonly candidate: number; readonly output: O }>>
}

/**
 * Every way `optimize` can fail. `ModelUnrecoverable` (since 0.2.0): the
 * task or reflection model can never succeed as configured (rejected key,
 * unknown model, invalid request, unreachable server); the run stops at once
 * and, with a run directory, can be resumed after the fix. `ReflectionUnusable`
 * (since 0.3.0): the reflection model gave `reflection.maxUnusableAnswers`
 * unusable answers in a row; resumable the same way.
 *
 * @since 0.1.0
 * @category errors
 */
export type OptimizeError =
  | ConfigError
  | AdapterContractError
  | MissingObjectiveScores
  | AllEvaluationsFailed
  | ProposalsFailed
  | DataLoaderError
  | PersistenceError
  | ResumeConflict
  | ModelUnrecoverable
  | ReflectionUnusable

/**
 * The composition root's choice of persistence: the caller's store, a run
 * directory, or none. The engine itself knows only `RunStore`.
 */
const chooseStore = <D, T, O>(r: Resolved<D, T, O>) =>
  r.config.store !== undefined
    ? r.config.store
    : r.config.runDir !== undefined
    ? RunDir.make<O>(r.config.runDir, {
      // a cache object of the caller's own replaces the persistent one
      cache: r.config.cache === undefined || r.config.cache === true,
      trackBestOutputs: r.trackBestOutputs
    })
    // a run store service from the context (e.g. `RunStore.layerMemory` in tests), else nothing is kept
    : Effect.flatMap(Effect.serviceOption(RunStoreService), (service) =>
      service._tag === "Some" ? service.value.open<O>() : Effect.succeed(noStore<O>()))

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
 * @since 0.1.0
 * @category running
 */
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
  extends Omit<Config<D, T, O>, "seedCandidate" | "adapter" | "componentProposers" | "componentSchemas" | "validateComponent">
{
  readonly candidateSchema: CandidateSchema.CandidateSchema<A>
  readonly seedCandidate: A
  readonly adapter: CandidateSchema.TypedAdapter<A, D, T, O>
  readonly componentProposers?: CandidateSchema.Proposers<A>
}

/**
 * The result of a run over typed candidates: decoded candidates, and each
 * component's version and origin per candidate.
 *
 * @since 0.3.0
 * @category models
 */
export type StructuredResult<A, O> = Omit<OptimizeResult<O>, "bestCandidate" | "candidates"> & CandidateSchema.ResultFields<A>

export function optimize<A, D, T, O>(
  config: StructuredConfig<A, D, T, O> & { readonly reflectionModel: LanguageModel }
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
  return optimizeText(config)
}

const optimizeStructured = <D, T, O>(config: StructuredConfig<unknown, D, T, O>) =>
  Effect.gen(function*() {
    const { candidateSchema, ...rest } = config
    const fields = yield* Either.match(Typed.toTextFields(config), { onLeft: Effect.fail, onRight: Effect.succeed })
    const result = yield* optimizeText<D, T, O>({ ...rest, ...fields })
    return yield* Either.match(Typed.decodeResult(candidateSchema, result), { onLeft: Effect.fail, onRight: Effect.succeed })
  })

const optimizeText = <D, T, O>(
  config: Config<D, T, O>
): Effect.Effect<OptimizeResult<O>, OptimizeError, AdapterService<D, T, O> | ReflectionModel> => {
  return Effect.scoped(loop.run(config, chooseStore, undefined)).pipe(
    Effect.withScheduler(engineScheduler),
    logContext(config),
    Effect.withSpan("gepa.optimize")
  )
}

/**
 * The run's log context: every log line of the run (the engine's, the
 * adapter's, the models') carries the `run` annotation (the run directory
 * when there is one, else a fresh id) and the `gepa.run` log span.
 */
const logContext = (config: { readonly runDir?: string | undefined }) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() =>
    effect.pipe(
      Effect.annotateLogs("run", config.runDir ?? `run-${globalThis.crypto.randomUUID().slice(0, 8)}`),
      Effect.withLogSpan("gepa.run")
    )
  )

/**
 * Runs GEPA as a stream of events. `IterationEnded` events carry the state
 * after each iteration; the run waits while the consumer is busy (a small
 * buffer), and ending the stream early interrupts the run. Requirements
 * follow the same rules as `optimize`.
 *
 * @since 0.1.0
 * @category running
 */
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
  config: Config<D, T, O>
): Stream.Stream<GepaEvent, OptimizeError, AdapterService<D, T, O> | ReflectionModel> {
  return Stream.asyncScoped<GepaEvent, OptimizeError, AdapterService<D, T, O> | ReflectionModel>((emit) =>
    Effect.scoped(loop.run(config, chooseStore, (event) => Effect.promise(() => emit.single(event)))).pipe(
      Effect.withScheduler(engineScheduler),
      logContext(config),
      Effect.matchCauseEffect({
        onSuccess: () => Effect.promise(() => emit.end()),
        onFailure: (cause) => Effect.promise(() => emit.halt(cause))
      }),
      Effect.forkScoped
    ), { bufferSize: 16, strategy: "suspend" })
}

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
  config: Config<D, T, O> & { readonly adapter: Adapter<D, T, O> }
): Promise<OptimizeResult<O>> {
  // The adapter is in the config, so the tag is never read; the engine reads
  // `ReflectionModel` only as an option, and the overloads above admit only
  // configs that propose without it. Were one to slip through, the run fails
  // with a ConfigError naming `reflectionModel`, not with a missing service.
  const run = optimize(config) as Effect.Effect<OptimizeResult<O>, OptimizeError>
  return Effect.runPromise(Effect.either(run)).then((result) => {
    if (result._tag === "Left") throw result.left
    return result.right
  })
}

/**
 * Optimizes any text artifact from an evaluator returning a score and side
 * information: single-task, multi-task and generalization modes, seedless
 * start. See the `OptimizeAnything` module.
 *
 * @since 0.2.0
 * @category running
 */
export { optimizeAnything, optimizeAnythingPromise } from "./OptimizeAnything.js"
