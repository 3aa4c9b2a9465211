/**
 * Typed candidates: the shape of a candidate as Effect Schemas, one per
 * named component. A component whose schema encodes to a string is a text
 * component, stored as its text and rewritten by reflection as before; any
 * other component is structured (a JSON-encodable value: a code branch, a
 * configuration) and is stored as its canonical JSON encoding (sorted keys),
 * so equal values share one cache key whatever their key order.
 *
 * With `Gepa.optimize({ candidateSchema, seedCandidate, adapter, ... })` the
 * adapter receives decoded candidates, per-component proposers return
 * decoded values, and the result's candidates are decoded again: the user's
 * code never parses or casts. Plain `Record<string, string>` candidates stay
 * the default and need none of this.
 *
 * @since 0.3.0
 */
import { Effect, Either, ParseResult, Schema, SchemaAST } from "effect"
import type * as Adapter from "./Adapter.js"
import type { ReflectiveRecord } from "./Adapter.js"
import * as ComponentSelector from "./ComponentSelector.js"
import type { Candidate } from "./Candidate.js"
import { ComponentProposalFailed, ComponentValueRejected, type TextProposer } from "./ComponentProposer.js"
import { AdapterError, ModelUnrecoverable } from "./Errors.js"
import { stableStringify } from "./Fingerprint.js"
import type * as Genealogy from "./Genealogy.js"

/**
 * A stored component could not be read with its schema (a run saved with
 * another schema, a hand-edited file), or a value could not be encoded.
 *
 * @since 0.3.0
 * @category errors
 */
export class ComponentInvalid extends Schema.TaggedError<ComponentInvalid>()("ComponentInvalid", {
  component: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `component "${this.component}": ${this.reason}`
  }
}

/**
 * The schemas of a candidate's components.
 *
 * @since 0.3.0
 * @category models
 */
export type Fields = { readonly [name: string]: Schema.Schema.AnyNoContext }

/**
 * The kind of a component: stored as text (rewritten by reflection unless it
 * has a proposer) or as canonical JSON (structured).
 *
 * @since 0.3.0
 * @category models
 */
export type ComponentKind = "text" | "structured"

/**
 * A candidate shape: decode and encode between typed candidates `A` and the
 * stored texts the engine works on.
 *
 * @since 0.3.0
 * @category models
 */
export interface CandidateSchema<A> {
  readonly fields: Fields
  readonly names: ReadonlyArray<string>
  readonly kind: (component: string) => ComponentKind
  /** the stored texts of a typed candidate */
  readonly encode: (candidate: A) => Either.Either<Candidate, ComponentInvalid>
  /** the typed candidate of stored texts, validated */
  readonly decode: (candidate: Candidate) => Either.Either<A, ComponentInvalid>
  /** the stored text of one component's value, validated */
  readonly encodeComponent: (component: string, value: unknown) => Either.Either<string, ComponentInvalid>
  /** one component's value from its stored text, validated */
  readonly decodeComponent: (component: string, stored: string) => Either.Either<unknown, ComponentInvalid>
  /** per component, a description of its schema (recorded with a run, compared on resume) */
  readonly describe: () => Readonly<Record<string, string>>
}

/**
 * The decoded candidate type of a shape.
 *
 * @since 0.3.0
 * @category models
 */
export type Type<S> = S extends CandidateSchema<infer A> ? A : never

const valueOf = (candidate: object, name: string): unknown => Object.getOwnPropertyDescriptor(candidate, name)?.value

const isTextSchema = (schema: Schema.Schema.AnyNoContext): boolean => SchemaAST.encodedAST(schema.ast)._tag === "StringKeyword"

// one line per problem, with the path inside the value
const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
    .join("; ")

