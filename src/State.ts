/**
 * The optimizer state: plain, JSON-encodable data that holds everything a run
 * needs to continue exactly where it stopped. All updates are pure functions
 * returning a new state.
 *
 * @since 0.1.0
 */
import { type Either, Schema } from "effect"
import * as BatchSampler from "./BatchSampler.js"
import { Candidate } from "./Candidate.js"
import type { MissingObjectiveScores } from "./Errors.js"
import { ObjectiveScores } from "./EvaluationBatch.js"
import { RunFingerprint } from "./Fingerprint.js"
import * as Frontier from "./Frontier.js"
import * as Genealogy from "./Genealogy.js"
import * as internal from "./internal/state.js"
import * as Merge from "./Merge.js"
import { RngState } from "./Rng.js"

/**
 * The version of the persisted state layout.
 *
 * @since 0.1.0
 * @category constants
 */
export const SCHEMA_VERSION = internal.SCHEMA_VERSION

/**
 * Sparse scores keyed by example id.
 *
 * @since 0.1.0
 * @category models
 */
export const Scores = Schema.Record({ key: Schema.String, value: Schema.Number })

/**
 * Scores by example id, as decoded from `Scores`.
 *
 * @since 0.1.0
 * @category models
 */
export type Scores = typeof Scores.Type

/**
 * One line of the run's trace: what an iteration (or one of its parallel
 * proposals) did.
 *
 * @since 0.1.0
 * @category models
 */
export const TraceEntry = Schema.Struct({
  iteration: Schema.Number,
  kind: Schema.Literal("reflective", "merge"),
  parents: Schema.Array(Schema.Number),
  outcome: Schema.Literal("accepted", "rejected", "skipped", "failed"),
  candidate: Schema.optional(Schema.Number),
  components: Schema.optional(Schema.Array(Schema.String)),
  subsampleIds: Schema.optional(Schema.Array(Schema.String)),
  scoresBefore: Schema.optional(Schema.Array(Schema.Number)),
  scoresAfter: Schema.optional(Schema.Array(Schema.Number)),
  reason: Schema.optional(Schema.String),
  metricCalls: Schema.Number
})

/**
 * One entry of the run's trace, as decoded from `TraceEntry`.
 *
 * @since 0.1.0
 * @category models
 */
export type TraceEntry = typeof TraceEntry.Type

/**
 * What a parent's traced evaluation of a minibatch gave, kept for another
 * proposal to reflect on: the scores on the minibatch's ids, in order, and
 * per component the records the reflection model reads (JSON values).
 *
 * @since 0.3.0
 * @category models
 */
export const ReusedEvaluation = Schema.Struct({
  /** the iteration that paid for the parent's evaluation */
  paidBy: Schema.Number,
  scores: Schema.Array(Schema.Number),
  records: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })) })
})

/**
 * A parent's paid evaluation kept for reuse, as decoded from
 * `ReusedEvaluation`.
 *
 * @since 0.3.0
 * @category models
 */
export type ReusedEvaluation = typeof ReusedEvaluation.Type

/**
 * A minibatch a parent was evaluated on by a proposal that was rejected, the
 * components reflected on with it so far, and what the evaluation gave for
 * the others.
 *
 * @since 0.3.0
 * @category models
 */
export const MinibatchReuse = Schema.Struct({
  ...ReusedEvaluation.fields,
  parent: Schema.Number,
  ids: Schema.Array(Schema.String),
  /** the components reflected on with this minibatch */
  tried: Schema.Array(Schema.String)
})

/**
 * The minibatch kept for the next proposal from the same parent, as decoded
 * from `MinibatchReuse`.
 *
 * @since 0.3.0
 * @category models
 */
export type MinibatchReuse = typeof MinibatchReuse.Type

/**
 * A proposal that was planned (its random draws made, its budget reserved)
 * but not folded yet. The state carries these so that a resumed run
 * re-launches exactly the proposals the interrupted run had in flight:
 * `Reflective` from a parent on a training minibatch, `Merge` of two
 * candidates on a validation subsample. `valIds` is absent when the child
 * would be validated on the whole validation set. Proposals planned together
 * as one step (`proposalsPerStep`) share their `step`: they are judged side
 * by side and the step's selection rule decides which children are
 * validated.
 *
 * @since 0.2.0
 * @category models
 */
