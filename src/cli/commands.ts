/**
 * The `gepa` commands: optimize, resume, report, show, anything and runner.
 *
 * @since 0.2.0
 */
import { Args, Command, type Options } from "@effect/cli"
import { Deferred, Effect, Either, Exit, Option, Schema } from "effect"
import * as path from "node:path"
import * as ClusterCommand from "../internal/cluster/command.js"
import * as AnythingCommand from "../internal/optimizeAnything/cliCommand.js"
import * as Result from "../Result.js"
import * as UserFile from "./userFile.js"
import * as RunDir from "../RunDir.js"
import { CliInputError, inputError } from "./errors.js"
import { commands } from "./help.js"
import { budgetOptions, modelOptions, optimizeOptions, reportOptions, resumeOptions, showOptions, uiOptions } from "./options.js"
import { type Environment, prepare, type RunFailure, runPrepared } from "./run.js"
import { describeRun, readRun, readSavedSettings, renderReport } from "./saved.js"
import { parseConfig, resolvePaths } from "./configFile.js"
import { resolveSettings } from "./resolve.js"
import type { Input, ModelSpec, Settings } from "./settings.js"
import { watchCommand, withUi } from "./ui.js"

// the values of a record of options
type ValuesOf<O> = { readonly [K in keyof O]: O[K] extends Options.Options<infer A> ? A : never }

// `{ key: value }` when the option was given, `{}` otherwise
const given = <A, B extends object>(option: Option.Option<A>, f: (a: A) => B): B | {} => Option.isSome(option) ? f(option.value) : {}

type ModelFlags = ValuesOf<typeof modelOptions>

const modelFlags = (flags: ModelFlags, role: "task" | "reflection"): { readonly value?: Partial<ModelSpec> } => {
  const spec: Partial<ModelSpec> = role === "task"
    ? {
      ...given(flags.taskModel, (model) => ({ model })),
      ...given(flags.taskBaseUrl, (baseUrl) => ({ baseUrl })),
      ...given(flags.taskTimeout, (timeout) => ({ timeout }))
    }
    : {
      ...given(flags.reflectionModel, (model) => ({ model })),
      ...given(flags.reflectionBaseUrl, (baseUrl) => ({ baseUrl })),
      ...given(flags.reflectionTimeout, (timeout) => ({ timeout }))
    }
  return Object.keys(spec).length === 0 ? {} : { value: spec }
}

type BudgetFlags = ValuesOf<typeof budgetOptions>

const budgetFlags = (flags: BudgetFlags) => ({
  ...given(flags.maxMetricCalls, (maxMetricCalls) => ({ maxMetricCalls })),
  ...given(flags.maxIterations, (maxIterations) => ({ maxIterations })),
  ...given(flags.timeout, (timeout) => ({ timeout })),
  ...given(flags.scoreThreshold, (scoreThreshold) => ({ scoreThreshold })),
  ...given(flags.patience, (patience) => ({ patience })),
  ...(flags.noPatience ? { patience: 0 } : {}),
  ...(flags.noStopAtPerfect ? { stopAtPerfect: false } : {}),
  ...given(flags.maxConcurrency, (maxConcurrency) => ({ maxConcurrency }))
})

type OptimizeFlags = ValuesOf<typeof optimizeOptions>

/**
 * The settings of `gepa optimize`: the config file's, then the flags'. Pure
 * apart from reading the config and seed prompt files (through the
 * context's `FileSystem`, else `@effect/platform-node`'s).
 *
 * @since 0.2.0
 * @category parsing
 */
export const optimizeSettings = (
  flags: OptimizeFlags,
  cwd: string,
  now?: Date
): Effect.Effect<
  { readonly settings: Settings; readonly resume: boolean; readonly warnings: ReadonlyArray<string> },
  CliInputError
