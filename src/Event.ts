/**
 * The events of a run, covering the reference callback set. Delivered to the
 * `onEvent` option and as the elements of `Gepa.stream`. Events never carry
 * secrets; `IterationEnded` carries the state after the iteration, so a
 * consumer can inspect the run step by step.
 *
 * @since 0.1.0
 */
import { Data } from "effect"
import type { ReflectiveRecord } from "./Adapter.js"
import type { Candidate } from "./Candidate.js"
import type { GepaResult, StructuredGepaResult } from "./Result.js"
import type { GepaState } from "./State.js"

/**
 * Where an evaluation belongs.
 *
 * @since 0.1.0
 * @category models
 */
export type EvaluationPurpose = "seed-validation" | "parent-minibatch" | "child-minibatch" | "validation" | "merge-subsample"

/**
 * The reflection-model usage of one proposal.
 *
 * @since 0.2.0
 * @category models
 */
export interface ProposalUsage {
  readonly calls: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cost: number
}

/**
 * Everything a run reports while it runs (`Gepa.stream`, `Config.onEvent`),
 * one case per kind of event.
 *
 * @since 0.1.0
 * @category models
 */
export type GepaEvent = Data.TaggedEnum<{
  /**
   * seedless start (`optimizeAnything` without a seed): the reflection model
   * wrote the first candidate after `attempts` calls; `rejected` says why
   * earlier answers could not be used
   */
  SeedGenerated: { readonly attempts: number; readonly rejected: ReadonlyArray<string>; readonly candidate: Candidate }
  /**
   * `strategy`: the step's proposal strategy the run goes on with, in one
   * line (`Strategy.format`), given or the default for the candidate's
   * shape (since 0.3)
   */
  OptimizationStarted: {
    readonly resumed: boolean
    readonly trainSize: number
    readonly valSize: number
    readonly budget: number | undefined
    readonly strategy?: string
  }
  /**
   * the run's result, and (since 0.3.0) the state it was built from, as
   * `IterationEnded` carries it
   */
  OptimizationEnded: { readonly result: GepaResult; readonly state: GepaState }
  IterationStarted: { readonly iteration: number; readonly metricCalls: number }
  IterationEnded: { readonly iteration: number; readonly accepted: number; readonly state: GepaState }
  /**
   * the parent of a proposal and its score on the validation set; for a
   * parent still being validated (`Config.buildOnChild`, since 0.3.0),
   * `validating` is set and `score` is its mean on the minibatch it was
   * judged on
   */
  CandidateSelected: { readonly iteration: number; readonly candidate: number; readonly score: number; readonly validating?: true }
  MinibatchSampled: { readonly iteration: number; readonly ids: ReadonlyArray<string> }
  EvaluationStarted: { readonly iteration: number; readonly purpose: EvaluationPurpose; readonly size: number }
  EvaluationEnded: {
    readonly iteration: number
    readonly purpose: EvaluationPurpose
    readonly scores: ReadonlyArray<number>
    readonly failures: number
    readonly cacheHits: number
  }
  EvaluationSkipped: { readonly iteration: number; readonly candidate: number; readonly reason: string }
  ExampleFailed: { readonly iteration: number; readonly purpose: EvaluationPurpose; readonly id: string; readonly error: string }
  ValsetEvaluated: { readonly iteration: number; readonly candidate: number; readonly score: number; readonly coverage: number }
  ReflectiveDatasetBuilt: {
    readonly iteration: number
    readonly components: ReadonlyArray<string>
    readonly records: number
    /**
     * the records themselves, per component: the feedback shown to the
     * reflection model (since 0.2.0; absent in older event logs)
     */
    readonly dataset?: Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>> | undefined
  }
  /**
   * a component proposer's value failed the component's schema (since
   * 0.3.0): the proposal is rejected and the value never adopted
   */
  ComponentRejected: { readonly iteration: number; readonly parent: number; readonly component: string; readonly reason: string }
  ProposalStarted: { readonly iteration: number; readonly parent: number; readonly components: ReadonlyArray<string> }
  ProposalEnded: {
    readonly iteration: number
    readonly parent: number
    readonly outcome: string
    readonly reason?: string | undefined
    /**
     * what the proposal's reflection cost: model calls, tokens and cost in
     * the price table's currency (since 0.2.0; absent in older event logs)
     */
    readonly usage?: ProposalUsage | undefined
  }
  CandidateAccepted: {
    readonly iteration: number
    readonly candidate: number
    readonly parents: ReadonlyArray<number>
    readonly score: number
    readonly components: Candidate
  }
  CandidateRejected: { readonly iteration: number; readonly parents: ReadonlyArray<number>; readonly before: number; readonly after: number }
  MergeAttempted: { readonly iteration: number; readonly parents: ReadonlyArray<number>; readonly ancestor: number }
  MergeAccepted: { readonly iteration: number; readonly candidate: number; readonly parents: ReadonlyArray<number> }
  MergeRejected: { readonly iteration: number; readonly parents: ReadonlyArray<number>; readonly reason: string }
  ParetoFrontUpdated: { readonly iteration: number; readonly candidate: number; readonly frontsJoined: number }
  StateSaved: { readonly iteration: number; readonly path: string }
  BudgetUpdated: { readonly metricCalls: number; readonly budget: number | undefined }
  /**
   * on resume (since 0.2.0): metric calls the interrupted process paid whose
   * results were lost (calls in flight at a crash), now charged against the
   * budget; `totalLost` over the whole run
   */
  LostWorkCharged: { readonly metricCalls: number; readonly totalLost: number }
  Error: { readonly iteration: number; readonly message: string; readonly willContinue: boolean }
}>

/**
 * Constructors and `$match` for events.
 *
 * @since 0.1.0
 * @category constructors
 */
export const GepaEvent = Data.taggedEnum<GepaEvent>()

type Tagged<Tag extends GepaEvent["_tag"]> = Extract<GepaEvent, { readonly _tag: Tag }>

/**
 * The events of a run over typed candidates (`Gepa.stream` with a
 * `candidateSchema`): as `GepaEvent`, with decoded candidates `A` where an
 * event carries candidates. `CandidateAccepted.components` and
 * `SeedGenerated.candidate` are decoded, `IterationEnded` adds the decoded
 * pool (`candidates`, by index, beside the stored `state`), and
 * `OptimizationEnded.result` is the decoded result with each component's
 * versions.
 *
 * @since 0.3.0
 * @category models
 */
export type StructuredEvent<A> =
  | Exclude<GepaEvent, { readonly _tag: "SeedGenerated" | "CandidateAccepted" | "IterationEnded" | "OptimizationEnded" }>
  | (Omit<Tagged<"SeedGenerated">, "candidate"> & { readonly candidate: A })
  | (Omit<Tagged<"CandidateAccepted">, "components"> & { readonly components: A })
  | (Tagged<"IterationEnded"> & { readonly candidates: ReadonlyArray<A> })
  | (Omit<Tagged<"OptimizationEnded">, "result"> & { readonly result: StructuredGepaResult<A> })
