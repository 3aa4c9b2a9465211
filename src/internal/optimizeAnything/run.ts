/**
 * `optimizeAnything`: checks the configuration, settles the mode and the
 * seed (given, resumed from the run directory, or written by the reflection
 * model), runs `Gepa.optimize` with the evaluator's adapter, then scores the
 * seed and the best candidate on the test set.
 *
 * @internal
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the run reads the user's configuration untyped (every value as unknown); the public optimizeAnything keeps the types */
import { Duration, Effect, Either, Option } from "effect"
import type { Candidate } from "../../Candidate.js"
import type * as CandidateSchema from "../../CandidateSchema.js"
import { type Config as EngineConfig, defaults } from "../../Config.js"
import * as DataLoader from "../../DataLoader.js"
import { AdapterContractError, ConfigError, type PersistenceError, ResumeConflict } from "../../Errors.js"
import { mean } from "../../EvaluationBatch.js"
import { GepaEvent } from "../../Event.js"
import { type LanguageModel, ReflectionModel } from "../../LanguageModel.js"
import type * as OA from "./types.js"
import { SeedGenerationFailed } from "./errors.js"
import { buildPrompt, type ReflectionConfig } from "../../Reflection.js"
import * as RunDir from "../../RunDir.js"
import { none as noStore, type RunStore, RunStoreService } from "../../RunStore.js"
import * as Engine from "../engine/optimize.js"
import * as Ledger from "../engine/ledger.js"
import * as Typed from "../engine/typed.js"
import * as Adapter from "./adapter.js"
import * as Seed from "./seed.js"
import { budgetFromContextWindow, defaultPromptBudget } from "./promptBudget.js"
import { defaultLimits, type EvaluationRecord, type Limits } from "./sideInfo.js"

const TEXT = "candidate"

/**
 * The reflection prompt of `optimizeAnything` (placeholders as in
 * `Reflection`); the objective and background arrive as additional
 * instructions.
 *
 * @internal
 */
export const template =
  `You are improving a text artifact called "{{component}}". It may be program code, a configuration, a prompt, a policy or any other text. An evaluator ran the current version and reported, for each evaluation below, a score (higher is better) and side information: errors, failing cases, measurements, logs.

# Current text of "{{component}}"

{{current_text}}

# Evaluations of the current text

{{examples}}

# How to improve it

1. Read the side information first: it says why each score is what it is, what failed, where, and by how much.
2. Trace every failure to its cause in the artifact and fix the cause, not the symptom. Keep every part that already works.
3. When several evaluations are shown, prefer one change that helps all of them over a patch for a single case.
4. Keep the artifact valid in its own format (syntax, structure, required fields) so that it can be evaluated as it is.
{{additional_instructions}}
# Answer format

Reply with the complete new text of "{{component}}" (not a list of changes) inside one fenced code block that starts with \`\`\` and ends with \`\`\`. If the text itself contains lines starting with \`\`\`, use a longer fence such as \`\`\`\` around it. Anything outside the block is ignored.`

/**
 * Turns what a plain function returned (a value, a Promise, or an Effect)
 * into an Effect; a throw or a rejection is a failure.
 *
 * @internal
 */
export const lift = (f: () => unknown): Effect.Effect<OA.EvaluatorResult, unknown> =>
  Effect.suspend((): Effect.Effect<OA.EvaluatorResult, unknown> => {
    let out: unknown
    try {
      out = f()
    } catch (e) {
      return Effect.fail(e)
    }
    if (Effect.isEffect(out)) return out as Effect.Effect<OA.EvaluatorResult, unknown>
    if (out !== null && typeof out === "object" && typeof (out as PromiseLike<unknown>).then === "function") {
      return Effect.tryPromise({ try: () => Promise.resolve(out as PromiseLike<OA.EvaluatorResult>), catch: (e) => e })
    }
    return Effect.succeed(out as OA.EvaluatorResult)
  })

/** @internal */
export const runPromise = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(Effect.either(effect)).then((r) => {
    if (r._tag === "Left") throw r.left
    return r.right
  })

const check = (ok: boolean, field: string, detail: string): Effect.Effect<void, ConfigError> =>
  ok ? Effect.void : Effect.fail(new ConfigError({ field, detail }))

const positiveInt = (value: number | undefined, field: string) =>
  check(value === undefined || (Number.isInteger(value) && value > 0), field, "must be a positive integer")

