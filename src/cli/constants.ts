/**
 * The constants of the CLI: defaults, built-in metrics, the settings that may
 * change on resume and the environment variables read. Kept apart from the
 * rest so that `gepa --help` loads little.
 *
 * @since 0.2.0
 */
// the library's defaults table; Config.ts loads nothing else at run time
import { defaults as engine } from "../Config.js"

/**
 * The built-in metrics, by name.
 *
 * @since 0.1.0
 * @category constants
 */
export const builtInMetrics = ["exact", "contains", "regex", "json-field"] as const

/**
 * The defaults of the CLI (the library's own defaults where they exist).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  inputField: "input",
  expectedField: "expected",
  // DefaultAdapter.defaultComponent, spelled out so that `gepa --help` loads
  // no library module (a test pins the two together)
  component: "system_prompt",
  metric: "exact",
  maxConcurrency: engine.maxConcurrency,
  /** steps without a better validation score before a run stops, unless `patience` is given in iterations (0: never) */
  patience: 30,
  /** a perfect validation score (1) stops a run */
  stopAtPerfect: true,
  minibatchSize: engine.minibatchSize,
  merge: engine.merge,
  seed: engine.seed,
  runsRoot: ".gepa-runs",
  /** per request of the task model */
  taskTimeout: "60s",
  /** per request of the reflection model (its answers are longer) */
  reflectionTimeout: "120s"
} as const

/**
 * The settings that may change when a run is resumed: they do not change
 * what the run optimizes or how its scores compare (budget and stop
 * conditions, concurrency, and where and how long the models are called).
 * Every other setting must stay as saved.
 *
 * @since 0.2.0
 * @category constants
 */
export const changeableOnResume = {
  run: ["maxMetricCalls", "maxIterations", "timeout", "scoreThreshold", "stopAtPerfect", "patience", "maxConcurrency", "runDir"],
  model: ["model", "baseUrl", "timeout"]
} as const

/**
 * The environment variables the CLI reads, with what they are for.
 *
 * @since 0.2.0
 * @category constants
 */
export const environmentVariables = [
  ["OPENAI_API_KEY", "API key of both models; required unless the model name ends with #nokey"],
  ["OPENAI_BASE_URL", "base URL of both models when the config gives none"],
  ["ANTHROPIC_API_KEY", "API key of anthropic: models (with @effect/ai-anthropic installed)"],
  ["GEMINI_API_KEY", "API key of google: models (or GOOGLE_API_KEY), via Gemini's OpenAI-compatible API"]
] as const
