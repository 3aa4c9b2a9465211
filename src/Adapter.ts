/**
 * The adapter connects the optimizer to the user's system: it runs a
 * candidate on a batch of examples and scores it, and turns the run's traces
 * into a reflective dataset the reflection model can learn from.
 *
 * It is an Effect service, so tests swap it with a `Layer`. The service is
 * generic over the user's example type `D`, trajectory type `T` and output
 * type `O`; `Adapter.tag<D, T, O>()` gives the typed tag.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either, Layer, ParseResult, Schema } from "effect"
import type { Candidate } from "./Candidate.js"
import { AdapterError, ModelUnrecoverable, ProposalError } from "./Errors.js"
import type { EvaluationBatch, ObjectiveScores } from "./EvaluationBatch.js"
import { stableStringify } from "./Fingerprint.js"

/**
 * Options of one `evaluate` call beyond the batch and the candidate.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvaluateOptions {
  /** whether trajectories are needed (for reflection) */
  readonly captureTraces: boolean
}

/**
 * One record of a reflective dataset, typically with the keys `Inputs`,
 * `Generated Outputs` and `Feedback`. Values are JSON-like (strings, numbers,
 * nested objects and lists).
 *
 * @since 0.1.0
 * @category models
 */
export type ReflectiveRecord = Readonly<Record<string, unknown>>

/**
 * Per component, the records the reflection model reads.
 *
 * @since 0.1.0
 * @category models
 */
export type ReflectiveDataset = Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>>

/**
 * What an adapter does, for candidates of type `C`: the text candidates of
 * `Adapter` (`Candidate`), or the decoded candidates of a typed run
 * (`CandidateSchema.TypedAdapter`).
 *
 * - `evaluate` returns one output and one finite score per example, in
 *   order, and trajectories when `captureTraces` is set. An example that
 *   could not be evaluated is reported in `errors` (its score is then a
 *   placeholder), never as a score. The call may fail with an
 *   `AdapterError`; the engine then scores the affected examples the
 *   fallback, records the failure and keeps going. It fails with
 *   `ModelUnrecoverable` when a model it calls can never succeed as
 *   configured (rejected key, unknown model, unreachable server): the run
 *   then fails at once.
 * - `makeReflectiveDataset` builds the records for the components to update.
 *
 * @since 0.3.0
 * @category models
 */
export interface AdapterOf<C, D, T = unknown, O = unknown> {
  readonly evaluate: (
    batch: ReadonlyArray<D>,
    candidate: C,
    options: EvaluateOptions
  ) => Effect.Effect<EvaluationBatch<T, O>, AdapterError | ModelUnrecoverable>
  readonly makeReflectiveDataset: (
    candidate: C,
    evaluation: EvaluationBatch<T, O>,
    components: ReadonlyArray<string>
  ) => Effect.Effect<ReflectiveDataset, AdapterError>
  /**
   * How to store trajectories (since 0.2.0). With it, evaluations that
   * capture traces are cached with their trajectories, so a proposal
   * re-launched after a crash takes its parent's traced minibatch from the
   * run directory instead of paying for it again. Without it, traces are
   * never stored and that evaluation runs (and is paid) again. See
   * `jsonTraces` and `traceSchema`.
   */
  readonly traceCodec?: TraceCodec<T> | undefined
}

/**
 * The adapter contract (see `AdapterOf` for `evaluate` and
 * `makeReflectiveDataset`). `proposeNewTexts`, when present, replaces the
 * reflection model.
 *
 * @since 0.1.0
 * @category models
 */
export interface Adapter<D, T = unknown, O = unknown> extends AdapterOf<Candidate, D, T, O> {
  readonly proposeNewTexts?: (
    candidate: Candidate,
    dataset: ReflectiveDataset,
    components: ReadonlyArray<string>
  ) => Effect.Effect<Readonly<Record<string, string>>, ProposalError>
}