const limitsOf = (given: OA.SideInfoLimits | undefined): Effect.Effect<Limits, ConfigError> =>
  Effect.gen(function*() {
    yield* positiveInt(given?.maxStringLength, "sideInfo.maxStringLength")
    yield* positiveInt(given?.maxListItems, "sideInfo.maxListItems")
    yield* positiveInt(given?.maxDepth, "sideInfo.maxDepth")
    yield* positiveInt(given?.maxRecordLength, "sideInfo.maxRecordLength")
    yield* positiveInt(given?.promptStringLength, "sideInfo.promptStringLength")
    yield* positiveInt(given?.promptRecordLength, "sideInfo.promptRecordLength")
    yield* positiveInt(given?.promptBudget, "sideInfo.promptBudget")
    return { ...defaultLimits, ...given }
  })

/**
 * The reflection prompt's budget in characters: the one given, else sized
 * to the reflection model's context window when its layer knows it, else
 * the default.
 */
const promptBudgetOf = (limits: Limits, model: LanguageModel | undefined): number =>
  limits.promptBudget ??
    (model?.contextWindow !== undefined ? budgetFromContextWindow(model.contextWindow) : defaultPromptBudget)

/**
 * The room the prompt leaves for the evaluations: the budget less what the
 * prompt holds besides them (template, objective, background, instructions,
 * the current text), measured on the prompt as it will be built.
 */
const promptRoomOf = (budget: number, reflection: ReflectionConfig) => {
  const empty = "(no examples)"
  return (component: string, currentText: string): number =>
    budget - (buildPrompt({ component, currentText, records: [], config: reflection }).length - empty.length)
}

const steering = (objective: string | undefined, background: string | undefined, extra: string | undefined): string =>
  [
    objective === undefined || objective.trim() === "" ? "" : `Objective: ${objective.trim()}`,
    background === undefined || background.trim() === "" ? "" : `Background:\n\n${background.trim()}`,
    extra?.trim() ?? ""
  ].filter((s) => s !== "").join("\n\n")

/**
 * The reflection options: our template unless the user gave one, and the
 * objective and background ahead of the user's own additional instructions.
 */
// reads only fields whose types do not depend on the type parameters
const reflectionOf = (config: OA.Config<any, any, any, any>): ReflectionConfig => {
  const user = config.reflection ?? {}
  const extra = steering(config.objective, config.background, user.additionalInstructions)
  return {
    ...user,
    template: user.template ?? template,
    ...(extra === "" ? {} : { additionalInstructions: extra })
  }
}

const toLoader = <D>(data: ReadonlyArray<D> | DataLoader.DataLoader<D>, name: string) => DataLoader.ensure(data, name)

const evaluateTestSet = (
  evaluator: Adapter.RawEvaluator,
  options: Adapter.Options,
  candidate: Candidate,
  index: number,
  ids: ReadonlyArray<string>,
  examples: ReadonlyArray<unknown>,
  concurrency: number,
  fallback: number,
  retry: OA.Config<any, any>["evaluationRetry"]
): Effect.Effect<OA.TestScore> =>
  Effect.forEach(examples, (example) => {
    const one = Adapter.evaluateOne(evaluator, candidate, example, options)
    return Effect.either(retry === undefined ? one : Effect.retry(one, retry))
  }, { concurrency }).pipe(Effect.map((results) => {
    const errors: Array<{ id: string; error: string }> = []
    const scores = results.map((r, i) => {
      if (r._tag === "Right") return r.right.score
      errors.push({ id: ids[i]!, error: r.left.detail })
      return fallback
    })
    return { candidate: index, score: mean(scores), scores, failures: errors.length, errors }
  }))

/** What the checks settle before anything is written or called. */
interface Checked {
  readonly seedless: boolean
  readonly limits: Limits
  readonly timeout: Duration.Duration | undefined
  readonly model: LanguageModel | undefined
  readonly mode: OA.Mode
}

