/**
 * The settings of a CLI run: one Schema per field, shared by the config file
 * (decoded with them) and the flags (each flag's value is decoded with the
 * same field Schema), so the two cannot drift apart. `Settings` is also the
 * layout of `<runDir>/config.json`.
 *
 * @since 0.1.0
 */
import { Effect, Either, Option, Schema } from "effect"
import * as path from "node:path"
import { firstIssue } from "../internal/shared/issue.js"
import * as UserFile from "./userFile.js"
import { builtInMetrics, changeableOnResume, defaults } from "./constants.js"
import { CliInputError, errorText, inputError, show } from "./errors.js"
import { didYouMean } from "./suggest.js"
import { Bool, DurationText, expecting, Int, NonNegativeInt, Num, Pattern, PositiveInt, Text } from "./fields.js"

export { Bool, DurationText, formatDuration, Int, NonNegativeInt, Num, parseDuration, Pattern, PositiveInt, Text } from "./fields.js"

const opt = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true })

const modelExpected = `a model name or an object such as {"model": "gpt-4.1-mini"}`

/**
 * An OpenAI-compatible model. The API key always comes from
 * `OPENAI_API_KEY`, never from a file. `model`, `baseUrl` and `timeout` may
 * change when a run is resumed; `temperature` and `maxOutputTokens` may not.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelSpec = Schema.Struct({
  model: Text,
  /** default `OPENAI_BASE_URL`, else the OpenAI API */
  baseUrl: opt(Text),
  temperature: opt(Num),
  maxOutputTokens: opt(PositiveInt),
  /** per request, e.g. "60s"; see `defaults.requestTimeout` */
  timeout: opt(DurationText)
}).annotations(expecting(modelExpected, false))

/**
 * @since 0.1.0
 * @category models
 */
export type ModelSpec = Schema.Schema.Type<typeof ModelSpec>

// a bare name stands for { model: name }
const ModelSetting = Schema.Union(
  Schema.transform(Text.annotations(expecting(modelExpected)), Schema.typeSchema(ModelSpec), {
    strict: true,
    decode: (model) => ({ model }),
    encode: (spec) => spec.model
  }),
  ModelSpec
)

/**
 * The seed text of one component in a config file's `"components"`: the
 * text itself, or `{ "file": "planner.txt" }` (relative to the config file).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ComponentSeed = Schema.Union(
  Text,
  Schema.Struct({ file: Text })
).annotations(expecting(`a non-empty text or {"file": "path"}`, false))

// The fields of the file and of config.json. Each field's Schema is the one
// its flag is decoded with (see options.ts).
const commonFields = {
  validation: opt(Text),
  idField: opt(Text),
  pattern: opt(Pattern),
  jsonPath: opt(Text),
  maxMetricCalls: opt(PositiveInt),
  maxIterations: opt(PositiveInt),
  timeout: opt(DurationText),
  scoreThreshold: opt(Num),
  /** stop when the validation score is perfect (1); default true */
  stopAtPerfect: opt(Bool),
  /** stop after this many iterations without a better validation score; 0: never; unset: `defaults.patience` steps (that many times the proposals per step) */
  patience: opt(NonNegativeInt)
}

/**
 * The resolved configuration of a run, as saved in `<runDir>/config.json`.
 * Paths are absolute; the seed prompt is the text itself (a resumed run
 * must start from the same text even if its file changed). A run optimizes
 * either one prompt (`component` and `seedPrompt`) or several texts
 * (`components`: each name with its seed text), never both.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Settings = Schema.Struct({
  train: Text,
  ...commonFields,
  inputField: Text,
  expectedField: Text,
  /** the optimized prompt's name; absent in a run of `components` */
  component: opt(Text),
  /** absent in a run of `components` */
  seedPrompt: opt(Text),
  /** the seed text of each component of a run of several texts */
  components: opt(Schema.Record({ key: Text, value: Text })),
  /** a built-in name or the absolute path of a module */
  metric: Text,
  ignoreCase: Bool,
  taskModel: ModelSpec,
  reflectionModel: ModelSpec,
  maxConcurrency: PositiveInt,
  /** absent: the library's default */
  parallelProposals: opt(PositiveInt),
  /** absent: the library's default */
  proposalsPerStep: opt(PositiveInt),
  minibatchSize: PositiveInt,
  merge: Bool,
  seed: Int,
  runDir: Text
})

/**
 * @since 0.1.0
 * @category models
 */