> =>
  Effect.gen(function*() {
    if (flags.merge && flags.noMerge) return yield* Either.left(inputError(`--merge and --no-merge: give one of them, not both`))
    if (flags.ignoreCase && flags.noIgnoreCase) {
      return yield* Either.left(inputError(`--ignore-case and --no-ignore-case: give one of them, not both`))
    }
    let file: Input = {}
    let warnings: ReadonlyArray<string> = []
    if (Option.isSome(flags.config)) {
      const configFile = path.resolve(cwd, flags.config.value)
      const parsed = yield* parseConfig(yield* UserFile.readInputFile(configFile), configFile)
      file = parsed.input
      warnings = parsed.warnings
    }
    const task = modelFlags(flags, "task")
    const reflection = modelFlags(flags, "reflection")
    const fromFlags: Input = resolvePaths({
      ...given(flags.train, (train) => ({ train })),
      ...given(flags.validation, (validation) => ({ validation })),
      ...given(flags.inputField, (inputField) => ({ inputField })),
      ...given(flags.expectedField, (expectedField) => ({ expectedField })),
      ...given(flags.idField, (idField) => ({ idField })),
      ...given(flags.component, (component) => ({ component })),
      ...given(flags.seedPrompt, (seedPrompt) => ({ seedPrompt })),
      ...given(flags.seedPromptFile, (seedPromptFile) => ({ seedPromptFile })),
      ...given(flags.metric, (metric) => ({ metric })),
      ...(flags.ignoreCase ? { ignoreCase: true } : flags.noIgnoreCase ? { ignoreCase: false } : {}),
      ...given(flags.pattern, (pattern) => ({ pattern })),
      ...given(flags.jsonPath, (jsonPath) => ({ jsonPath })),
      ...(task.value === undefined ? {} : { taskModel: task.value }),
      ...(reflection.value === undefined ? {} : { reflectionModel: reflection.value }),
      ...budgetFlags(flags),
      ...given(flags.parallelProposals, (parallelProposals) => ({ parallelProposals })),
      ...given(flags.proposalsPerStep, (proposalsPerStep) => ({ proposalsPerStep })),
      ...given(flags.minibatchSize, (minibatchSize) => ({ minibatchSize })),
      ...(flags.merge ? { merge: true } : flags.noMerge ? { merge: false } : {}),
      ...given(flags.seed, (seed) => ({ seed })),
      ...given(flags.runDir, (runDir) => ({ runDir }))
    }, cwd)
    const settings = yield* resolveSettings(file, fromFlags, { cwd, now })
    return { settings, resume: flags.resume || file.resume === true, warnings }
  })

const encodeResult = Schema.encodeSync(Result.GepaResult)

/**
 * The `gepa` command tree, with `env` as its terminal and model factory.
 *
 * @since 0.2.0
 * @category commands
 */
