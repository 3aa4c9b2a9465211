/**
 * The `gepa` command line: optimizes a single system prompt with the
 * `DefaultAdapter` against OpenAI-compatible models, and inspects run
 * directories.
 *
 * - `gepa optimize --config gepa.json [flags]`: every config field is also a
 *   flag; flags win over the file.
 * - `gepa resume <runDir>`: continues a run from the configuration saved in
 *   `<runDir>/config.json`.
 * - `gepa report <runDir>`: writes `<runDir>/report.html`.
 * - `gepa show <runDir>`: the best candidate, scores and lineage.
 *
 * Every input problem (a missing file, a bad JSONL line, an unknown metric,
 * an invalid number) is reported as one message naming the file, line or
 * field, with exit code 2, before anything is written. Ctrl-C stops the run
 * at the next safe point; it can then be resumed.
 *
 * @since 0.1.0
 */
import { Args, Command, Options, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Duration, Effect, Either, Option, Redacted, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type { Candidate } from "./Candidate.js"
import * as DataLoader from "./DataLoader.js"
import * as DefaultAdapter from "./DefaultAdapter.js"
import { type ConfigError, PersistenceError } from "./Errors.js"
import type { GepaEvent } from "./Event.js"
import * as Gepa from "./Gepa.js"
import type { LanguageModel } from "./LanguageModel.js"
import * as Metric from "./Metric.js"
import * as OpenAiLanguageModel from "./OpenAiLanguageModel.js"
import * as Report from "./Report.js"
import * as Result from "./Result.js"
import * as RunDir from "./RunDir.js"
import * as State from "./State.js"
import * as StopCondition from "./StopCondition.js"

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/**
 * A problem with what the user gave the CLI: a file, a line of a data file,
 * a config field or a flag. The message names which; the exit code is 2.
 *
 * @since 0.1.0
 * @category errors
 */
export class CliInputError extends Schema.TaggedError<CliInputError>()("CliInputError", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

const inputError = (detail: string) => new CliInputError({ detail })

const fromEither = <A>(either: Either.Either<A, CliInputError>): Effect.Effect<A, CliInputError> =>
  Either.isLeft(either) ? Effect.fail(either.left) : Effect.succeed(either.right)

/**
 * Exit codes of the CLI.
 *
 * @since 0.1.0
 * @category constants
 */
export const ExitCode = {
  ok: 0,
  /** the run failed (model errors, persistence errors, ...) */
  failure: 1,
  /** the input was invalid; nothing was written */
  input: 2
} as const

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

/**
 * An OpenAI-compatible model. The API key always comes from
 * `OPENAI_API_KEY`, never from a file.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelSpec {
  readonly model: string
  /** default `OPENAI_BASE_URL`, else the OpenAI API */
  readonly baseUrl?: string | undefined
  readonly temperature?: number | undefined
  readonly maxOutputTokens?: number | undefined
}

/**
 * The built-in metrics, by name.
 *
 * @since 0.1.0
 * @category constants
 */
export const builtInMetrics = ["exact", "contains", "regex", "json-field"] as const

/**
 * The resolved configuration of a run, as saved in `<runDir>/config.json`.
 * Paths are absolute; the seed prompt is the text itself (a resumed run
 * must start from the same text even if its file changed).
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly train: string
  readonly validation?: string | undefined
  readonly inputField: string
  readonly expectedField: string
  readonly idField?: string | undefined
  readonly component: string
  readonly seedPrompt: string
  /** a built-in name or the absolute path of a module */
  readonly metric: string
  readonly ignoreCase: boolean
  /** the regex metric's pattern; default the example's expected value */
  readonly pattern?: string | undefined
  /** the json-field metric's path; default the whole output */
  readonly jsonPath?: string | undefined
  readonly taskModel: ModelSpec
  readonly reflectionModel: ModelSpec
  readonly maxMetricCalls?: number | undefined
  readonly maxIterations?: number | undefined
  /** e.g. "90s", "15m", "2h"; a bare number is seconds */
  readonly timeout?: string | undefined
  readonly scoreThreshold?: number | undefined
  readonly maxConcurrency: number
  readonly parallelProposals: number
  readonly minibatchSize: number
  readonly merge: boolean
  readonly seed: number
  readonly runDir: string
}

/**
 * Raw values from a config file or from flags, before validation. Numbers
 * may still be strings (flags are text).
 *
 * @since 0.1.0
 * @category models
 */
export type RawSettings = Readonly<Record<string, unknown>>

type Kind = "string" | "posInt" | "nonNegInt" | "int" | "number" | "boolean" | "duration" | "model"

// Every config field, its kind and its flag. The file and the flags share
// this table, so they cannot drift apart.
const fields: ReadonlyArray<{ readonly key: string; readonly kind: Kind; readonly flag: string; readonly path?: boolean }> = [
  { key: "train", kind: "string", flag: "train", path: true },
  { key: "validation", kind: "string", flag: "validation", path: true },
  { key: "inputField", kind: "string", flag: "input-field" },
  { key: "expectedField", kind: "string", flag: "expected-field" },
  { key: "idField", kind: "string", flag: "id-field" },
  { key: "component", kind: "string", flag: "component" },
  { key: "seedPrompt", kind: "string", flag: "seed-prompt" },
  { key: "seedPromptFile", kind: "string", flag: "seed-prompt-file", path: true },
  { key: "metric", kind: "string", flag: "metric" },
  { key: "ignoreCase", kind: "boolean", flag: "ignore-case" },
  { key: "pattern", kind: "string", flag: "pattern" },
  { key: "jsonPath", kind: "string", flag: "json-path" },
  { key: "taskModel", kind: "model", flag: "task-model" },
  { key: "reflectionModel", kind: "model", flag: "reflection-model" },
  { key: "maxMetricCalls", kind: "posInt", flag: "max-metric-calls" },
  { key: "maxIterations", kind: "posInt", flag: "max-iterations" },
  { key: "timeout", kind: "duration", flag: "timeout" },
  { key: "scoreThreshold", kind: "number", flag: "score-threshold" },
  { key: "maxConcurrency", kind: "posInt", flag: "max-concurrency" },
  { key: "parallelProposals", kind: "posInt", flag: "parallel-proposals" },
  { key: "minibatchSize", kind: "posInt", flag: "minibatch-size" },
  { key: "merge", kind: "boolean", flag: "merge" },
  { key: "seed", kind: "int", flag: "seed" },
  { key: "runDir", kind: "string", flag: "run-dir", path: true }
]

