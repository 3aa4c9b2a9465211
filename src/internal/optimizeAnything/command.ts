/**
 * The logic of `gepa anything`: loads the evaluator module, the seed file
 * and the data files, runs `optimizeAnything` in a run directory, writes the
 * report (and the test scores) there and prints a summary. The command-line
 * parsing and the model construction stay with the CLI, which passes the
 * reflection model in.
 *
 * @internal
 */
import { Effect, Either } from "effect"
import * as path from "node:path"
import { field as fieldOf, isRecord } from "../shared/fields.js"
import * as UserFile from "../../cli/userFile.js"
import { importUserModule } from "../shared/userModule.js"
import type { Candidate } from "../../Candidate.js"
import { ConfigError } from "../../Errors.js"
import type { LanguageModel } from "../../LanguageModel.js"
import type * as OA from "./types.js"
import * as Progress from "../../cli/progress.js"
import * as Report from "../../Report.js"
import * as RunDir from "../../RunDir.js"
import { lift, run } from "./run.js"

/** @internal */
export interface CommandOptions {
  /** module exporting `evaluate` (or `evaluator`, or a default export): (candidate, example) => score */
  readonly evaluator: string
  /** a text file with the seed (a `.json` file holding an object of strings is a multi-component seed) */
  readonly seed?: string | undefined
  readonly objective?: string | undefined
  readonly background?: string | undefined
  /** JSON Lines (one JSON value per line) or a `.json` array */
  readonly dataset?: string | undefined
  readonly valset?: string | undefined
  readonly testset?: string | undefined
  /** also score the seed on the test set (default false) */
  readonly testSeed?: boolean | undefined
  readonly runDir: string
  /** continue the run already in `runDir` (without it, a run directory holding a run is refused) */
  readonly resume?: boolean | undefined
  /** reflection-model calls for a usable first candidate, at most (default 3) */
  readonly seedAttempts?: number | undefined
  /** engine options (budget, stops, concurrency...) as the CLI parsed them */
  readonly engine?: Partial<OA.EngineOptions> | undefined
}

/** @internal */
export interface CommandEnvironment {
  readonly reflectionModel: LanguageModel
  readonly stdout: (text: string) => void
  /** the directory relative paths are resolved against (default the process's) */
  readonly cwd?: string | undefined
  /** stdout when it is a terminal: progress is then a bar drawn on it */
  readonly terminal?: (NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number }) | undefined
  /** no progress output */
  readonly quiet?: boolean | undefined
}

/** @internal */
export const files = { report: RunDir.FILES.report, test: RunDir.FILES.testScores } as const

const inputError = (field: string, detail: string) => new ConfigError({ field, detail })

const readText = (field: string, file: string): Effect.Effect<string, ConfigError> =>
  Effect.mapError(UserFile.readText(file), (problem) =>
    inputError(
      field,
      problem.kind === "missing"
        ? `${file}: file not found`
        : problem.kind === "directory"
        ? `${file}: is a directory, expected a file`
        : `${file}: ${String(problem.error)}`
    ))

/**
 * The examples of a data file: JSON Lines (one JSON value per non-blank
 * line), or a JSON array when the name ends in `.json`.
 *
 * @internal
 */
export const parseData = (field: string, file: string, text: string): Either.Either<ReadonlyArray<unknown>, ConfigError> => {
  if (/\.json$/i.test(file)) {
    try {
      const json: unknown = JSON.parse(text)
      if (!Array.isArray(json)) return Either.left(inputError(field, `${file}: expected a JSON array of examples`))
      if (json.length === 0) return Either.left(inputError(field, `${file}: no examples in the file`))
      return Either.right(json)
    } catch (e) {
      return Either.left(inputError(field, `${file}: invalid JSON: ${messageOf(e)}`))
    }
  }
  const out: Array<unknown> = []
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === "") continue
    try {
      out.push(JSON.parse(line))
    } catch (e) {
      return Either.left(inputError(field, `${file}:${i + 1}: invalid JSON: ${messageOf(e)}`))
    }
  }
  if (out.length === 0) return Either.left(inputError(field, `${file}: no examples in the file`))
  return Either.right(out)
}