export const PendingProposal = Schema.Union(
  Schema.TaggedStruct("Reflective", {
    iteration: Schema.Number,
    parent: Schema.Number,
    ids: Schema.Array(Schema.String),
    components: Schema.Array(Schema.String),
    valIds: Schema.optional(Schema.Array(Schema.String)),
    /** candidates in the pool when it was planned: later ones were found while it was in flight */
    base: Schema.Number,
    reserved: Schema.Number,
    /** the first iteration of its step, when the step plans several proposals together (since 0.3) */
    step: Schema.optional(Schema.Number),
    /** the last iteration folded when it was planned: the cache results it may use (since 0.3) */
    sees: Schema.optional(Schema.Number),
    /**
     * its child is validated on a sample sized to the budget's remainder, not
     * on what the evaluation policy asks for (since 0.3)
     */
    remainder: Schema.optional(Schema.Boolean),
    /**
     * a minibatch reflected on again with another component
     * (`reuseMinibatch`; since 0.3): the parent's scores on `ids` and the
     * records for its components, from the evaluation an earlier proposal
     * paid for
     */
    reuses: Schema.optional(ReusedEvaluation),
    /**
     * the proposal of its step whose traced evaluation of the parent on
     * `ids` it reflects on (`proposalSampling: "same_minibatch"`; since
     * 0.3): its own iteration when it pays for that evaluation
     */
    shares: Schema.optional(Schema.Number),
    /**
     * how many proposals of its step rewrote its components from the same
     * minibatch before it (`rewritesPerMinibatch`; since 0.3): it reads the
     * records in an order rotated by this many. Absent: 0
     */
    rewrite: Schema.optional(Schema.Number),
    /**
     * the iteration whose child is its parent (`Config.buildOnChild`; since
     * 0.3): planned while that child was validated, before it joined the
     * pool as candidate `parent`
     */
    onChildOf: Schema.optional(Schema.Number)
  }),
  Schema.TaggedStruct("Merge", {
    iteration: Schema.Number,
    id1: Schema.Number,
    id2: Schema.Number,
    ancestor: Schema.Number,
    candidate: Candidate,
    ids: Schema.Array(Schema.String),
    scoresBefore: Schema.Tuple(Schema.Number, Schema.Number),
    valIds: Schema.optional(Schema.Array(Schema.String)),
    reserved: Schema.Number,
    /** the last iteration folded when it was planned: the cache results it may use (since 0.3) */
    sees: Schema.optional(Schema.Number),
    /** per component, the parent it was taken from (since 0.3) */
    sources: Schema.optional(Schema.Array(Schema.Number))
  })
)

/**
 * A proposal planned and not yet folded, as decoded from `PendingProposal`.
 *
 * @since 0.2.0
 * @category models
 */
export type PendingProposal = typeof PendingProposal.Type

/**
 * The optimizer state.
 *
 * Per candidate (same index in every array): its components, parents,
 * sparse validation scores, aggregate objective scores, mean validation score
 * and coverage, next round-robin component, and the metric calls spent when it
 * was discovered. The mean and coverage are kept beside the sparse scores
 * because selection reads them on every step and recomputing them is
 * quadratic in a long run.
 *
 * @since 0.1.0
 * @category models
 */
export const GepaState = Schema.Struct({
  schemaVersion: Schema.Literal(SCHEMA_VERSION),
  componentNames: Schema.Array(Schema.String),
  frontierType: Frontier.FrontierType,
  candidates: Schema.Array(Candidate),
  parents: Schema.Array(Schema.Array(Schema.Number)),
  valScores: Schema.Array(Scores),
  objectiveScores: Schema.Array(ObjectiveScores),
  valAverages: Schema.Array(Schema.Number),
  valCoverage: Schema.Array(Schema.Number),
  nextComponent: Schema.Array(Schema.Number),
  discoveryBudget: Schema.Array(Schema.Number),
  fronts: Frontier.Fronts,
  iteration: Schema.Number,
  metricCalls: Schema.Number,
  fullValEvals: Schema.Number,
  reflectionCalls: Schema.Number,
  reflectionUsage: Schema.Struct({
    inputTokens: Schema.Number,
    outputTokens: Schema.Number,
    cost: Schema.Number
  }),
  acceptedProposals: Schema.Number,
  rejectedProposals: Schema.Number,
  lastImprovementIteration: Schema.Number,
  consecutiveFailedIterations: Schema.Number,
  rng: RngState,
  sampler: BatchSampler.SamplerState,
  merge: Merge.MergeState,
  trace: Schema.Array(TraceEntry),
  /** proposals planned and not folded yet, in plan order (absent in states saved before 0.2) */
  pending: Schema.optionalWith(Schema.Array(PendingProposal), { default: () => [] }),
  /**
   * metric calls paid by an interrupted process whose results were lost (the
   * calls in flight at a crash): charged against the budget, never counted in
   * `metricCalls` (absent in states saved before 0.2)
   */
  lostMetricCalls: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /**
   * content hashes of the run's examples and meaning-changing settings, checked
   * on resume (absent in states saved before 0.2: such a resume is checked on
   * ids only, and the fingerprint is recorded from then on)
   */
  fingerprint: Schema.optional(RunFingerprint),
  /**
   * per candidate, each component's version and origin (absent in states
   * saved before 0.3: rebuilt from texts and parents, see `versionsOf`)
   */
  versions: Schema.optional(Schema.Array(Genealogy.CandidateVersions)),
  /**
   * the minibatch of the last folded proposal, when it was a rejected
   * reflective one: the next proposal from the same parent may reflect on it
   * again with a component not tried on it yet (`reuseMinibatch`; since 0.3)
   */
  minibatchReuse: Schema.optional(MinibatchReuse)
})

