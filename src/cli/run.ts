/**
 * Running a CLI run: checks everything first, then optimizes with the
 * `DefaultAdapter`, printing progress. The run directory belongs to
 * `RunDir`: `config.json` is written through it once the run has started
 * (every check passed and the directory's lock is held), so a refused run
 * never touches a directory, and a live run's settings are never replaced.
 *
 * @since 0.2.0
 */
import { Effect, Option } from "effect"
import * as path from "node:path"
import type { Adapter } from "../Adapter.js"
import type { Candidate } from "../Candidate.js"
import * as DataLoader from "../DataLoader.js"
import * as DefaultAdapter from "../DefaultAdapter.js"
import { PersistenceError } from "../Errors.js"
import type { GepaEvent } from "../Event.js"
import * as Gepa from "../Gepa.js"
import type { LanguageModel } from "../LanguageModel.js"
import type * as Metric from "../Metric.js"
import * as Report from "../Report.js"
import type * as Result from "../Result.js"
import * as RunDir from "../RunDir.js"
import * as StopCondition from "../StopCondition.js"
import * as Strategy from "../Strategy.js"
import * as UserFile from "./userFile.js"
import { type Example, loadExamples } from "./data.js"
import { defaults } from "./constants.js"
import { CliInputError, inputError } from "./errors.js"
import { type LoadedComponentsMetric, loadComponentsMetric, makeAdapter as componentsAdapter } from "./components.js"
import { loadMetric } from "./metric.js"
import type { ModelFactory } from "./models.js"
import * as Progress from "./progress.js"
import { fmt, readSavedSettings } from "./saved.js"
import { resumeConflict, seedTexts, type Settings, settingsJson } from "./settings.js"

/**
 * Where the CLI writes and how it builds models. Tests swap these.
 *
 * @since 0.1.0
 * @category models
 */
export interface Environment {
  readonly cwd: string
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly makeModel: ModelFactory
  /** stdout when it is a terminal: progress is then a bar drawn on it */
  readonly terminal?: (NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number }) | undefined
}

/**
 * Everything a run needs, checked; building it writes nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface Prepared {
  readonly settings: Settings
  readonly train: ReadonlyArray<Example>
  readonly validation: ReadonlyArray<Example> | undefined
  /** the metric of a one-prompt run, scoring the task model's answer */
  readonly metric?: Metric.Metric<Example, string, unknown> | undefined
  /** the metric module of a run of `components`, which runs the program */
  readonly componentsMetric?: LoadedComponentsMetric | undefined
  readonly taskModel: LanguageModel
  readonly reflectionModel: LanguageModel
}

/**
 * Why the run directory `dir` cannot be created, as one line naming the
 * path; nothing when it exists or can be. Checked before anything is
 * written, so a path under a file is an input error, not a failed run.
 *
 * @since 0.2.0
 * @category running
 */
export const creatable = (dir: string): Effect.Effect<string | undefined> =>
  UserFile.uncreatable(dir).pipe(
    Effect.map((found) =>
      found === undefined
        ? undefined
        : `${dir}: cannot create the run directory: ${found.why === "file" ? `${found.at} is a file` : `no permission to write in ${found.at}`}`
    ),
    Effect.catchAll((problem) => Effect.succeed(`${dir}: cannot create the run directory: ${problem.detail}`))
  )

/**
 * Loads the data, the metric and the models of `settings`, and checks the
 * run directory. `resume` says whether a directory that already holds a run
 * may be continued; it then must hold the same run: settings other than
 * those listed in `changeableOnResume` must match its `config.json`.
 *
 * @since 0.1.0
 * @category running
 */
