/**
 * The flags of the `gepa` commands. Each flag is a typed `@effect/cli`
 * option decoded with the same field Schema as the config file (settings.ts),
 * so a bad value fails the same way, as one line naming the flag. The help
 * texts live next to the options, and `help.ts` renders them.
 *
 * @since 0.2.0
 */
import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { type Duration, Effect, Either, type Option, Schema } from "effect"
import { firstIssue } from "../internal/shared/issue.js"
import { docs, type FlagDoc } from "./docs.js"
import { DurationText, Int, NonNegativeInt, Num, Pattern, PositiveInt, Text } from "./settings.js"

// Decodes a flag's value with a field Schema: `--max-metric-calls 0` fails
// as "--max-metric-calls: expected a positive integer, got 0".
const decodedWith = <A, I>(schema: Schema.Schema<A, I>, doc: FlagDoc) => {
  const decode = Schema.decodeEither(schema)
  return (value: I): Effect.Effect<A, ValidationError.ValidationError> =>
    Either.match(decode(value), {
      onLeft: (e) => Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${doc.flag}: ${firstIssue(e)}`))),
      onRight: Effect.succeed
    })
}

const describe = <A>(option: Options.Options<A>, doc: FlagDoc): Options.Options<Option.Option<A>> =>
  option.pipe(Options.withDescription(doc.text), Options.optional)

const text = (doc: FlagDoc, schema: Schema.Schema<string, string> = Text) =>
  describe(Options.text(doc.flag).pipe(Options.mapEffect(decodedWith(schema, doc))), doc)
// a path, checked by the command that uses it (with one line naming the path):
// @effect/cli's own file check refuses an existing folder ("Expected path to
// be a regular file") and dies on a path under a file
const file = (doc: FlagDoc) => describe(Options.text(doc.flag), doc)
const integer = (doc: FlagDoc, schema: Schema.Schema<number, number>) =>
  describe(Options.integer(doc.flag).pipe(Options.mapEffect(decodedWith(schema, doc))), doc)
const float = (doc: FlagDoc) => describe(Options.float(doc.flag).pipe(Options.mapEffect(decodedWith(Num, doc))), doc)
const duration = (doc: FlagDoc): Options.Options<Option.Option<Duration.Duration>> =>
  describe(Options.text(doc.flag).pipe(Options.mapEffect(decodedWith(DurationText, doc))), doc)
const toggle = (doc: FlagDoc) => Options.boolean(doc.flag).pipe(Options.withDescription(doc.text))

/**
 * The live dashboard's flags, shared by `optimize`, `resume` and `watch`
 * (where `--ui` is implied and absent).
 *
 * @since 0.2.0
 * @category options
 */
export const dashboardOptions = {
  uiHost: text(docs.uiHost),
  uiPort: integer(docs.uiPort, Int)
}

/**
 * `--ui` and the dashboard's address.
 *
 * @since 0.2.0
 * @category options
 */
export const uiOptions = {
  ui: toggle(docs.ui),
  ...dashboardOptions
}

/**
 * The budget and stop flags, shared by `optimize` and `resume`.
 *
 * @since 0.2.0
 * @category options
 */
export const budgetOptions = {
  maxMetricCalls: integer(docs.maxMetricCalls, PositiveInt),
  maxIterations: integer(docs.maxIterations, PositiveInt),
  timeout: duration(docs.timeout),
  scoreThreshold: float(docs.scoreThreshold),
  patience: integer(docs.patience, NonNegativeInt),
  noPatience: toggle(docs.noPatience),
  noStopAtPerfect: toggle(docs.noStopAtPerfect),
  maxConcurrency: integer(docs.maxConcurrency, PositiveInt)
}

/**
 * The model flags that may change on resume, shared by `optimize` and
 * `resume`.
 *
 * @since 0.2.0
 * @category options
 */
export const modelOptions = {
  taskModel: text(docs.taskModel),
  taskBaseUrl: text(docs.taskBaseUrl),
  taskTimeout: duration(docs.taskTimeout),
  reflectionModel: text(docs.reflectionModel),
  reflectionBaseUrl: text(docs.reflectionBaseUrl),
  reflectionTimeout: duration(docs.reflectionTimeout)
}

/**
 * The flags of `gepa optimize`.
 *
 * @since 0.2.0
 * @category options
 */
export const optimizeOptions = {
  config: file(docs.config),
  train: file(docs.train),
  validation: file(docs.validation),
  inputField: text(docs.inputField),
  expectedField: text(docs.expectedField),
  idField: text(docs.idField),
  component: text(docs.component),
  seedPrompt: text(docs.seedPrompt),
  seedPromptFile: file(docs.seedPromptFile),
  metric: text(docs.metric),
  ignoreCase: toggle(docs.ignoreCase),
  noIgnoreCase: toggle(docs.noIgnoreCase),
  pattern: text(docs.pattern, Pattern),
  jsonPath: text(docs.jsonPath),
  ...modelOptions,
  ...budgetOptions,
  parallelProposals: integer(docs.parallelProposals, PositiveInt),
  proposalsPerStep: integer(docs.proposalsPerStep, PositiveInt),
  minibatchSize: integer(docs.minibatchSize, PositiveInt),
  merge: toggle(docs.merge),
  noMerge: toggle(docs.noMerge),
  seed: integer(docs.seed, Int),
  runDir: file(docs.runDir),
  ...uiOptions,
  resume: toggle(docs.resume),
  quiet: toggle(docs.quiet)
}

/**
 * The flags of `gepa resume` besides those it shares with `optimize`.
 *
 * @since 0.2.0
 * @category options
 */
export const resumeOptions = { quiet: toggle(docs.quiet) }

/**
 * The flags of `gepa report`.
 *
 * @since 0.2.0
 * @category options
 */
export const reportOptions = { out: file(docs.out) }

/**
 * The flags of `gepa show`.
 *
 * @since 0.2.0
 * @category options
 */
export const showOptions = {
  format: Options.choice(docs.format.flag, ["text", "json"]).pipe(
    Options.withDescription(docs.format.text),
    Options.withDefault("text" as const)
  )
}
