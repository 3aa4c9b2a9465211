/**
 * Runs a typed (schema-described) candidate through the text engine: the
 * seed is encoded and validated, the adapter and the component proposers
 * are wrapped to decode and encode at the boundary, the schemas are recorded
 * for the resume check, and the result's candidates are decoded back.
 *
 * @internal
 */
import { Effect, Either } from "effect"
import type { Adapter } from "../../Adapter.js"
import type { Candidate } from "../../Candidate.js"
import * as CandidateSchema from "../../CandidateSchema.js"
import type { TextProposer } from "../../ComponentProposer.js"
import { ConfigError } from "../../Errors.js"
import type { GepaEvent, StructuredEvent } from "../../Event.js"
import * as State from "../../State.js"

/** The typed fields of a structured run's configuration. @internal */
export interface TypedFields<A, D, T, O> {
  readonly candidateSchema: CandidateSchema.CandidateSchema<A>
  readonly seedCandidate: A
  readonly adapter: CandidateSchema.TypedAdapter<A, D, T, O>
  readonly componentProposers?: CandidateSchema.Proposers<A> | undefined
}

// a stored candidate the engine produced always decodes: it was encoded from
// a checked value, and a run saved with another schema is refused on resume
/** @internal */
export const decodeOrDie = <A>(shape: CandidateSchema.CandidateSchema<A>, candidate: Candidate): Effect.Effect<A> =>
  Either.match(shape.decode(candidate), { onLeft: (e) => Effect.die(e), onRight: Effect.succeed })

/** The engine adapter of a typed one. @internal */
export const toAdapter = <A, D, T, O>(
  shape: CandidateSchema.CandidateSchema<A>,
  typed: CandidateSchema.TypedAdapter<A, D, T, O>
): Adapter<D, T, O> => ({
  evaluate: (batch, candidate, options) => Effect.flatMap(decodeOrDie(shape, candidate), (a) => typed.evaluate(batch, a, options)),
  makeReflectiveDataset: (candidate, evaluation, components) =>
    Effect.flatMap(decodeOrDie(shape, candidate), (a) => typed.makeReflectiveDataset(a, evaluation, components)),
  ...(typed.traceCodec === undefined ? {} : { traceCodec: typed.traceCodec })
})

/** The text fields that replace the typed ones, but for the adapter. @internal */
export interface SchemaFields {
  readonly seedCandidate: Candidate
  readonly componentProposers: Readonly<Record<string, TextProposer>>
  readonly componentSchemas: Readonly<Record<string, string>>
  readonly readComponent: (component: string, text: string) => Either.Either<string, string>
}

/** The text fields that replace the typed ones. @internal */
export interface TextFields<D, T, O> extends SchemaFields {
  readonly adapter: Adapter<D, T, O>
}

/**
 * The text fields of a typed seed and proposers: the encoded and checked
 * seed, the checking proposers, the schemas' descriptions and the reader of
 * proposed and saved components.
 *
 * @internal
 */
export const schemaFields = <A>(
  shape: CandidateSchema.CandidateSchema<A>,
  seedCandidate: A,
  componentProposers: CandidateSchema.Proposers<A> | undefined
): Either.Either<SchemaFields, ConfigError> => {
  const seed = shape.encode(seedCandidate)
  if (Either.isLeft(seed)) {
    return Either.left(new ConfigError({ field: `seedCandidate.${seed.left.component}`, detail: seed.left.reason }))
  }
  const given: Readonly<Record<string, unknown>> = componentProposers ?? {}
  const unknownName = Object.keys(given).find((name) => given[name] !== undefined && !shape.names.includes(name))
  if (unknownName !== undefined) {
    return Either.left(new ConfigError({ field: `componentProposers.${unknownName}`, detail: "not a component of the candidate schema" }))
  }
  const proposers: Record<string, TextProposer> = {}
  const typed: CandidateSchema.Proposers<A> = componentProposers ?? {}
  for (const key of Object.keys(typed) as Array<keyof A & string>) {
    const proposer = typed[key]
    if (proposer !== undefined) proposers[key] = CandidateSchema.textProposer(shape, key, proposer)
  }
  return Either.right({
    seedCandidate: seed.right,
    componentProposers: proposers,
    componentSchemas: shape.describe(),
    // the canonical stored form: a structured value written with another
    // layout or key order is stored (and cached) as the seed's values are
    readComponent: (component, text) =>
      Either.mapLeft(Either.flatMap(shape.decodeComponent(component, text), (v) => shape.encodeComponent(component, v)), (e) => e.reason)
  })
}