/**
 * A candidate shape from one schema per component.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { CandidateSchema } from "effect-gepa"
 *
 * // a structured component (canonical JSON) beside a text one (rewritten by reflection)
 * const Code = Schema.Struct({ branch: Schema.String, entry: Schema.String })
 * const shape = CandidateSchema.make({ code: Code, prompt: Schema.String })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = <F extends Fields>(fields: F): CandidateSchema<{ readonly [K in keyof F]: Schema.Schema.Type<F[K]> }> => {
  type A = { readonly [K in keyof F]: Schema.Schema.Type<F[K]> }
  const names = Object.keys(fields)
  const text = new Set(names.filter((n) => {
    const s = fields[n]
    return s !== undefined && isTextSchema(s)
  }))
  const schemaOf = (component: string) => fields[component]
  const encodeComponent = (component: string, value: unknown): Either.Either<string, ComponentInvalid> => {
    const schema = schemaOf(component)
    if (schema === undefined) return Either.left(new ComponentInvalid({ component, reason: "not a component of the candidate schema" }))
    return Schema.encodeUnknownEither(schema)(value).pipe(
      Either.mapLeft((e) => new ComponentInvalid({ component, reason: describeParseError(e) })),
      Either.map((encoded) => (text.has(component) && typeof encoded === "string" ? encoded : stableStringify(encoded)))
    )
  }
  const decodeComponent = (component: string, stored: string | undefined): Either.Either<unknown, ComponentInvalid> => {
    const schema = schemaOf(component)
    if (schema === undefined) return Either.left(new ComponentInvalid({ component, reason: "not a component of the candidate schema" }))
    if (stored === undefined) return Either.left(new ComponentInvalid({ component, reason: "missing" }))
    let encoded: unknown = stored
    if (!text.has(component)) {
      try {
        encoded = JSON.parse(stored)
      } catch (e) {
        return Either.left(new ComponentInvalid({ component, reason: `not JSON (${e instanceof Error ? e.message : String(e)})` }))
      }
    }
    return Schema.decodeUnknownEither(schema)(encoded).pipe(
      Either.mapLeft((e) => new ComponentInvalid({ component, reason: describeParseError(e) }))
    )
  }
  const record = <X>(values: ReadonlyArray<readonly [string, X]>): Record<string, X> => Object.fromEntries(values)
  return {
    fields,
    names,
    kind: (component) => (text.has(component) ? "text" : "structured"),
    encode: (candidate) =>
      Either.map(
        Either.all(names.map((n) => Either.map(encodeComponent(n, valueOf(candidate, n)), (t) => [n, t] as const))),
        record
      ),
    decode: (candidate) => {
      const extra = Object.keys(candidate).find((k) => !(k in fields))
      if (extra !== undefined) return Either.left(new ComponentInvalid({ component: extra, reason: "not a component of the candidate schema" }))
      return Either.map(
        Either.all(names.map((n) => Either.map(decodeComponent(n, candidate[n]), (v) => [n, v] as const))),
        // the decoded values were checked against the fields' schemas just above
        (entries) => record(entries) as A
      )
    },
    encodeComponent,
    decodeComponent,
    describe: () => record(names.map((n) => [n, `${text.has(n) ? "text" : "structured"} ${String(fields[n]?.ast)}`] as const))
  }
}

/**
 * A stored component as people read it: a text component as is, a
 * structured one as indented JSON.
 *
 * @since 0.3.0
 * @category formatting
 */
export const format = (stored: string): string => {
  const t = stored.trimStart()
  if (!(t.startsWith("{") || t.startsWith("["))) return stored
  try {
    return JSON.stringify(JSON.parse(stored), null, 2)
  } catch {
    return stored
  }
}

/**
 * A structural diff of two stored structured values: one line per changed
 * path (`branch: "main" -> "evolve-1"`, `+ tags[2]: "x"`, `- limit: 3`).
 * Texts that are not JSON give one line for the whole value.
 *
 * @since 0.3.0
 * @category formatting
 */
export const diff = (before: string, after: string): ReadonlyArray<string> => {
  const parse = (s: string): { readonly ok: boolean; readonly value: unknown } => {
    try {
      return { ok: true, value: JSON.parse(s) }
    } catch {
      return { ok: false, value: s }
    }
  }
  const a = parse(before)
  const b = parse(after)
  if (!a.ok || !b.ok) return before === after ? [] : [`${JSON.stringify(before)} -> ${JSON.stringify(after)}`]
  const out: Array<string> = []
  const isObject = (v: unknown): v is Readonly<Record<string, unknown>> => typeof v === "object" && v !== null
  const go = (path: string, x: unknown, y: unknown): void => {
    if (stableStringify(x) === stableStringify(y)) return
    if (isObject(x) && isObject(y) && Array.isArray(x) === Array.isArray(y)) {
      const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])]
      if (!Array.isArray(x)) keys.sort()
      for (const k of keys) {
        const p = Array.isArray(x) ? `${path}[${k}]` : path === "" ? k : `${path}.${k}`
        if (!(k in y)) out.push(`- ${p}: ${JSON.stringify(x[k])}`)
        else if (!(k in x)) out.push(`+ ${p}: ${JSON.stringify(y[k])}`)
        else go(p, x[k], y[k])
      }
      return
    }
    out.push(`${path === "" ? "(value)" : path}: ${JSON.stringify(x)} -> ${JSON.stringify(y)}`)
  }
  go("", a.value, b.value)
  return out
}

/**
 * An adapter over typed candidates: `evaluate` and `makeReflectiveDataset`
 * receive the decoded candidate.
 *
 * @since 0.3.0
 * @category models
 */
export interface TypedAdapter<A, D, T = unknown, O = unknown> extends Adapter.AdapterOf<A, D, T, O> {}

/**
 * What a typed component proposer is given.
 *
 * @since 0.3.0
 * @category models
 */
export interface ProposalInput<A, K extends keyof A> {
  /** the parent candidate, decoded */
  readonly parent: A
  readonly component: K
  /** the reflective dataset's records for this component */
  readonly records: ReadonlyArray<ReflectiveRecord>
  readonly iteration: number
}

/**
 * A typed component proposer: the component's next value, or a tagged
 * failure. The value is checked against the component's schema before it is
 * adopted.
 *
 * @since 0.3.0
 * @category models
 */
export type Proposer<A, K extends keyof A> = (input: ProposalInput<A, K>) => Effect.Effect<A[K], ComponentProposalFailed>

