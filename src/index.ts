/**
 * effect-gepa: GEPA (Genetic-Pareto reflective prompt evolution) on Effect.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Acceptance from "./Acceptance.js"
/** @since 0.1.0 */
export * as BatchSampler from "./BatchSampler.js"
/** @since 0.1.0 */
export * as Candidate from "./Candidate.js"
/** @since 0.1.0 */
export * as CandidateSelector from "./CandidateSelector.js"
/** @since 0.1.0 */
export * as ComponentSelector from "./ComponentSelector.js"
/** @since 0.1.0 */
export * as Errors from "./Errors.js"
/** @since 0.1.0 */
export * as EvaluationBatch from "./EvaluationBatch.js"
/** @since 0.1.0 */
export * as EvaluationPolicy from "./EvaluationPolicy.js"
/** @since 0.1.0 */
export * as Frontier from "./Frontier.js"
/** @since 0.1.0 */
export * as Merge from "./Merge.js"
/** @since 0.1.0 */
export * as Pareto from "./Pareto.js"
/** @since 0.1.0 */
export * as Result from "./Result.js"
/** @since 0.1.0 */
export * as Rng from "./Rng.js"
/** @since 0.1.0 */
export * as State from "./State.js"
