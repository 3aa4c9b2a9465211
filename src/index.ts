/**
 * effect-gepa: GEPA (Genetic-Pareto reflective prompt evolution) on Effect.
 *
 * @since 0.1.0
 */
/** @since 0.1.0 */
export * as Acceptance from "./Acceptance.js"
/** @since 0.1.0 */
export * as Adapter from "./Adapter.js"
/** @since 0.3.0 */
export * as AiSdkLanguageModel from "./AiSdkLanguageModel.js"
/** @since 0.1.0 */
export * as BatchSampler from "./BatchSampler.js"
/** @since 0.1.0 */
export * as Candidate from "./Candidate.js"
/** @since 0.3.0 */
export * as CandidateSchema from "./CandidateSchema.js"
/** @since 0.1.0 */
export * as CandidateSelector from "./CandidateSelector.js"
/** @since 0.3.0 */
export * as ComponentProposer from "./ComponentProposer.js"
/** @since 0.1.0 */
export * as ComponentSelector from "./ComponentSelector.js"
/** @since 0.3.0 */
export * as Config from "./Config.js"
/** @since 0.1.0 */
export * as DataLoader from "./DataLoader.js"
/** @since 0.1.0 */
export * as DefaultAdapter from "./DefaultAdapter.js"
/** @since 0.1.0 */
export * as Errors from "./Errors.js"
/** @since 0.1.0 */
export * as EvaluationBatch from "./EvaluationBatch.js"
/** @since 0.1.0 */
export * as EvaluationCache from "./EvaluationCache.js"
/** @since 0.1.0 */
export * as EvaluationPolicy from "./EvaluationPolicy.js"
/** @since 0.1.0 */
export * as Event from "./Event.js"
/** @since 0.1.0 */
export * as FaultInjection from "./FaultInjection.js"
/** @since 0.2.0 */
export * as Fingerprint from "./Fingerprint.js"
/** @since 0.1.0 */
export * as Frontier from "./Frontier.js"
/** @since 0.3.0 */
export * as FunctionAdapter from "./FunctionAdapter.js"
/** @since 0.3.0 */
export * as Genealogy from "./Genealogy.js"
/** @since 0.1.0 */
export * as Gepa from "./Gepa.js"
/** @since 0.1.0 */
export * as LanguageModel from "./LanguageModel.js"
/** @since 0.3.0 */
export * as Ledger from "./Ledger.js"
/** @since 0.1.0 */
export * as Merge from "./Merge.js"
/** @since 0.1.0 */
export * as Metric from "./Metric.js"
/** @since 0.2.0 */
export * as ModelString from "./ModelString.js"
/** @since 0.1.0 */
export * as OpenAiLanguageModel from "./OpenAiLanguageModel.js"
/** @since 0.2.0 */
export * as OptimizeAnything from "./OptimizeAnything.js"
/** @since 0.1.0 */
export * as Pareto from "./Pareto.js"
/** @since 0.1.0 */
export * as Proposal from "./Proposal.js"
/** @since 0.1.0 */
export * as Reflection from "./Reflection.js"
/** @since 0.1.0 */
export * as Report from "./Report.js"
/** @since 0.1.0 */
export * as Result from "./Result.js"
/** @since 0.1.0 */
export * as Rng from "./Rng.js"
/** @since 0.1.0 */
export * as RunDir from "./RunDir.js"
/** @since 0.2.0 */
export * as RunMonitor from "./RunMonitor.js"
/** @since 0.1.0 */
export * as RunStore from "./RunStore.js"
/** @since 0.3.0 */
export * as Secrets from "./Secrets.js"
/** @since 0.1.0 */
export * as State from "./State.js"
/** @since 0.1.0 */
export * as StopCondition from "./StopCondition.js"
/** @since 0.3.0 */
export * as Strategy from "./Strategy.js"
/** @since 0.2.0 */
export * as Telemetry from "./Telemetry.js"