const modelFields: ReadonlyArray<{ readonly key: keyof ModelSpec; readonly kind: Kind }> = [
  { key: "model", kind: "string" },
  { key: "baseUrl", kind: "string" },
  { key: "temperature", kind: "number" },
  { key: "maxOutputTokens", kind: "posInt" }
]

/**
 * The defaults of the CLI (the library's own defaults where they exist).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  inputField: "input",
  expectedField: "expected",
  component: DefaultAdapter.defaultComponent,
  metric: "exact",
  maxConcurrency: 8,
  parallelProposals: 1,
  minibatchSize: 3,
  merge: false,
  seed: 0,
  runsRoot: ".gepa-runs"
} as const

// quotes strings so that an empty or blank value is visible in a message
const show = (value: unknown): string => JSON.stringify(value) ?? String(value)

/**
 * Parses a duration: a number of seconds, or a number followed by ms, s, m
 * or h. `undefined` when it is not one.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseDuration = (value: string | number): Duration.Duration | undefined => {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? Duration.seconds(value) : undefined
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?|h|hours?)?\s*$/i.exec(value)
  if (m === null) return undefined
  const n = Number(m[1])
  if (!(n > 0)) return undefined
  const unit = (m[2] ?? "s").toLowerCase()
  if (unit === "ms") return Duration.millis(n)
  if (unit.startsWith("h")) return Duration.hours(n)
  if (unit === "m" || unit.startsWith("min")) return Duration.minutes(n)
  return Duration.seconds(n)
}

// Checks one value against its kind; `where` names it in the message (a
// config field or a flag). Text values (from flags) are converted.
const checkValue = (kind: Kind, value: unknown, where: string): Either.Either<unknown, CliInputError> => {
  const fromText = typeof value === "string"
  const bad = (expected: string) => Either.left(inputError(`${where}: expected ${expected}, got ${show(value)}`))
  const asNumber = (): number | undefined => {
    if (typeof value === "number") return value
    if (fromText && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value)
    return undefined
  }
  switch (kind) {
    case "string":
      return typeof value === "string" && value !== "" ? Either.right(value) : bad("a non-empty string")
    case "boolean": {
      if (typeof value === "boolean") return Either.right(value)
      if (fromText && /^(true|yes|on|1)$/i.test(value)) return Either.right(true)
      if (fromText && /^(false|no|off|0)$/i.test(value)) return Either.right(false)
      return bad("true or false")
    }
    case "posInt": {
      const n = asNumber()
      return n !== undefined && Number.isInteger(n) && n > 0 ? Either.right(n) : bad("a positive integer")
    }
    case "nonNegInt": {
      const n = asNumber()
      return n !== undefined && Number.isInteger(n) && n >= 0 ? Either.right(n) : bad("a non-negative integer")
    }
    case "int": {
      const n = asNumber()
      return n !== undefined && Number.isInteger(n) ? Either.right(n) : bad("an integer")
    }
    case "number": {
      const n = asNumber()
      return n !== undefined ? Either.right(n) : bad("a number")
    }
    case "duration":
      return (typeof value === "string" || typeof value === "number") && parseDuration(value) !== undefined
        ? Either.right(typeof value === "number" ? `${value}s` : value.trim())
        : bad(`a duration such as "90s", "15m" or "2h"`)
    case "model": {
      if (typeof value === "string") return value.trim() === "" ? bad("a model name") : Either.right({ model: value.trim() })
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        return bad(`a model name or an object such as {"model": "gpt-4.1-mini"}`)
      }
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(value)) {
        if (!modelFields.some((f) => f.key === key)) {
          return Either.left(
            inputError(`${where}: unknown field "${key}" (known: ${modelFields.map((f) => f.key).join(", ")})`)
          )
        }
      }
      for (const f of modelFields) {
        const v = (value as Record<string, unknown>)[f.key]
        if (v === undefined) continue
        const checked = checkValue(f.kind, v, `${where}.${f.key}`)
        if (Either.isLeft(checked)) return checked
        out[f.key] = checked.right
      }
      return typeof out["model"] === "string" ? Either.right(out) : bad(`an object with a "model" name`)
    }
  }
}

/**
 * Parses the text of a config file (JSON). `file` names it in messages.
 * Unknown fields and values of the wrong kind are errors; relative paths are
 * resolved against the file's directory.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseConfigFile = (text: string, file: string): Either.Either<RawSettings, CliInputError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(inputError(`${file}: invalid JSON: ${e instanceof Error ? e.message : String(e)}`))
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return Either.left(inputError(`${file}: expected a JSON object with the run's settings`))
  }
  const out: Record<string, unknown> = {}
  const base = path.dirname(path.resolve(file))
  for (const [key, value] of Object.entries(json)) {
    if (key === "$schema" || key === "resume") {
      if (key === "resume") {
        const checked = checkValue("boolean", value, `${file}: field "resume"`)
        if (Either.isLeft(checked)) return Either.left(checked.left)
        out[key] = checked.right
      }
      continue
    }
    const field = fields.find((f) => f.key === key)
    if (field === undefined) {
      return Either.left(inputError(`${file}: unknown field "${key}" (known: ${fields.map((f) => f.key).join(", ")})`))
    }
    if (value === null) continue
    const checked = checkValue(field.kind, value, `${file}: field "${key}"`)
    if (Either.isLeft(checked)) return Either.left(checked.left)
    out[key] = field.path === true && typeof checked.right === "string"
      ? path.resolve(base, checked.right)
      : key === "metric" && typeof checked.right === "string" && looksLikePath(checked.right)
      ? path.resolve(base, checked.right)
      : checked.right
  }
  return Either.right(out)
}

/**
 * Flag values as given on the command line (text), keyed by config field.
 *
 * @since 0.1.0
 * @category models
 */
export type FlagValues = Readonly<Record<string, string | boolean | undefined>>

