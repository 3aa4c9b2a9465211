/**
 * The result of an optimization run: every candidate with its lineage and
 * scores, and the best one.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Candidate } from "./Candidate.js"
import type * as CandidateSchema from "./CandidateSchema.js"
import { ObjectiveScores } from "./EvaluationBatch.js"
import { at } from "./internal/shared/invariant.js"
import * as State from "./State.js"

/**
 * Why the run stopped, in words: "used the budget of 400 metric calls", "the
 * validation score is perfect (1.000), nothing left to improve".
 *
 * @since 0.1.0
 * @category models
 */
export const StopReason = Schema.String

/**
 * Why the run stopped, for programs: what kind of stop it was and the name
 * of the stop condition that fired (`maxMetricCalls(400)`, `perfectScore(1)`,
 * `noImprovement(20)`); the words are `stopReason`.
 *
 * - `condition`: a stop condition held between proposals
 * - `deadline`: a time limit passed (proposals in flight were paused)
 * - `stopFile`: a stop file asked the run to pause
 * - `budget`: too few metric calls were left for another proposal
 * - `noProposal`: no proposal could be planned
 * - `monitor`: a `RunMonitor` asked the run to stop (the dashboard's Stop button)
 * - `nothingToLearn`: every candidate the parent selection can pick is known
 *   to be perfect on the whole training set, or (for a selection whose choices
 *   cannot be told in advance) a whole pass over the training set found every
 *   parent already perfect on its minibatch
 *
 * @since 0.2.0
 * @category models
 */
export const StoppedBy = Schema.Struct({
  kind: Schema.Literal("condition", "deadline", "stopFile", "budget", "noProposal", "monitor", "nothingToLearn"),
  condition: Schema.NullOr(Schema.String)
})

/**
 * Why a run stopped, as decoded from `StoppedBy`.
 *
 * @since 0.2.0
 * @category models
 */
export type StoppedBy = typeof StoppedBy.Type

/**
 * The serializable result of a run: every candidate with its scores, parents
 * and versions, the best one, and why the run stopped.
 *
 * @since 0.1.0
 * @category models
 */
export const GepaResult = Schema.Struct({
  schemaVersion: Schema.Literal(State.SCHEMA_VERSION),
  candidates: Schema.Array(Candidate),
  parents: Schema.Array(Schema.Array(Schema.Number)),
  /** mean validation score per candidate; null for a candidate never evaluated */
  valAggregateScores: Schema.Array(Schema.NullOr(Schema.Number)),
  valCoverage: Schema.Array(Schema.Number),
  valScores: Schema.Array(State.Scores),
  objectiveScores: Schema.Array(ObjectiveScores),
  /** per validation example, the candidates reaching the best score */
  perInstanceBest: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Number) }),
  discoveryBudget: Schema.Array(Schema.Number),
  bestIndex: Schema.Number,
  bestCandidate: Candidate,
  bestScore: Schema.NullOr(Schema.Number),
  seedScore: Schema.NullOr(Schema.Number),
  totalMetricCalls: Schema.Number,
  /**
   * metric calls paid by interrupted processes of the run whose results were
   * lost (the calls in flight at a crash): charged against the budget on top
   * of `totalMetricCalls` (absent in results written before 0.2)
   */
  lostMetricCalls: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  fullValEvals: Schema.Number,
  iterations: Schema.Number,
  reflectionCalls: Schema.Number,
  acceptedProposals: Schema.Number,
  rejectedProposals: Schema.Number,
  mergesAttempted: Schema.Number,
  mergesAccepted: Schema.Number,
  stopReason: StopReason,
  /** absent in results written before 0.2, and while a run has not finished */
  stoppedBy: Schema.optionalWith(Schema.NullOr(StoppedBy), { default: () => null })
})

/**
 * A run's serializable result, as decoded from `GepaResult`.
 *
 * @since 0.1.0
 * @category models
 */
export type GepaResult = typeof GepaResult.Type

/**
 * The result of a state. The best candidate is `State.bestIndex`: highest
 * mean validation score, then more coverage, then the newest.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromState = (state: State.GepaState, stopReason: string, stoppedBy: StoppedBy | null = null): GepaResult => {
  const best = State.bestIndex(state)
  const aggregate = state.candidates.map((_, i) => ((state.valCoverage[i] ?? 0) > 0 ? state.valAverages[i] ?? null : null))
  return {
    schemaVersion: State.SCHEMA_VERSION,
    candidates: state.candidates,
    parents: state.parents,
    valAggregateScores: aggregate,
    valCoverage: state.valCoverage,
    valScores: state.valScores,
    objectiveScores: state.objectiveScores,
    perInstanceBest: state.fronts.instance.programs,
    discoveryBudget: state.discoveryBudget,
    bestIndex: best,
    bestCandidate: at(state.candidates, best),
    bestScore: aggregate[best] ?? null,
    seedScore: aggregate[0] ?? null,
    totalMetricCalls: state.metricCalls,
    lostMetricCalls: state.lostMetricCalls,
    fullValEvals: state.fullValEvals,
    // completed iterations: proposals still pending (a paused run) are not done
    iterations: state.iteration - state.pending.length,
    reflectionCalls: state.reflectionCalls,
    acceptedProposals: state.acceptedProposals,
    rejectedProposals: state.rejectedProposals,
    mergesAttempted: state.merge.attempted,
    mergesAccepted: state.merge.accepted,
    stopReason,
    stoppedBy
  }
}

/**
 * A score as the CLI's summary, `gepa show`, the progress lines and the
 * report print it: three decimals ("0.875"); "n/a" when there is none.
 *
 * @since 0.2.0
 * @category formatting
 */
export const formatScore = (score: number | null | undefined): string => typeof score === "number" && Number.isFinite(score) ? score.toFixed(3) : "n/a"

/**
 * The lineage of a candidate, from the seed to itself (first parent first
 * for merges).
 *
 * @since 0.1.0
 * @category getters
 */
export const lineage = (result: Pick<GepaResult, "parents">, candidate: number): ReadonlyArray<number> => {
  const out: Array<number> = []
  const seen = new Set<number>()
  const visit = (c: number) => {
    if (seen.has(c)) return
    seen.add(c)
    for (const p of result.parents[c] ?? []) visit(p)
    out.push(c)
  }
  visit(candidate)
  return out
}

/**
 * A `GepaResult` over typed candidates (the `OptimizationEnded` event of a
 * typed `Gepa.stream`): decoded candidates, and each component's version
 * and origin per candidate.
 *
 * @since 0.3.0
 * @category models
 */
export type StructuredGepaResult<A> = Omit<GepaResult, "bestCandidate" | "candidates"> & CandidateSchema.ResultFields<A>

/**
 * The result of `optimize`: the serializable result, the final state, and
 * the best output seen for each validation example.
 *
 * @since 0.1.0
 * @category models
 */
export interface OptimizeResult<O> extends GepaResult {
  readonly state: State.GepaState
  /** per validation example: the candidate with the best score on it, and its output */
  readonly bestOutputs: Readonly<Record<string, { readonly candidate: number; readonly output: O }>>
}
