/**
 * The adapters built from user functions (`Adapter.fromExample`,
 * `Adapter.fromPromise`, `Adapter.fromBatch`) and the trajectory codecs
 * (`Adapter.jsonTraces`, `Adapter.traceSchema`).
 *
 * @internal
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import type { Candidate } from "../../Candidate.js"
import { AdapterError, ModelUnrecoverable, ProposalError } from "../../Errors.js"
import type { EvaluationBatch, ObjectiveScores } from "../../EvaluationBatch.js"
import { stableStringify } from "../../Fingerprint.js"

// `Adapter.ts` owns the public types and imports this module, so this module
// cannot import them back (imports only go down: test/imports.test.ts). These
// are the shapes the constructors read and build, named after the public
// type each one stands for; the compiler checks that they agree where
// `Adapter.ts` passes its values in and returns what is built here.

/** `Adapter.TraceCodec` */
interface TraceCodec<T> {
  readonly encode: (trajectory: T) => unknown
  readonly decode: (stored: unknown) => T
}

/** `Adapter.ReflectiveRecord` */
type ReflectiveRecord = Readonly<Record<string, unknown>>

/** `Adapter.ReflectiveDataset` */
type ReflectiveDataset = Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>>

/** `Adapter.Adapter["proposeNewTexts"]` */
type ProposeNewTexts = (
  candidate: Candidate,
  dataset: ReflectiveDataset,
  components: ReadonlyArray<string>
) => Effect.Effect<Readonly<Record<string, string>>, ProposalError>

/** `Adapter.Adapter` */
interface Adapter<D, T, O> {
  readonly evaluate: (
    batch: ReadonlyArray<D>,
    candidate: Candidate,
    options: { readonly captureTraces: boolean }
  ) => Effect.Effect<EvaluationBatch<T, O>, AdapterError | ModelUnrecoverable>
  readonly makeReflectiveDataset: (
    candidate: Candidate,
    evaluation: EvaluationBatch<T, O>,
    components: ReadonlyArray<string>
  ) => Effect.Effect<ReflectiveDataset, AdapterError>
  readonly proposeNewTexts?: ProposeNewTexts
}

/** `Adapter.ExampleResult` */
interface ExampleResult<T, O> {
  readonly output: O
  readonly score: number
  readonly feedback?: string | undefined
  readonly trajectory?: T | undefined
  readonly objectiveScores?: ObjectiveScores | undefined
}

/** `Adapter.ExampleTrace` */
interface ExampleTrace<D, T, O> {
  readonly example: D
  readonly output: O
  readonly score: number
  readonly feedback?: string | undefined
  readonly trajectory?: T | undefined
}

/** `Adapter.FromExampleOptions` */
interface FromExampleOptions<D, O> {
  readonly describeInput?: (example: D) => unknown
  readonly describeOutput?: (output: O) => unknown
  readonly proposeNewTexts?: ProposeNewTexts | undefined
}

/** `Adapter.FromPromiseOptions` */
interface FromPromiseOptions<D, O> {
  readonly describeInput?: (example: D) => unknown
  readonly describeOutput?: (output: O) => unknown
  readonly proposeNewTexts?: (
    candidate: Candidate,
    dataset: ReflectiveDataset,
    components: ReadonlyArray<string>,
    signal: AbortSignal
  ) => Readonly<Record<string, string>> | PromiseLike<Readonly<Record<string, string>>>
}

/** `Adapter.FromBatchOptions` */
interface FromBatchOptions<D, T, O, E> {
  readonly evaluate: (
    batch: ReadonlyArray<D>,
    candidate: Candidate,
    options: { readonly captureTraces: boolean }
  ) => Effect.Effect<EvaluationBatch<T, O>, E>
  readonly makeReflectiveDataset: Adapter<D, T, O>["makeReflectiveDataset"]
  readonly proposeNewTexts?: ProposeNewTexts | undefined
}

/** @internal */
export const jsonTraces = <T>(): TraceCodec<T> => ({
  encode: (t) => {
    const json: unknown = JSON.parse(JSON.stringify(t) ?? "null")
    if (stableStringify(json) !== stableStringify(t)) throw new Error("the trajectory is not a JSON value")
    return json
  },
  // what encode returned: a JSON value equal to the trajectory (checked there)
  decode: (u) => u as T
})

/** @internal */
export const traceSchema = <T, I>(schema: Schema.Schema<T, I>): TraceCodec<T> => {
  const encode = Schema.encodeEither(schema)
  const decode = Schema.decodeUnknownEither(schema)
  const orThrow = <A>(e: Either.Either<A, ParseResult.ParseError>): A => {
    if (Either.isLeft(e)) throw new Error(e.left.message)
    return e.right
  }
  return { encode: (t) => orThrow(encode(t)), decode: (u) => orThrow(decode(u)) }
}

// an unrecoverable model failure passes through: it must stop the run, not
// become one more failed example
const toAdapterError = (call: string) => (cause: unknown): AdapterError | ModelUnrecoverable =>
  cause instanceof AdapterError || cause instanceof ModelUnrecoverable
    ? cause
    : new AdapterError({ call, detail: cause instanceof Error ? cause.message : String(cause), cause })

// the values when every one is defined
const allDefined = <A>(values: ReadonlyArray<A | undefined>): Array<A> | undefined => {
  const defined = values.flatMap((v) => (v === undefined ? [] : [v]))
  return defined.length === values.length ? defined : undefined
}

const exampleAdapter = <D, T, O>(
  run: (example: D, candidate: Candidate) => Effect.Effect<ExampleResult<T, O>, AdapterError | ModelUnrecoverable>,
  options: FromExampleOptions<D, O> | undefined
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

/** @internal */
export const fromExample = <D, O, T, E>(
  run: (example: D, candidate: Candidate) => Effect.Effect<ExampleResult<T, O>, E>,
  options?: FromExampleOptions<D, O>
): Adapter<D, ExampleTrace<D, T, O>, O> =>
  exampleAdapter(
    (example: D, candidate: Candidate) => run(example, candidate).pipe(Effect.mapError(toAdapterError("evaluate"))),
    options
  )

/** @internal */
export const fromPromise = <D, O, T>(
  run: (example: D, candidate: Candidate, signal: AbortSignal) => ExampleResult<T, O> | PromiseLike<ExampleResult<T, O>>,
  options?: FromPromiseOptions<D, O>
): Adapter<D, ExampleTrace<D, T, O>, O> => {
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

/** @internal */
export const fromBatch = <D, T, O, E>(options: FromBatchOptions<D, T, O, E>): Adapter<D, T, O> => ({
  evaluate: (batch, candidate, opts) => options.evaluate(batch, candidate, opts).pipe(Effect.mapError(toAdapterError("evaluate"))),
  makeReflectiveDataset: options.makeReflectiveDataset,
  ...(options.proposeNewTexts ? { proposeNewTexts: options.proposeNewTexts } : {})
})