/**
 * Turns trajectories into JSON values and back. `decode` may throw (or
 * return a failure through `traceSchema`): a stored trajectory that cannot be
 * read is evaluated again.
 *
 * @since 0.2.0
 * @category models
 */
export interface TraceCodec<T> {
  readonly encode: (trajectory: T) => unknown
  readonly decode: (stored: unknown) => T
}

/**
 * The codec for trajectories that are JSON values already (plain objects,
 * arrays, strings, numbers, booleans, null). A trajectory that would not
 * come back the same from JSON (a `Date`, a `Map`, an `Error`, `undefined` in
 * a list, a non-finite number) is not stored, so a replay never reflects on
 * a different trace: that evaluation is paid again instead.
 *
 * @since 0.2.0
 * @category constructors
 */
export const jsonTraces = <T>(): TraceCodec<T> => ({
  encode: (t) => {
    const json: unknown = JSON.parse(JSON.stringify(t) ?? "null")
    if (stableStringify(json) !== stableStringify(t)) throw new Error("the trajectory is not a JSON value")
    return json
  },
  // what encode returned: a JSON value equal to the trajectory (checked there)
  decode: (u) => u as T
})

/**
 * The adapter with stored trajectories: `codec` (default `jsonTraces`, for
 * trajectories that are JSON values) turns them into JSON and back.
 *
 * @since 0.2.0
 * @category combinators
 */
export const withStoredTraces = <D, T, O>(adapter: Adapter<D, T, O>, codec?: TraceCodec<T>): Adapter<D, T, O> => ({
  ...adapter,
  traceCodec: codec ?? jsonTraces<T>()
})

/**
 * The codec of a Schema whose encoded side is JSON.
 *
 * @since 0.2.0
 * @category constructors
 */
export const traceSchema = <T, I>(schema: Schema.Schema<T, I>): TraceCodec<T> => {
  const encode = Schema.encodeEither(schema)
  const decode = Schema.decodeUnknownEither(schema)
  const orThrow = <A>(e: Either.Either<A, ParseResult.ParseError>): A => {
    if (Either.isLeft(e)) throw new Error(e.left.message)
    return e.right
  }
  return { encode: (t) => orThrow(encode(t)), decode: (u) => orThrow(decode(u)) }
}

/**
 * An adapter whose `proposeNewTexts` is present: it writes new texts itself,
 * so a run with it needs no reflection model.
 *
 * @since 0.2.0
 * @category models
 */
export interface ProposingAdapter<D, T = unknown, O = unknown> extends Adapter<D, T, O> {
  readonly proposeNewTexts: NonNullable<Adapter<D, T, O>["proposeNewTexts"]>
}

/**
 * Marks a value as an adapter service (`Adapter.Service`).
 *
 * @since 0.2.0
 * @category type ids
 */
export const ServiceTypeId: unique symbol = Symbol.for("effect-gepa/Adapter/Service")

/**
 * The type of `ServiceTypeId`.
 *
 * @since 0.2.0
 * @category type ids
 */
export type ServiceTypeId = typeof ServiceTypeId

/**
 * The identifier of the adapter service in the context: what `Gepa.optimize`
 * requires when the config has no `adapter`, and what `Adapter.layer`
 * provides. It exists only in types.
 *
 * The adapter interface itself is invariant in `T` and `O` (they go out of
 * `evaluate` and back into `makeReflectiveDataset`), so a requirement spelled
 * with it could only be met by a layer of exactly the same three types, which
 * the optimizer cannot know before the layer is provided. The identifier is
 * covariant in the example type (a layer for a wider example type serves a
 * narrower training set) and contravariant in `T` and `O` (a run that treats
 * traces and outputs as `unknown` is served by any), so
 * `Gepa.optimize({ trainset, ... })` requires `AdapterService<D>` and
 * `Adapter.layer(adapter)` satisfies it without type parameters.
 *
 * @since 0.2.0
 * @category models
 */
