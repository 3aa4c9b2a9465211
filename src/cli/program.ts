/**
 * Runs a `gepa` command with @effect/cli (loaded only when a command runs,
 * not for `--help`) and turns every failure into one line and an exit code.
 *
 * @since 0.2.0
 */
import { CliConfig, Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Data, Effect, Either, Layer, Logger, LogLevel } from "effect"
import * as Commands from "./commands.js"
import { docs, type FlagDoc } from "./docs.js"
import { CliInputError, ExitCode } from "./errors.js"
import { budgetOptions, modelOptions, optimizeOptions, reportOptions, resumeOptions, showOptions } from "./options.js"
import { didYouMean } from "./suggest.js"
import { at } from "../internal/shared/invariant.js"
import type { Environment, RunFailure } from "./run.js"
import * as Secrets from "../Secrets.js"

// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;]*m/g
const oneLine = (text: string) => Secrets.scrub(text.replace(ansi, "").replace(/\s*\n\s*/g, " ").trim())

const flagDocs: ReadonlyArray<FlagDoc> = Object.values(docs)

const docsByKey: ReadonlyMap<string, FlagDoc> = new Map(Object.entries(docs))
const docFlag = (key: string): string | undefined => docsByKey.get(key)?.flag

// the flags of each command built from docs.ts (anything and runner have their own)
const commandFlags: Record<string, ReadonlyArray<string>> = {
  optimize: Object.keys(optimizeOptions).flatMap((k) => docFlag(k) ?? []),
  resume: [...Object.keys(budgetOptions), ...Object.keys(modelOptions), ...Object.keys(resumeOptions)].flatMap((k) => docFlag(k) ?? []),
  report: Object.keys(reportOptions).flatMap((k) => docFlag(k) ?? []),
  show: Object.keys(showOptions).flatMap((k) => docFlag(k) ?? [])
}

const commandNames = ["optimize", "resume", "report", "show", "anything", "runner"]

/**
 * What to say about an argument @effect/cli did not expect: a flag of
 * another command ("gepa resume does not take --seed"), a flag without its
 * value, or a typo with the closest flag of the command.
 *
 * @internal
 */
export const unknownArgument = (arg: string, args: ReadonlyArray<string>): string => {
  const command = args[0]
  const own = command === undefined ? undefined : commandFlags[command]
  if (!arg.startsWith("-")) {
    if (command === undefined || !commandNames.includes(command)) {
      return `unknown command ${JSON.stringify(command ?? arg)}${didYouMean(command ?? arg, commandNames)}; ` +
        `commands: ${commandNames.join(", ")}`
    }
    return `gepa ${command}: unexpected argument ${JSON.stringify(arg)}`
  }
  const body = arg.replace(/^-+/, "")
  const name = body.includes("=") ? body.slice(0, body.indexOf("=")) : body
  const doc = flagDocs.find((d) => d.flag === name)
  if (own !== undefined && doc !== undefined && !own.includes(name)) {
    return command === "resume"
      ? `--${name} is not a flag of gepa resume: it is saved with the run and cannot change on resume ` +
        `(gepa resume takes ${own.map((f) => `--${f}`).join(", ")})`
      : `--${name} is not a flag of gepa ${command}`
  }
  if (doc?.arg !== undefined) return `--${doc.flag}: expected a value (${doc.arg})`
  if (own !== undefined) return `unknown flag ${arg} for gepa ${command}${didYouMean(name, own, (f) => `--${f}`)}`
  return `unknown flag ${arg}`
}

// @effect/cli's messages about a flag's value do not name the flag ("'many'
// is not a integer"): the flag is the argument before the value
const nameTheFlag = (text: string, argv: ReadonlyArray<string>): string => {
  const typed = /^'(.*)' is not an? (integer|float|date|boolean)$/.exec(text)
  if (typed !== null) {
    const pos = argv.indexOf(at(typed, 1))
    const before = argv[pos - 1]
    const flag = pos > 0 && before?.startsWith("--") === true ? before : undefined
    const expected = typed[2] === "integer" ? "an integer" : typed[2] === "float" ? "a number" : `a ${typed[2]}`
    return flag === undefined ? text : `${flag}: expected ${expected}, got ${JSON.stringify(typed[1])}`
  }
  const choice = /^Expected one of the following cases: (.*)$/.exec(text)
  if (choice !== null) {
    const cases = at(choice, 1).split(", ")
    const isChoiceFlag = (arg: string | undefined) => flagDocs.some((d) => `--${d.flag}` === arg && d.arg?.includes("|") === true)
    const pos = argv.findIndex((arg, i) => i > 0 && isChoiceFlag(argv[i - 1]) && !cases.includes(arg))
    return pos < 0 ? text : `${argv[pos - 1]}: expected ${cases.join(" or ")}, got ${JSON.stringify(argv[pos])}`
  }
  // a flag given without its value, or one the command does not take
  const unknown = /^Received unknown argument: '([^']+)'$/.exec(text)
  if (unknown !== null) return unknownArgument(at(unknown, 1), argv)
  const subcommand = /^Invalid subcommand for gepa - use one of '(.*)'$/.exec(text)
  if (subcommand !== null) return unknownArgument(argv[0] ?? "", [argv[0] ?? ""])
  return text
}