/**
 * Checks flag values; relative paths are resolved against `cwd`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseFlags = (flags: FlagValues, cwd: string): Either.Either<RawSettings, CliInputError> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(flags)) {
    if (value === undefined) continue
    const field = fields.find((f) => f.key === key)
    // the base URL flags have no config field of their own; see below
    if (field === undefined) continue
    const checked = checkValue(field.kind, value, `--${field.flag}`)
    if (Either.isLeft(checked)) return Either.left(checked.left)
    out[key] = field.path === true && typeof checked.right === "string"
      ? path.resolve(cwd, checked.right)
      : key === "metric" && typeof checked.right === "string" && looksLikePath(checked.right)
      ? path.resolve(cwd, checked.right)
      : checked.right
  }
  // --task-base-url and --reflection-base-url refine the model objects
  for (const role of ["task", "reflection"] as const) {
    const url = flags[`${role}BaseUrl`]
    if (url === undefined) continue
    if (typeof url !== "string" || url.trim() === "") {
      return Either.left(inputError(`--${role}-base-url: expected a URL, got ${show(url)}`))
    }
    out[`${role}BaseUrl`] = url.trim()
  }
  return Either.right(out)
}

const looksLikePath = (metric: string): boolean =>
  /[\\/]/.test(metric) || /\.(?:[cm]?[jt]s)$/i.test(metric)

const timestamp = (date: Date): string => date.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")

/**
 * Merges the config file's values with the flags' (flags win) and checks
 * that a run can start: data, seed prompt, models and a stop condition.
 * Does not touch the file system except to read the seed prompt file.
 *
 * @since 0.1.0
 * @category parsing
 */
export const resolveSettings = (
  file: RawSettings,
  flags: RawSettings,
  options: { readonly cwd: string; readonly now?: Date | undefined }
): Either.Either<Settings, CliInputError> => {
  const raw: Record<string, unknown> = { ...file }
  for (const [key, value] of Object.entries(flags)) {
    if (key === "taskModel" || key === "reflectionModel") {
      // a model name on the command line keeps the file's other model fields
      const before = file[key] as ModelSpec | undefined
      raw[key] = { ...(before ?? {}), ...(value as ModelSpec) }
    } else if (key === "taskBaseUrl" || key === "reflectionBaseUrl") {
      continue
    } else raw[key] = value
  }
  for (const role of ["task", "reflection"] as const) {
    const url = flags[`${role}BaseUrl`]
    if (typeof url !== "string") continue
    const current = raw[`${role}Model`] as ModelSpec | undefined
    if (current === undefined) {
      return Either.left(inputError(`--${role}-base-url: give the model name too (--${role}-model or "${role}Model" in the config)`))
    }
    raw[`${role}Model`] = { ...current, baseUrl: url }
  }
  const missing = (field: string, flag: string) =>
    Either.left(inputError(`missing setting "${field}": set it in the config file or pass --${flag}`))

  if (typeof raw["train"] !== "string") return missing("train", "train")
  if (raw["seedPrompt"] !== undefined && raw["seedPromptFile"] !== undefined) {
    return Either.left(inputError(`give the seed prompt once: "seedPrompt" (--seed-prompt) or "seedPromptFile" (--seed-prompt-file), not both`))
  }
  let seedPrompt = raw["seedPrompt"] as string | undefined
  if (seedPrompt === undefined && typeof raw["seedPromptFile"] === "string") {
    const read = readText(raw["seedPromptFile"])
    if (Either.isLeft(read)) return Either.left(read.left)
    seedPrompt = read.right
    if (seedPrompt.trim() === "") return Either.left(inputError(`${raw["seedPromptFile"]}: the seed prompt file is empty`))
  }
  if (seedPrompt === undefined) return missing("seedPrompt", "seed-prompt")
  if (raw["taskModel"] === undefined) return missing("taskModel", "task-model")
  if (raw["reflectionModel"] === undefined) return missing("reflectionModel", "reflection-model")

  const metric = (raw["metric"] as string | undefined) ?? defaults.metric
  if (!(builtInMetrics as ReadonlyArray<string>).includes(metric) && !looksLikePath(metric)) {
    return Either.left(inputError(
      `unknown metric ${show(metric)}: expected one of ${builtInMetrics.join(", ")}, or the path of a module exporting a metric (e.g. ./metric.ts)`
    ))
  }
  if (typeof raw["pattern"] === "string") {
    try {
      new RegExp(raw["pattern"])
    } catch (e) {
      return Either.left(inputError(`pattern: invalid regular expression: ${e instanceof Error ? e.message : String(e)}`))
    }
  }
  if (raw["maxMetricCalls"] === undefined && raw["maxIterations"] === undefined && raw["timeout"] === undefined) {
    return Either.left(inputError(
      `no budget: set "maxMetricCalls" (--max-metric-calls), "maxIterations" (--max-iterations) or "timeout" (--timeout)`
    ))
  }
  const runDir = (raw["runDir"] as string | undefined) ??
    path.resolve(options.cwd, defaults.runsRoot, `run-${timestamp(options.now ?? new Date())}`)
  const settings: Settings = {
    train: raw["train"],
    validation: raw["validation"] as string | undefined,
    inputField: (raw["inputField"] as string | undefined) ?? defaults.inputField,
    expectedField: (raw["expectedField"] as string | undefined) ?? defaults.expectedField,
    idField: raw["idField"] as string | undefined,
    component: (raw["component"] as string | undefined) ?? defaults.component,
    seedPrompt,
    metric,
    ignoreCase: (raw["ignoreCase"] as boolean | undefined) ?? false,
    pattern: raw["pattern"] as string | undefined,
    jsonPath: raw["jsonPath"] as string | undefined,
    taskModel: raw["taskModel"] as ModelSpec,
    reflectionModel: raw["reflectionModel"] as ModelSpec,
    maxMetricCalls: raw["maxMetricCalls"] as number | undefined,
    maxIterations: raw["maxIterations"] as number | undefined,
    timeout: raw["timeout"] as string | undefined,
    scoreThreshold: raw["scoreThreshold"] as number | undefined,
    maxConcurrency: (raw["maxConcurrency"] as number | undefined) ?? defaults.maxConcurrency,
    parallelProposals: (raw["parallelProposals"] as number | undefined) ?? defaults.parallelProposals,
    minibatchSize: (raw["minibatchSize"] as number | undefined) ?? defaults.minibatchSize,
    merge: (raw["merge"] as boolean | undefined) ?? defaults.merge,
    seed: (raw["seed"] as number | undefined) ?? defaults.seed,
    runDir
  }
  return Either.right(settings)
}

// ---------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------