/**
 * The whole state of a run, as decoded from `GepaState`.
 *
 * @since 0.1.0
 * @category models
 */
export type GepaState = typeof GepaState.Type

/**
 * Validation results of one candidate.
 *
 * @since 0.1.0
 * @category models
 */
export interface ValsetEvaluation {
  readonly scores: Readonly<Record<string, number>>
  readonly objectiveScores?: Readonly<Record<string, ObjectiveScores>> | undefined
}

/**
 * The state after evaluating the seed candidate on the validation set.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initial: (options: {
  readonly seed: number
  readonly seedCandidate: Candidate
  readonly frontierType: Frontier.FrontierType
  readonly valset: ValsetEvaluation
  readonly metricCalls: number
  readonly fingerprint?: RunFingerprint | undefined
}) => Either.Either<GepaState, MissingObjectiveScores> = internal.initial

/**
 * Adds an accepted candidate with its validation results. The child's
 * round-robin pointer is the largest of its parents' pointers. Returns the new
 * state and the candidate's index.
 *
 * @since 0.1.0
 * @category updates
 */
export const addCandidate: (
  state: GepaState,
  options: {
    readonly candidate: Candidate
    readonly parents: ReadonlyArray<number>
    readonly valset: ValsetEvaluation
    readonly discoveryBudget: number
    /**
     * how the per-candidate arrays and the program lists of the fronts
     * the candidate joins grow by one entry; default a copy
     * (`[...array, item]`). The engine passes one that appends in place to
     * arrays no earlier state it handed out holds, so that a long run does
     * not copy them on every accepted candidate.
     *
     * @since 0.3.0
     */
    readonly append?: (<A>(array: ReadonlyArray<A>, item: A) => ReadonlyArray<A>) | undefined
    /** for a merge: per component, the parent it was taken from */
    readonly sources?: ReadonlyArray<number> | undefined
  }
) => Either.Either<readonly [GepaState, number], MissingObjectiveScores> = internal.addCandidate

/**
 * Per candidate, each component's version and origin: as recorded, or
 * rebuilt from texts and parents for a state saved without them.
 *
 * @since 0.3.0
 * @category getters
 */
export const versionsOf: (state: GepaState) => ReadonlyArray<Genealogy.CandidateVersions> = internal.versionsOf

/**
 * A candidate's mean validation score over the examples it was evaluated on;
 * `-Infinity` when it has none.
 *
 * @since 0.1.0
 * @category getters
 */
export const scoreOf: (state: GepaState) => (program: number) => number = internal.scoreOf

/**
 * The best candidate: highest mean validation score, then more coverage,
 * then the newest (highest index; among candidates never scored, the
 * oldest). A candidate joins the pool only by beating its parent on a
 * minibatch, so among equals on validation the newest has the most evidence
 * (a child that ties its parent improved on training examples the validation
 * set does not show); it is also the one parent selection keeps among
 * identical programs (`Pareto.removalOrder`). The reference keeps the oldest
 * (changed in 0.3.0; docs/performance.md, "The best among equals is the newest").
 *
 * @since 0.1.0
 * @category getters
 */
export const bestIndex: (state: GepaState) => number = internal.bestIndex

/**
 * The program sets of the fronts selected by the state's frontier type.
 *
 * @since 0.1.0
 * @category getters
 */
export const frontSets: (state: GepaState) => ReadonlyArray<ReadonlyArray<number>> = internal.frontSets

/**
 * Checks the invariants that every state must satisfy; returns the list of
 * violations (empty when consistent).
 *
 * @since 0.1.0
 * @category validation
 */
export const checkConsistency: (state: GepaState) => ReadonlyArray<string> = internal.checkConsistency
