/**
 * The help of the `gepa` commands: plain text (no colours, whatever the
 * terminal), at most 100 columns, saying which settings a run needs, which
 * may change on resume and which environment variables are read.
 *
 * @since 0.2.0
 */
import { changeableOnResume, environmentVariables } from "./constants.js"
import { docs, type FlagDoc } from "./docs.js"

/**
 * The widest line of the help.
 *
 * @since 0.2.0
 * @category constants
 */
export const width = 100

const column = 34

/** Wraps `text` at `width`, indenting every line after the first by `indent`. */
const wrap = (text: string, indent: number, first = ""): string => {
  const lines: Array<string> = []
  let line = first
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    const sep = line.length === 0 || line.endsWith(" ") ? "" : " "
    if (line.trim().length > 0 && line.length + sep.length + word.length > width) {
      lines.push(line.trimEnd())
      line = " ".repeat(indent) + word
    } else line += sep + word
  }
  lines.push(line.trimEnd())
  return lines.join("\n")
}

const row = (doc: FlagDoc): string => {
  const head = `  --${doc.flag}${doc.arg === undefined ? "" : ` ${doc.arg}`}`
  const text = doc.required === true ? `(required) ${doc.text}` : doc.text
  return head.length + 1 < column
    ? wrap(text, column, head.padEnd(column))
    : `${head}\n${wrap(text, column, " ".repeat(column))}`
}

/** A titled list of flags. @internal */
export const section = (title: string, rows: ReadonlyArray<FlagDoc>): string => [title, ...rows.map(row)].join("\n")

/** A paragraph wrapped at `width`. @internal */
export const paragraph = (text: string): string => wrap(text, 0)

/** The environment variables the CLI reads. @internal */
export const environment = (): string =>
  ["Environment", ...environmentVariables.map(([name, text]) => wrap(text, column, `  ${name}`.padEnd(column)))].join("\n")

const resumeRule = (): string =>
  paragraph(
    `Settings that may change on resume: ${changeableOnResume.run.filter((k) => k !== "runDir").join(", ")}, ` +
      `and each model's ${changeableOnResume.model.join(", ")}. Every other setting must stay as saved.`
  )

// on resume a flag's default is the saved setting
const asSaved = (doc: FlagDoc): FlagDoc => ({
  flag: doc.flag,
  text: doc.text.replace(/\s*\(default [^)]*\)$/, ""),
  ...(doc.arg === undefined ? {} : { arg: doc.arg })
})

const usage = (command: string, tail: string, summary: string): string => `Usage: gepa ${command} ${tail}\n\n${paragraph(summary)}`

