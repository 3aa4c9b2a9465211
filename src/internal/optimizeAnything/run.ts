/**
 * `optimizeAnything`: checks the configuration, settles the mode and the
 * seed (given, resumed from the run directory, or written by the reflection
 * model), runs `Gepa.optimize` with the evaluator's adapter, then scores the
 * seed and the best candidate on the test set.
 *
 * The checks are in `configChecks.ts`, the reflection prompt's options and
 * budget in `reflectionPrompt.ts`, the test-set pass in `testSet.ts`.
 *
 * @internal
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the run reads the user's configuration untyped (every value as unknown); the public optimizeAnything keeps the types */
import { Effect, Either, Option } from "effect"
import type { Candidate } from "../../Candidate.js"
import type * as CandidateSchema from "../../CandidateSchema.js"
import { type Config as EngineConfig, defaults } from "../../Config.js"
import * as DataLoader from "../../DataLoader.js"
import { AdapterContractError, type ConfigError, type PersistenceError, ResumeConflict } from "../../Errors.js"
import { GepaEvent } from "../../Event.js"
import type * as OA from "./types.js"
import { SeedGenerationFailed } from "./errors.js"
import * as RunDir from "../../RunDir.js"
import { none as noStore, type RunStore, RunStoreService } from "../../RunStore.js"
import * as Engine from "../engine/optimize.js"
import * as Typed from "../engine/typed.js"
import * as Adapter from "./adapter.js"
import { check, type Checked, checkConfig } from "./configChecks.js"
import { promptBudgetOf, promptRoomOf, reflectionOf } from "./reflectionPrompt.js"
import * as Seed from "./seed.js"
import type { EvaluationRecord } from "./sideInfo.js"
import { evaluateTestSet, testPass } from "./testSet.js"

const TEXT = "candidate"

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

const toLoader = <D>(data: ReadonlyArray<D> | DataLoader.DataLoader<D>, name: string) => DataLoader.ensure(data, name)

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
