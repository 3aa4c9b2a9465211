/**
 * Optimize any text artifact (code, a configuration, a prompt, a policy, an
 * SVG...) from an evaluator that scores it and says why: `optimizeAnything`
 * builds the adapter, the data setup and the reflection prompt around the
 * evaluator and runs GEPA (`Gepa.optimize`) with them.
 *
 * The mode follows from the data given:
 *
 * - **single task** (no `dataset`): the candidate is the solution of one
 *   problem; the evaluator is called without an example (`undefined`) and
 *   every evaluation is of that one problem (one internal example, no split);
 * - **multi-task** (`dataset`, no `valset`): one candidate should solve a
 *   batch of related problems; the dataset is both what reflection learns
 *   from and what candidates are ranked on;
 * - **generalization** (`dataset` and `valset`): candidates learn from the
 *   dataset and are ranked on unseen validation examples, as in `optimize`.
 *
 * Without `seedCandidate`, the reflection model writes the first candidate
 * from `objective` (and `background`): **seedless start**.
 *
 * The evaluator returns a score and, ideally, **side information**: error
 * messages, failing cases, measurements, partial scores, as structured data.
 * The reflection model reads it (rendered as compact markdown, cut to the
 * prompt's size budget with explicit truncation markers; a run directory
 * keeps it whole in `side_info.jsonl`) to know why a candidate failed and
 * how to fix it. Whatever the evaluator logs through `Effect.log*` during one
 * evaluation is captured and shown with that evaluation.
 *
 * @since 0.2.0
 */
import type { Effect } from "effect"
import type { Candidate } from "./Candidate.js"
import type { DataLoader } from "./DataLoader.js"
import type { DataLoaderError } from "./DataLoader.js"
import type { PersistenceError } from "./Errors.js"
import type { ObjectiveScores } from "./EvaluationBatch.js"
import type * as Gepa from "./Gepa.js"
import * as command from "./internal/optimizeAnything/command.js"
import * as internal from "./internal/optimizeAnything/run.js"
import type { EvaluationRecord, EvaluationTrace } from "./internal/optimizeAnything/sideInfo.js"
import type { LanguageModel, ReflectionModel } from "./LanguageModel.js"
import type { Proposer } from "./Proposal.js"
import { SeedGenerationFailed } from "./internal/optimizeAnything/errors.js"

export type {
  /**
   * What one evaluation produced (the run's output type): the score, the
   * side information (JSON-like, within the size budget), the objective
   * scores and the captured log lines.
   *
   * @since 0.2.0
   * @category models
   */
  EvaluationRecord,
  /**
   * The trace of one evaluation: the example (`undefined` in single-task
   * mode) and its record.
   *
   * @since 0.2.0
   * @category models
   */
  EvaluationTrace
}

/**
 * The component name a text seed (or a generated one) is held under inside
 * the engine; the result and the evaluator see the plain text.
 *
 * @since 0.2.0
 * @category constants
 */
export const textComponent = "candidate"

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
 * Size budgets of one evaluation's side information: as stored (in the
 * result, the cache and the run directory) and, smaller, as shown in the
 * reflection prompt.
 *
 * @since 0.2.0
 * @category models
 */