export interface AdapterService<out D, in T = unknown, in O = unknown> {
  readonly [ServiceTypeId]: {
    readonly _D: (_: never) => D
    readonly _T: (_: T) => void
    readonly _O: (_: O) => void
  }
}

/**
 * The service tag for an adapter over `D`, `T`, `O`. Every instantiation
 * shares the key "effect-gepa/Adapter".
 *
 * @since 0.1.0
 * @category tags
 */
export const tag = <D, T = unknown, O = unknown>(): Context.Tag<AdapterService<D, T, O>, Adapter<D, T, O>> =>
  Context.GenericTag<AdapterService<D, T, O>, Adapter<D, T, O>>("effect-gepa/Adapter")

/**
 * A layer providing `adapter`. Its type names the adapter's example, trace
 * and output types, and it meets the requirement of any run over those
 * examples (see `AdapterService`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <D, T, O>(adapter: Adapter<D, T, O>): Layer.Layer<AdapterService<D, T, O>> => Layer.succeed(tag<D, T, O>(), adapter)

/**
 * What a per-example scoring function returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExampleResult<T, O> {
  readonly output: O
  readonly score: number
  /** textual feedback for the reflection model */
  readonly feedback?: string | undefined
  /** extra trace data; defaults to nothing beyond output and feedback */
  readonly trajectory?: T | undefined
  readonly objectiveScores?: ObjectiveScores | undefined
}

/**
 * The trajectory recorded by `fromExample`: the example, what the system
 * produced, and the feedback.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExampleTrace<D, T, O> {
  readonly example: D
  readonly output: O
  readonly score: number
  readonly feedback?: string | undefined
  readonly trajectory?: T | undefined
}

// an unrecoverable model failure passes through: it must stop the run, not
// become one more failed example
const toAdapterError = (call: string) => (cause: unknown): AdapterError | ModelUnrecoverable =>
  cause instanceof AdapterError || cause instanceof ModelUnrecoverable
    ? cause
    : new AdapterError({ call, detail: cause instanceof Error ? cause.message : String(cause), cause })

/**
 * What `fromExample` and `fromPromise` accept besides the run function.
 *
 * @since 0.2.0
 * @category models
 */
export interface FromExampleOptions<D, T, O> {
  /** renders an example for the reflective dataset's `Inputs` (default: the example) */
  readonly describeInput?: (example: D) => unknown
  /** renders an output for `Generated Outputs` (default: the output) */
  readonly describeOutput?: (output: O) => unknown
  /** new texts written by the adapter itself, instead of the reflection model */
  readonly proposeNewTexts?: Adapter<D, ExampleTrace<D, T, O>, O>["proposeNewTexts"]
}

// the values when every one is defined
const allDefined = <A>(values: ReadonlyArray<A | undefined>): Array<A> | undefined => {
  const defined = values.flatMap((v) => (v === undefined ? [] : [v]))
  return defined.length === values.length ? defined : undefined
}

const exampleAdapter = <D, T, O>(
  run: (example: D, candidate: Candidate) => Effect.Effect<ExampleResult<T, O>, AdapterError | ModelUnrecoverable>,
  options: FromExampleOptions<D, T, O> | undefined
): Adapter<D, ExampleTrace<D, T, O>, O> => ({
  evaluate: (batch, candidate, { captureTraces }) =>
    Effect.forEach(batch, (example) => run(example, candidate).pipe(Effect.map((r) => [example, r] as const)), {
      concurrency: "unbounded"
    }).pipe(
      Effect.map((results) => ({
        outputs: results.map(([, r]) => r.output),
        scores: results.map(([, r]) => r.score),
        trajectories: captureTraces
          ? results.map(([example, r]) => ({
            example,
            output: r.output,
            score: r.score,
            feedback: r.feedback,
            trajectory: r.trajectory
          }))
          : undefined,
        objectiveScores: allDefined(results.map(([, r]) => r.objectiveScores))
      }))
    ),
  makeReflectiveDataset: (_candidate, evaluation, components) =>
    Effect.sync(() => {
      const records = (evaluation.trajectories ?? []).map((t): ReflectiveRecord => ({
        "Inputs": options?.describeInput ? options.describeInput(t.example) : t.example,
        "Generated Outputs": options?.describeOutput ? options.describeOutput(t.output) : t.output,
        "Feedback": t.feedback ?? `Score: ${t.score}`
      }))
      return Object.fromEntries(components.map((c) => [c, records]))
    }),
  ...(options?.proposeNewTexts ? { proposeNewTexts: options.proposeNewTexts } : {})
})