/**
 * One example of a CLI data file: the user message, the expected value and
 * the whole record (what a custom metric module receives).
 *
 * @since 0.1.0
 * @category models
 */
export interface Example {
  readonly id: string
  readonly input: string
  readonly expected: unknown
  readonly record: Readonly<Record<string, unknown>>
}

const readText = (file: string): Either.Either<string, CliInputError> => {
  try {
    return Either.right(fs.readFileSync(file, "utf8"))
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === "ENOENT") return Either.left(inputError(`${file}: file not found`))
    if (code === "EISDIR") return Either.left(inputError(`${file}: is a directory, expected a file`))
    return Either.left(inputError(`${file}: cannot read the file: ${e instanceof Error ? e.message : String(e)}`))
  }
}

/**
 * The records of a data file's text: JSON Lines (one object per non-blank
 * line) or, when the file name ends in `.json`, a JSON array of objects.
 * Each record comes with its line number (JSONL) or position (JSON).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseRecords = (
  text: string,
  file: string
): Either.Either<ReadonlyArray<{ readonly where: string; readonly id: string; readonly record: Record<string, unknown> }>, CliInputError> => {
  const out: Array<{ where: string; id: string; record: Record<string, unknown> }> = []
  if (/\.json$/i.test(file)) {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (e) {
      return Either.left(inputError(`${file}: invalid JSON: ${e instanceof Error ? e.message : String(e)}`))
    }
    if (!Array.isArray(json)) return Either.left(inputError(`${file}: expected a JSON array of example objects`))
    for (const [i, item] of json.entries()) {
      if (item === null || typeof item !== "object" || Array.isArray(item)) {
        return Either.left(inputError(`${file}: item ${i}: expected a JSON object, got ${show(item)}`))
      }
      out.push({ where: `${file}: item ${i}`, id: String(i), record: item as Record<string, unknown> })
    }
  } else {
    const lines = text.split(/\r?\n/)
    for (const [i, line] of lines.entries()) {
      if (line.trim() === "") continue
      const where = `${file}:${i + 1}`
      let item: unknown
      try {
        item = JSON.parse(line)
      } catch (e) {
        return Either.left(inputError(`${where}: invalid JSON on line ${i + 1}: ${e instanceof Error ? e.message : String(e)}`))
      }
      if (item === null || typeof item !== "object" || Array.isArray(item)) {
        return Either.left(inputError(`${where}: line ${i + 1} must be a JSON object, got ${show(item)}`))
      }
      out.push({ where, id: String(i + 1), record: item as Record<string, unknown> })
    }
  }
  if (out.length === 0) return Either.left(inputError(`${file}: no examples in the file`))
  return Either.right(out)
}

/**
 * The examples of a data file's text, with the input and expected fields
 * picked out. `expectedRequired` is false for metrics that do not need an
 * expected value (a fixed regex, a custom module).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseExamples = (
  text: string,
  file: string,
  options: {
    readonly inputField: string
    readonly expectedField: string
    readonly idField?: string | undefined
    readonly expectedRequired: boolean
  }
): Either.Either<ReadonlyArray<Example>, CliInputError> =>
  Either.flatMap(parseRecords(text, file), (records) => {
    const out: Array<Example> = []
    const seen = new Map<string, string>()
    for (const { id: position, record, where } of records) {
      const input = record[options.inputField]
      if (input === undefined || input === null) {
        return Either.left(inputError(`${where}: missing input field "${options.inputField}" (set the field name with --input-field)`))
      }
      const expected = record[options.expectedField]
      if (options.expectedRequired && expected === undefined) {
        return Either.left(
          inputError(`${where}: missing expected field "${options.expectedField}" (set the field name with --expected-field)`)
        )
      }
      let id = position
      if (options.idField !== undefined) {
        const given = record[options.idField]
        if (typeof given !== "string" && typeof given !== "number") {
          return Either.left(inputError(`${where}: missing id field "${options.idField}" (a string or a number)`))
        }
        id = String(given)
        const first = seen.get(id)
        if (first !== undefined) return Either.left(inputError(`${where}: duplicate id ${show(id)} (first at ${first})`))
        seen.set(id, where)
      }
      out.push({ id, input: typeof input === "string" ? input : JSON.stringify(input), expected, record })
    }
    return Either.right(out)
  })

/**
 * Reads and parses a data file (see `parseExamples`).
 *
 * @since 0.1.0
 * @category parsing
 */
export const loadExamples = (
  file: string,
  options: Parameters<typeof parseExamples>[2]
): Either.Either<ReadonlyArray<Example>, CliInputError> =>
  Either.flatMap(readText(file), (text) => parseExamples(text, file, options))

// ---------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------

const expectedText = (e: Example): string | ReadonlyArray<string> =>
  typeof e.expected === "string"
    ? e.expected
    : Array.isArray(e.expected) && e.expected.every((x) => typeof x === "string")
    ? (e.expected as ReadonlyArray<string>)
    : JSON.stringify(e.expected)

