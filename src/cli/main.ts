/**
 * The `gepa` command line: optimizes a single system prompt with the
 * `DefaultAdapter` against OpenAI-compatible models, and inspects run
 * directories.
 *
 * - `gepa optimize --config gepa.json [flags]`: every config field is also a
 *   flag; flags win over the file.
 * - `gepa resume <runDir> [flags]`: continues a run from the configuration
 *   saved in `<runDir>/config.json` (budget, concurrency and where the
 *   models are served may change).
 * - `gepa report <runDir>`: writes `<runDir>/report.html`.
 * - `gepa show <runDir>`: the best candidate, scores and lineage.
 *
 * Every input problem (a missing file, a bad JSONL line, an unknown metric,
 * an invalid number) is reported as one line naming the file, line or
 * field, with exit code 2, before anything is written. A run that fails once
 * started prints one line and exits 1, its state saved. Ctrl-C stops the run
 * at the next safe point; it can then be resumed.
 *
 * @since 0.2.0
 */
import { CliConfig, Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Data, Effect, Layer } from "effect"
import * as Commands from "./commands.js"
import { CliInputError, ExitCode } from "./errors.js"
import { helpText, isCommand } from "./help.js"
import { openAiModel } from "./models.js"
import type { Environment, RunFailure } from "./run.js"

/**
 * The version `gepa --version` prints.
 *
 * @since 0.2.0
 * @category constants
 */
export const version = "0.1.0"

/**
 * The process's environment: the real terminal and OpenAI-compatible models.
 *
 * @since 0.1.0
 * @category models
 */
export const processEnvironment = (): Environment => ({
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  makeModel: openAiModel()
})

// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;]*m/g
const oneLine = (text: string) => text.replace(ansi, "").replace(/\s*\n\s*/g, " ").trim()

// @effect/cli reports bad arguments on the console, as coloured help text:
// here they become one plain line on stderr like every other input error
const consoleFor = (env: Environment) =>
  Effect.consoleWith((current) =>
    Effect.succeed({
      ...current,
      log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => env.stdout(`${args.map(String).join(" ").replace(ansi, "")}\n`)),
      error: (...args: ReadonlyArray<unknown>) =>
        Effect.sync(() => {
          const text = oneLine(args.map(String).join(" "))
          if (text !== "") env.stderr(`gepa: ${text}\n`)
        })
    })
  )

class Failed extends Data.TaggedError("Failed")<{ readonly failure: RunFailure }> {}

const wantsHelp = (args: ReadonlyArray<string>): boolean => {
  const end = args.indexOf("--")
  const flags = end < 0 ? args : args.slice(0, end)
  return args.length === 0 || flags.includes("--help") || flags.includes("-h")
}

/**
 * Runs the CLI on `argv` (as `process.argv`: node, script, arguments) and
 * returns the exit code (see `ExitCode`). Errors are printed to
 * `env.stderr` as one line; it never fails.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (
  argv: ReadonlyArray<string>,
  env: Environment = processEnvironment()
): Effect.Effect<number> => {
  const args = argv.slice(2)
  if (wantsHelp(args)) {
    return Effect.sync(() => {
      env.stdout(helpText(isCommand(args[0]) ? args[0] : undefined))
      return ExitCode.ok
    })
  }
  const cli = Command.run(Commands.make(env), { name: "gepa", version })
  return cli(argv).pipe(
    Effect.mapError((e) => (e instanceof CliInputError || ValidationError.isValidationError(e) ? e : new Failed({ failure: e }))),
    Effect.as<number>(ExitCode.ok),
    Effect.catchAll((error): Effect.Effect<number> =>
      Effect.sync(() => {
        // @effect/cli has already printed what was wrong with the arguments
        if (ValidationError.isValidationError(error)) return ExitCode.input
        if (error instanceof CliInputError) {
          env.stderr(`gepa: ${oneLine(error.message)}\n`)
          return ExitCode.input
        }
        const { error: cause, runDir, started } = error.failure
        if (cause._tag === "CliInputError" || cause._tag === "ResumeConflict" || cause._tag === "ConfigError") {
          env.stderr(`gepa: ${oneLine(cause.message)}\n`)
          return ExitCode.input
        }
        const hint = started ? ` (continue with "gepa resume ${runDir}" once fixed)` : ""
        env.stderr(`gepa: ${oneLine(cause.message)}${hint}\n`)
        return ExitCode.failure
      })
    ),
    Effect.catchAllDefect((defect) =>
      Effect.sync(() => {
        env.stderr(`gepa: unexpected error: ${defect instanceof Error ? defect.stack ?? defect.message : String(defect)}\n`)
        return ExitCode.failure
      })
    ),
    Effect.provide(Layer.merge(NodeContext.layer, CliConfig.layer({ showBuiltIns: false }))),
    (effect) => Effect.flatMap(consoleFor(env), (console) => Effect.withConsole(effect, console))
  )
}

/**
 * The process entry: runs the CLI on `process.argv` and sets the exit code.
 *
 * @since 0.1.0
 * @category running
 */
export const main = (): Promise<void> =>
  Effect.runPromise(run(process.argv)).then((code) => {
    process.exitCode = code
  })