/**
 * An adapter from a per-example function. Examples of a batch run
 * concurrently (the engine already bounds concurrency; this is for chunked
 * batches). The reflective dataset has, per example, `Inputs` (rendered by
 * `describeInput`, default the example itself), `Generated Outputs` and
 * `Feedback`. With `proposeNewTexts` the result is a `ProposingAdapter`, and
 * a run with it needs no reflection model.
 *
 * @since 0.1.0
 * @category constructors
 */
export function fromExample<D, O, T = never, E = never>(
  run: (example: D, candidate: Candidate) => Effect.Effect<ExampleResult<T, O>, E>,
  options: FromExampleOptions<D, T, O> & {
    readonly proposeNewTexts: NonNullable<FromExampleOptions<D, T, O>["proposeNewTexts"]>
  }
): ProposingAdapter<D, ExampleTrace<D, T, O>, O>
export function fromExample<D, O, T = never, E = never>(
  run: (example: D, candidate: Candidate) => Effect.Effect<ExampleResult<T, O>, E>,
  options?: FromExampleOptions<D, T, O>
): Adapter<D, ExampleTrace<D, T, O>, O>
export function fromExample<D, O, T, E>(
  run: (example: D, candidate: Candidate) => Effect.Effect<ExampleResult<T, O>, E>,
  options?: FromExampleOptions<D, T, O>
): Adapter<D, ExampleTrace<D, T, O>, O> {
  return exampleAdapter(
    (example: D, candidate: Candidate) => run(example, candidate).pipe(Effect.mapError(toAdapterError("evaluate"))),
    options
  )
}

/**
 * What `fromPromise` accepts besides the run function: plain functions,
 * returning values or Promises.
 *
 * @since 0.2.0
 * @category models
 */
// T is unused here but kept so the options read like Adapter<D, T, O>
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- see above
export interface FromPromiseOptions<D, T, O> {
  /** renders an example for the reflective dataset's `Inputs` (default: the example) */
  readonly describeInput?: (example: D) => unknown
  /** renders an output for `Generated Outputs` (default: the output) */
  readonly describeOutput?: (output: O) => unknown
  /**
   * new texts for `components`, written by the adapter itself instead of the
   * reflection model; a thrown error or a rejection fails the proposal
   */
  readonly proposeNewTexts?: (
    candidate: Candidate,
    dataset: ReflectiveDataset,
    components: ReadonlyArray<string>,
    signal: AbortSignal
  ) => Readonly<Record<string, string>> | PromiseLike<Readonly<Record<string, string>>>
}

