/**
 * The log line of each event: pure, so that the observer and any other
 * consumer describe a run the same way.
 *
 * @internal
 */
import type { GepaEvent } from "../../Event.js"

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(4))

export const describeEvent = (
  event: GepaEvent,
  best: { readonly score: number; readonly candidate: number } | undefined
): { readonly level: "info" | "debug" | "warning"; readonly message: string } => {
  switch (event._tag) {
    case "SeedGenerated":
      return {
        level: "info",
        message: `seed candidate written by the reflection model after ${event.attempts} ` +
          `${event.attempts === 1 ? "attempt" : "attempts"}` +
          (event.rejected.length === 0 ? "" : ` (rejected: ${event.rejected.join("; ")})`)
      }
    case "OptimizationStarted":
      return {
        level: "info",
        message: `${event.resumed ? "resuming" : "starting"} optimization: ${event.trainSize} training and ` +
          `${event.valSize} validation examples, budget ${event.budget ?? "unlimited"} metric calls` +
          (event.strategy === undefined ? "" : `, ${event.strategy}`)
      }
    case "OptimizationEnded":
      return {
        level: "info",
        message: `optimization ended after ${event.result.iterations} iterations: best score ` +
          `${event.result.bestScore === null ? "n/a" : fmt(event.result.bestScore)} (candidate ${event.result.bestIndex}), ` +
          `${event.result.totalMetricCalls} metric calls${event.result.stopReason ? `, ${event.result.stopReason}` : ""}`
      }
    case "IterationEnded":
      return {
        level: "info",
        message: `iteration ${event.iteration}: ${event.accepted} accepted, ${event.state.candidates.length} candidates, ` +
          `best score ${best === undefined ? "n/a" : `${fmt(best.score)} (candidate ${best.candidate})`}, ` +
          `${event.state.metricCalls} metric calls`
      }
    case "Error":
      return { level: "warning", message: `iteration ${event.iteration}: ${event.message}` }
    case "LostWorkCharged":
      return {
        level: "warning",
        message: `charged ${event.metricCalls} metric calls paid by an interrupted process and never completed ` +
          `(${event.totalLost} lost in this run)`
      }
    case "IterationStarted":
      return { level: "debug", message: `iteration ${event.iteration} started (${event.metricCalls} metric calls so far)` }
    case "CandidateSelected":
      return {
        level: "debug",
        message: event.validating === true
          ? `iteration ${event.iteration}: parent ${event.candidate}, being validated (minibatch score ${fmt(event.score)})`
          : `iteration ${event.iteration}: parent ${event.candidate} (score ${fmt(event.score)})`
      }
    case "MinibatchSampled":
      return { level: "debug", message: `iteration ${event.iteration}: minibatch of ${event.ids.length}` }
    case "EvaluationStarted":
      return { level: "debug", message: `iteration ${event.iteration}: evaluating ${event.size} examples (${event.purpose})` }
    case "EvaluationEnded":
      return {
        level: "debug",
        message: `iteration ${event.iteration}: ${event.purpose} evaluated, score sum ` +
          `${fmt(event.scores.reduce((a, b) => a + b, 0))}/${event.scores.length}, ` +
          `${event.failures} failed, ${event.cacheHits} from cache`
      }
    case "EvaluationSkipped":
      return { level: "debug", message: `iteration ${event.iteration}: skipped candidate ${event.candidate}: ${event.reason}` }
    case "ExampleFailed":
      return { level: "debug", message: `iteration ${event.iteration}: example ${event.id} failed: ${event.error}` }
    case "ValsetEvaluated":
      return {
        level: "debug",
        message: `iteration ${event.iteration}: candidate ${event.candidate} scored ${fmt(event.score)} on validation ` +
          `(coverage ${event.coverage})`
      }
    case "ReflectiveDatasetBuilt":
      return {
        level: "debug",
        message: `iteration ${event.iteration}: reflective dataset of ${event.records} records for ${event.components.join(", ")}`
      }
    case "ComponentRejected":
      return {
        level: "warning",
        message: `iteration ${event.iteration}: proposed value of component "${event.component}" (parent ${event.parent}) rejected: ${event.reason}`
      }
    case "ProposalStarted":
      return {
        level: "debug",
        message: `iteration ${event.iteration}: proposing ${event.components.join(", ")} from parent ${event.parent}`
      }
    case "ProposalEnded":
      return {
        level: "debug",
        message: `iteration ${event.iteration}: proposal from parent ${event.parent} ${event.outcome}` +
          (event.reason === undefined ? "" : `: ${event.reason}`)
      }
    case "CandidateAccepted":
      return {
        level: "debug",
        message: `iteration ${event.iteration}: candidate ${event.candidate} accepted (score ${fmt(event.score)}, ` +
          `parents ${event.parents.join(", ")})`
      }
    case "CandidateRejected":
      return {
        level: "debug",
        message: `iteration ${event.iteration}: child of ${event.parents.join(", ")} rejected ` +
          `(${fmt(event.after)} vs ${fmt(event.before)} on the minibatch)`
      }
    case "MergeAttempted":
      return { level: "debug", message: `iteration ${event.iteration}: merging ${event.parents.join(" and ")}` }
    case "MergeAccepted":
      return { level: "debug", message: `iteration ${event.iteration}: merge accepted as candidate ${event.candidate}` }
    case "MergeRejected":
      return { level: "debug", message: `iteration ${event.iteration}: merge rejected: ${event.reason}` }
    case "ParetoFrontUpdated":
      return {
        level: "debug",
        message: `iteration ${event.iteration}: candidate ${event.candidate} joined ${event.frontsJoined} fronts`
      }
    case "StateSaved":
      return { level: "debug", message: `iteration ${event.iteration}: state saved to ${event.path}` }
    case "BudgetUpdated":
      return {
        level: "debug",
        message: `${event.metricCalls}${event.budget === undefined ? "" : `/${event.budget}`} metric calls spent`
      }
  }
}