export type Settings = Schema.Schema.Type<typeof Settings>

/**
 * A config file (`gepa optimize --config gepa.json`): every field of
 * `Settings` is optional, a model may be just its name, the seed prompt may
 * come from a file, and `resume` continues the run in `runDir`. Unknown
 * fields are errors.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ConfigFile = Schema.Struct({
  $schema: opt(Schema.String),
  train: opt(Text),
  ...commonFields,
  inputField: opt(Text),
  expectedField: opt(Text),
  component: opt(Text),
  seedPrompt: opt(Text),
  seedPromptFile: opt(Text),
  components: opt(Schema.Record({ key: Text, value: ComponentSeed })),
  metric: opt(Text),
  ignoreCase: opt(Bool),
  taskModel: opt(ModelSetting),
  reflectionModel: opt(ModelSetting),
  maxConcurrency: opt(PositiveInt),
  parallelProposals: opt(PositiveInt),
  proposalsPerStep: opt(PositiveInt),
  minibatchSize: opt(PositiveInt),
  merge: opt(Bool),
  seed: opt(Int),
  runDir: opt(Text),
  resume: opt(Bool)
})

/**
 * One layer of settings before they are merged: the config file's, or the
 * flags' (which may give a model's fields one at a time).
 *
 * @since 0.2.0
 * @category models
 */
export type Input =
  & Omit<Schema.Schema.Type<typeof ConfigFile>, "$schema" | "taskModel" | "reflectionModel">
  & {
    readonly taskModel?: Partial<ModelSpec>
    readonly reflectionModel?: Partial<ModelSpec>
  }

const knownFields = Object.keys(ConfigFile.fields).filter((k) => k !== "$schema")

const looksLikePath = (metric: string): boolean => /[\\/]/.test(metric) || /\.(?:[cm]?[jt]s)$/i.test(metric)

/**
 * Resolves the relative paths of a layer (data, seed prompt file, run
 * directory, metric module) against `base`.
 *
 * @since 0.2.0
 * @category parsing
 */
export const resolvePaths = (input: Input, base: string): Input => {
  const abs = (p: string | undefined) => (p === undefined ? {} : { value: path.resolve(base, p) })
  const out: { -readonly [K in keyof Input]: Input[K] } = { ...input }
  for (const key of ["train", "validation", "seedPromptFile", "runDir"] as const) {
    const resolved = abs(input[key])
    if ("value" in resolved) out[key] = resolved.value
  }
  if (input.metric !== undefined && looksLikePath(input.metric)) out.metric = path.resolve(base, input.metric)
  if (input.components !== undefined) {
    out.components = Object.fromEntries(
      Object.entries(input.components).map(([name, seed]) => [name, typeof seed === "string" ? seed : { file: path.resolve(base, seed.file) }])
    )
  }
  return out
}

/**
 * Reads a file the user named, through the context's `FileSystem` (else
 * Node's); a failure is one line naming the file.
 *
 * @internal
 */
export const readText = (file: string): Effect.Effect<string, CliInputError> =>
  Effect.mapError(UserFile.readText(file), (problem) =>
    inputError(
      problem.kind === "missing"
        ? `${file}: file not found`
        : problem.kind === "directory"
        ? `${file}: is a directory, expected a file`
        : `${file}: cannot read the file: ${problem.detail}`
    ))

const decodeConfigFile = Schema.decodeUnknownEither(ConfigFile, { onExcessProperty: "error", errors: "all" })

// The other spelling of a model's base URL (the OpenAI SDK's `baseURL`) is
// read as `baseUrl`, with a warning; both at once is an error.
const respell = (json: Record<string, unknown>, file: string): Either.Either<ReadonlyArray<string>, CliInputError> => {
  const warnings: Array<string> = []
  for (const role of ["taskModel", "reflectionModel"]) {
    const spec = json[role]
    if (spec === null || typeof spec !== "object" || Array.isArray(spec) || !("baseURL" in spec)) continue
    const { baseURL, ...rest } = spec
    if ("baseUrl" in rest) return Either.left(inputError(`${file}: "${role}" has both "baseUrl" and "baseURL"; keep "baseUrl"`))
    json[role] = { ...rest, baseUrl: baseURL }
    warnings.push(`${file}: "${role}.baseURL" is spelled "${role}.baseUrl" in a config file; read as such`)
  }
  return Either.right(warnings)
}