/**
 * The metric a settings object names: a built-in, or a module's `metric` or
 * default export (a function `(example, output) => { score, feedback }`,
 * possibly returning a Promise or an Effect). The module receives the CLI
 * `Example` (with `input`, `expected` and the whole `record`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const loadMetric = (
  settings: Pick<Settings, "metric" | "ignoreCase" | "pattern" | "jsonPath">
): Effect.Effect<Metric.Metric<Example, string, unknown>, CliInputError> => {
  const text = { ignoreCase: settings.ignoreCase }
  switch (settings.metric) {
    case "exact":
      return Effect.succeed(Metric.exactMatch(expectedText, text))
    case "contains":
      return Effect.succeed(Metric.contains(expectedText, text))
    case "regex": {
      const flags = settings.ignoreCase ? "i" : ""
      const fixed = settings.pattern
      return Effect.succeed(Metric.regex<Example>((e) => {
        try {
          return new RegExp(fixed ?? String(e.expected), flags)
        } catch {
          // an unusable per-example pattern can only match itself literally
          return new RegExp(String(e.expected).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), flags)
        }
      }))
    }
    case "json-field":
      return Effect.succeed(Metric.jsonField<Example>(settings.jsonPath ?? "", (e) => e.expected, text))
  }
  const file = settings.metric
  return Effect.gen(function*() {
    if (!fs.existsSync(file)) return yield* Effect.fail(inputError(`${file}: metric module not found`))
    const mod = yield* Effect.tryPromise({
      try: () => import(pathToFileURL(file).href) as Promise<Record<string, unknown>>,
      catch: (e) => inputError(`${file}: cannot load the metric module: ${e instanceof Error ? e.message : String(e)}`)
    })
    const fn = mod["metric"] ?? mod["default"]
    if (typeof fn !== "function") {
      return yield* Effect.fail(
        inputError(`${file}: the module must export a function named "metric" (or a default export) taking (example, output)`)
      )
    }
    const user = fn as (example: Example, output: string) => unknown
    return (example: Example, output: string) =>
      Effect.gen(function*() {
        const value = yield* Effect.suspend(() => {
          const out = user(example, output)
          if (Effect.isEffect(out)) return out as Effect.Effect<unknown, unknown>
          if (out instanceof Promise) return Effect.tryPromise({ try: () => out as Promise<unknown>, catch: (e) => e })
          return Effect.succeed(out)
        })
        if (typeof value === "number") return { score: value }
        if (value !== null && typeof value === "object" && typeof (value as { score?: unknown }).score === "number") {
          const r = value as { score: number; feedback?: unknown }
          return { score: r.score, feedback: typeof r.feedback === "string" ? r.feedback : undefined }
        }
        return yield* Effect.fail(new Error(`the metric returned ${show(value)}, expected a number or { score, feedback }`))
      })
  })
}

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

/**
 * Builds the language models of a run. The default reads the API key from
 * `OPENAI_API_KEY`; tests pass simulated models.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelFactory = (role: "task" | "reflection", spec: ModelSpec) => Effect.Effect<LanguageModel, CliInputError>

/**
 * The OpenAI-compatible model of a spec. A server other than OpenAI's may
 * run without a key; OpenAI's needs `OPENAI_API_KEY`.
 *
 * @since 0.1.0
 * @category models
 */
export const openAiModel = (env: NodeJS.ProcessEnv = process.env): ModelFactory => (role, spec) => {
  const baseURL = spec.baseUrl ?? (env["OPENAI_BASE_URL"]?.trim() || undefined)
  const key = env["OPENAI_API_KEY"]?.trim()
  const field = `${role}Model`
  if ((key === undefined || key === "") && baseURL === undefined) {
    return Effect.fail(inputError(
      `OPENAI_API_KEY is not set: ${field} "${spec.model}" runs on the OpenAI API, which needs a key (or set "baseUrl" for a local server)`
    ))
  }
  return OpenAiLanguageModel.make({
    model: spec.model,
    // local servers (vLLM, Ollama) accept any key
    apiKey: Redacted.make(key === undefined || key === "" ? "unused" : key),
    baseURL,
    temperature: spec.temperature,
    maxOutputTokens: spec.maxOutputTokens
  }).pipe(Effect.mapError((e: ConfigError) => inputError(`${field}.${e.field}: ${e.detail}`)))
}

// ---------------------------------------------------------------------------
// Run directories
// ---------------------------------------------------------------------------

/**
 * The files of a run directory the CLI reads and writes.
 *
 * @since 0.1.0
 * @category constants
 */
export const files = {
  config: "config.json",
  state: RunDir.FILES.state,
  result: RunDir.FILES.result,
  report: "report.html",
  stop: RunDir.FILES.stop
} as const

const persistence = (file: string, operation: string) => (e: unknown) =>
  new PersistenceError({ path: file, operation, detail: e instanceof Error ? e.message : String(e) })

const writeAtomic = (file: string, text: string): Effect.Effect<void, PersistenceError> =>
  Effect.try({
    try: () => {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const tmp = `${file}.${process.pid}.tmp`
      fs.writeFileSync(tmp, text)
      fs.renameSync(tmp, file)
    },
    catch: persistence(file, "write")
  })

/**
 * Reads the settings saved in a run directory.
 *
 * @since 0.1.0
 * @category run directories
 */
export const readSavedSettings = (runDir: string): Either.Either<Settings, CliInputError> => {
  const file = path.join(runDir, files.config)
  if (!fs.existsSync(runDir)) return Either.left(inputError(`${runDir}: run directory not found`))
  if (!fs.existsSync(file)) {
    return Either.left(inputError(`${file}: file not found (was ${runDir} created by "gepa optimize"?)`))
  }
  return Either.flatMap(readText(file), (text) => {
    // checked like a config file, so a hand-edited file fails as clearly
    // as a flag; the directory it sits in wins over the path saved in it
    const parsed = parseConfigFile(text, file)
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    return resolveSettings(parsed.right, { runDir: path.resolve(runDir) }, { cwd: runDir })
  })
}

/**
 * What a run directory holds: the result (from `result.json`, else derived
 * from the saved state) and the state when there is one.
 *
 * @since 0.1.0
 * @category run directories
 */
export interface SavedRun {
  readonly result: Result.GepaResult
  readonly state: State.GepaState | undefined
  readonly settings: Settings | undefined
  /** false while the run has not finished (no result file yet) */
  readonly finished: boolean
}

const decodeResult = Schema.decodeUnknownEither(Result.GepaResult)

const readJson = (file: string): Either.Either<unknown, CliInputError> =>
  Either.flatMap(readText(file), (text) => {
    try {
      return Either.right(JSON.parse(text) as unknown)
    } catch (e) {
      return Either.left(inputError(`${file}: invalid JSON: ${e instanceof Error ? e.message : String(e)}`))
    }
  })

/**
 * Reads a run directory for `show` and `report`: the state saved by
 * `RunDir` (falling back to its previous generation) and `result.json`.
 * While a run is going on, or after a resumed run went further than the
 * last result, the result is derived from the state.
 *
 * @since 0.1.0
 * @category run directories
 */
