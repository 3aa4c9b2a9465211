/**
 * A run's resolved settings: what `resolve` makes of a configuration,
 * complete and checked, the only view of the settings the loop reads (it
 * never re-reads the raw config), and the questions asked of it.
 *
 * @internal
 */
import type * as ComponentProposer from "../../ComponentProposer.js"
import type { Duration, Effect, Either, Schedule, Scope } from "effect"
import type * as Acceptance from "../../Acceptance.js"
import type { Adapter } from "../../Adapter.js"
import type { Candidate } from "../../Candidate.js"
import type * as CandidateSelector from "../../CandidateSelector.js"
import type * as ComponentSelector from "../../ComponentSelector.js"
import type * as DataLoader from "../../DataLoader.js"
import type { AdapterError, ConfigError, EvaluationTimeout, PersistenceError } from "../../Errors.js"
import type { EvaluationCache } from "../../EvaluationCache.js"
import type * as EvaluationPolicy from "../../EvaluationPolicy.js"
import type { GepaEvent } from "../../Event.js"
import type * as Fingerprint from "../../Fingerprint.js"
import type { FrontierType } from "../../Frontier.js"
import type { LanguageModel } from "../../LanguageModel.js"
import type { Proposer } from "../../Proposal.js"
import type * as Reflection from "../../Reflection.js"
import type { RunStore } from "../../RunStore.js"
import type * as StopCondition from "../../StopCondition.js"
import type { ObserverOptions } from "../../Telemetry.js"

/** @internal */
export interface Resolved<D, T, O> {
  readonly seedCandidate: Candidate
  /** per component, its own proposer instead of reflection (see `Config.componentProposers`) */
  readonly componentProposers: Readonly<Record<string, ComponentProposer.TextProposer>>
  /** reads a saved or proposed component (see `Config.readComponent`) */
  readonly readComponent: ((component: string, text: string) => Either.Either<string, string>) | undefined
  /** seed of every random choice */
  readonly seed: number
  readonly frontierType: FrontierType
  readonly adapter: Adapter<D, T, O>
  readonly reflectionModel: LanguageModel | undefined
  readonly proposer: Proposer | undefined
  /** options of the reflection prompt */
  readonly reflection: Reflection.ReflectionConfig
  readonly train: DataLoader.DataLoader<D>
  readonly val: DataLoader.DataLoader<D>
  readonly trainIds: ReadonlyArray<string>
  readonly valIds: ReadonlyArray<string>
  readonly budget: number | undefined
  readonly stop: StopCondition.StopCondition
  readonly minibatchSize: number
  /** steps in flight at once (the pipeline depth) */
  readonly parallelProposals: number
  /** reflective proposals planned together as one step (the widest step when `stepWidth` is "adaptive") */
  readonly proposalsPerStep: number
  /** every step `proposalsPerStep` wide, or wider as fewer proposals are accepted (see `width.ts`) */
  readonly stepWidth: "fixed" | "adaptive"
  /** how a step picks its parents */
  readonly proposalSampling: "independent" | "same_parent" | "same_minibatch"
  /** which accepted children of a step are validated */
  readonly proposalSelection: "best" | "all" | "combine" | { readonly topK: number }
  /** how many proposals of a `"same_minibatch"` step may rewrite a component from one minibatch (see `plan.ts`) */
  readonly rewritesPerMinibatch: number
  /** judge a child on its parent's unsolved examples first (see `early.ts`) */
  readonly earlyRejection: boolean
  /** reflect on a rejected proposal's minibatch again with the next component (see `plan.ts`) */
  readonly reuseMinibatch: boolean
  /** start the step after a validated child on that child, while it is validated (see `loop.ts`) */
  readonly buildOnChild: boolean
  /** the step on a child reflects on the child's results on its minibatch (see `plan.ts`) */
  readonly reuseChildMinibatch: boolean
  /** fold results in plan order (reproducible) or as they complete */
  readonly foldOrder: "plan" | "completion"
  /** which proposal settings the config gave (a resume keeps the saved ones otherwise) */
  readonly given: {
    readonly parallelProposals: boolean
    readonly proposalsPerStep: boolean
    /** given, or implied fixed by a given `proposalsPerStep` */
    readonly stepWidth: boolean
    readonly proposalSampling: boolean
    readonly proposalSelection: boolean
    readonly rewritesPerMinibatch: boolean
    readonly earlyRejection: boolean
    readonly reuseMinibatch: boolean
    readonly buildOnChild: boolean
    readonly reuseChildMinibatch: boolean
  }
  readonly maxConcurrency: number
  /** examples per adapter call */
  readonly chunkSize: number
  readonly evaluationTimeout: Duration.Duration | undefined
  readonly evaluationRetry: Schedule.Schedule<unknown, AdapterError | EvaluationTimeout> | undefined
  readonly fallbackScore: number
  readonly selectCandidate: CandidateSelector.CandidateSelector
  readonly selectComponents: ComponentSelector.ComponentSelector
  readonly policy: EvaluationPolicy.EvaluationPolicy
  readonly accept: Acceptance.AcceptanceCriterion
  readonly merge: { readonly maxInvocations: number; readonly overlapFloor: number; readonly subsampleSize: number } | undefined
  readonly skipPerfect: boolean
  readonly perfectScore: number
  readonly maxFailedIterations: number
  /** unusable reflection answers in a row that stop the run */
  readonly maxUnusableAnswers: number
  /** the run's tally of unusable reflection answers in a row (not persisted: a resumed run starts afresh) */
  readonly unusable: { streak: number }
  readonly trackBestOutputs: boolean
  /** the evaluation cache: the run's own (in memory, or the store's), none, or the caller's */
  readonly cache: "default" | "off" | EvaluationCache<O>
  readonly onEvent: ((event: GepaEvent) => void | Effect.Effect<void>) | undefined
  /** the observer options of the `telemetry` setting: `undefined` when off */
  readonly telemetry: ObserverOptions | undefined
  /** whether the adapter reads the proposal it works for (`currentProposal.ts`) */
  readonly readsProposal: boolean
  /** the persistence the caller chose: a store of its own, or a run directory */
  readonly store: Effect.Effect<RunStore<O>, PersistenceError | ConfigError, Scope.Scope> | undefined
  readonly runDir: string | undefined
  /** content hashes of the examples and the meaning-changing settings */
  readonly fingerprint: Fingerprint.RunFingerprint
  /** example id -> content hash, per split: the evaluation cache's example keys */
  readonly exampleKeys: { readonly train: ReadonlyMap<string, string>; readonly val: ReadonlyMap<string, string> }
}

/**
 * Whether a run reflects on a rejected proposal's minibatch again
 * (`reuseMinibatch`): only with one proposal in flight, where the last
 * folded proposal is the one planned just before.
 *
 * @internal
 */
export const reusesMinibatches = (r: Pick<Resolved<unknown, unknown, unknown>, "reuseMinibatch" | "proposalsPerStep" | "parallelProposals">) =>
  r.reuseMinibatch && r.proposalsPerStep === 1 && r.parallelProposals === 1