export const prepare = (
  settings: Settings,
  env: Pick<Environment, "makeModel">,
  options: { readonly resume: boolean }
): Effect.Effect<Prepared, CliInputError> =>
  Effect.gen(function*() {
    const expectedRequired = settings.components === undefined && settings.metric === "exact" || settings.metric === "contains" ||
      settings.metric === "json-field" || (settings.metric === "regex" && settings.pattern === undefined)
    const fieldsOf = {
      inputField: settings.inputField,
      expectedField: settings.expectedField,
      idField: settings.idField,
      expectedRequired
    }
    const train = yield* loadExamples(settings.train, fieldsOf)
    const validation = settings.validation === undefined ? undefined : yield* loadExamples(settings.validation, fieldsOf)
    const metrics = settings.components === undefined
      ? { metric: yield* loadMetric(settings) }
      : { componentsMetric: yield* loadComponentsMetric(settings.metric) }
    // the run's concurrency bounds each model's requests in flight
    const taskModel = yield* env.makeModel("task", settings.taskModel, { maxConcurrency: settings.maxConcurrency })
    const reflectionModel = yield* env.makeModel("reflection", settings.reflectionModel, { maxConcurrency: settings.maxConcurrency })
    const dir = settings.runDir
    const problem = yield* creatable(dir)
    if (problem !== undefined) return yield* Effect.fail(inputError(problem))
    const kind = yield* Effect.orElseSucceed(RunDir.pathKind(dir), () => "other" as const)
    if (kind !== "missing") {
      if (kind === "other") return yield* Effect.fail(inputError(`${dir}: the run directory is a file`))
      if (yield* RunDir.holdsRun(dir)) {
        if (!options.resume) {
          return yield* Effect.fail(inputError(
            `${dir}: the run directory already holds a run; continue it with "gepa resume ${dir}" ` +
              `(or --resume), or choose another --run-dir`
          ))
        }
        if (yield* RunDir.exists(dir, RunDir.FILES.config)) {
          const saved = yield* readSavedSettings(dir)
          const conflict = resumeConflict(saved, settings)
          if (Option.isSome(conflict)) {
            return yield* Effect.fail(inputError(`cannot resume ${dir}: ${conflict.value}; use another --run-dir`))
          }
        }
      }
    }
    return { settings, train, validation, ...metrics, taskModel, reflectionModel }
  })

/**
 * The `Gepa.Config` of a prepared run.
 *
 * @since 0.1.0
 * @category running
 */
export const gepaConfig = (prepared: Prepared, onEvent: (event: GepaEvent) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const s = prepared.settings
    const seedCandidate: Candidate = seedTexts(s)
    const adapter: Adapter<Example, DefaultAdapter.Trajectory<Example>, string> = prepared.componentsMetric !== undefined
      // several texts: the metric module runs the program with them
      ? yield* componentsAdapter({
        metric: prepared.componentsMetric,
        model: prepared.taskModel,
        components: Object.keys(seedCandidate),
        concurrency: s.maxConcurrency
      })
      : yield* DefaultAdapter.make<Example, unknown>({
        model: prepared.taskModel,
        component: s.component ?? defaults.component,
        input: (e) => e.input,
        metric: prepared.metric ?? (yield* Effect.fail(inputError(`the run has no metric`))),
        concurrency: s.maxConcurrency
      }).pipe(Effect.mapError((e) => e instanceof CliInputError ? e : inputError(`${e.field}: ${e.detail}`)))
    // a `gepa.stop` file in the run directory also stops the run (RunDir)
    const stop: Array<StopCondition.StopCondition> = [StopCondition.onSignal()]
    if (s.maxIterations !== undefined) stop.push(StopCondition.maxIterations(s.maxIterations))
    if (s.timeout !== undefined) stop.push(StopCondition.timeout(s.timeout))
    if (s.scoreThreshold !== undefined) stop.push(StopCondition.scoreThreshold(s.scoreThreshold))
    // nothing left to gain: a perfect score, or a run that stopped improving
    if (s.stopAtPerfect ?? defaults.stopAtPerfect) stop.push(StopCondition.perfectScore(1))
    // an unset patience counts steps: a default step plans several
    // proposals (iterations: three rewrites of one text, or rounds of
    // several texts), and one validation judges them together
    const strategy = Strategy.defaultFor(Object.keys(seedCandidate).length, {
      minibatchSize: s.minibatchSize,
      trainsetSize: prepared.train.length,
      budget: s.maxMetricCalls,
      valsetSize: (prepared.validation ?? prepared.train).length
    })
    const perStep = s.proposalsPerStep ?? (strategy.stepWidth === "adaptive" ? 1 : strategy.proposalsPerStep)
    const patience = s.patience ?? defaults.patience * perStep
    if (patience > 0) stop.push(StopCondition.noImprovement(patience))
    const idOf = (e: Example) => e.id
    return {
      seedCandidate,
      trainset: DataLoader.fromArray(prepared.train, { name: path.basename(s.train), idOf }),
      ...(prepared.validation === undefined || s.validation === undefined
        ? {}
        : { valset: DataLoader.fromArray(prepared.validation, { name: path.basename(s.validation), idOf }) }),
      adapter,
      reflectionModel: prepared.reflectionModel,
      ...(s.maxMetricCalls === undefined ? {} : { maxMetricCalls: s.maxMetricCalls }),
      stop,
      seed: s.seed,
      minibatchSize: s.minibatchSize,
      maxConcurrency: s.maxConcurrency,
      ...(s.parallelProposals === undefined ? {} : { parallelProposals: s.parallelProposals }),
      ...(s.proposalsPerStep === undefined ? {} : { proposalsPerStep: s.proposalsPerStep }),
      merge: s.merge,
      // state, events, cache and resume live in the run directory (RunDir)
      runDir: s.runDir,
      onEvent,
      // `--log-level info` shows the iteration summaries, `debug` the details
      // too; the CLI's default level (warning) shows neither
      telemetry: { summaryLevel: "info" as const }
    }
  })