/**
 * Typed proposers, per component (those absent are rewritten by reflection).
 *
 * @since 0.3.0
 * @category models
 */
export type Proposers<A> = { readonly [K in keyof A]?: Proposer<A, K> }

/**
 * The engine-level proposer of a typed one: decodes the parent, runs the
 * proposer, and checks and encodes its value (`ComponentValueRejected` when
 * the value fails the schema).
 *
 * @since 0.3.0
 * @category combinators
 */
export const textProposer = <A, K extends keyof A & string>(
  shape: CandidateSchema<A>,
  component: K,
  proposer: Proposer<A, K>
): TextProposer =>
(input) =>
  Effect.gen(function*() {
    const parent = shape.decode(input.parent)
    if (Either.isLeft(parent)) {
      return yield* Effect.fail(new ComponentProposalFailed({ component, reason: `parent unreadable: ${parent.left.message}` }))
    }
    const value = yield* proposer({ parent: parent.right, component, records: input.records, iteration: input.iteration })
    const stored = shape.encodeComponent(component, value)
    if (Either.isLeft(stored)) return yield* Effect.fail(new ComponentValueRejected({ component, reason: stored.left.reason }))
    return stored.right
  })

/**
 * What a per-example run function returns (see `Adapter.fromExample`).
 *
 * @since 0.3.0
 * @category models
 */
export type ExampleResult<T, O> = Adapter.ExampleResult<T, O>

/**
 * A typed adapter from a per-example function that receives the decoded
 * candidate; otherwise as `Adapter.fromExample` (the reflective dataset has
 * `Inputs`, `Generated Outputs` and `Feedback` per example).
 *
 * @since 0.3.0
 * @category constructors
 */
export const fromExample = <A, D, O, T = never, E = never>(
  _shape: CandidateSchema<A>,
  run: (example: D, candidate: A) => Effect.Effect<ExampleResult<T, O>, E>,
  options?: {
    readonly describeInput?: (example: D) => unknown
    readonly describeOutput?: (output: O) => unknown
  }
): TypedAdapter<A, D, ExampleTrace<D, T, O>, O> => ({
  evaluate: (batch, candidate, { captureTraces }) =>
    Effect.forEach(
      batch,
      (example) =>
        run(example, candidate).pipe(
          Effect.map((r) => [example, r] as const),
          Effect.mapError(toAdapterError)
        ),
      { concurrency: "unbounded" }
    ).pipe(Effect.map((results) => ({
      outputs: results.map(([, r]) => r.output),
      scores: results.map(([, r]) => r.score),
      trajectories: captureTraces
        ? results.map(([example, r]) => ({ example, output: r.output, score: r.score, feedback: r.feedback, trajectory: r.trajectory }))
        : undefined,
      objectiveScores: results.every(([, r]) => r.objectiveScores !== undefined)
        ? results.flatMap(([, r]) => (r.objectiveScores === undefined ? [] : [r.objectiveScores]))
        : undefined
    }))),
  makeReflectiveDataset: (_candidate, evaluation, components) =>
    Effect.sync(() => {
      const records = (evaluation.trajectories ?? []).map((t): ReflectiveRecord => ({
        "Inputs": options?.describeInput ? options.describeInput(t.example) : t.example,
        "Generated Outputs": options?.describeOutput ? options.describeOutput(t.output) : t.output,
        "Feedback": t.feedback ?? `Score: ${t.score}`
      }))
      return Object.fromEntries(components.map((c) => [c, records]))
    })
})

/**
 * The trajectory `fromExample` records (see `Adapter.ExampleTrace`).
 *
 * @since 0.3.0
 * @category models
 */
export type ExampleTrace<D, T, O> = Adapter.ExampleTrace<D, T, O>

const toAdapterError = (cause: unknown): AdapterError | ModelUnrecoverable =>
  cause instanceof AdapterError || cause instanceof ModelUnrecoverable
    ? cause
    : new AdapterError({ call: "evaluate", detail: cause instanceof Error ? cause.message : String(cause), cause })

/**
 * What the result of a typed run has instead of stored texts.
 *
 * @since 0.3.0
 * @category models
 */
export interface ResultFields<A> {
  /** the best candidate, decoded */
  readonly bestCandidate: A
  /** every candidate, decoded */
  readonly candidates: ReadonlyArray<A>
  /** per candidate, each component's version and origin */
  readonly versions: ReadonlyArray<Genealogy.CandidateVersions>
}

/**
 * The code-vs-prompt schedule over a shape's kinds: structured components
 * take the "code" turns, text components the "prompt" turns (see
 * `ComponentSelector.codePromptSchedule` for the options).
 *
 * @since 0.3.0
 * @category selectors
 */
export const kindSchedule = <A>(
  shape: CandidateSchema<A>,
  options?: Omit<ComponentSelector.ScheduleOptions, "isCode">
): ComponentSelector.ComponentSelector => ComponentSelector.codePromptSchedule({ ...options, isCode: (component) => shape.kind(component) === "structured" })
