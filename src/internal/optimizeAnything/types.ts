/**
 * The types of `optimizeAnything`'s configuration and result, below both the
 * public face (`OptimizeAnything`, which re-exports them) and the
 * implementation (`run.ts`, `command.ts`), so that neither imports the other
 * back.
 *
 * @internal
 */
import type { Effect } from "effect"
import type { Candidate } from "../../Candidate.js"
import type * as CandidateSchema from "../../CandidateSchema.js"
import type { Config as EngineConfig } from "../../Config.js"
import type { DataLoader, DataLoaderError } from "../../DataLoader.js"
import type { OptimizeError, PersistenceError } from "../../Errors.js"
import type { ObjectiveScores } from "../../EvaluationBatch.js"
import type { OptimizeResult } from "../../Result.js"
import type { SeedGenerationFailed } from "./errors.js"
import type { EvaluationRecord, EvaluationTrace } from "./sideInfo.js"

/**
 * What an evaluator may report besides its score. `sideInfo` is any
 * JSON-like value (strings, numbers, nested records, lists; errors, maps,
 * sets and dates are converted) shown in every reflection;
 * `componentSideInfo` is shown only when its component is revised; `scores`
 * are per-objective scores (higher is better) for `frontierType:
 * "objective" | "hybrid"`. `score` stays the ranking score.
 *
 * @since 0.2.0
 * @category models
 */
export interface Scored {
  readonly score: number
  readonly sideInfo?: unknown
  readonly scores?: ObjectiveScores | undefined
  /**
   * side information about single components of a multi-component
   * candidate (component name -> value): shown only in the reflection on
   * that component, under `About "<component>"`
   */
  readonly componentSideInfo?: Readonly<Record<string, unknown>> | undefined
}

/**
 * What an evaluator returns: a score, or a score with side information.
 *
 * @since 0.2.0
 * @category models
 */
export type EvaluatorResult = number | Scored

/**
 * The candidate as the evaluator and the result see it: the text for a text
 * seed (or none), the record of texts for a `Candidate` seed.
 *
 * @since 0.2.0
 * @category models
 */
export type CandidateOf<S> = S extends string ? string : { readonly [K in keyof S]: string }

/**
 * The evaluator: scores `candidate` on `example` (on `undefined` in
 * single-task mode). A failure, a defect or a timeout is a failed evaluation
 * (not a score); its message and the logs written before it are shown to the
 * reflection model.
 *
 * @since 0.2.0
 * @category models
 */
export type Evaluator<C, D, E = never, R = never> = (candidate: C, example: D) => Effect.Effect<EvaluatorResult, E, R>

/**
 * Size budgets of side information: one evaluation's as stored (in the
 * result, the cache and the run directory's `side_info.jsonl`), and the
 * whole reflection prompt's. The stored limits only guard against runaway
 * output; the prompt shows the side information whole up to its budget and
 * trims it only over it (failing records and summary lines kept first,
 * whole records dropped, the cut counted in the prompt).
 *
 * @since 0.2.0
 * @category models
 */
export interface SideInfoLimits {
  /** longer strings keep their head and tail around a truncation marker (default 20,000; was 2,000) */
  readonly maxStringLength?: number
  /** longer lists and records keep their first items and say how many were cut (default 1,000; was 25) */
  readonly maxListItems?: number
  /** deeper structures are shown as (truncated) JSON text (default 8; was 6) */
  readonly maxDepth?: number
  /** the whole side information of one evaluation, as JSON, at most (default 100,000; was 8,000) */
  readonly maxRecordLength?: number
  /**
   * characters of the whole reflection prompt (template, instructions,
   * current text and evaluations), at most. Default: from the reflection
   * model's context window when its layer knows it (`contextWindow` option
   * of the model layers: tokens x 3 characters x half the window), else
   * 100,000 (about 30,000 tokens). Within it, side information is shown
   * whole. Since 0.3.0.
   */
  readonly promptBudget?: number
  /**
   * @deprecated Cuts every string of each evaluation in the prompt to this
   * length, which hides the evidence the reflection needs; use
   * `promptBudget` (the prompt shows side information whole up to it).
   * Removed in 0.4.0.
   */
  readonly promptStringLength?: number
  /**
   * @deprecated Cuts each evaluation's input and side information in the
   * prompt to this many characters of JSON; use `promptBudget`. Removed in
   * 0.4.0.
   */
  readonly promptRecordLength?: number
}