const formatSeconds = (seconds: number): string =>
  seconds < 60 ? `${seconds.toFixed(1)} s` : seconds < 3600
    ? `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`
    : `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`

/**
 * The summary printed at the end of a CLI run, under the line saying why it
 * stopped: the lines of the demo's summary (scores, candidates, merges,
 * iterations, metric calls, reflection calls, time).
 *
 * @since 0.2.0
 * @category running
 */
export const summaryLines = (
  result: Result.GepaResult,
  run: { readonly seconds: number; readonly budget?: number | undefined; readonly merge: boolean }
): ReadonlyArray<string> => {
  const fromMerges = result.parents.filter((p) => p.length > 1).length
  const row = (label: string, value: string) => `  ${label.padEnd(18)} ${value}`
  return [
    "Summary",
    row("validation score", `seed ${fmt(result.seedScore)}  ->  best ${fmt(result.bestScore)} (candidate ${result.bestIndex})`),
    row(
      "candidates",
      `${result.candidates.length} (${result.acceptedProposals} accepted, ${result.rejectedProposals} rejected proposals, ` +
        `${fromMerges} from merges)`
    ),
    row("merges", run.merge ? `${result.mergesAttempted} attempted, ${result.mergesAccepted} accepted` : "off"),
    row("iterations", String(result.iterations)),
    row("metric calls", run.budget === undefined ? String(result.totalMetricCalls) : `${result.totalMetricCalls} of ${run.budget}`),
    row("reflection calls", String(result.reflectionCalls)),
    row("time", formatSeconds(run.seconds))
  ]
}

// A second Ctrl-C quits at once; the first one is left to the run's
// `onSignal` stop condition, which stops at the next safe point. The counter
// tells the summary whether the run was stopped by hand.
const watchInterrupts = (stderr: (text: string) => void) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const seen = { count: 0 }
      const handler = () => {
        seen.count++
        if (seen.count === 1) stderr("\nstopping after the current iteration (Ctrl-C again to quit now)...\n")
        else process.exit(130)
      }
      process.on("SIGINT", handler)
      process.on("SIGTERM", handler)
      return { seen, handler }
    }),
    ({ handler }) =>
      Effect.sync(() => {
        process.off("SIGINT", handler)
        process.off("SIGTERM", handler)
      })
  ).pipe(Effect.map(({ seen }) => seen))

/**
 * A run that failed after it started: the error, and whether the run
 * directory holds a state that `gepa resume` continues from.
 *
 * @since 0.2.0
 * @category errors
 */
export interface RunFailure {
  readonly error: Gepa.OptimizeError | PersistenceError | CliInputError
  /** true once `config.json` was written: `gepa resume` can continue the run */
  readonly started: boolean
  readonly runDir: string
  /**
   * true when the run failed before anything was scored and the run
   * directory it had created was removed: the same command can run again
   */
  readonly removed?: boolean | undefined
}