/** Every check of the configuration, before anything is written or called. */
const checkConfig = (config: OA.Config<any, any, any, any>): Effect.Effect<Checked, ConfigError> =>
  Effect.gen(function*() {
    const { background, dataset, evaluationTimeout, evaluator, objective, seedAttempts, seedCandidate, testSeed, testset, valset } = config
    yield* check(typeof evaluator === "function", "evaluator", "must be a function (candidate, example) => Effect")
    yield* check(objective === undefined || typeof objective === "string", "objective", "must be a string")
    yield* check(background === undefined || typeof background === "string", "background", "must be a string")
    const seedless = seedCandidate === undefined
    yield* check(
      !seedless || (objective !== undefined && objective.trim() !== ""),
      "objective",
      "is required without a seedCandidate: the reflection model writes the first candidate from it"
    )
    yield* check(
      seedless || typeof seedCandidate === "string" || (typeof seedCandidate === "object" && seedCandidate !== null),
      "seedCandidate",
      "must be a string or a record of named texts"
    )
    yield* check(dataset !== undefined || valset === undefined, "valset", "needs a dataset (generalization mode)")
    yield* check(dataset !== undefined || testset === undefined, "testset", "needs a dataset (single-task mode has no examples)")
    yield* check(testSeed === undefined || typeof testSeed === "boolean", "testSeed", "must be true or false")
    yield* positiveInt(seedAttempts, "seedAttempts")
    const limits = yield* limitsOf(config.sideInfo)
    const timeout = evaluationTimeout === undefined ? undefined : Duration.decodeUnknown(evaluationTimeout)
    if (evaluationTimeout !== undefined) {
      yield* check(
        timeout !== undefined && Option.isSome(timeout) && Duration.toMillis(timeout.value) > 0,
        "evaluationTimeout",
        "must be a positive duration"
      )
    }
    const model: LanguageModel | undefined = config.reflectionModel ??
      Option.getOrUndefined(yield* Effect.serviceOption(ReflectionModel))
    yield* check(
      model !== undefined || (config.proposer !== undefined && !seedless),
      "reflectionModel",
      seedless
        ? "a seedless start needs a reflection model: set reflectionModel or provide ReflectionModel"
        : "set reflectionModel or proposer, or provide ReflectionModel"
    )
    const mode: OA.Mode = dataset === undefined ? "single-task" : valset === undefined ? "multi-task" : "generalization"
    return { seedless, limits, timeout: timeout === undefined ? undefined : Option.getOrUndefined(timeout), model, mode }
  })

/**
 * The run's store, opened here (not by the engine) so that a seedless run
 * can resume with the seed it generated, and the seed event is logged.
 */
const openStore = (config: OA.Config<any, any, any, any>) =>
  config.store !== undefined
    ? config.store
    : config.runDir !== undefined
    ? RunDir.make<EvaluationRecord>(config.runDir, {
      cache: config.cache === undefined || config.cache === true,
      trackBestOutputs: config.trackBestOutputs ?? defaults.trackBestOutputs
    })
    // a run store service from the context (e.g. `RunStore.layerMemory` in tests), else nothing is kept
    : Effect.flatMap(
      Effect.serviceOption(RunStoreService),
      (service) => service._tag === "Some" ? service.value.open<EvaluationRecord>() : Effect.succeed(noStore<EvaluationRecord>())
    )

/**
 * The seed: the one given, the one a seedless run generated before (from
 * the store), or a new one written by the reflection model.
 */
const settleSeed = (
  config: OA.Config<any, any, any, any>,
  checked: Checked,
  store: RunStore<EvaluationRecord>,
  emit: (event: GepaEvent) => Effect.Effect<void, PersistenceError>
): Effect.Effect<
  { readonly seed: Candidate; readonly seedGeneration: OA.SeedGeneration | undefined },
  ResumeConflict | SeedGenerationFailed | PersistenceError | DataLoader.DataLoaderError
