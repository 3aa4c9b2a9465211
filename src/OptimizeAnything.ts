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
import * as command from "./internal/optimizeAnything/command.js"
import { SeedGenerationFailed } from "./internal/optimizeAnything/errors.js"
import * as internal from "./internal/optimizeAnything/run.js"
import type { EvaluationRecord, EvaluationTrace } from "./internal/optimizeAnything/sideInfo.js"
import type {
  CandidateOf,
  Config,
  Evaluator,
  EvaluatorResult,
  OptimizeAnythingError,
  Result,
  SeededConfig,
  SeedlessConfig
} from "./internal/optimizeAnything/types.js"
import type { LanguageModel, ReflectionModel } from "./LanguageModel.js"
import type { Proposer } from "./Proposal.js"

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

export type {
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
  Scored,
  /**
   * What an evaluator returns: a score, or a score with side information.
   *
   * @since 0.2.0
   * @category models
   */
  EvaluatorResult,
  /**
   * The candidate as the evaluator and the result see it: the text for a text
   * seed (or none), the record of texts for a `Candidate` seed.
   *
   * @since 0.2.0
   * @category models
   */
  CandidateOf,
  /**
   * The evaluator: scores `candidate` on `example` (on `undefined` in
   * single-task mode). A failure, a defect or a timeout is a failed evaluation
   * (not a score); its message and the logs written before it are shown to the
   * reflection model.
   *
   * @since 0.2.0
   * @category models
   */
  Evaluator,
  /**
   * Size budgets of one evaluation's side information: as stored (in the
   * result, the cache and the run directory) and, smaller, as shown in the
   * reflection prompt.
   *
   * @since 0.2.0
   * @category models
   */
  SideInfoLimits,
  /**
   * The engine options `optimizeAnything` shares with `Gepa.optimize`
   * (budget, stops, selection, merge, concurrency, timeout, retries, cache, run
   * directory, events...). `evaluationTimeout` applies to each evaluator call.
   *
   * @since 0.2.0
   * @category models
   */
  EngineOptions,
  /**
   * What every configuration of `optimizeAnything` has: the engine options of
   * `Gepa.optimize` plus the evaluator and the data. A configuration is a
   * `SeededConfig` or a `SeedlessConfig` (see `Config`).
   *
   * @since 0.3.0
   * @category models
   */
  ConfigBase,
  /**
   * A run from a given seed: the starting text, or texts.
   *
   * @since 0.3.0
   * @category models
   */
  SeededConfig,
  /**
   * A seedless run: the reflection model writes the first candidate from the
   * `objective` (and `background`), so the objective is required.
   *
   * @since 0.3.0
   * @category models
   */
  SeedlessConfig,
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
  Config,
  /**
   * The mode a run is in, from the data given.
   *
   * @since 0.2.0
   * @category models
   */
  Mode,
  /**
   * How the first candidate was written in a seedless start.
   *
   * @since 0.2.0
   * @category models
   */
  SeedGeneration,
  /**
   * One candidate's score on the test set. Failed evaluations count with the
   * fallback score in `score` and are listed in `errors`.
   *
   * @since 0.2.0
   * @category models
   */
  TestScore,
  /**
   * Test-set scores of the best candidate and, when asked (`testSeed: true`)
   * or when the seed is the best, of the seed (then the same evaluation). Not
   * part of `totalMetricCalls`; `metricCalls` counts them.
   *
   * @since 0.2.0
   * @category models
   */
  TestResult,
  /**
   * The result: the engine's result with the best candidate (and the seed) in
   * the shape of the seed given (text or record), the mode, how the seed was
   * made and the test scores.
   *
   * @since 0.2.0
   * @category models
   */
  Result,
  /**
   * Every way `optimizeAnything` can fail.
   *
   * @since 0.2.0
   * @category errors
   */
  OptimizeAnythingError
} from "./internal/optimizeAnything/types.js"

/**
 * The component name a text seed (or a generated one) is held under inside
 * the engine; the result and the evaluator see the plain text.
 *
 * @since 0.2.0
 * @category constants
 */
export const textComponent = "candidate"

export {
  /**
   * The reflection model gave no usable first candidate in `attempts` calls,
   * or the call itself failed.
   *
   * @since 0.2.0
   * @category errors
   */
  SeedGenerationFailed
}

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

export {
  /**
   * The files the command writes in the run directory besides those of
   * `RunDir`: the HTML report and, with a test set, the test scores.
   *
   * @since 0.2.0
   * @category command
   */
  files as commandFiles
} from "./internal/optimizeAnything/command.js"

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