// JSON.parse throws a SyntaxError
const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const isCandidate = (u: unknown): u is Candidate => isRecord(u) && !Array.isArray(u) && Object.values(u).every((v) => typeof v === "string")

const parseSeed = (file: string, text: string): Either.Either<string | Candidate, ConfigError> => {
  if (!/\.json$/i.test(file)) return Either.right(text.replace(/\r?\n$/, ""))
  try {
    const json: unknown = JSON.parse(text)
    if (typeof json === "string") return Either.right(json)
    if (isCandidate(json)) return Either.right(json)
    return Either.left(inputError("--seed", `${file}: expected a JSON string or an object of named texts`))
  } catch (e) {
    return Either.left(inputError("--seed", `${file}: invalid JSON: ${messageOf(e)}`))
  }
}

/**
 * The evaluator a module exports: `evaluate`, `evaluator` or the default
 * export, a function `(candidate, example)` returning a score or `{ score,
 * sideInfo, scores }`, directly, as a Promise or as an Effect.
 *
 * @internal
 */
export const loadEvaluator = (file: string): Effect.Effect<OA.Evaluator<unknown, unknown, unknown>, ConfigError> =>
  Effect.gen(function*() {
    // a file system that cannot tell leaves a missing module to the import
    if (!(yield* Effect.orElseSucceed(UserFile.exists(file), () => true))) {
      return yield* Effect.fail(inputError("--evaluator", `${file}: module not found`))
    }
    const mod = yield* Effect.tryPromise({
      try: () => importUserModule(file, { sameGraphFirst: true, orIsolated: true }),
      catch: (e) => inputError("--evaluator", `${file}: cannot load the module: ${e instanceof Error ? e.message : String(e)}`)
    })
    const fn = fieldOf(mod, "evaluate") ?? fieldOf(mod, "evaluator") ?? fieldOf(mod, "default")
    if (typeof fn !== "function") {
      return yield* Effect.fail(inputError(
        "--evaluator",
        `${file}: the module must export a function named "evaluate" (or a default export) taking (candidate, example)`
      ))
    }
    return (candidate: unknown, example: unknown) => lift((): unknown => Reflect.apply(fn, undefined, [candidate, example]))
  })

const fmt = (n: number | null | undefined) => (n === null || n === undefined ? "n/a" : n.toFixed(3))

/**
 * Runs `gepa anything`. Every input is checked before the run directory is
 * touched; input problems fail with a `ConfigError` naming the flag.
 *
 * @internal
 */