> =>
  Effect.gen(function*() {
    const { dataset, objective, seedCandidate } = config
    if (!checked.seedless) {
      return { seed: typeof seedCandidate === "string" ? { [TEXT]: seedCandidate } : (seedCandidate as Candidate), seedGeneration: undefined }
    }
    const saved = yield* store.load
    if (Option.isSome(saved)) {
      const first = saved.value.candidates[0] ?? {}
      const names = Object.keys(first)
      if (names.length !== 1 || names[0] !== TEXT) {
        return yield* Effect.fail(
          new ResumeConflict({
            field: "seedCandidate",
            saved: `components [${names.join(", ")}]`,
            requested: "a generated text seed"
          })
        )
      }
      return { seed: first as Candidate, seedGeneration: undefined }
    }
    const samples = dataset === undefined
      ? []
      : yield* Effect.flatMap(toLoader(dataset, "dataset").ids, (ids) => toLoader(dataset, "dataset").fetch(ids.slice(0, 3)))
    const outcome = yield* Seed.generate(checked.model!, {
      objective: objective!,
      background: config.background,
      samples,
      limits: checked.limits
    }, config.seedAttempts ?? 3).pipe(
      Effect.mapError((e) =>
        e._tag === "Unusable"
          ? new SeedGenerationFailed({ attempts: e.rejected.length, reasons: e.rejected })
          : new SeedGenerationFailed({ attempts: 1, reasons: [`the model call failed: ${e.message}`] })
      )
    )
    const seed = { [TEXT]: outcome.text }
    yield* emit(GepaEvent.SeedGenerated({ attempts: outcome.attempts, rejected: outcome.rejected, candidate: seed }))
    return { seed, seedGeneration: { attempts: outcome.attempts, rejected: outcome.rejected } }
  })

/**
 * The test-set pass: the best candidate, and the seed when asked (a
 * before/after comparison costs a whole test pass, which a user who only
 * wants the best candidate's score should not pay for).
 */
const testPass = (
  config: OA.Config<any, any, any, any>,
  testset: ReadonlyArray<unknown> | DataLoader.DataLoader<unknown>,
  result: Pick<OA.Result<unknown>, "bestIndex" | "candidates"> & { readonly bestCandidate: Candidate },
  score: (candidate: Candidate, index: number, ids: ReadonlyArray<string>, examples: ReadonlyArray<unknown>) => Effect.Effect<OA.TestScore>
): Effect.Effect<OA.TestResult, ConfigError | DataLoader.DataLoaderError> =>
  Effect.gen(function*() {
    const loader = toLoader(testset, "testset")
    const ids = yield* loader.ids
    yield* check(ids.length > 0, "testset", "is empty")
    const examples = yield* loader.fetch(ids)
    const seedScore = config.testSeed === true && result.bestIndex !== 0
      ? yield* score(result.candidates[0]!, 0, ids, examples)
      : undefined
    const bestScore = yield* score(result.bestCandidate, result.bestIndex, ids, examples)
    return {
      size: ids.length,
      seed: result.bestIndex === 0 ? bestScore : seedScore,
      best: bestScore,
      // one call per example scored, in each pass over the test set
      metricCalls: Ledger.sum([bestScore.scores.length, seedScore?.scores.length ?? 0])
    }
  })

/**
 * A typed configuration as a text one: the encoded seed, the text
 * proposers, the schemas and the component reader in place of the typed
 * fields; the schema, to decode candidates, beside it.
 */
const untype = (
  config: OA.Config<any, any, any, any> | OA.StructuredConfig<any, any, any, any>
): Effect.Effect<{ readonly text: OA.Config<any, any, any, any>; readonly shape: CandidateSchema.CandidateSchema<unknown> | undefined }, ConfigError> =>
  Effect.gen(function*() {
    if (!("candidateSchema" in config)) return { text: config, shape: undefined }
    const { candidateSchema: shape, ...rest } = config
    yield* check(
      typeof shape === "object" && shape !== null && typeof shape.encode === "function",
      "candidateSchema",
      "must be a candidate schema (CandidateSchema.make)"
    )
    yield* check(
      rest.seedCandidate !== undefined,
      "seedCandidate",
      "is required with a candidateSchema: a typed run starts from a typed seed"
    )
    const fields = yield* Either.match(Typed.schemaFields(shape, rest.seedCandidate, rest.componentProposers), {
      onLeft: Effect.fail,
      onRight: Effect.succeed
    })
    return { text: { ...rest, ...fields }, shape }
  })