/**
 * Parses the text of a config file (JSON), with the warnings it gives (a
 * base URL spelled `baseURL`). `file` names it in messages. Unknown fields
 * (with the closest known one, when it looks like a typo) and values of the
 * wrong kind are errors; relative paths are resolved against the file's
 * directory.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parseConfig = (
  text: string,
  file: string
): Either.Either<{ readonly input: Input; readonly warnings: ReadonlyArray<string> }, CliInputError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(inputError(`${file}: invalid JSON: ${errorText(e)}`))
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return Either.left(inputError(`${file}: expected a JSON object with the run's settings`))
  }
  const respelled: Record<string, unknown> = { ...json }
  const warnings = respell(respelled, file)
  if (Either.isLeft(warnings)) return Either.left(warnings.left)
  const decoded = decodeConfigFile(respelled)
  if (Either.isLeft(decoded)) {
    const problem = firstIssue(decoded.left)
    const unknown = /^unknown field "([^"]*)"/.exec(problem)
    let hint = ""
    if (unknown !== null) {
      const name = unknown[1] ?? ""
      // "taskModel.baseUrll": the field of a model spec
      const [head, tail] = name.split(".", 2)
      const [parent, field] = tail === undefined ? [undefined, name] : [head, tail]
      const known = parent === undefined ? knownFields : Object.keys(ModelSpec.fields)
      const guess = didYouMean(field, known, (k) => `"${parent === undefined ? k : `${parent}.${k}`}"`)
      hint = guess !== "" ? guess : ` (known: ${known.join(", ")})`
    }
    return Either.left(inputError(`${file}: ${problem.startsWith("\"") ? `field ${problem}` : problem}${hint}`))
  }
  const { $schema: _, ...input } = decoded.right
  return Either.right({ input: resolvePaths(input, path.dirname(path.resolve(file))), warnings: warnings.right })
}

/**
 * Parses the text of a config file (JSON); see `parseConfig`, which also
 * gives the warnings.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseConfigFile = (text: string, file: string): Either.Either<Input, CliInputError> =>
  Either.map(parseConfig(text, file), (parsed) => parsed.input)

const timestamp = (date: Date): string => date.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")

const mergeModel = (
  file: Partial<ModelSpec> | undefined,
  flags: Partial<ModelSpec> | undefined
): { readonly value?: Partial<ModelSpec> } => (file === undefined && flags === undefined ? {} : { value: { ...file, ...flags } })

const completeModel = (role: "task" | "reflection", spec: Partial<ModelSpec> | undefined): Either.Either<ModelSpec, CliInputError> => {
  if (spec?.model === undefined) {
    return Either.left(
      spec === undefined
        ? inputError(`missing setting "${role}Model": set it in the config file or pass --${role}-model`)
        : inputError(`--${role}-base-url and --${role}-timeout need the model name too (--${role}-model or "${role}Model" in the config)`)
    )
  }
  const { model, ...rest } = spec
  return Either.right({ ...rest, model })
}

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
export const resolveSettings = (
  file: Input,
  flags: Input,
  options: { readonly cwd: string; readonly now?: Date | undefined }
): Effect.Effect<Settings, CliInputError> =>
  Effect.gen(function*() {
    const task = mergeModel(file.taskModel, flags.taskModel)
    const reflection = mergeModel(file.reflectionModel, flags.reflectionModel)
    const raw: Input = {
      ...file,
      ...flags,
      ...(task.value === undefined ? {} : { taskModel: task.value }),
      ...(reflection.value === undefined ? {} : { reflectionModel: reflection.value })
    }
    const missing = (field: string, flag: string) => Either.left(inputError(`missing setting "${field}": set it in the config file or pass --${flag}`))
    if (raw.train === undefined) return yield* missing("train", "train")
    if (raw.components !== undefined) return yield* resolveComponents(raw, raw.train, raw.components, { file, flags, options })
    // the file's seed prompt gives way to a flag's, in either form
    const seedFromFlags = flags.seedPrompt !== undefined || flags.seedPromptFile !== undefined
    const seedLayer = seedFromFlags ? flags : file
    if (seedLayer.seedPrompt !== undefined && seedLayer.seedPromptFile !== undefined) {
      return yield* Either.left(inputError(
        `give the seed prompt once: "seedPrompt" (--seed-prompt) or "seedPromptFile" (--seed-prompt-file), not both`
      ))
    }
    let seedPrompt = seedLayer.seedPrompt
    if (seedPrompt === undefined && seedLayer.seedPromptFile !== undefined) {
      seedPrompt = yield* readText(seedLayer.seedPromptFile)
      if (seedPrompt.trim() === "") return yield* Either.left(inputError(`${seedLayer.seedPromptFile}: the seed prompt file is empty`))
    }
    if (seedPrompt === undefined) return yield* missing("seedPrompt", "seed-prompt")
    const taskModel = yield* completeModel("task", raw.taskModel)
    const reflectionModel = yield* completeModel("reflection", raw.reflectionModel)
    const metric = raw.metric ?? defaults.metric
    if (!builtInMetrics.some((name) => name === metric) && !looksLikePath(metric)) {
      return yield* Either.left(inputError(
        `unknown metric ${show(metric)}: expected one of ${builtInMetrics.join(", ")}, ` +
          `or the path of a module exporting a metric (e.g. ./metric.ts)`
      ))
    }
    if (raw.merge === true) {
      // a merge takes each component from one of two related candidates: with
      // a single component the child is a copy of a parent, a metric-call cost
      // for nothing
      return yield* Either.left(inputError(
        `${flags.merge === true ? "--merge" : `"merge": true`}: merges combine the components of two candidates, and ` +
          `gepa optimize evolves one (${raw.component ?? defaults.component}), so a merge would only copy a parent; ` +
          `name several texts under "components" in the config file to merge them`
      ))
    }
    yield* requireBudget(raw)
    return completeSettings(raw, raw.train, { taskModel, reflectionModel, metric, options }, {
      component: raw.component ?? defaults.component,
      seedPrompt
    })
  })

// every setting but the texts, with its default
/**
 * The seed candidate of a run's settings: its components, or its one prompt.
 *
 * @since 0.3.0
 * @category parsing
 */
