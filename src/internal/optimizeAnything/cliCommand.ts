/**
 * The `gepa anything` subcommand as an @effect/cli `Command`, ready to be
 * added to the `gepa` command's subcommands. Flags are parsed into
 * `runCommand` options by a pure function; the reflection model comes from
 * the CLI's model factory.
 *
 * @internal
 */
import { Command, Options } from "@effect/cli"
import { Duration, Effect, Either, Option } from "effect"
import * as path from "node:path"
import { defaults } from "../../Config.js"
import { ConfigError } from "../../Errors.js"
import type { LanguageModel } from "../../LanguageModel.js"
import type * as OA from "./types.js"
import * as StopCondition from "../../StopCondition.js"
import { type CommandOptions, runCommand } from "./command.js"

/** @internal */
export interface CliEnvironment<E> {
  readonly cwd: string
  readonly stdout: (text: string) => void
  readonly makeReflectionModel: (spec: { readonly model: string; readonly baseUrl?: string | undefined }) => Effect.Effect<LanguageModel, E>
  readonly now?: (() => Date) | undefined
  /** stdout when it is a terminal (progress bar) */
  readonly terminal?: (NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number }) | undefined
}

const text = (name: string, description: string) => Options.text(name).pipe(Options.withDescription(description), Options.optional)

/** @internal */
export const flags = {
  evaluator: text("evaluator", "module exporting evaluate(candidate, example) -> score or { score, sideInfo, scores }"),
  seed: text("seed", "file holding the seed candidate (a .json file may hold an object of named texts); absent: seedless start"),
  objective: text("objective", "what to achieve (required without --seed)"),
  background: text("background", "context, constraints, how candidates are evaluated"),
  dataset: text("dataset", "examples: JSONL (one JSON value per line) or a JSON array; absent: single-task mode"),
  valset: text("valset", "validation examples (generalization mode)"),
  testset: text("testset", "held-out examples the best candidate is scored on once at the end, outside the budget"),
  testSeed: Options.boolean("test-seed").pipe(Options.withDescription("also score the seed on --testset (before/after)")),
  reflectionModel: text("reflection-model", "reflection model name (OpenAI-compatible)"),
  reflectionBaseUrl: text("reflection-base-url", "reflection model base URL"),
  maxMetricCalls: text("max-metric-calls", "strict budget of metric calls (evaluations)"),
  maxIterations: text("max-iterations", "stop after this many iterations"),
  timeout: text("timeout", `stop after this long, e.g. "90s", "15m", "2h"`),
  scoreThreshold: text("score-threshold", "stop once the best score reaches this"),
  evaluationTimeout: text("evaluation-timeout", `time limit of one evaluator call, e.g. "30s"`),
  maxConcurrency: text("max-concurrency", `evaluations in flight at most (default ${defaults.maxConcurrency})`),
  minibatchSize: text("minibatch-size", "examples per reflection (default 3, 1 in single-task mode)"),
  seedAttempts: text("seed-attempts", "reflection-model calls for a usable first candidate, at most (default 3)"),
  randomSeed: text("random-seed", "seed of every random choice (default 0)"),
  merge: Options.boolean("merge").pipe(Options.withDescription("enable merges of complementary candidates")),
  runDir: text("run-dir", "run directory (default .gepa-runs/anything-<timestamp>)"),
  resume: Options.boolean("resume").pipe(Options.withDescription("continue the run already in --run-dir")),
  quiet: Options.boolean("quiet").pipe(Options.withDescription("no progress (bar or periodic lines); the summary is still printed"))
}

/** @internal */
export type FlagValues = { readonly [K in keyof typeof flags]?: string | boolean | undefined }

const fail = (flag: string, detail: string): Either.Either<never, ConfigError> => Either.left(new ConfigError({ field: `--${flag}`, detail }))

const int = (flag: string, value: string | boolean | undefined, min: number): Either.Either<number | undefined, ConfigError> => {
  if (value === undefined || typeof value === "boolean") return Either.right(undefined)
  const n = Number(value)
  return Number.isInteger(n) && n >= min ? Either.right(n) : fail(flag, `expected an integer of at least ${min}, got ${JSON.stringify(value)}`)
}

/**
 * A duration: a number of seconds, or a number followed by ms, s, m or h.
 *
 * @internal
 */
export const parseDuration = (value: string): Duration.Duration | undefined => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(value)
  if (m === null || !(Number(m[1]) > 0)) return undefined
  const n = Number(m[1])
  const unit = (m[2] ?? "s").toLowerCase()
  return unit === "ms" ? Duration.millis(n) : unit === "m" ? Duration.minutes(n) : unit === "h" ? Duration.hours(n) : Duration.seconds(n)
}

const duration = (flag: string, value: string | boolean | undefined): Either.Either<Duration.Duration | undefined, ConfigError> => {
  if (value === undefined || typeof value === "boolean") return Either.right(undefined)
  const d = parseDuration(value)
  return d === undefined ? fail(flag, `expected a duration such as "90s", "15m" or "2h", got ${JSON.stringify(value)}`) : Either.right(d)
}