export interface SideInfoLimits {
  /** longer strings keep their head and tail around a truncation marker (default 2000) */
  readonly maxStringLength?: number
  /** longer lists and records keep their first items and say how many were cut (default 25) */
  readonly maxListItems?: number
  /** deeper structures are shown as (truncated) JSON text (default 6) */
  readonly maxDepth?: number
  /** the whole side information of one evaluation, as JSON, at most (default 8000) */
  readonly maxRecordLength?: number
  /**
   * strings as shown in the reflection prompt, at most (default 400); the
   * run directory keeps them within `maxStringLength` (`side_info.jsonl`)
   */
  readonly promptStringLength?: number
  /**
   * one evaluation's input and side information as shown in the reflection
   * prompt, each at most this many characters of JSON (default 1000); the
   * run directory keeps them within `maxRecordLength`
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
  Gepa.Config<unknown, EvaluationTrace, EvaluationRecord>,
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
export interface Result<C> extends Omit<Gepa.OptimizeResult<EvaluationRecord>, "bestCandidate"> {
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
 * The reflection model gave no usable first candidate in `attempts` calls,
 * or the call itself failed.
 *
 * @since 0.2.0
 * @category errors
 */
export { SeedGenerationFailed }

/**
 * Every way `optimizeAnything` can fail.
 *
 * @since 0.2.0
 * @category errors
 */
export type OptimizeAnythingError = Gepa.OptimizeError | SeedGenerationFailed | PersistenceError | DataLoaderError

/**
 * Runs GEPA on the artifact the evaluator scores. The reflection model comes
 * from `reflectionModel` or from the context (`ReflectionModel`); a custom
 * `proposer` replaces it after the seed (a seedless start still needs the
 * model). The evaluator's requirements `R` flow to the result.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OptimizeAnything } from "effect-gepa"
 *
 * const program = OptimizeAnything.optimizeAnything({
 *   seedCandidate: "x = 1",
 *   objective: "make the evaluator happy",
 *   evaluator: (text) => Effect.succeed({ score: text.length > 3 ? 1 : 0, sideInfo: { length: text.length } }),
 *   maxMetricCalls: 20
 * })
 * ```
 *
 * @since 0.2.0
 * @category running
 */
export function optimizeAnything<S extends string | Candidate = string, D = unknown, E = never, R = never>(
  config: SeededConfig<S, D, E, R> & { readonly reflectionModel: LanguageModel }
): Effect.Effect<Result<CandidateOf<S>>, OptimizeAnythingError, R>
export function optimizeAnything<S extends string | Candidate = string, D = unknown, E = never, R = never>(
  config: SeedlessConfig<S, D, E, R> & { readonly reflectionModel: LanguageModel }
): Effect.Effect<Result<CandidateOf<S>>, OptimizeAnythingError, R>
export function optimizeAnything<S extends string | Candidate = string, D = unknown, E = never, R = never>(
  config: SeededConfig<S, D, E, R> & { readonly proposer: Proposer }
): Effect.Effect<Result<CandidateOf<S>>, OptimizeAnythingError, R>
export function optimizeAnything<S extends string | Candidate = string, D = unknown, E = never, R = never>(
  config: SeededConfig<S, D, E, R>
): Effect.Effect<Result<CandidateOf<S>>, OptimizeAnythingError, R | ReflectionModel>
export function optimizeAnything<S extends string | Candidate = string, D = unknown, E = never, R = never>(
  config: SeedlessConfig<S, D, E, R>
): Effect.Effect<Result<CandidateOf<S>>, OptimizeAnythingError, R | ReflectionModel>
// a configuration typed as the union `Config` (either branch); the model may
// come from the context
export function optimizeAnything<S extends string | Candidate = string, D = unknown, E = never, R = never>(
  config: Config<S, D, E, R>
): Effect.Effect<Result<CandidateOf<S>>, OptimizeAnythingError, R | ReflectionModel>
export function optimizeAnything<S extends string | Candidate, D, E, R>(
  config: Config<S, D, E, R>
): Effect.Effect<Result<CandidateOf<S>>, OptimizeAnythingError, R | ReflectionModel> {
  // the run reads the configuration untyped (every value as unknown); its
  // result has the candidate's shape the seed has, and needs what the evaluator needs
  return internal.run(config) as Effect.Effect<Result<CandidateOf<S>>, OptimizeAnythingError, R | ReflectionModel>
}

/**
 * `optimizeAnything` for Promise-based callers: resolves with the result or
 * rejects with the tagged error itself.
 *
 * @since 0.2.0
 * @category running
 */
export const optimizeAnythingPromise = <S extends string | Candidate = string, D = unknown, E = never>(
  config: Config<S, D, E, never> & { readonly reflectionModel: LanguageModel }
): Promise<Result<CandidateOf<S>>> => internal.runPromise(internal.run(config) as Effect.Effect<Result<CandidateOf<S>>, OptimizeAnythingError>)

/**
 * An evaluator from a plain function returning a score (or `{ score,
 * sideInfo, scores }`) or a Promise of one. A thrown error or a rejected
 * Promise is a failed evaluation.
 *
 * @since 0.2.0
 * @category constructors
 */
export const evaluator = <C, D = unknown>(
  f: (candidate: C, example: D) => EvaluatorResult | PromiseLike<EvaluatorResult>
): Evaluator<C, D, unknown> =>
(candidate, example) => internal.lift(() => f(candidate, example))

/**
 * Options of the `gepa anything` command (paths are relative to the
 * environment's `cwd`).
 *
 * - `evaluator`: a module exporting `evaluate` (or `evaluator`, or a default
 *   export), a function `(candidate, example)` returning a score or `{ score,
 *   sideInfo, scores }`, directly, as a Promise or as an Effect;
 * - `seed`: a text file with the seed (a `.json` file may hold an object of
 *   named texts); absent for a seedless start from `objective`;
 * - `dataset`, `valset`, `testset`: JSON Lines files (one JSON value per
 *   line) or `.json` arrays;
 * - `runDir`: the run directory (state, events, cache, result, report);
 * - `engine`: the engine options as parsed by the CLI (budget, stops...).
 *
 * @since 0.2.0
 * @category command
 */
export type CommandOptions = command.CommandOptions

/**
 * What the command needs from the CLI: the reflection model and where to
 * print.
 *
 * @since 0.2.0
 * @category command
 */
export type CommandEnvironment = command.CommandEnvironment

/**
 * The files the command writes in the run directory besides those of
 * `RunDir`: the HTML report and, with a test set, the test scores.
 *
 * @since 0.2.0
 * @category command
 */
// a live re-export, not a copy: this module and the command's are in one
// import cycle (through `Gepa`), and a copy made while loading could read the
// binding before it exists
export { files as commandFiles } from "./internal/optimizeAnything/command.js"

/**
 * Runs `gepa anything`: checks and loads every input (the evaluator module,
 * the seed, the data files) before the run directory is touched, runs
 * `optimizeAnything` there, writes the report and the test scores and prints
 * a summary. Bad input fails with a `ConfigError` naming the flag.
 *
 * @since 0.2.0
 * @category command
 */
export const runCommand = (
  options: CommandOptions,
  env: CommandEnvironment
): Effect.Effect<Result<unknown>, OptimizeAnythingError> => command.runCommand(options, env)