/**
 * The engine options `optimizeAnything` shares with `Gepa.optimize`
 * (budget, stops, selection, merge, concurrency, timeout, retries, cache, run
 * directory, events...). `evaluationTimeout` applies to each evaluator call.
 *
 * @since 0.2.0
 * @category models
 */
export type EngineOptions = Omit<
  EngineConfig<unknown, EvaluationTrace, EvaluationRecord>,
  "seedCandidate" | "trainset" | "valset" | "adapter"
>

/**
 * What every configuration of `optimizeAnything` has: the engine options of
 * `Gepa.optimize` plus the evaluator and the data. A configuration is a
 * `SeededConfig` or a `SeedlessConfig` (see `Config`).
 *
 * @since 0.3.0
 * @category models
 */
export interface ConfigBase<S extends string | Candidate, D, E = never, R = never> extends EngineOptions {
  /** scores a candidate; see `Evaluator` and `evaluator` to lift plain functions */
  readonly evaluator: Evaluator<CandidateOf<NoInfer<S>>, D, E, R>
  /** examples (multi-task and generalization modes); absent for single-task mode */
  readonly dataset?: ReadonlyArray<D> | DataLoader<D>
  /** validation examples (generalization mode); needs `dataset` */
  readonly valset?: ReadonlyArray<D> | DataLoader<D>
  /**
   * held-out examples: the best candidate is scored on them once, after the
   * run, outside the metric-call budget (`result.test`); the seed too with
   * `testSeed: true`
   */
  readonly testset?: ReadonlyArray<D> | DataLoader<D>
  /**
   * also score the seed on the test set, for a before/after comparison
   * (default false: only the best candidate is scored; when the seed is the
   * best, it is scored once either way)
   */
  readonly testSeed?: boolean
  /** what to achieve; shown in every reflection prompt and used to write a seed when there is none */
  readonly objective?: string
  /** context, constraints, rules of evaluation; shown in every reflection prompt */
  readonly background?: string
  /** calls to the reflection model for a usable first candidate, at most (default 3) */
  readonly seedAttempts?: number
  /** size budgets of each evaluation's side information: as stored, and as shown in the reflection prompt */
  readonly sideInfo?: SideInfoLimits
  /** capture `Effect.log*` output of each evaluation as side information (default true) */
  readonly captureLogs?: boolean
}

/**
 * A run from a given seed: the starting text, or texts.
 *
 * @since 0.3.0
 * @category models
 */
export interface SeededConfig<S extends string | Candidate, D, E = never, R = never> extends ConfigBase<S, D, E, R> {
  /** the starting text, or record of named texts */
  readonly seedCandidate: S
}

/**
 * A seedless run: the reflection model writes the first candidate from the
 * `objective` (and `background`), so the objective is required.
 *
 * @since 0.3.0
 * @category models
 */
export interface SeedlessConfig<S extends string | Candidate, D, E = never, R = never> extends ConfigBase<S, D, E, R> {
  readonly seedCandidate?: undefined
  /** what to achieve: the reflection model writes the first candidate from it */
  readonly objective: string
}

/**
 * The configuration of `optimizeAnything`: the engine options of
 * `Gepa.optimize` plus the evaluator, the data, and the seed or the
 * objective. A configuration with neither a `seedCandidate` nor an
 * `objective` does not type-check (a JavaScript caller gets a `ConfigError`
 * naming `objective`).
 *
 * @since 0.2.0
 * @category models
 */
export type Config<S extends string | Candidate, D, E = never, R = never> =
  | SeededConfig<S, D, E, R>
  | SeedlessConfig<S, D, E, R>