// @effect/cli reports bad arguments on the console, as coloured help text:
// here they become one plain line on stderr like every other input error
const consoleFor = (env: Environment, argv: ReadonlyArray<string>) =>
  Effect.consoleWith((current) =>
    Effect.succeed({
      ...current,
      log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => env.stdout(`${args.map(String).join(" ").replace(ansi, "").replace(/\n+$/, "")}\n`)),
      error: (...args: ReadonlyArray<unknown>) =>
        Effect.sync(() => {
          // the first problem only, as for every other input error
          const first = args.map(String).join(" ").replace(ansi, "").split("\n").find((l) => l.trim() !== "") ?? ""
          const text = nameTheFlag(first.trim(), argv)
          if (text !== "") env.stderr(`gepa: ${text}\n`)
        })
    })
  )

// A command's failure: from `optimize`, `resume` and `report` a RunFailure,
// from `anything` (OptimizeAnything's) the tagged error itself.
class Failed extends Data.TaggedError("Failed")<{
  readonly cause: { readonly _tag: string; readonly message: string }
  /** set when `gepa resume` can continue the run */
  readonly resumable: string | undefined
  /** the run failed before anything was scored, and left nothing behind */
  readonly removed?: boolean | undefined
}> {}

const isRunFailure = (e: object): e is RunFailure => "started" in e && "error" in e

const failed = (e: RunFailure | { readonly _tag: string; readonly message: string }): Failed =>
  isRunFailure(e)
    ? new Failed({ cause: e.error, resumable: e.started ? e.runDir : undefined, removed: e.removed })
    : new Failed({ cause: e, resumable: undefined })

const logLevels: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/**
 * The formats of `--log-format`: `text` (one plain line, the default) or
 * `json` (one JSON object per line, Effect's own `Logger.jsonLogger`:
 * message, level, timestamp, annotations, spans, fiber id).
 *
 * @internal
 */
export const logFormats = ["text", "json"] as const

/**
 * `--log-level LEVEL` and `--log-format text|json` (or `--flag=VALUE`)
 * anywhere before `--`, taken out of `argv`: @effect/cli's own built-in
 * accepts the level only before a command's last flags. Default warning,
 * text: no iteration lines.
 *
 * @internal
 */
export const takeLogLevel = (
  argv: ReadonlyArray<string>
): Either.Either<
  {
    readonly argv: ReadonlyArray<string>
    readonly level: LogLevel.LogLevel
    readonly format: typeof logFormats[number]
  },
  string
> => {
  const rest: Array<string> = []
  let level: LogLevel.LogLevel = LogLevel.Warning
  let format: typeof logFormats[number] = "text"
  for (let i = 0; i < argv.length; i++) {
    const arg = at(argv, i)
    if (arg === "--") {
      rest.push(...argv.slice(i))
      break
    }
    const flag = ["--log-level", "--log-format"].find((f) => arg === f || arg.startsWith(`${f}=`))
    if (i < 2 || flag === undefined) {
      rest.push(arg)
      continue
    }
    const value = arg === flag ? argv[++i] : arg.slice(flag.length + 1)
    if (flag === "--log-format") {
      const found = logFormats.find((f) => f === value?.toLowerCase())
      if (found === undefined) return Either.left(`--log-format: expected text or json, got ${JSON.stringify(value ?? "")}`)
      format = found
      continue
    }
    const found = value === undefined ? undefined : logLevels[value.toLowerCase()]
    if (found === undefined) {
      return Either.left(`--log-level: expected one of ${Object.keys(logLevels).join(", ")}, got ${JSON.stringify(value ?? "")}`)
    }
    level = found
  }
  return Either.right({ argv: rest, level, format })
}

