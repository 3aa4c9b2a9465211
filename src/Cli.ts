/**
 * The `gepa` command line, as a library: `run(argv, env)` runs a command and
 * returns its exit code; the parts (settings, data files, metrics, models,
 * run directories) are exported for tools built on the CLI. The
 * implementation lives in `src/cli/`.
 *
 * @since 0.1.0
 */
export {
  /**
   * A problem with what the user gave the CLI: a file, a line of a data file,
   * a config field or a flag. The message names which; the exit code is 2.
   *
   * @since 0.1.0
   * @category errors
   */
  CliInputError,
  /**
   * Exit codes of the CLI.
   *
   * @since 0.1.0
   * @category constants
   */
  ExitCode
} from "./cli/errors.js"
export {
  /**
   * One example of a CLI data file: the user message, the expected value and
   * the whole record (what a custom metric module receives).
   *
   * @since 0.1.0
   * @category models
   */
  type Example,
  /**
   * Reads and parses a data file (see `parseExamples`), through the context's
   * `FileSystem` (else `@effect/platform-node`'s).
   *
   * @since 0.1.0
   * @category parsing
   */
  loadExamples,
  /**
   * The examples of a data file's text, with the input and expected fields
   * picked out. `expectedRequired` is false for metrics that do not need an
   * expected value (a fixed regex, a custom module).
   *
   * @since 0.1.0
   * @category parsing
   */
  parseExamples,
  /**
   * The records of a data file's text: JSON Lines (one object per non-blank
   * line) or, when the file name ends in `.json`, a JSON array of objects.
   * Each record comes with its line number (JSONL) or position (JSON).
   *
   * @since 0.1.0
   * @category parsing
   */
  parseRecords
} from "./cli/data.js"
export {
  /**
   * What a components metric module's `metric` receives besides the example
   * and the texts: `generate`, one call of the run's task model, and the
   * abort signal of the evaluation.
   *
   * @since 0.3.0
   * @category metrics
   */
  type ComponentsContext,
  /**
   * The `metric` export of a module for a run of several components: runs the
   * program on one example with every component's text and scores it.
   *
   * @since 0.3.0
   * @category metrics
   */
  type ComponentsMetric,
  /**
   * What a components metric returns: a number, or a score with feedback and
   * the output the reflection model reads.
   *
   * @since 0.3.0
   * @category metrics
   */
  type ComponentsScore,
  /**
   * A components metric module once imported and checked.
   *
   * @since 0.3.0
   * @category metrics
   */
  type LoadedComponentsMetric,
  /**
   * Imports a components metric module and checks its `metric` export.
   *
   * @since 0.3.0
   * @category metrics
   */
  loadComponentsMetric
} from "./cli/components.js"
export {
  /**
   * Imports a metric module (see the module docs for the file kinds).
   *
   * @since 0.2.0
   * @category metrics
   */
  importModule,
  /**
   * The metric a settings object names: a built-in, or a module's `metric` or
   * default export (a function `(example, output) => { score, feedback }`,
   * possibly returning a Promise or an Effect). The module receives the CLI
   * `Example` (with `input`, `expected` and the whole `record`).
   *
   * @since 0.1.0
   * @category metrics
   */
  loadMetric
} from "./cli/metric.js"
export {
  /**
   * Builds the language models of a run. The default reads API keys from the
   * environment; tests pass simulated models.
   *
   * @since 0.1.0
   * @category models
   */
  type ModelFactory,
  /**
   * How a run uses its models: `maxConcurrency` bounds the requests the model
   * has in flight (the run's `--max-concurrency`, so that the flag bounds the
   * calls end to end, not the model layer's own default of 16).
   *
   * @since 0.2.0
   * @category models
   */
  type ModelFactoryOptions,
  /**
   * The model of a spec, through `ModelString.forRole`: a model string picks
   * its provider (the `@effect/ai` ones are loaded only then); a plain name
   * runs on an OpenAI-compatible server (OpenAI's, or the one `baseUrl` or
   * `OPENAI_BASE_URL` names), with the key from `OPENAI_API_KEY` unless the
   * name ends with `#nokey`. Keys and base URLs are read through Effect
   * `Config` from the ambient `ConfigProvider` (the process's environment);
   * `env`, when given, is read instead. Every problem (unknown provider,
   * provider package not installed, missing key, invalid option) is one input
   * error naming the field.
   *
   * @since 0.1.0
   * @category models
   */
  openAiModel,
  /**
   * The per-request timeout of a model: its `timeout`, else the CLI's default
   * for the role.
   *
   * @since 0.2.0
   * @category models
   */
  requestTimeout
} from "./cli/models.js"
export {
  /**
   * The built-in metrics, by name.
   *
   * @since 0.1.0
   * @category constants
   */
  builtInMetrics,
  /**
   * The settings that may change when a run is resumed: they do not change
   * what the run optimizes or how its scores compare (budget and stop
   * conditions, concurrency, and where and how long the models are called).
   * Every other setting must stay as saved.
   *
   * @since 0.2.0
   * @category constants
   */
  changeableOnResume,
  /**
   * The defaults of the CLI (the library's own defaults where they exist).
   *
   * @since 0.1.0
   * @category constants
   */
  defaults,
  /**
   * The environment variables the CLI reads, with what they are for.
   *
   * @since 0.2.0
   * @category constants
   */
  environmentVariables
} from "./cli/constants.js"
export {
  /**
   * The text `gepa show` prints for a saved run.
   *
   * @since 0.1.0
   * @category run directories
   */
  describeRun,
  /**
   * Reads a run directory for `show` and `report`: the state saved by
   * `RunDir` (falling back to its previous generation) and `result.json`.
   * While a run is going on, or after a resumed run went further than the
   * last result, the result is derived from the state. A file that is there
   * but unreadable is an error naming it, never "no result".
   *
   * @since 0.1.0
   * @category run directories
   */
  readRun,
  /**
   * Reads the settings saved in a run directory (`config.json`). The
   * directory it sits in wins over the path saved in it.
   *
   * @since 0.1.0
   * @category run directories
   */
  readSavedSettings,
  /**
   * The HTML report of a saved run.
   *
   * @since 0.1.0
   * @category run directories
   */
  renderReport,
  /**
   * What a run directory holds: the result (from `result.json`, else derived
   * from the saved state) and the state when there is one.
   *
   * @since 0.1.0
   * @category run directories
   */
  type SavedRun
} from "./cli/saved.js"
export {
  /**
   * Where the CLI writes and how it builds models. Tests swap these.
   *
   * @since 0.1.0
   * @category models
   */
  type Environment,
  /**
   * The `Gepa.Config` of a prepared run.
   *
   * @since 0.1.0
   * @category running
   */
  gepaConfig,
  /**
   * Loads the data, the metric and the models of `settings`, and checks the
   * run directory. `resume` says whether a directory that already holds a run
   * may be continued; it then must hold the same run: settings other than
   * those listed in `changeableOnResume` must match its `config.json`.
   *
   * @since 0.1.0
   * @category running
   */
  prepare,
  /**
   * Everything a run needs, checked; building it writes nothing.
   *
   * @since 0.1.0
   * @category models
   */
  type Prepared,
  /**
   * A run that failed after it started: the error, and whether the run
   * directory holds a state that `gepa resume` continues from.
   *
   * @since 0.2.0
   * @category errors
   */
  type RunFailure,
  /**
   * Runs a prepared run: optimizes (writing `config.json` once the run has
   * started), writes the report, prints a summary. The result files belong to
   * the run directory (`RunDir`).
   *
   * @since 0.1.0
   * @category running
   */
  runPrepared
} from "./cli/run.js"
export {
  /**
   * A config file (`gepa optimize --config gepa.json`): every field of
   * `Settings` is optional, a model may be just its name, the seed prompt may
   * come from a file, and `resume` continues the run in `runDir`. Unknown
   * fields are errors.
   *
   * @since 0.2.0
   * @category schemas
   */
  ConfigFile,
  /**
   * A duration written as text ("90s", "15m", "2h") or a number of seconds.
   *
   * @since 0.2.0
   * @category schemas
   */
  DurationText,
  /**
   * The text of a duration as `parseDuration` reads it back ("90s", "250ms").
   *
   * @since 0.2.0
   * @category parsing
   */
  formatDuration,
  /**
   * One layer of settings before they are merged: the config file's, or the
   * flags' (which may give a model's fields one at a time).
   *
   * @since 0.2.0
   * @category models
   */
  type Input,
  /**
   * An OpenAI-compatible model. The API key always comes from
   * `OPENAI_API_KEY`, never from a file. `model`, `baseUrl` and `timeout` may
   * change when a run is resumed; `temperature` and `maxOutputTokens` may not.
   *
   * @since 0.1.0
   * @category schemas
   */
  ModelSpec,
  /**
   * Parses a duration: a number of seconds, or a number followed by ms, s, m
   * or h. `undefined` when it is not one.
   *
   * @since 0.1.0
   * @category parsing
   */
  parseDuration,
  /**
   * Parses the text of a run's `config.json` (see `settingsJson`).
   *
   * @since 0.2.0
   * @category parsing
   */
  parseSettingsJson,
  /**
   * The first setting of `next` that differs from the `saved` run's and may
   * not change on resume, as a one-line message; none when they agree.
   *
   * @since 0.2.0
   * @category parsing
   */
  resumeConflict,
  /**
   * The resolved configuration of a run, as saved in `<runDir>/config.json`.
   * Paths are absolute; the seed prompt is the text itself (a resumed run
   * must start from the same text even if its file changed).
   *
   * @since 0.1.0
   * @category schemas
   */
  Settings,
  /**
   * The seed candidate of a run's settings: its components, or its one prompt.
   *
   * @since 0.3.0
   * @category parsing
   */
  seedTexts,
  /**
   * The text of `config.json` for `settings`.
   *
   * @since 0.2.0
   * @category parsing
   */
  settingsJson
} from "./cli/settings.js"
export {
  /**
   * Parses the text of a config file (JSON); see `parseConfig`, which also
   * gives the warnings.
   *
   * @since 0.1.0
   * @category parsing
   */
  parseConfigFile,
  /**
   * Resolves the relative paths of a layer (data, seed prompt file, run
   * directory, metric module) against `base`.
   *
   * @since 0.2.0
   * @category parsing
   */
  resolvePaths
} from "./cli/configFile.js"
export {
  /**
   * Merges the config file's values with the flags' (flags win) and checks
   * that a run can start: data, seed prompt, models and a stop condition.
   * Does not touch the file system except to read the seed prompt file and
   * the components' seed files, through the context's `FileSystem` (else
   * `@effect/platform-node`'s).
   *
   * @since 0.1.0
   * @category parsing
   */
  resolveSettings
} from "./cli/resolve.js"
export {
  /**
   * The settings of `gepa optimize`: the config file's, then the flags'. Pure
   * apart from reading the config and seed prompt files (through the
   * context's `FileSystem`, else `@effect/platform-node`'s).
   *
   * @since 0.2.0
   * @category parsing
   */
  optimizeSettings
} from "./cli/commands.js"
export {
  /**
   * The help text of a command, or of `gepa` itself.
   *
   * @since 0.2.0
   * @category help
   */
  helpText
} from "./cli/help.js"
export {
  /**
   * The process entry: runs the CLI on `process.argv` and sets the exit code.
   *
   * @since 0.1.0
   * @category running
   */
  main,
  /**
   * The process's environment: the real terminal and OpenAI-compatible models
   * (see `openAiModel`).
   *
   * @since 0.1.0
   * @category models
   */
  processEnvironment,
  /**
   * Runs the CLI on `argv` (as `process.argv`: node, script, arguments) and
   * returns the exit code (see `ExitCode`). Errors are printed to
   * `env.stderr` as one line; it never fails. The help is plain text and
   * loads nothing else, so `gepa --help` starts about as fast as Effect.
   *
   * @since 0.1.0
   * @category running
   */
  run,
  /**
   * The version `gepa --version` prints: the package's, read from its
   * `package.json` (the one place it is written).
   *
   * @since 0.2.0
   * @category constants
   */
  version
} from "./cli/main.js"
