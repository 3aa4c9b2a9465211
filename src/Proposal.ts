/**
 * What a proposer returns. The engine folds these into the state, in
 * proposal order, so runs with parallel proposals stay reproducible.
 *
 * @since 0.1.0
 */
import { Data, type Effect } from "effect"
import type { ReflectiveDataset } from "./Adapter.js"
import type { Candidate } from "./Candidate.js"
import type { ProposalError } from "./Errors.js"

/**
 * The kind of proposer.
 *
 * @since 0.1.0
 * @category models
 */
export type ProposalKind = "reflective" | "merge"

/**
 * A child evaluated on its parent's minibatch.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvaluatedChild {
  readonly kind: ProposalKind
  readonly candidate: Candidate
  readonly parents: ReadonlyArray<number>
  readonly components: ReadonlyArray<string>
  readonly subsampleIds: ReadonlyArray<string>
  readonly scoresBefore: ReadonlyArray<number>
  readonly scoresAfter: ReadonlyArray<number>
}

/**
 * The outcome of one proposal:
 * - `Accepted`: the child passed the acceptance test on the minibatch and
 *   awaits its validation evaluation;
 * - `Rejected`: it did not;
 * - `Skipped`: nothing was worth evaluating (perfect minibatch, no new text,
 *   budget), with the reason;
 * - `Failed`: the proposal could not be made (the reflection model failed
 *   or gave no answer that can be adopted, every evaluation failed), with
 *   the error.
 *
 * @since 0.1.0
 * @category models
 */
export type ProposalResult = Data.TaggedEnum<{
  Accepted: EvaluatedChild
  Rejected: EvaluatedChild
  Skipped: { readonly kind: ProposalKind; readonly parents: ReadonlyArray<number>; readonly reason: string }
  Failed: {
    readonly kind: ProposalKind
    readonly parents: ReadonlyArray<number>
    readonly error: string
    /** every evaluation of the proposal failed */
    readonly allEvaluationsFailed: boolean
  }
}>

/**
 * Constructors and `$match` for proposal results.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ProposalResult = Data.taggedEnum<ProposalResult>()

/**
 * A custom proposer: new texts for `components`, from the parent and its
 * reflective dataset. Used instead of the reflection model.
 *
 * @since 0.1.0
 * @category models
 */
export type Proposer = (
  candidate: Candidate,
  dataset: ReflectiveDataset,
  components: ReadonlyArray<string>
) => Effect.Effect<Readonly<Record<string, string>>, ProposalError>