/**
 * An adapter for code that does not use Effect: `run` is a plain function of
 * one example returning its result or a Promise of it, and receives an
 * `AbortSignal` that fires when the evaluation is interrupted (a timeout, a
 * stopped run). A thrown error or a rejection becomes an `AdapterError`, so
 * the example is scored like any failed evaluation. Otherwise it behaves like
 * `fromExample`; with `proposeNewTexts` it is a `ProposingAdapter`.
 *
 * @example
 * ```ts
 * import { Adapter } from "effect-gepa"
 *
 * // your system, in plain async code
 * declare const callMySystem: (prompt: string, question: string, signal: AbortSignal) => Promise<string>
 *
 * const adapter = Adapter.fromPromise(async (example: { q: string; a: string }, candidate, signal) => {
 *   const output = await callMySystem(candidate["system_prompt"] ?? "", example.q, signal)
 *   return { output, score: output === example.a ? 1 : 0 }
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export function fromPromise<D, O, T = never>(
  run: (example: D, candidate: Candidate, signal: AbortSignal) => ExampleResult<T, O> | PromiseLike<ExampleResult<T, O>>,
  options: FromPromiseOptions<D, T, O> & {
    readonly proposeNewTexts: NonNullable<FromPromiseOptions<D, T, O>["proposeNewTexts"]>
  }
): ProposingAdapter<D, ExampleTrace<D, T, O>, O>
export function fromPromise<D, O, T = never>(
  run: (example: D, candidate: Candidate, signal: AbortSignal) => ExampleResult<T, O> | PromiseLike<ExampleResult<T, O>>,
  options?: FromPromiseOptions<D, T, O>
): Adapter<D, ExampleTrace<D, T, O>, O>
export function fromPromise<D, O, T>(
  run: (example: D, candidate: Candidate, signal: AbortSignal) => ExampleResult<T, O> | PromiseLike<ExampleResult<T, O>>,
  options?: FromPromiseOptions<D, T, O>
): Adapter<D, ExampleTrace<D, T, O>, O> {
  const propose = options?.proposeNewTexts
  return exampleAdapter<D, T, O>(
    (example, candidate) =>
      Effect.tryPromise({
        // async wraps both a thrown error and a plain value into a Promise
        try: async (signal) => await run(example, candidate, signal),
        catch: toAdapterError("evaluate")
      }),
    {
      ...(options?.describeInput ? { describeInput: options.describeInput } : {}),
      ...(options?.describeOutput ? { describeOutput: options.describeOutput } : {}),
      ...(propose
        ? {
          proposeNewTexts: (candidate: Candidate, dataset: ReflectiveDataset, components: ReadonlyArray<string>) =>
            Effect.tryPromise({
              try: async (signal) => await propose(candidate, dataset, components, signal),
              catch: (cause) =>
                new ProposalError({
                  component: components.join(", "),
                  detail: cause instanceof Error ? cause.message : String(cause)
                })
            })
        }
        : {})
    }
  )
}

/**
 * An adapter from a batch function and a reflective-dataset builder; the
 * batch function's failures become `AdapterError`s. With `proposeNewTexts`
 * the result is a `ProposingAdapter`.
 *
 * @since 0.1.0
 * @category constructors
 */
export function fromBatch<D, T, O, E = never>(
  options: FromBatchOptions<D, T, O, E> & {
    readonly proposeNewTexts: NonNullable<Adapter<D, T, O>["proposeNewTexts"]>
  }
): ProposingAdapter<D, T, O>
export function fromBatch<D, T, O, E = never>(options: FromBatchOptions<D, T, O, E>): Adapter<D, T, O>
export function fromBatch<D, T, O, E>(options: FromBatchOptions<D, T, O, E>): Adapter<D, T, O> {
  return {
    evaluate: (batch, candidate, opts) => options.evaluate(batch, candidate, opts).pipe(Effect.mapError(toAdapterError("evaluate"))),
    makeReflectiveDataset: options.makeReflectiveDataset,
    ...(options.proposeNewTexts ? { proposeNewTexts: options.proposeNewTexts } : {})
  }
}

/**
 * What `fromBatch` accepts.
 *
 * @since 0.2.0
 * @category models
 */
export interface FromBatchOptions<D, T, O, E> {
  readonly evaluate: (
    batch: ReadonlyArray<D>,
    candidate: Candidate,
    options: EvaluateOptions
  ) => Effect.Effect<EvaluationBatch<T, O>, E>
  readonly makeReflectiveDataset: Adapter<D, T, O>["makeReflectiveDataset"]
  readonly proposeNewTexts?: Adapter<D, T, O>["proposeNewTexts"]
}