export const readRun = (runDir: string): Effect.Effect<SavedRun, CliInputError> =>
  Effect.gen(function*() {
    if (!fs.existsSync(runDir)) return yield* Effect.fail(inputError(`${runDir}: run directory not found`))
    if (!fs.statSync(runDir).isDirectory()) return yield* Effect.fail(inputError(`${runDir}: not a directory`))
    const state = Option.getOrUndefined(
      yield* RunDir.readState(runDir).pipe(Effect.mapError((e) => inputError(e.message)))
    )
    const settings = fs.existsSync(path.join(runDir, files.config))
      ? Either.getOrUndefined(readSavedSettings(runDir))
      : undefined
    const resultFile = path.join(runDir, files.result)
    if (fs.existsSync(resultFile)) {
      const json = yield* fromEither(readJson(resultFile))
      const decoded = decodeResult(json)
      if (Either.isLeft(decoded)) {
        return yield* Effect.fail(
          inputError(`${resultFile}: not a GEPA result file (${decoded.left.message.split("\n")[0] ?? ""})`)
        )
      }
      const result = decoded.right
      if (state === undefined || state.metricCalls <= result.totalMetricCalls) {
        return { result, state, settings, finished: true }
      }
    }
    if (state !== undefined) {
      return { result: Result.fromState(state, "not finished"), state, settings, finished: false }
    }
    return yield* Effect.fail(
      inputError(`${runDir}: no ${files.result} or ${files.state} in it (not a GEPA run directory)`)
    )
  })

/**
 * The HTML report of a saved run.
 *
 * @since 0.1.0
 * @category run directories
 */
export const renderReport = (run: SavedRun, runDir: string): string =>
  Report.render({
    result: run.result,
    trace: run.state?.trace,
    title: `GEPA run ${path.basename(path.resolve(runDir))}`,
    generatedAt: new Date().toISOString()
  })

const fmt = (score: number | null | undefined) => (score === null || score === undefined ? "n/a" : score.toFixed(3))

/**
 * The text `gepa show` prints for a saved run.
 *
 * @since 0.1.0
 * @category run directories
 */
export const describeRun = (run: SavedRun, runDir: string): string => {
  const r = run.result
  const lines: Array<string> = []
  lines.push(`Run ${runDir}${run.finished ? "" : " (not finished: resume it with gepa resume)"}`)
  lines.push(`  stopped because  ${r.stopReason}`)
  lines.push(`  seed score       ${fmt(r.seedScore)}`)
  lines.push(`  best score       ${fmt(r.bestScore)} (candidate ${r.bestIndex}, ${r.valCoverage[r.bestIndex] ?? 0} validation examples)`)
  lines.push(`  candidates       ${r.candidates.length} (${r.acceptedProposals} accepted, ${r.rejectedProposals} rejected proposals; ` +
    `${r.mergesAccepted}/${r.mergesAttempted} merges accepted)`)
  lines.push(`  iterations       ${r.iterations}`)
  lines.push(`  metric calls     ${r.totalMetricCalls}`)
  const chain = Result.lineage(r, r.bestIndex)
  lines.push(`  lineage of best  ${chain.map((c) => `${c} (${fmt(r.valAggregateScores[c])})`).join(" -> ")}`)
  const ranked = r.candidates.map((_, i) => i)
    .filter((i) => r.valAggregateScores[i] !== null)
    .sort((a, b) => (r.valAggregateScores[b]! - r.valAggregateScores[a]!) || a - b)
    .slice(0, 5)
  lines.push("")
  lines.push("Top candidates")
  for (const i of ranked) {
    const parents = r.parents[i] ?? []
    lines.push(`  #${String(i).padEnd(4)} score ${fmt(r.valAggregateScores[i])}  ` +
      `${parents.length === 0 ? "seed" : parents.length > 1 ? `merge of ${parents.join(" + ")}` : `from ${parents[0]}`}`)
  }
  lines.push("")
  lines.push(`Best candidate (#${r.bestIndex})`)
  for (const [name, text] of Object.entries(r.bestCandidate)) {
    lines.push(`--- ${name} ---`)
    lines.push(text)
  }
  return lines.join("\n")
}

// ---------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------

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
}

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
  readonly metric: Metric.Metric<Example, string, unknown>
  readonly taskModel: LanguageModel
  readonly reflectionModel: LanguageModel
}

/**
 * Loads the data, the metric and the models of `settings`. `resume` says
 * whether a run directory that already holds a run may be continued.
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
    const expectedRequired = settings.metric === "exact" || settings.metric === "contains" ||
      settings.metric === "json-field" || (settings.metric === "regex" && settings.pattern === undefined)
    const fieldsOf = {
      inputField: settings.inputField,
      expectedField: settings.expectedField,
      idField: settings.idField,
      expectedRequired
    }
    const train = yield* loadExamples(settings.train, fieldsOf)
    const validation = settings.validation === undefined ? undefined : yield* loadExamples(settings.validation, fieldsOf)
    const metric = yield* loadMetric(settings)
    const taskModel = yield* env.makeModel("task", settings.taskModel)
    const reflectionModel = yield* env.makeModel("reflection", settings.reflectionModel)
    if (fs.existsSync(settings.runDir)) {
      if (!fs.statSync(settings.runDir).isDirectory()) {
        return yield* Effect.fail(inputError(`${settings.runDir}: the run directory is a file`))
      }
      const holdsRun = [files.state, files.result, files.config].some((f) => fs.existsSync(path.join(settings.runDir, f)))
      if (holdsRun && !options.resume) {
        return yield* Effect.fail(inputError(
          `${settings.runDir}: the run directory already holds a run; continue it with "gepa resume ${settings.runDir}" ` +
            `(or --resume), or choose another --run-dir`
        ))
      }
    }
    return { settings, train, validation, metric, taskModel, reflectionModel }
  })

/**
 * The `Gepa.Config` of a prepared run.
 *
 * @since 0.1.0
 * @category running
 */
export const gepaConfig = (
  prepared: Prepared,
  onEvent: (event: GepaEvent) => void
): Effect.Effect<Gepa.Config<Example, DefaultAdapter.Trajectory<Example>, string> & {
  readonly adapter: NonNullable<Gepa.Config<Example, DefaultAdapter.Trajectory<Example>, string>["adapter"]>
  readonly reflectionModel: LanguageModel
}, CliInputError> =>
  Effect.gen(function*() {
    const s = prepared.settings
    const adapter = yield* DefaultAdapter.make<Example, unknown>({
      model: prepared.taskModel,
      component: s.component,
      input: (e) => e.input,
      metric: prepared.metric,
      concurrency: s.maxConcurrency
    }).pipe(Effect.mapError((e) => inputError(`${e.field}: ${e.detail}`)))
    // a `gepa.stop` file in the run directory also stops the run (RunDir)
    const stop: Array<StopCondition.StopCondition> = [StopCondition.onSignal()]
    if (s.maxIterations !== undefined) stop.push(StopCondition.maxIterations(s.maxIterations))
    if (s.timeout !== undefined) stop.push(StopCondition.timeout(parseDuration(s.timeout)!))
    if (s.scoreThreshold !== undefined) stop.push(StopCondition.scoreThreshold(s.scoreThreshold))
    const seedCandidate: Candidate = { [s.component]: s.seedPrompt }
    const idOf = (e: Example) => e.id
    const config = {
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
      parallelProposals: s.parallelProposals,
      merge: s.merge,
      // state, events, cache and resume live in the run directory (RunDir)
      runDir: s.runDir,
      onEvent
    }
    return config
  })