const helps = {
  optimize: () => [
    usage("optimize", "[--config FILE] [flags]", "Optimizes a system prompt against OpenAI-compatible models."),
    paragraph(
      "Every setting can be given in a JSON config file (--config) or as a flag; flags win over the file. " +
        "Relative paths are resolved against the file's folder (in the file) or the current folder (flags)."
    ),
    paragraph(
      "A run needs: --train, --seed-prompt or --seed-prompt-file, --task-model, --reflection-model, " +
        "and a budget: --max-metric-calls, --max-iterations or --timeout."
    ),
    paragraph(
      `Several texts at once: "components" in the config file (docs/cli.md, "Several components").`
    ),
    section("Data", [docs.config, docs.train, docs.validation, docs.inputField, docs.expectedField, docs.idField]),
    section("Prompt and metric", [
      docs.component,
      docs.seedPrompt,
      docs.seedPromptFile,
      docs.metric,
      docs.ignoreCase,
      docs.noIgnoreCase,
      docs.pattern,
      docs.jsonPath
    ]),
    section("Models (in the file: taskModel / reflectionModel, a name or {model, baseUrl, timeout, ...})", [
      docs.taskModel,
      docs.taskBaseUrl,
      docs.taskTimeout,
      docs.reflectionModel,
      docs.reflectionBaseUrl,
      docs.reflectionTimeout
    ]),
    section("Budget and stop (at least one of the first three)", [
      docs.maxMetricCalls,
      docs.maxIterations,
      docs.timeout,
      docs.scoreThreshold,
      docs.patience,
      docs.noPatience,
      docs.noStopAtPerfect
    ]),
    section("Search", [docs.maxConcurrency, docs.parallelProposals, docs.proposalsPerStep, docs.minibatchSize, docs.merge, docs.noMerge, docs.seed]),
    section("Run directory, output and live dashboard", [docs.runDir, docs.resume, docs.quiet, docs.ui, docs.uiHost, docs.uiPort]),
    environment(),
    paragraph(
      "Exit codes: 0 done or stopped (Ctrl-C), 1 the run failed once started (its state is saved), " +
        "2 invalid input (nothing written)."
    )
  ],
  resume: () => [
    usage("resume", "<run-dir> [flags]", "Continues a run from the settings saved in <run-dir>/config.json."),
    resumeRule(),
    section(
      "Budget and stop (default: as saved)",
      [
        docs.maxMetricCalls,
        docs.maxIterations,
        docs.timeout,
        docs.scoreThreshold,
        docs.patience,
        docs.noPatience,
        docs.noStopAtPerfect,
        docs.maxConcurrency
      ].map(asSaved)
    ),
    section(
      "Models (default: as saved)",
      [
        docs.taskModel,
        docs.taskBaseUrl,
        docs.taskTimeout,
        docs.reflectionModel,
        docs.reflectionBaseUrl,
        docs.reflectionTimeout
      ].map(asSaved)
    ),
    section("Output and live dashboard", [docs.quiet, docs.ui, docs.uiHost, docs.uiPort]),
    environment()
  ],
  report: () => [
    usage("report", "<run-dir> [--out FILE]", "Writes the HTML report of a run (finished or not)."),
    section("Flags", [docs.out])
  ],
  show: () => [
    usage("show", "<run-dir> [--format text|json]", "Prints the best candidate, the scores and the lineage of a run."),
    section("Flags", [docs.format])
  ],
  watch: () => [
    usage(
      "watch",
      "<run-dir> [--ui-host HOST] [--ui-port N]",
      "Serves the live dashboard of a run folder and prints its address: live while another process runs it " +
        "(also across a resume), static once it has finished. Its Stop button writes the folder's stop file: " +
        "the run saves its state and ends, and gepa resume continues it. Ctrl-C ends the server."
    ),
    section("Flags", [docs.uiHost, docs.uiPort])
  ]
} as const

/**
 * The commands, with one line each.
 *
 * @since 0.2.0
 * @category constants
 */
export const commands = {
  optimize: "optimize a system prompt",
  resume: "continue a stopped or failed run",
  report: "write the HTML report of a run",
  show: "print the best candidate, the scores and the lineage of a run",
  anything: "optimize any text artifact with an evaluator module",
  runner: "serve cluster evaluations to optimizers (scale-out)",
  watch: "serve the live dashboard of a run folder (running or finished)"
} as const

/**
 * @since 0.2.0
 * @category models
 */
export type CommandName = keyof typeof commands

/** @internal */
export const isCommand = (name: string | undefined): name is CommandName => name !== undefined && Object.hasOwn(commands, name)

/**
 * The help text of a command, or of `gepa` itself.
 *
 * @since 0.2.0
 * @category help
 */
export const helpText = (command?: Exclude<CommandName, "anything" | "runner">): string => {
  if (command !== undefined) return `${helps[command]().join("\n\n")}\n`
  return [
    "Usage: gepa <command> [flags]\n\n" +
    paragraph(
      "GEPA: reflective prompt evolution. Optimizes a system prompt with a task model and a reflection " +
        "model, saving the run in a folder that can be stopped, resumed and inspected."
    ),
    ["Commands", ...Object.entries(commands).map(([name, text]) => `  ${name.padEnd(column - 2)}${text}`)].join("\n"),
    environment(),
    paragraph("Run gepa <command> --help for the flags of a command; gepa --version prints the version.")
  ].join("\n\n") + "\n"
}