export const runCommand = (
  options: CommandOptions,
  env: CommandEnvironment
): Effect.Effect<OA.Result<unknown>, OA.OptimizeAnythingError> =>
  Effect.gen(function*() {
    const cwd = env.cwd ?? process.cwd()
    const at = (file: string) => path.resolve(cwd, file)
    const evaluator = yield* loadEvaluator(at(options.evaluator))
    const seedFile = options.seed
    const seed = seedFile === undefined
      ? undefined
      : yield* Effect.flatMap(readText("--seed", at(seedFile)), (text) => parseSeed(at(seedFile), text))
    const data = (field: string, file: string | undefined) =>
      file === undefined ? Effect.succeed(undefined) : Effect.flatMap(readText(field, at(file)), (text) => parseData(field, at(file), text))
    const dataset = yield* data("--dataset", options.dataset)
    const valset = yield* data("--valset", options.valset)
    const testset = yield* data("--testset", options.testset)
    const runDir = at(options.runDir)
    const kind = yield* Effect.orElseSucceed(RunDir.pathKind(runDir), () => "other" as const)
    if (kind !== "missing") {
      if (kind === "other") return yield* Effect.fail(inputError("--run-dir", `${runDir}: is a file`))
      if (options.resume !== true && (yield* RunDir.holdsState(runDir))) {
        return yield* Effect.fail(inputError(
          "--run-dir",
          `${runDir}: already holds a run; continue it with --resume, or choose another --run-dir`
        ))
      }
    }
    // the CLI's progress: a bar on a terminal, plain lines otherwise, nothing with --quiet
    const progress = Progress.make({
      write: env.stdout,
      terminal: env.terminal,
      quiet: env.quiet,
      maxMetricCalls: options.engine?.maxMetricCalls
    })
    const printer = progress.onEvent
    const userEvent = options.engine?.onEvent
    const common: OA.ConfigBase<string | Candidate, unknown, unknown> = {
      ...options.engine,
      ...(options.objective === undefined ? {} : { objective: options.objective }),
      ...(options.testSeed === undefined ? {} : { testSeed: options.testSeed }),
      ...(options.background === undefined ? {} : { background: options.background }),
      ...(dataset === undefined ? {} : { dataset }),
      ...(valset === undefined ? {} : { valset }),
      ...(testset === undefined ? {} : { testset }),
      ...(options.seedAttempts === undefined ? {} : { seedAttempts: options.seedAttempts }),
      evaluator,
      reflectionModel: env.reflectionModel,
      runDir,
      onEvent: (event) => {
        printer(event)
        return userEvent?.(event)
      }
    }
    // without a seed the objective is required; an empty one is the run's
    // own ConfigError naming `objective`
    const config: OA.Config<string | Candidate, unknown, unknown> = seed === undefined
      ? { ...common, objective: options.objective ?? "" }
      : { ...common, seedCandidate: seed }
    const result = yield* (run(config) as Effect.Effect<OA.Result<unknown>, OA.OptimizeAnythingError>).pipe(
      // the bar is taken down before anything else is printed
      Effect.ensuring(Effect.sync(progress.stop))
    )
    // through the run directory's own atomic write
    const write = (name: RunDir.FileName, text: string) => Effect.as(RunDir.writeFile(runDir, name, text), path.join(runDir, name))
    const { bestComponents, bestCandidate: _best, mode: _mode, seedCandidate: _seed, seedGeneration: _gen, test, ...rest } = result
    const report = yield* write(
      files.report,
      Report.render({
        result: { ...rest, bestCandidate: bestComponents },
        trace: result.state.trace,
        title: `GEPA anything run ${path.basename(runDir)} (${result.mode}${
          result.seedGeneration === undefined ? "" : ", seed written by the reflection model"
        })`,
        generatedAt: new Date().toISOString()
      })
    )
    if (test !== undefined) yield* write(files.test, `${JSON.stringify(test, null, 2)}\n`)
    const best = typeof result.bestCandidate === "string" ? result.bestCandidate : JSON.stringify(result.bestCandidate, null, 2)
    env.stdout([
      "",
      `Done (${result.mode}): ${result.stopReason}`,
      ...(result.seedGeneration === undefined
        ? []
        : [`  seed          written by the reflection model (${result.seedGeneration.attempts} call${result.seedGeneration.attempts === 1 ? "" : "s"})`]),
      `  seed score    ${fmt(result.seedScore)}`,
      `  best score    ${fmt(result.bestScore)} (candidate ${result.bestIndex} of ${result.candidates.length})`,
      `  metric calls  ${result.totalMetricCalls}, iterations ${result.iterations}`,
      ...(test === undefined ? [] : [
        `  test score    ${test.seed === undefined ? "" : `seed ${fmt(test.seed.score)} -> `}best ${
          fmt(test.best.score)
        } (${test.size} examples, outside the budget)`
      ]),
      "",
      "Best candidate:",
      best,
      "",
      `Run directory: ${runDir}`,
      `Report:        ${report}`,
      ""
    ].join("\n"))
    return result
  })
