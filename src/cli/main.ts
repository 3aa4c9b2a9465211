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
 * - `gepa runner --module FILE`: serves cluster evaluations (see
 *   `ClusterRunner`) until Ctrl-C or SIGTERM.
 *
 * Every input problem (a missing file, a bad JSONL line, an unknown metric,
 * an invalid number) is reported as one line naming the file, line or
 * field, with exit code 2, before anything is written. A run that fails once
 * started prints one line and exits 1, its state saved. Ctrl-C stops the run
 * at the next safe point; it can then be resumed.
 *
 * @since 0.2.0
 */
import { Effect } from "effect"
import { ExitCode } from "./errors.js"
import { helpText, isCommand } from "./help.js"
import { commandPackages, missingPackages, missingPackagesLine, packageVersion } from "./packageInfo.js"
import type { Environment } from "./run.js"

/**
 * The version `gepa --version` prints: the package's, read from its
 * `package.json` (the one place it is written).
 *
 * @since 0.2.0
 * @category constants
 */
export const version: string = packageVersion()

/**
 * The process's environment: the real terminal and OpenAI-compatible models
 * (see `openAiModel`).
 *
 * @since 0.1.0
 * @category models
 */
export const processEnvironment = (): Environment => ({
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  terminal: process.stdout.isTTY === true ? process.stdout : undefined,
  makeModel: (role, spec, options) => Effect.promise(() => import("./models.js")).pipe(Effect.flatMap((models) => models.openAiModel()(role, spec, options)))
})

const wantsHelp = (args: ReadonlyArray<string>): boolean => {
  const end = args.indexOf("--")
  const flags = end < 0 ? args : args.slice(0, end)
  return args.length === 0 || flags.includes("--help") || flags.includes("-h")
}

// `gepa --version`, `gepa -v` and `gepa version` need none of the optional packages
const wantsVersion = (args: ReadonlyArray<string>): boolean => args.length === 1 && (args[0] === "--version" || args[0] === "-v" || args[0] === "version")

const isModuleNotFound = (e: unknown): e is Error => e instanceof Error && "code" in e && (e.code === "ERR_MODULE_NOT_FOUND" || e.code === "MODULE_NOT_FOUND")

// The commands run on @effect/cli and the Node platform, optional peers: when
// they are missing the command says which and how to install them.
const loadProgram = (env: Environment) =>
  Effect.tryPromise({
    try: () => import("./program.js"),
    catch: (e) => e
  }).pipe(
    Effect.catchAll((e) => {
      if (!isModuleNotFound(e)) return Effect.die(e)
      const missing = missingPackages(commandPackages)
      const named = commandPackages.filter((p) => e.message.includes(`'${p}'`))
      const packages = missing.length > 0 ? missing : named
      if (packages.length === 0) return Effect.die(e)
      env.stderr(`${missingPackagesLine(packages)}\n`)
      return Effect.succeed(undefined)
    })
  )

/**
 * Runs the CLI on `argv` (as `process.argv`: node, script, arguments) and
 * returns the exit code (see `ExitCode`). Errors are printed to
 * `env.stderr` as one line; it never fails. The help is plain text and
 * loads nothing else, so `gepa --help` starts about as fast as Effect.
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
    const command = isCommand(args[0]) ? args[0] : undefined
    return (command === "anything"
      ? Effect.promise(() => import("./anythingHelp.js")).pipe(Effect.map((h) => h.anythingHelp()))
      : command === "runner"
      ? Effect.promise(() => import("./runnerHelp.js")).pipe(Effect.map((h) => h.runnerHelp()))
      : Effect.succeed(helpText(command))).pipe(
        Effect.map((text) => {
          env.stdout(text)
          return ExitCode.ok
        })
      )
  }
  if (wantsVersion(args)) {
    return Effect.sync(() => {
      env.stdout(`${version}\n`)
      return ExitCode.ok
    })
  }
  return loadProgram(env).pipe(
    Effect.flatMap((program) => program === undefined ? Effect.succeed(ExitCode.input) : program.runCommand(argv, env, version))
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