const str = (value: string | boolean | undefined): string | undefined => (typeof value === "string" ? value : undefined)

/**
 * The `runCommand` options and the reflection model of the flags, or the
 * first problem, naming its flag.
 *
 * @internal
 */
export const fromFlags = (
  values: FlagValues,
  now: Date = new Date()
): Either.Either<{ readonly options: CommandOptions; readonly model: { readonly model: string; readonly baseUrl?: string | undefined } }, ConfigError> =>
  Either.gen(function*() {
    const evaluator = str(values.evaluator)
    if (evaluator === undefined) return yield* fail("evaluator", "required: the module exporting evaluate(candidate, example)")
    const seed = str(values.seed)
    const objective = str(values.objective)
    if (seed === undefined && (objective === undefined || objective.trim() === "")) {
      return yield* fail("objective", "required without --seed: the reflection model writes the first candidate from it")
    }
    if (str(values.valset) !== undefined && str(values.dataset) === undefined) return yield* fail("valset", "needs --dataset")
    if (str(values.testset) !== undefined && str(values.dataset) === undefined) return yield* fail("testset", "needs --dataset")
    if (values.testSeed === true && str(values.testset) === undefined) return yield* fail("test-seed", "needs --testset")
    const modelName = str(values.reflectionModel)
    if (modelName === undefined) return yield* fail("reflection-model", "required: the name of the reflection model")
    const maxMetricCalls = yield* int("max-metric-calls", values.maxMetricCalls, 1)
    const maxIterations = yield* int("max-iterations", values.maxIterations, 1)
    const timeout = yield* duration("timeout", values.timeout)
    const evaluationTimeout = yield* duration("evaluation-timeout", values.evaluationTimeout)
    const maxConcurrency = yield* int("max-concurrency", values.maxConcurrency, 1)
    const minibatchSize = yield* int("minibatch-size", values.minibatchSize, 1)
    const seedAttempts = yield* int("seed-attempts", values.seedAttempts, 1)
    const randomSeed = yield* int("random-seed", values.randomSeed, 0)
    let scoreThreshold: number | undefined
    const threshold = str(values.scoreThreshold)
    if (threshold !== undefined) {
      scoreThreshold = Number(threshold)
      if (threshold.trim() === "" || !Number.isFinite(scoreThreshold)) {
        return yield* fail("score-threshold", `expected a number, got ${JSON.stringify(threshold)}`)
      }
    }
    // the run needs an end: a budget or a stop condition besides Ctrl-C
    if (maxMetricCalls === undefined && maxIterations === undefined && timeout === undefined && scoreThreshold === undefined) {
      return yield* fail("max-metric-calls", "give a budget (--max-metric-calls) or a stop (--max-iterations, --timeout, --score-threshold)")
    }
    const stop: Array<StopCondition.StopCondition> = [StopCondition.onSignal()]
    if (maxIterations !== undefined) stop.push(StopCondition.maxIterations(maxIterations))
    if (timeout !== undefined) stop.push(StopCondition.timeout(timeout))
    if (scoreThreshold !== undefined) stop.push(StopCondition.scoreThreshold(scoreThreshold))
    const engine: Partial<OA.EngineOptions> = {
      stop,
      ...(maxMetricCalls === undefined ? {} : { maxMetricCalls }),
      ...(evaluationTimeout === undefined ? {} : { evaluationTimeout }),
      ...(maxConcurrency === undefined ? {} : { maxConcurrency }),
      ...(minibatchSize === undefined ? {} : { minibatchSize }),
      ...(randomSeed === undefined ? {} : { seed: randomSeed }),
      ...(values.merge === true ? { merge: true } : {})
    }
    const stamp = now.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")
    const options: CommandOptions = {
      evaluator,
      seed,
      objective,
      background: str(values.background),
      dataset: str(values.dataset),
      valset: str(values.valset),
      testset: str(values.testset),
      testSeed: values.testSeed === true,
      runDir: str(values.runDir) ?? path.join(".gepa-runs", `anything-${stamp}`),
      seedAttempts,
      resume: values.resume === true,
      engine
    }
    return { options, model: { model: modelName, baseUrl: str(values.reflectionBaseUrl) } }
  })

/**
 * The `anything` subcommand.
 *
 * @internal
 */
export const command = <E>(env: CliEnvironment<E>) =>
  Command.make("anything", flags, (given) =>
    Effect.gen(function*() {
      const values: Record<string, string | boolean | undefined> = {}
      for (const [key, value] of Object.entries(given)) {
        values[key] = Option.isOption(value) ? Option.getOrUndefined(value) : value
      }
      const { model, options } = yield* fromFlags(values, env.now?.() ?? new Date())
      const reflectionModel = yield* env.makeReflectionModel(model)
      yield* runCommand(options, {
        reflectionModel,
        stdout: env.stdout,
        cwd: env.cwd,
        terminal: env.terminal,
        quiet: values["quiet"] === true
      })
    })).pipe(Command.withDescription("optimize any text artifact with an evaluator module (see docs/optimize-anything.md)"))

/** @internal */
export type AnythingCommand = ReturnType<typeof command<unknown>>
