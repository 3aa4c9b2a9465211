/**
 * The help texts of the flags; options.ts builds the flags from them and
 * help.ts prints them.
 *
 * @since 0.2.0
 */
import { builtInMetrics, defaults } from "./constants.js"

/**
 * The help of one flag: its name, the placeholder of its value (none for a
 * switch), what it does, and whether a run needs it.
 *
 * @since 0.2.0
 * @category models
 */
export interface FlagDoc {
  readonly flag: string
  readonly arg?: string
  readonly text: string
  readonly required?: boolean
}

/**
 * The help of every flag, by group.
 *
 * @since 0.2.0
 * @category help
 */
export const docs = {
  config: { flag: "config", arg: "FILE", text: "JSON config file: any setting below, in camelCase" },
  train: { flag: "train", arg: "FILE", text: "training examples: JSON Lines (one object per line), or a JSON array in a .json file", required: true },
  validation: { flag: "validation", arg: "FILE", text: "examples candidates are ranked on (default: the training examples)" },
  inputField: { flag: "input-field", arg: "NAME", text: `field holding the user message (default "${defaults.inputField}")` },
  expectedField: { flag: "expected-field", arg: "NAME", text: `field holding the expected answer (default "${defaults.expectedField}")` },
  idField: { flag: "id-field", arg: "NAME", text: "field holding a unique example id (default: the line number)" },
  component: { flag: "component", arg: "NAME", text: `name of the optimized prompt (default "${defaults.component}")` },
  seedPrompt: { flag: "seed-prompt", arg: "TEXT", text: "the starting system prompt (or --seed-prompt-file)", required: true },
  seedPromptFile: { flag: "seed-prompt-file", arg: "FILE", text: "file holding the starting system prompt" },
  metric: {
    flag: "metric",
    arg: "NAME|FILE",
    text: `${builtInMetrics.join(", ")}, or a module (.ts, .mts, .js, .mjs) exporting metric(example, output) ` +
      `(default ${defaults.metric})`
  },
  ignoreCase: { flag: "ignore-case", text: "built-in metrics compare without letter case" },
  noIgnoreCase: { flag: "no-ignore-case", text: "compare with letter case (overrides the config file)" },
  pattern: { flag: "pattern", arg: "REGEX", text: "regex metric: the pattern (default: each example's expected value)" },
  jsonPath: { flag: "json-path", arg: "PATH", text: `json-field metric: dotted path of the field, e.g. "answer.label"` },
  taskModel: {
    flag: "task-model",
    arg: "NAME",
    text: "model that runs the prompt: a name (gpt-4.1-mini) or a model string (anthropic:claude-haiku-4-5, openai-compatible:URL#name)",
    required: true
  },
  taskBaseUrl: { flag: "task-base-url", arg: "URL", text: "its OpenAI-compatible server (default OPENAI_BASE_URL, else OpenAI)" },
  taskTimeout: { flag: "task-timeout", arg: "DURATION", text: `per request of the task model (default ${defaults.taskTimeout})` },
  reflectionModel: {
    flag: "reflection-model",
    arg: "NAME",
    text: "model that rewrites the prompt: a name (gpt-4.1) or a model string (anthropic:claude-sonnet-4-5, google:gemini-2.5-pro)",
    required: true
  },
  reflectionBaseUrl: { flag: "reflection-base-url", arg: "URL", text: "its OpenAI-compatible server (default as above)" },
  reflectionTimeout: {
    flag: "reflection-timeout",
    arg: "DURATION",
    text: `per request of the reflection model (default ${defaults.reflectionTimeout})`
  },
  maxMetricCalls: { flag: "max-metric-calls", arg: "N", text: "budget: examples evaluated, never exceeded" },
  maxIterations: { flag: "max-iterations", arg: "N", text: "stop after this many iterations" },
  timeout: { flag: "timeout", arg: "DURATION", text: `stop after this long: "90s", "15m", "2h"` },
  scoreThreshold: { flag: "score-threshold", arg: "X", text: "stop once the best validation score reaches this" },
  patience: {
    flag: "patience",
    arg: "N",
    text: `stop after N iterations with no better score (default: ${defaults.patience} steps, ${defaults.patience} iterations for one text)`
  },
  noPatience: { flag: "no-patience", text: "never stop for lack of improvement (= --patience 0)" },
  noStopAtPerfect: { flag: "no-stop-at-perfect", text: "go on after a perfect score (1), which stops a run" },
  maxConcurrency: { flag: "max-concurrency", arg: "N", text: `evaluations in flight at most (default ${defaults.maxConcurrency})` },
  parallelProposals: {
    flag: "parallel-proposals",
    arg: "N",
    text: "steps in flight (default 1); more: faster, somewhat worse prompts"
  },
  proposalsPerStep: {
    flag: "proposals-per-step",
    arg: "N",
    text:
      "proposals per step, the best accepted child validated (default 3: three rewrites of the prompt from one minibatch's evidence; 1 to 8 for a budget under 15 validations)"
  },
  minibatchSize: { flag: "minibatch-size", arg: "N", text: `training examples per reflection (default ${defaults.minibatchSize})` },
  merge: { flag: "merge", text: "also merge complementary candidates" },
  noMerge: { flag: "no-merge", text: "no merges (overrides the config file)" },
  seed: { flag: "seed", arg: "N", text: `seed of every random choice (default ${defaults.seed})` },
  runDir: { flag: "run-dir", arg: "DIR", text: `where the run is saved (default ${defaults.runsRoot}/run-<time>)` },
  quiet: { flag: "quiet", text: "no progress bar or lines (the summary is printed)" },
  resume: { flag: "resume", text: "continue the run already in --run-dir (see gepa resume)" },
  out: { flag: "out", arg: "FILE", text: "where to write the report (default <run-dir>/report.html)" },
  format: { flag: "format", arg: "text|json", text: "text (default) or json (the result, as result.json holds it)" },
  ui: {
    flag: "ui",
    text: "serve the live dashboard while the run lasts, print its address"
  },
  uiHost: { flag: "ui-host", arg: "HOST", text: "the dashboard's address (default 127.0.0.1: this machine only)" },
  uiPort: { flag: "ui-port", arg: "N", text: "the dashboard's port (default: a free one)" }
} as const satisfies Record<string, FlagDoc>
