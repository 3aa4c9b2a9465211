/**
 * Acceptance criteria: whether a child's minibatch scores beat its parent's.
 *
 * @since 0.1.0
 */
import { sum } from "./EvaluationBatch.js"

/**
 * Decides from the parent's and the child's scores on the same minibatch.
 *
 * @since 0.1.0
 * @category models
 */
export type AcceptanceCriterion = (before: ReadonlyArray<number>, after: ReadonlyArray<number>) => boolean

/**
 * The child's score sum must be strictly higher (the default).
 *
 * @since 0.1.0
 * @category criteria
 */
export const strictImprovement: AcceptanceCriterion = (before, after) => sum(after) > sum(before)

/**
 * The child's score sum must be at least as high: allows lateral moves.
 *
 * @since 0.1.0
 * @category criteria
 */
export const improvementOrEqual: AcceptanceCriterion = (before, after) => sum(after) >= sum(before)
