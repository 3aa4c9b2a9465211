/**
 * The settings of a run from its layers: the config file's values merged
 * with the flags' (flags win), the seed texts read, the defaults filled in,
 * and the checks that a run can start (data, seed prompt or components,
 * models, metric, a stop condition).
 *
 * @since 0.3.0
 */
import { Effect, Either } from "effect"
import * as path from "node:path"
import { looksLikePath } from "./configFile.js"
import { builtInMetrics, defaults } from "./constants.js"
import { type CliInputError, inputError, show } from "./errors.js"
import type { Input, ModelSpec, Settings } from "./settings.js"
import * as UserFile from "./userFile.js"

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
      seedPrompt = yield* UserFile.readInputFile(seedLayer.seedPromptFile)
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
      const text = yield* UserFile.readInputFile(seed.file)
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