/**
 * The text fields of a typed configuration: `schemaFields` and the decoding
 * adapter.
 *
 * @internal
 */
export const toTextFields = <A, D, T, O>(config: TypedFields<A, D, T, O>): Either.Either<TextFields<D, T, O>, ConfigError> =>
  Either.map(
    schemaFields(config.candidateSchema, config.seedCandidate, config.componentProposers),
    (fields) => ({ ...fields, adapter: toAdapter(config.candidateSchema, config.adapter) })
  )

/** Decodes a text run's result with the schema. @internal */
export const decodeResult = <A, Res extends { readonly candidates: ReadonlyArray<Candidate>; readonly bestIndex: number; readonly state: State.GepaState }>(
  shape: CandidateSchema.CandidateSchema<A>,
  result: Res
): Either.Either<Omit<Res, "bestCandidate" | "candidates"> & CandidateSchema.ResultFields<A>, ConfigError> => {
  const decoded: Array<A> = []
  for (const [i, c] of result.candidates.entries()) {
    const a = shape.decode(c)
    if (Either.isLeft(a)) {
      return Either.left(new ConfigError({ field: `candidateSchema.${a.left.component}`, detail: `candidate ${i}: ${a.left.reason}` }))
    }
    decoded.push(a.right)
  }
  const best = decoded[result.bestIndex]
  if (best === undefined) return Either.left(new ConfigError({ field: "candidateSchema", detail: "no best candidate" }))
  return Either.right({ ...result, bestCandidate: best, candidates: decoded, versions: State.versionsOf(result.state) })
}

/**
 * The decoder of a typed run's events: decodes the candidates an event
 * carries. Candidates are added to the pool and never changed, so each is
 * decoded once, by index, however many `IterationEnded` events show it.
 *
 * @internal
 */
export const eventDecoder = <A>(shape: CandidateSchema.CandidateSchema<A>) => {
  const pool: Array<A> = []
  const one = (candidate: Candidate, where: string): Either.Either<A, ConfigError> =>
    Either.mapLeft(shape.decode(candidate), (e) => new ConfigError({ field: `candidateSchema.${e.component}`, detail: `${where}: ${e.reason}` }))
  const decodePool = (candidates: ReadonlyArray<Candidate>): Either.Either<ReadonlyArray<A>, ConfigError> => {
    for (let i = pool.length; i < candidates.length; i++) {
      const candidate = candidates[i]
      if (candidate === undefined) break
      const a = one(candidate, `candidate ${i}`)
      if (Either.isLeft(a)) return Either.left(a.left)
      pool.push(a.right)
    }
    return Either.right(pool.slice(0, candidates.length))
  }
  return (event: GepaEvent): Either.Either<StructuredEvent<A>, ConfigError> => {
    switch (event._tag) {
      case "SeedGenerated":
        return Either.map(one(event.candidate, "the generated seed"), (candidate) => ({ ...event, candidate }))
      case "CandidateAccepted":
        return Either.map(one(event.components, `candidate ${event.candidate}`), (components) => ({ ...event, components }))
      case "IterationEnded":
        return Either.map(decodePool(event.state.candidates), (candidates) => ({ ...event, candidates }))
      case "OptimizationEnded":
        return Either.map(
          decodeResult(shape, { ...event.result, state: event.state }),
          ({ state: _state, ...result }) => ({ ...event, result })
        )
      default:
        return Either.right(event)
    }
  }
}

/**
 * The structured components a run recorded (`schema.NAME` settings of its
 * fingerprint, written by a typed run), or `undefined` when the state
 * records no schema (a text run, or one saved before 0.3).
 *
 * @internal
 */
export const structuredNames = (state: Pick<State.GepaState, "fingerprint"> | undefined): ReadonlySet<string> | undefined => {
  const settings = state?.fingerprint?.settings
  if (settings === undefined) return undefined
  const out = new Set<string>()
  let typed = false
  for (const [key, description] of Object.entries(settings)) {
    if (!key.startsWith("schema.")) continue
    typed = true
    if (description.startsWith("structured")) out.add(key.slice("schema.".length))
  }
  return typed ? out : undefined
}

/**
 * A stored component as people read it: a structured component (as the run
 * recorded it, or by its look when the run recorded no schema) as indented
 * JSON, a text one as is.
 *
 * @internal
 */
export const readable = (structured: ReadonlySet<string> | undefined, name: string, stored: string): string =>
  structured === undefined || structured.has(name) ? CandidateSchema.format(stored) : stored