const progressPrinter = (write: (text: string) => void) => {
  let best: number | undefined
  return (event: GepaEvent): void => {
    switch (event._tag) {
      case "OptimizationStarted":
        write(`${event.resumed ? "Resuming" : "Starting"}: ${event.trainSize} training and ${event.valSize} validation examples, ` +
          `budget ${event.budget ?? "none"} metric calls\n`)
        break
      case "ValsetEvaluated":
        if (best === undefined || event.score > best) {
          best = event.score
          write(event.candidate === 0 && event.iteration === 0
            ? `seed candidate: ${fmt(event.score)}\n`
            : `iteration ${event.iteration}: new best ${fmt(event.score)} (candidate ${event.candidate})\n`)
        }
        break
      case "IterationEnded":
        if (event.iteration % 10 === 0) {
          write(`iteration ${event.iteration}: ${event.state.metricCalls} metric calls, ${event.state.candidates.length} candidates, ` +
            `best ${fmt(best)}\n`)
        }
        break
      case "Error":
        write(`iteration ${event.iteration}: ${event.message}${event.willContinue ? " (continuing)" : ""}\n`)
        break
    }
  }
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
 * Runs a prepared run: saves the settings, optimizes, writes the result
 * (unless the run directory already did) and the report, prints a summary.
 *
 * @since 0.1.0
 * @category running
 */
export const runPrepared = (
  prepared: Prepared,
  env: Pick<Environment, "stdout" | "stderr">
): Effect.Effect<Gepa.OptimizeResult<string>, Gepa.OptimizeError | PersistenceError | CliInputError> =>
  Effect.scoped(Effect.gen(function*() {
    const s = prepared.settings
    const config = yield* gepaConfig(prepared, progressPrinter(env.stdout))
    yield* writeAtomic(path.join(s.runDir, files.config), `${JSON.stringify(s, null, 2)}\n`)
    const interrupts = yield* watchInterrupts(env.stderr)
    const result = yield* Gepa.optimize(config)
    // RunDir writes result.json when the run finishes; this covers a custom
    // store that does not
    const resultFile = path.join(s.runDir, files.result)
    if (!fs.existsSync(resultFile)) {
      yield* writeAtomic(resultFile, `${JSON.stringify(Schema.encodeSync(Result.GepaResult)(result), null, 2)}\n`)
    }
    const reportFile = path.join(s.runDir, files.report)
    yield* writeAtomic(
      reportFile,
      Report.render({
        result,
        trace: result.state.trace,
        seedCandidate: config.seedCandidate,
        title: `GEPA run ${path.basename(s.runDir)}`,
        generatedAt: new Date().toISOString()
      })
    )
    const stopped = interrupts.count > 0 || /stop requested/.test(result.stopReason)
    env.stdout([
      "",
      `${stopped ? "Stopped" : "Done"}: ${result.stopReason}`,
      `  seed score    ${fmt(result.seedScore)}`,
      `  best score    ${fmt(result.bestScore)} (candidate ${result.bestIndex} of ${result.candidates.length})`,
      `  metric calls  ${result.totalMetricCalls}, iterations ${result.iterations}`,
      "",
      `Best ${s.component}:`,
      result.bestCandidate[s.component] ?? "",
      "",
      `Run directory: ${s.runDir}`,
      `Report:        ${reportFile}`,
      ...(stopped ? [`Resume with:   gepa resume ${s.runDir}`] : []),
      ""
    ].join("\n"))
    return result
  }))

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

const text = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

const budgetOptions = {
  maxMetricCalls: text("max-metric-calls", "strict budget of metric calls (examples evaluated)"),
  maxIterations: text("max-iterations", "stop after this many iterations"),
  timeout: text("timeout", `stop after this long, e.g. "90s", "15m", "2h"`),
  scoreThreshold: text("score-threshold", "stop once the best validation score reaches this")
}

const optimizeOptions = {
  config: text("config", "JSON config file (every field can also be given as a flag; flags win)"),
  train: text("train", "training data: JSONL (one object per line) or a JSON array"),
  validation: text("validation", "validation data (default: the training data)"),
  inputField: text("input-field", `field holding the user message (default "${defaults.inputField}")`),
  expectedField: text("expected-field", `field holding the expected answer (default "${defaults.expectedField}")`),
  idField: text("id-field", "field holding a unique example id (default: the line number)"),
  component: text("component", `name of the optimized component (default "${defaults.component}")`),
  seedPrompt: text("seed-prompt", "the starting system prompt"),
  seedPromptFile: text("seed-prompt-file", "file holding the starting system prompt"),
  metric: text("metric", `${builtInMetrics.join(", ")}, or the path of a module exporting a metric (default exact)`),
  ignoreCase: text("ignore-case", "compare without letter case: true or false"),
  pattern: text("pattern", "regex metric: the pattern (default: each example's expected value)"),
  jsonPath: text("json-path", `json-field metric: dotted path of the field, e.g. "answer.label"`),
  taskModel: text("task-model", "task model name (OpenAI-compatible)"),
  taskBaseUrl: text("task-base-url", "task model base URL (default OPENAI_BASE_URL or OpenAI)"),
  reflectionModel: text("reflection-model", "reflection model name (OpenAI-compatible)"),
  reflectionBaseUrl: text("reflection-base-url", "reflection model base URL"),
  ...budgetOptions,
  maxConcurrency: text("max-concurrency", `evaluations in flight at most (default ${defaults.maxConcurrency})`),
  parallelProposals: text("parallel-proposals", `proposals per iteration (default ${defaults.parallelProposals})`),
  minibatchSize: text("minibatch-size", `training examples per reflection (default ${defaults.minibatchSize})`),
  merge: Options.boolean("merge").pipe(Options.withDescription("enable merges of complementary candidates")),
  noMerge: Options.boolean("no-merge").pipe(Options.withDescription("disable merges (overrides the config file)")),
  seed: text("seed", `seed of every random choice (default ${defaults.seed})`),
  runDir: text("run-dir", `run directory (default ${defaults.runsRoot}/run-<timestamp>)`),
  resume: Options.boolean("resume").pipe(Options.withDescription("continue the run already in --run-dir"))
}

const optionValues = (flags: Readonly<Record<string, unknown>>): Record<string, string | boolean | undefined> => {
  const out: Record<string, string | boolean | undefined> = {}
  for (const [key, value] of Object.entries(flags)) {
    out[key] = Option.isOption(value) ? Option.getOrUndefined(value as Option.Option<string>) : (value as boolean)
  }
  return out
}

/**
 * Resolves `gepa optimize` flags (and the config file they name) into
 * settings. Pure apart from reading the config and seed prompt files.
 *
 * @since 0.1.0
 * @category parsing
 */
export const settingsFromFlags = (
  values: Readonly<Record<string, string | boolean | undefined>>,
  cwd: string,
  now?: Date
): Either.Either<{ readonly settings: Settings; readonly resume: boolean }, CliInputError> => {
  const { config, merge, noMerge, resume, ...rest } = values
  if (merge === true && noMerge === true) return Either.left(inputError(`--merge and --no-merge: give one of them, not both`))
  let file: RawSettings = {}
  if (typeof config === "string") {
    const configFile = path.resolve(cwd, config)
    const read = readText(configFile)
    if (Either.isLeft(read)) return Either.left(read.left)
    const parsed = parseConfigFile(read.right, configFile)
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    file = parsed.right
  }
  const flagValues: Record<string, string | boolean | undefined> = { ...rest }
  if (merge === true) flagValues["merge"] = true
  if (noMerge === true) flagValues["merge"] = false
  const flags = parseFlags(flagValues, cwd)
  if (Either.isLeft(flags)) return Either.left(flags.left)
  const { resume: fileResume, ...fileSettings } = file
  return Either.map(
    resolveSettings(fileSettings, flags.right, { cwd, now }),
    (settings) => ({ settings, resume: resume === true || fileResume === true })
  )
}

const makeCommands = (env: Environment) => {
  const optimize = Command.make("optimize", optimizeOptions, (flags) =>
    Effect.gen(function*() {
      const { resume, settings } = yield* fromEither(settingsFromFlags(optionValues(flags), env.cwd))
      const prepared = yield* prepare(settings, env, { resume })
      yield* runPrepared(prepared, env)
    })).pipe(Command.withDescription("optimize a system prompt (see the README for the config file)"))

  const runDirArg = Args.text({ name: "runDir" }).pipe(Args.withDescription("a run directory"))

  const resume = Command.make("resume", { runDir: runDirArg, ...budgetOptions }, (flags) =>
    Effect.gen(function*() {
      const runDir = path.resolve(env.cwd, flags.runDir)
      const saved = yield* fromEither(readSavedSettings(runDir))
      const extra = yield* fromEither(parseFlags(optionValues({
        maxMetricCalls: flags.maxMetricCalls,
        maxIterations: flags.maxIterations,
        timeout: flags.timeout,
        scoreThreshold: flags.scoreThreshold
      }), env.cwd))
      const settings: Settings = { ...saved, ...extra, runDir }
      const prepared = yield* prepare(settings, env, { resume: true })
      yield* runPrepared(prepared, env)
    })).pipe(Command.withDescription("continue a stopped run from the settings saved in its run directory"))

  const report = Command.make("report", {
    runDir: runDirArg,
    out: text("out", `where to write the report (default <runDir>/${files.report})`)
  }, (flags) =>
    Effect.gen(function*() {
      const runDir = path.resolve(env.cwd, flags.runDir)
      const run = yield* readRun(runDir)
      const out = Option.match(flags.out, { onNone: () => path.join(runDir, files.report), onSome: (o) => path.resolve(env.cwd, o) })
      yield* writeAtomic(out, renderReport(run, runDir))
      env.stdout(`Report written to ${out}\n`)
    })).pipe(Command.withDescription("write the HTML report of a run"))

  const showCommand = Command.make("show", { runDir: runDirArg }, (flags) =>
    Effect.gen(function*() {
      const runDir = path.resolve(env.cwd, flags.runDir)
      const run = yield* readRun(runDir)
      env.stdout(`${describeRun(run, runDir)}\n`)
    })).pipe(Command.withDescription("print the best candidate, the scores and the lineage of a run"))

  return Command.make("gepa").pipe(
    Command.withDescription("GEPA: reflective prompt evolution"),
    Command.withSubcommands([optimize, resume, report, showCommand])
  )
}

/**
 * Runs the CLI on `argv` (as `process.argv`: node, script, arguments) and
 * returns the exit code: 0, 1 when the run failed, 2 for invalid input.
 * Errors are printed to `env.stderr`; it never fails.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (
  argv: ReadonlyArray<string>,
  env: Environment = processEnvironment()
): Effect.Effect<number> => {
  const cli = Command.run(makeCommands(env), { name: "gepa", version: "0.1.0" })
  return cli(argv).pipe(
    Effect.as(ExitCode.ok as number),
    Effect.catchAll((error): Effect.Effect<number> => {
      if (ValidationError.isValidationError(error)) {
        // @effect/cli has already printed what was wrong with the arguments
        return Effect.succeed(ValidationError.isHelpRequested(error) ? ExitCode.ok : ExitCode.input)
      }
      if (error instanceof CliInputError) {
        env.stderr(`gepa: ${error.message}\n`)
        return Effect.succeed(ExitCode.input)
      }
      const tagged = error as { readonly _tag?: string; readonly message?: string }
      if (tagged._tag === "ResumeConflict" || tagged._tag === "ConfigError") {
        env.stderr(`gepa: ${tagged.message}\n`)
        return Effect.succeed(ExitCode.input)
      }
      env.stderr(`gepa: the run failed: ${tagged.message ?? String(error)}\n`)
      return Effect.succeed(ExitCode.failure)
    }),
    Effect.catchAllDefect((defect) =>
      Effect.sync(() => {
        env.stderr(`gepa: unexpected error: ${defect instanceof Error ? defect.stack ?? defect.message : String(defect)}\n`)
        return ExitCode.failure
      })
    ),
    Effect.provide(NodeContext.layer)
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
