/**
 * The `gepa` command line, as a library: `run(argv, env)` runs a command and
 * returns its exit code; the parts (settings, data files, metrics, models,
 * run directories) are exported for tools built on the CLI. The
 * implementation lives in `src/cli/`.
 *
 * @since 0.1.0
 */
export { CliInputError, ExitCode } from "./cli/errors.js"
export { type Example, loadExamples, parseExamples, parseRecords } from "./cli/data.js"
export { importModule, loadMetric } from "./cli/metric.js"
export { type ComponentsContext, type ComponentsMetric, type ComponentsScore, type LoadedComponentsMetric, loadComponentsMetric } from "./cli/components.js"
export { type ModelFactory, type ModelFactoryOptions, openAiModel, requestTimeout } from "./cli/models.js"
export { builtInMetrics, changeableOnResume, defaults, environmentVariables } from "./cli/constants.js"
export { describeRun, readRun, readSavedSettings, renderReport, type SavedRun } from "./cli/saved.js"
export { type Environment, gepaConfig, prepare, type Prepared, type RunFailure, runPrepared } from "./cli/run.js"
export {
  ConfigFile,
  DurationText,
  formatDuration,
  type Input,
  ModelSpec,
  parseConfigFile,
  parseDuration,
  parseSettingsJson,
  resolvePaths,
  resolveSettings,
  resumeConflict,
  Settings,
  seedTexts,
  settingsJson
} from "./cli/settings.js"
export { optimizeSettings } from "./cli/commands.js"
export { helpText } from "./cli/help.js"
export { main, processEnvironment, run, version } from "./cli/main.js"
