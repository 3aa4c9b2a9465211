/**
 * The settings of a CLI run: one Schema per field, shared by the config file
 * (decoded with them) and the flags (each flag's value is decoded with the
 * same field Schema), so the two cannot drift apart. `Settings` is also the
 * layout of `<runDir>/config.json`. Reading a config file is in
 * `configFile.ts`, merging its values with the flags' in `resolve.ts`.
 *
 * @since 0.1.0
 */
import { Either, Option, Schema } from "effect"
import { firstIssue } from "../internal/shared/issue.js"
import { changeableOnResume, defaults } from "./constants.js"
import { type CliInputError, errorText, inputError, show } from "./errors.js"
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

/**
 * The seed candidate of a run's settings: its components, or its one prompt.
 *
 * @since 0.3.0
 * @category parsing
 */
export const seedTexts = (settings: Settings): Readonly<Record<string, string>> =>
  settings.components ?? { [settings.component ?? defaults.component]: settings.seedPrompt ?? "" }

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