export const seedTexts = (settings: Settings): Readonly<Record<string, string>> =>
  settings.components ?? { [settings.component ?? defaults.component]: settings.seedPrompt ?? "" }

const completeSettings = (
  raw: Input,
  train: string,
  resolved: {
    readonly taskModel: ModelSpec
    readonly reflectionModel: ModelSpec
    readonly metric: string
    readonly options: { readonly cwd: string; readonly now?: Date | undefined }
  },
  texts: Pick<Settings, "component" | "seedPrompt" | "components">
): Settings => {
  const { resume: _resume, seedPromptFile: _file, components: _components, component: _component, seedPrompt: _seed, ...rest } = raw
  return {
    ...rest,
    train,
    inputField: raw.inputField ?? defaults.inputField,
    expectedField: raw.expectedField ?? defaults.expectedField,
    ...texts,
    metric: resolved.metric,
    ignoreCase: raw.ignoreCase ?? false,
    taskModel: resolved.taskModel,
    reflectionModel: resolved.reflectionModel,
    maxConcurrency: raw.maxConcurrency ?? defaults.maxConcurrency,
    ...(raw.parallelProposals === undefined ? {} : { parallelProposals: raw.parallelProposals }),
    ...(raw.proposalsPerStep === undefined ? {} : { proposalsPerStep: raw.proposalsPerStep }),
    minibatchSize: raw.minibatchSize ?? defaults.minibatchSize,
    merge: raw.merge ?? defaults.merge,
    seed: raw.seed ?? defaults.seed,
    runDir: raw.runDir ?? path.resolve(resolved.options.cwd, defaults.runsRoot, `run-${timestamp(resolved.options.now ?? new Date())}`)
  }
}

const requireBudget = (raw: Input): Either.Either<void, CliInputError> =>
  raw.maxMetricCalls === undefined && raw.maxIterations === undefined && raw.timeout === undefined
    ? Either.left(inputError(
      `no budget: set "maxMetricCalls" (--max-metric-calls), "maxIterations" (--max-iterations) or "timeout" (--timeout)`
    ))
    : Either.void