/**
 * A run over a typed artifact (since 0.3.0): `candidateSchema` gives its
 * components (see `CandidateSchema.make`), e.g. a JSON configuration as a
 * `Schema.Struct`, or a code file with its prompt as two components. The
 * seed is a typed value, the evaluator receives the decoded candidate, and
 * `componentProposers` may give components a proposer of their own; the
 * others are rewritten by reflection, and what the model writes for a
 * structured component is read through its schema (a value the schema
 * rejects rejects the proposal). A typed run needs its seed.
 *
 * @since 0.3.0
 * @category models
 */
export interface StructuredConfig<A, D, E = never, R = never>
  extends Omit<ConfigBase<Candidate, D, E, R>, "evaluator" | "componentProposers" | "componentSchemas" | "readComponent" | "seedAttempts">
{
  readonly candidateSchema: CandidateSchema.CandidateSchema<A>
  readonly seedCandidate: NoInfer<A>
  /** scores a decoded candidate */
  readonly evaluator: Evaluator<NoInfer<A>, D, E, R>
  readonly componentProposers?: CandidateSchema.Proposers<A>
}

/**
 * The mode a run is in, from the data given.
 *
 * @since 0.2.0
 * @category models
 */
export type Mode = "single-task" | "multi-task" | "generalization"

/**
 * How the first candidate was written in a seedless start.
 *
 * @since 0.2.0
 * @category models
 */
export interface SeedGeneration {
  /** model calls made (the last one gave the seed) */
  readonly attempts: number
  /** why the answers before it could not be used */
  readonly rejected: ReadonlyArray<string>
}

/**
 * One candidate's score on the test set. Failed evaluations count with the
 * fallback score in `score` and are listed in `errors`.
 *
 * @since 0.2.0
 * @category models
 */
export interface TestScore {
  /** the candidate's index in the run */
  readonly candidate: number
  /** mean test score */
  readonly score: number
  /** per test example, in order */
  readonly scores: ReadonlyArray<number>
  readonly failures: number
  readonly errors: ReadonlyArray<{ readonly id: string; readonly error: string }>
}

/**
 * Test-set scores of the best candidate and, when asked (`testSeed: true`)
 * or when the seed is the best, of the seed (then the same evaluation). Not
 * part of `totalMetricCalls`; `metricCalls` counts them.
 *
 * @since 0.2.0
 * @category models
 */
export interface TestResult {
  readonly size: number
  /** the seed's scores: with `testSeed: true`, or when the seed is the best candidate */
  readonly seed: TestScore | undefined
  readonly best: TestScore
  readonly metricCalls: number
}

/**
 * The result: the engine's result with the best candidate (and the seed) in
 * the shape of the seed given (text or record), the mode, how the seed was
 * made and the test scores.
 *
 * @since 0.2.0
 * @category models
 */
export interface Result<C> extends Omit<OptimizeResult<EvaluationRecord>, "bestCandidate"> {
  readonly bestCandidate: C
  /** the best candidate as the engine holds it (component name -> text) */
  readonly bestComponents: Candidate
  readonly seedCandidate: C
  readonly mode: Mode
  /** set when the reflection model wrote the seed in this call */
  readonly seedGeneration: SeedGeneration | undefined
  /** set when a test set was given */
  readonly test: TestResult | undefined
}

/**
 * The result of a typed run (`StructuredConfig`): the best candidate, the
 * seed and every candidate decoded, with each component's version and origin
 * per candidate; `bestComponents` keeps the stored texts.
 *
 * @since 0.3.0
 * @category models
 */
export interface StructuredResult<A> extends Omit<Result<A>, "candidates">, CandidateSchema.ResultFields<A> {}

/**
 * Every way `optimizeAnything` can fail.
 *
 * @since 0.2.0
 * @category errors
 */
export type OptimizeAnythingError = OptimizeError | SeedGenerationFailed | PersistenceError | DataLoaderError