export const make = (env: Environment) => {
  const optimize = Command.make("optimize", optimizeOptions, (flags) =>
    Effect.gen(function*() {
      const { resume, settings, warnings } = yield* optimizeSettings(flags, env.cwd)
      for (const warning of warnings) env.stderr(`gepa: warning: ${warning}\n`)
      const prepared = yield* prepare(settings, env, { resume })
      return yield* runPrepared(prepared, env, { quiet: flags.quiet }).pipe(withUi(flags, env, settings.runDir))
    })).pipe(Command.withDescription(commands.optimize))

  // checked by readRun / readSavedSettings, one line naming the path
  const runDirArg = Args.text({ name: "run-dir" }).pipe(Args.withDescription("a run directory"))

  const resume = Command.make(
    "resume",
    { runDir: runDirArg, ...budgetOptions, ...modelOptions, ...resumeOptions, ...uiOptions },
    (flags) =>
      Effect.gen(function*() {
        const runDir = path.resolve(env.cwd, flags.runDir)
        const saved = yield* readSavedSettings(runDir)
        const task = modelFlags(flags, "task")
        const reflection = modelFlags(flags, "reflection")
        // only settings that may change on resume have flags here
        const settings: Settings = {
          ...saved,
          ...budgetFlags(flags),
          taskModel: { ...saved.taskModel, ...task.value },
          reflectionModel: { ...saved.reflectionModel, ...reflection.value },
          runDir
        }
        const prepared = yield* prepare(settings, env, { resume: true })
        return yield* runPrepared(prepared, env, { quiet: flags.quiet }).pipe(withUi(flags, env, runDir))
      })
  ).pipe(Command.withDescription(commands.resume))

  const report = Command.make("report", { runDir: runDirArg, ...reportOptions }, (flags) =>
    Effect.gen(function*() {
      const runDir = path.resolve(env.cwd, flags.runDir)
      const run = yield* readRun(runDir)
      const html = renderReport(run, runDir)
      const out = Option.isNone(flags.out) ? path.join(runDir, RunDir.FILES.report) : path.resolve(env.cwd, flags.out.value)
      yield* Option.isNone(flags.out)
        ? RunDir.writeFile(runDir, RunDir.FILES.report, html).pipe(
          Effect.mapError((error): RunFailure => ({ error, started: false, runDir }))
        )
        // a file of the user's, outside the run directory: a bad path is an input error
        : Effect.mapError(UserFile.writeText(out, html), (problem) => inputError(`${out}: cannot write the report: ${problem.detail}`))
      env.stdout(`Report written to ${out}\n`)
    })).pipe(Command.withDescription(commands.report))

  const show = Command.make("show", { runDir: runDirArg, ...showOptions }, (flags) =>
    Effect.gen(function*() {
      const runDir = path.resolve(env.cwd, flags.runDir)
      const run = yield* readRun(runDir)
      env.stdout(
        flags.format === "json"
          ? `${
            JSON.stringify(
              {
                finished: run.finished,
                // why it stopped: in words, and which kind of stop and condition
                stop: run.finished
                  ? { reason: run.result.stopReason, kind: run.result.stoppedBy?.kind ?? null, condition: run.result.stoppedBy?.condition ?? null }
                  : null,
                result: encodeResult(run.result)
              },
              null,
              2
            )
          }\n`
          : `${describeRun(run, runDir)}\n`
      )
    })).pipe(Command.withDescription(commands.show))

  // `gepa anything` belongs to OptimizeAnything; its reflection model comes from this CLI's factory
  const anything = AnythingCommand.command({
    cwd: env.cwd,
    stdout: env.stdout,
    terminal: env.terminal,
    makeReflectionModel: (spec) =>
      env.makeModel("reflection", spec.baseUrl === undefined ? { model: spec.model } : { model: spec.model, baseUrl: spec.baseUrl })
  })

  // `gepa runner` belongs to the cluster modules (loaded by its handler only)
  const runner = ClusterCommand.runner.pipe(
    Command.withDescription(commands.runner),
    Command.transformHandler((serve) => untilSignal(serve, env.stderr))
  )

  // `gepa watch` serves a run folder's dashboard until Ctrl-C
  const watch = watchCommand(env, (serve) => untilSignal(serve, env.stderr))

  return Command.make("gepa").pipe(Command.withSubcommands([optimize, resume, report, show, anything, runner, watch]))
}

/**
 * Runs `effect` until SIGINT or SIGTERM, then interrupts it and waits for
 * its finalizers (a runner hands its shards over): a stop by signal is a
 * clean exit. A second signal while it stops quits at once (exit 130).
 *
 * @since 0.2.0
 * @category running
 */
export const untilSignal = <E, R>(effect: Effect.Effect<void, E, R>, stderr: (text: string) => void): Effect.Effect<void, E, R> =>
  Effect.scoped(Effect.gen(function*() {
    const signalled = yield* Deferred.make<void>()
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        let seen = 0
        const handler = (signal: NodeJS.Signals) => {
          seen++
          if (seen > 1) process.exit(130)
          stderr(`\n${signal}: stopping (handing the work over; again to quit now)...\n`)
          Deferred.unsafeDone(signalled, Exit.void)
        }
        process.on("SIGINT", handler)
        process.on("SIGTERM", handler)
        return handler
      }),
      (handler) =>
        Effect.sync(() => {
          process.off("SIGINT", handler)
          process.off("SIGTERM", handler)
        })
    )
    // the first to end wins (a failing runner fails at once); the loser is
    // interrupted and awaited, so the handlers stay until the runner stopped
    return yield* Effect.raceFirst(effect, Deferred.await(signalled))
  }))