/** @internal */
export const run = (
  given: OA.Config<any, any, any, any> | OA.StructuredConfig<any, any, any, any>
): Effect.Effect<OA.Result<unknown> | OA.StructuredResult<unknown>, OA.OptimizeAnythingError, unknown> =>
  Effect.gen(function*() {
    const { shape, text: config } = yield* untype(given)
    const {
      background: _background,
      captureLogs,
      dataset,
      evaluationTimeout: _evaluationTimeout,
      evaluator,
      objective: _objective,
      reflection: _reflection,
      reflectionModel: _givenModel,
      runDir: _runDir,
      seedAttempts: _seedAttempts,
      seedCandidate,
      sideInfo: _sideInfo,
      store: _givenStore,
      testSeed: _testSeed,
      testset,
      valset,
      ...shared
    } = config
    // every check comes before anything is written or called
    const checked = yield* checkConfig(config)
    const { mode, model } = checked
    const textMode = checked.seedless || typeof seedCandidate === "string"
    // a typed run's evaluator receives the decoded candidate: every stored
    // candidate decodes, as each text was read through its schema when written
    const view = (c: Candidate): unknown => shape !== undefined ? Either.getOrThrowWith(shape.decode(c), (e) => e) : textMode ? c[TEXT] ?? "" : c

    let malformed: string | undefined
    const context = yield* Effect.context<never>()
    const raw: Adapter.RawEvaluator = (candidate, example) =>
      lift(() => (evaluator as (c: unknown, e: unknown) => unknown)(candidate, example)).pipe(Effect.provide(context))
    const adapterOptions: Adapter.Options = {
      view,
      withExample: mode !== "single-task",
      timeout: checked.timeout,
      captureLogs: captureLogs ?? true,
      limits: checked.limits,
      promptRoom: promptRoomOf(promptBudgetOf(checked.limits, model), reflectionOf(config)),
      onMalformed: (detail) => {
        malformed ??= detail
      }
    }

    const store: RunStore<EvaluationRecord> = yield* openStore(config)
    // the prompt shows side information cut to the prompt's limits; the run
    // directory keeps it as stored, one reflection a line
    const adapter = Adapter.make(raw, {
      ...adapterOptions,
      keep: store.durable ? (entry) => store.appendLog("side_info", entry) : undefined
    })
    const emit = (event: GepaEvent) =>
      Effect.gen(function*() {
        if (config.onEvent !== undefined) {
          const out = config.onEvent(event)
          if (Effect.isEffect(out)) yield* out
        }
        if (store.durable) yield* store.onEvent(event)
      })
    const { seed, seedGeneration } = yield* settleSeed(config, checked, store, emit)

    const engineConfig: EngineConfig<unknown, any, EvaluationRecord> & { readonly adapter: typeof adapter } = {
      ...shared,
      seedCandidate: seed,
      trainset: dataset === undefined ? [undefined] : dataset,
      ...(valset === undefined ? {} : { valset }),
      adapter,
      reflection: reflectionOf(config),
      // one problem: a minibatch is that problem
      ...(mode === "single-task" && config.minibatchSize === undefined ? { minibatchSize: 1 } : {}),
      store: Effect.succeed(store)
    }
    const optimized = model !== undefined
      ? Engine.optimize({ ...engineConfig, reflectionModel: model })
      : Engine.optimize({ ...engineConfig, proposer: config.proposer! })
    const result = yield* optimized.pipe(
      Effect.catchTag("AdapterContractError", (e) =>
        Effect.fail(
          malformed === undefined ? e : new AdapterContractError({ call: "evaluator", detail: `returned a malformed result: ${malformed}` })
        ))
    )

    let test: OA.TestResult | undefined
    if (testset !== undefined) {
      test = yield* testPass(config, testset, result, (candidate, index, ids, examples) =>
        evaluateTestSet(
          raw,
          adapterOptions,
          candidate,
          index,
          ids,
          examples,
          config.maxConcurrency ?? defaults.maxConcurrency,
          config.fallbackScore ?? defaults.fallbackScore,
          config.evaluationRetry
        ))
      if (malformed !== undefined) {
        return yield* Effect.fail(new AdapterContractError({ call: "evaluator (test set)", detail: `returned a malformed result: ${malformed}` }))
      }
    }

    const common = { bestComponents: result.bestCandidate, mode, seedGeneration, test }
    if (shape !== undefined) {
      const decoded = yield* Either.match(Typed.decodeResult(shape, result), { onLeft: Effect.fail, onRight: Effect.succeed })
      return { ...decoded, ...common, seedCandidate: decoded.candidates[0] ?? decoded.bestCandidate }
    }
    return {
      ...result,
      ...common,
      bestCandidate: view(result.bestCandidate),
      seedCandidate: view(result.candidates[0] ?? seed)
    }
  }).pipe(Effect.scoped, Effect.withSpan("gepa.optimizeAnything"))