// Log lines go to stderr (stdout carries the progress and the results), one
// line each: "gepa [info] iteration 3: ..." as text, or Effect's JSON logger
// (annotations and log spans included). Both pass the scrub of every
// registered secret on the way out. Concurrent calls to a failing server
// retry together: their retry lines differ only in the jittered wait, and
// one of them says it all.
const logTo = (env: Environment, format: typeof logFormats[number]) => {
  const recent = new Map<string, number>()
  const repeated = (text: string, at: number): boolean => {
    if (!text.startsWith("retrying model call")) return false
    const key = text.replace(/, in [\d.]+ s\)/, ")")
    const seen = recent.get(key)
    if (seen !== undefined && at - seen < 10_000) return true
    recent.set(key, at)
    return false
  }
  const textOf = (message: unknown) => (Array.isArray(message) ? message : [message]).map((m) => (typeof m === "string" ? m : String(m))).join(" ")
  return Logger.replace(
    Logger.defaultLogger,
    format === "json"
      ? Logger.make((options) => {
        if (repeated(oneLine(textOf(options.message)), options.date.getTime())) return
        env.stderr(`${Secrets.scrub(Logger.jsonLogger.log(options))}\n`)
      })
      : Logger.make(({ date, logLevel, message }) => {
        const text = oneLine(textOf(message))
        if (repeated(text, date.getTime())) return
        env.stderr(`gepa [${logLevel.label.toLowerCase()}] ${Secrets.scrub(text)}\n`)
      })
  )
}

/**
 * Runs a command (not the help, see `main.ts`) and returns the exit code.
 * Logs go to `env.stderr` at `--log-level` (default warning), as
 * `--log-format` says (default text).
 *
 * @since 0.2.0
 * @category running
 */
export const runCommand = (argv: ReadonlyArray<string>, env: Environment, version: string): Effect.Effect<number> => {
  const args = argv.slice(2)
  const cli = Command.run(Commands.make(env), { name: "gepa", version })
  const logLevel = takeLogLevel(argv)
  if (Either.isLeft(logLevel)) {
    env.stderr(`gepa: ${logLevel.left}\n`)
    return Effect.succeed(ExitCode.input)
  }
  return cli(logLevel.right.argv).pipe(
    Effect.mapError((e) => (e instanceof CliInputError || ValidationError.isValidationError(e) ? e : failed(e))),
    Effect.as<number>(ExitCode.ok),
    Effect.catchAll((error): Effect.Effect<number> =>
      Effect.sync(() => {
        // @effect/cli has already printed what was wrong with the arguments
        if (ValidationError.isValidationError(error)) return ExitCode.input
        if (error instanceof CliInputError) {
          env.stderr(`gepa: ${oneLine(error.message)}\n`)
          return ExitCode.input
        }
        const { cause, removed, resumable } = error
        if (cause._tag === "CliInputError" || cause._tag === "ResumeConflict" || cause._tag === "ConfigError") {
          env.stderr(`gepa: ${oneLine(cause.message)}\n`)
          return ExitCode.input
        }
        const hint = resumable !== undefined
          ? ` (continue with "gepa resume ${resumable}" once fixed)`
          : removed === true
          ? " (nothing was scored and nothing kept: run the same command again once fixed)"
          : ""
        env.stderr(`gepa: ${oneLine(cause.message)}${hint}\n`)
        return ExitCode.failure
      })
    ),
    Effect.catchAllDefect((defect) =>
      Effect.sync(() => {
        // one line: the stack goes to the log at debug level
        env.stderr(`gepa: unexpected error: ${oneLine(defect instanceof Error ? defect.message : String(defect))}\n`)
        if (logLevel.right.level === LogLevel.Debug || logLevel.right.level === LogLevel.All || logLevel.right.level === LogLevel.Trace) {
          env.stderr(`${defect instanceof Error ? defect.stack ?? "" : ""}\n`)
        }
        return ExitCode.failure
      })
    ),
    Effect.provide(Layer.mergeAll(NodeContext.layer, CliConfig.layer({ showBuiltIns: false }), logTo(env, logLevel.right.format))),
    Logger.withMinimumLogLevel(logLevel.right.level),
    (effect) => Effect.flatMap(consoleFor(env, args), (console) => Effect.withConsole(effect, console))
  )
}