// A run of several texts: each component's seed text (read from its file),
// and a metric module that runs the program (see components.ts).
const resolveComponents = (
  raw: Input,
  train: string,
  seeds: NonNullable<Input["components"]>,
  layers: { readonly file: Input; readonly flags: Input; readonly options: { readonly cwd: string; readonly now?: Date | undefined } }
): Effect.Effect<Settings, CliInputError> =>
  Effect.gen(function*() {
    const { file, flags, options } = layers
    const single = (["component", "seedPrompt", "seedPromptFile"] as const).find((k) => file[k] !== undefined || flags[k] !== undefined)
    if (single !== undefined) {
      const where = flags[single] === undefined ? `"${single}"` : `--${single.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
      return yield* Either.left(inputError(
        `${where}: a run of "components" takes each seed text from "components"; give one prompt or several components, not both`
      ))
    }
    const entries = Object.entries(seeds)
    if (entries.length === 0) return yield* Either.left(inputError(`"components": name at least one component with its seed text`))
    const components: Record<string, string> = {}
    for (const [name, seed] of entries) {
      if (typeof seed === "string") {
        components[name] = seed
        continue
      }
      const text = yield* readText(seed.file)
      if (text.trim() === "") return yield* Either.left(inputError(`${seed.file}: the seed text of component "${name}" is empty`))
      components[name] = text
    }
    const metric = raw.metric
    if (metric === undefined || !looksLikePath(metric)) {
      return yield* Either.left(inputError(
        `${metric === undefined ? `missing setting "metric"` : `"metric": ${show(metric)} is a built-in`}: a run of "components" ` +
          `needs a metric module that runs the program with the texts, e.g. "./agent.ts" exporting ` +
          `metric(example, texts, { generate })`
      ))
    }
    if (raw.merge === true && entries.length === 1) {
      return yield* Either.left(inputError(
        `"merge": true: merges combine the components of two candidates, and this run has one component (${entries[0]![0]}), ` +
          `so a merge would only copy a parent`
      ))
    }
    const taskModel = yield* completeModel("task", raw.taskModel)
    const reflectionModel = yield* completeModel("reflection", raw.reflectionModel)
    yield* requireBudget(raw)
    return completeSettings(raw, train, { taskModel, reflectionModel, metric, options }, { components })
  })

const encodeSettings = Schema.encodeSync(Settings)
const decodeSettings = Schema.decodeUnknownEither(Settings, { onExcessProperty: "error", errors: "all" })

/**
 * The text of `config.json` for `settings`.
 *
 * @since 0.2.0
 * @category parsing
 */
export const settingsJson = (settings: Settings): string => `${JSON.stringify(encodeSettings(settings), null, 2)}\n`

/**
 * Parses the text of a run's `config.json` (see `settingsJson`).
 *
 * @since 0.2.0
 * @category parsing
 */
export const parseSettingsJson = (text: string, file: string): Either.Either<Settings, CliInputError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(inputError(`${file}: invalid JSON: ${errorText(e)}`))
  }
  return Either.mapLeft(decodeSettings(json), (e) => {
    const problem = firstIssue(e)
    return inputError(`${file}: ${problem.startsWith("\"") ? `field ${problem}` : problem}`)
  })
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/**
 * The first setting of `next` that differs from the `saved` run's and may
 * not change on resume, as a one-line message; none when they agree.
 *
 * @since 0.2.0
 * @category parsing
 */
export const resumeConflict = (saved: Settings, next: Settings): Option.Option<string> => {
  const a = encodeSettings(saved)
  const b = encodeSettings(next)
  const differs = (field: string, was: unknown, now: unknown) => {
    if (sameJson(was, now)) return Option.none()
    const [x, y] = field === "seedPrompt"
      ? ["a different text", "this text"]
      : field === "components"
      ? [
        `components ${Object.keys(was ?? {}).join(", ")}`,
        `components ${Object.keys(now ?? {}).join(", ")}${sameJson(Object.keys(was ?? {}), Object.keys(now ?? {})) ? ", with other texts" : ""}`
      ]
      : [show(was ?? null), show(now ?? null)]
    return Option.some(`"${field}" differs from the saved run (saved: ${x}; now: ${y})`)
  }
  const valueOf = (o: object, key: string): unknown => Object.entries(o).find(([k]) => k === key)?.[1]
  const changeable: ReadonlyArray<string> = [...changeableOnResume.run, "taskModel", "reflectionModel"]
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((key) => !changeable.includes(key))
  return Option.firstSomeOf([
    ...keys.map((key) => differs(key, valueOf(a, key), valueOf(b, key))),
    // of a model, only where and how long it is called may change
    differs("taskModel.temperature", a.taskModel.temperature, b.taskModel.temperature),
    differs("taskModel.maxOutputTokens", a.taskModel.maxOutputTokens, b.taskModel.maxOutputTokens),
    differs("reflectionModel.temperature", a.reflectionModel.temperature, b.reflectionModel.temperature),
    differs("reflectionModel.maxOutputTokens", a.reflectionModel.maxOutputTokens, b.reflectionModel.maxOutputTokens)
  ])
}