/**
 * Runs a prepared run: optimizes (writing `config.json` once the run has
 * started), writes the report, prints a summary. The result files belong to
 * the run directory (`RunDir`).
 *
 * @since 0.1.0
 * @category running
 */
export const runPrepared = (
  prepared: Prepared,
  env: Pick<Environment, "stdout" | "stderr" | "terminal">,
  options: { readonly quiet?: boolean | undefined; readonly progressIntervalMillis?: number | undefined } = {}
): Effect.Effect<Gepa.OptimizeResult<string>, RunFailure> => {
  const s = prepared.settings
  const progress = Progress.make({
    write: env.stdout,
    terminal: env.terminal,
    quiet: options.quiet,
    maxMetricCalls: s.maxMetricCalls,
    maxIterations: s.maxIterations,
    intervalMillis: options.progressIntervalMillis
  })
  // a run that fails before anything was scored leaves nothing worth
  // resuming: the directory it created is removed, so that the same
  // command runs again once the cause is fixed
  let existed = true
  let scored = false
  const print = (event: GepaEvent) => {
    if (event._tag === "ValsetEvaluated") scored = true
    progress.onEvent(event)
  }
  let started = false
  // The engine emits OptimizationStarted once its checks passed, the lock
  // is held and a saved state matched: only then is config.json written.
  // Event handlers cannot fail, so a write error travels as a defect and is
  // turned back into a failure below.
  const onEvent = (event: GepaEvent): Effect.Effect<void> =>
    event._tag !== "OptimizationStarted"
      ? Effect.sync(() => print(event))
      : RunDir.writeFile(s.runDir, RunDir.FILES.config, settingsJson(s)).pipe(
        Effect.orDie,
        Effect.zipRight(Effect.sync(() => {
          started = true
          print(event)
        }))
      )
  const startedAt = Date.now()
  return Effect.scoped(Effect.gen(function*() {
    existed = (yield* Effect.orElseSucceed(RunDir.pathKind(s.runDir), () => "other" as const)) !== "missing"
    const config = yield* gepaConfig(prepared, onEvent)
    const interrupts = yield* watchInterrupts(env.stderr)
    const result = yield* Gepa.optimize(config).pipe(
      Effect.catchSomeDefect((d) => (d instanceof PersistenceError ? Option.some(Effect.fail(d)) : Option.none())),
      // the bar is taken down before anything else is printed, whatever the outcome
      Effect.ensuring(Effect.sync(progress.stop))
    )
    const reportFile = path.join(s.runDir, RunDir.FILES.report)
    yield* RunDir.writeFile(
      s.runDir,
      RunDir.FILES.report,
      Report.render({
        result,
        trace: result.state.trace,
        seedCandidate: config.seedCandidate,
        title: `GEPA run ${path.basename(s.runDir)}`,
        generatedAt: new Date().toISOString()
      })
    )
    const kind = result.stoppedBy?.kind
    const stopped = interrupts.count > 0 || kind === "stopFile" || kind === "deadline"
    env.stdout([
      "",
      `${stopped ? "Stopped" : "Done"}: ${result.stopReason}`,
      ...summaryLines(result, { seconds: (Date.now() - startedAt) / 1000, budget: s.maxMetricCalls, merge: s.merge }),
      "",
      ...Object.keys(seedTexts(s)).flatMap((name) => [`Best ${name}:`, result.bestCandidate[name] ?? "", ""]),
      "",
      `Run directory: ${s.runDir}`,
      `Report:        ${reportFile}`,
      ...(stopped ? [`Resume with:   gepa resume ${s.runDir}`] : []),
      ""
    ].join("\n"))
    return result
  })).pipe(
    Effect.mapError((error): RunFailure => ({ error, started, runDir: s.runDir })),
    Effect.catchAll((failure) =>
      Effect.flatMap(
        existed || scored || !failure.started
          ? Effect.succeed(failure)
          : RunDir.remove(s.runDir).pipe(
            Effect.as<RunFailure>({ ...failure, started: false, removed: true }),
            Effect.orElseSucceed(() => failure)
          ),
        Effect.fail
      )
    )
  )
}
