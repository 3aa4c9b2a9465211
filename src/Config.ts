/**
 * The configuration of a run (`Gepa.optimize`, `Gepa.stream`): the options,
 * and the table of their defaults. Below the engine: the engine receives a
 * `Config`, resolves it once against `defaults`, and never imports the module
 * that runs it.
 *
 * @since 0.3.0
 */
import type { Duration, Effect, Either, Schedule, Scope } from "effect"
import type * as Acceptance from "./Acceptance.js"
import type { Adapter } from "./Adapter.js"
import type { Candidate } from "./Candidate.js"
import type * as CandidateSelector from "./CandidateSelector.js"
import type * as ComponentProposer from "./ComponentProposer.js"
import type * as ComponentSelector from "./ComponentSelector.js"
import type { DataLoader } from "./DataLoader.js"
import type { AdapterError, ConfigError, EvaluationTimeout, PersistenceError } from "./Errors.js"
import type { EvaluationCache } from "./EvaluationCache.js"
import type * as EvaluationPolicy from "./EvaluationPolicy.js"
import type { GepaEvent } from "./Event.js"
import type { FrontierType } from "./Frontier.js"
import type { LanguageModel } from "./LanguageModel.js"
import type { Proposer } from "./Proposal.js"
import type { ReflectionConfig } from "./Reflection.js"
import type { RunStore } from "./RunStore.js"
import type { StopCondition } from "./StopCondition.js"
import type { ObserverOptions } from "./Telemetry.js"

/**
 * Merge (crossover) options.
 *
 * @since 0.1.0
 * @category models
 */
export interface MergeConfig {
  /** the most merge proposals evaluated in a run (default 5) */
  readonly maxInvocations?: number
  /** validation examples two parents must share (default 5) */
  readonly overlapFloor?: number
  /** size of the validation subsample a merged candidate is tested on (default 5) */
  readonly subsampleSize?: number
}

/**
 * The configuration of a run. Only `seedCandidate`, `trainset` and a stop
 * condition (`maxMetricCalls` or `stop`) are required; the adapter and the
 * reflection model come from here or from the context.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config<D, T = unknown, O = unknown> {
  /** the starting texts */
  readonly seedCandidate: Candidate
  /** examples the reflection learns from */
  readonly trainset: ReadonlyArray<D> | DataLoader<D>
  /** examples candidates are ranked on (default: the trainset) */
  readonly valset?: ReadonlyArray<D> | DataLoader<D>
  /** the adapter; when absent it is read from the context (`Adapter.tag`) */
  readonly adapter?: Adapter<D, T, O>
  /** the reflection model; when absent it is read from the context (`ReflectionModel`) */
  readonly reflectionModel?: LanguageModel
  /** a custom proposer used instead of the reflection model */
  readonly proposer?: Proposer
  /** options of the default reflection prompt */
  readonly reflection?: ReflectionConfig
  /**
   * per component, its own proposer, used for that component instead of the
   * reflection model or `proposer` (since 0.3.0; see `CandidateSchema` for
   * typed ones)
   */
  readonly componentProposers?: Readonly<Record<string, ComponentProposer.TextProposer>>
  /**
   * per component, a description of its schema, recorded with the run and
   * compared on resume (since 0.3.0; set by `CandidateSchema`)
   */
  readonly componentSchemas?: Readonly<Record<string, string>>
  /**
   * reads a component's text: its stored form (a structured component's
   * canonical JSON), or why it is not a value of the component. Checks every
   * saved component on resume and every text a reflection or a custom
   * proposer writes, which is then stored in that form (since 0.3.0; set by
   * `CandidateSchema`)
   */
  readonly readComponent?: (component: string, text: string) => Either.Either<string, string>
  /** the strict metric-call budget: examples evaluated, never exceeded */
  readonly maxMetricCalls?: number
  /** stop conditions; the run stops when any of them holds */
  readonly stop?: StopCondition | ReadonlyArray<StopCondition>
  /** seed of every random choice (default 0) */
  readonly seed?: number
  /** training examples per reflection (default 3) */
  readonly minibatchSize?: number
  /** parent selection (default "pareto") */
  readonly candidateSelector?:
    | "pareto"
    | "current_best"
    | { readonly epsilonGreedy: number }
    | { readonly topKPareto: number }
    | CandidateSelector.CandidateSelector
  /** which components a proposal rewrites (default "round_robin") */
  readonly componentSelector?: "round_robin" | "all" | ComponentSelector.ComponentSelector
  /** which validation examples a new candidate is scored on (default "full") */
  readonly evaluationPolicy?: "full" | { readonly incremental: number } | EvaluationPolicy.EvaluationPolicy
  /** when a child beats its parent (default "strict_improvement") */
  readonly acceptance?: "strict_improvement" | "improvement_or_equal" | Acceptance.AcceptanceCriterion
  /** frontier used for selection and merge (default "instance") */
  readonly frontierType?: FrontierType
  /** skip reflecting on minibatches where every score is perfect (default true) */
  readonly skipPerfectScore?: boolean
  /** the perfect score (default 1) */
  readonly perfectScore?: number
  /** merge options; `true` for defaults, `false` (default) to disable */
  readonly merge?: boolean | MergeConfig
  /** adapter calls in flight at most, over the whole run (default 8) */
  readonly maxConcurrency?: number
  /** examples per adapter call (default 1) */
  readonly chunkSize?: number
  /** timeout of one adapter call; starts when the call starts */
  readonly evaluationTimeout?: Duration.DurationInput
  /** retry schedule for failed or timed-out adapter calls */
  readonly evaluationRetry?: Schedule.Schedule<unknown, AdapterError | EvaluationTimeout>
  /** score given to an example whose evaluation failed (default 0) */
  readonly fallbackScore?: number
  /**
   * steps in flight at once: the depth of the proposal pipeline (default 1,
   * the GEPA loop). Each step is planned from the freshest folded state;
   * whenever one is folded, the next one is planned. An accepted child whose
   * parent was superseded while it was in flight is rebased on the better
   * descendant when their changes touch different components, and dropped
   * when they overlap. An algorithm setting, like every setting here but
   * `maxConcurrency`: deeper pipelines keep more calls in flight and plan
   * from staler states (bench/: held-out score and wall time per depth).
   */
  readonly parallelProposals?: number
  /**
   * reflective proposals planned together as one step (default: by the
   * candidate's components, see `Strategy.defaultFor`). They run
   * side by side (parent minibatch, reflection, child minibatch), then the
   * step's `proposalSelection` decides which accepted children are
   * validated. More proposals per step spend more on minibatches for each
   * validation and finish a budget in fewer, wider steps.
   */
  readonly proposalsPerStep?: number
  /**
   * whether every step plans `proposalsPerStep` proposals (`"fixed"`, the
   * default) or fewer while proposals are being accepted (`"adaptive"`).
   * Adaptive, `proposalsPerStep` is the widest step: a
   * step plans one proposal while at least 2 of the last 20 reflective
   * proposals (judged or skipped) were accepted, half of `proposalsPerStep`
   * while 1 was, and all of them while none was. A rejected or skipped
   * proposal leaves the state as it found it, so proposals planned together
   * while few pass are nearly those the loop would plan one after the
   * other; late in a run, when most minibatches are solved, they then run
   * side by side instead of one after the other.
   *
   * @since 0.3.0
   */
  readonly stepWidth?: "fixed" | "adaptive"
  /**
   * how a step's proposals get their parents and minibatches (default: see
   * `Strategy.defaultFor`). `"independent"`: each selects its own parent with the candidate
   * selector and draws its own minibatch; `"same_parent"`: one parent, a
   * minibatch each; `"same_minibatch"`: one parent, and one minibatch per
   * round of components (a new one when a component would come round
   * again), whose traced evaluation of the parent is paid once and read by
   * the reflection of every proposal of the round. With `"round_robin"`
   * components each proposal of a shared-parent step rewrites the next
   * component, so a round tries every component side by side on the same
   * evidence (the parallel form of `reuseMinibatch`).
   */
  readonly proposalSampling?: "independent" | "same_parent" | "same_minibatch"
  /**
   * which accepted children of a step are validated (default: see
   * `Strategy.defaultFor`): `"best"`, the
   * one that improved its minibatch most (ties: the first planned), the `topK`
   * that improved most, or `"all"`. `"combine"`: the one that improved most,
   * with the changes of the step's other accepted children of the same
   * parent to components it did not change (best first); the combination is
   * judged against the parent on their minibatches together and validated
   * when it passes, or the best child alone when it does not. Children of
   * the step that are not selected are rejected (the trace says why);
   * identical children are validated once.
   */
  readonly proposalSelection?: "best" | "all" | "combine" | { readonly topK: number }
  /**
   * how many proposals of a `"same_minibatch"` step may rewrite the same
   * component from one minibatch's evidence (default: see
   * `Strategy.defaultFor`: 3 for one component, 1 for several). The parent's
   * traced evaluation of the minibatch is paid once; each rewrite is its
   * own reflection, asked at the same time as the others, and the k-th
   * reads the records in another order (rotated by k), so that a model
   * answering the same evidence the same way still writes different
   * children. The step's `proposalSelection` then validates the best of
   * them. A component rewritten that many times on a minibatch makes the
   * next proposal of the step draw a new one. No effect with the other
   * samplings.
   *
   * @since 0.3.0
   */
  readonly rewritesPerMinibatch?: number
  /**
   * judge a child first on the minibatch examples its parent did not solve
   * perfectly, and reject it without paying for the others when even perfect
   * scores on them could not make it pass (default true). The decision is the
   * one the whole minibatch would give, for the built-in acceptance criteria,
   * provided `perfectScore` is the highest score the metric gives (a score
   * above it turns it off for that proposal). Saves metric calls; costs a
   * second round of calls for children that pass the first.
   */
  readonly earlyRejection?: boolean
  /**
   * after a rejected proposal, let the next proposal from the same parent
   * reflect on the same minibatch, on a component not yet tried on it
   * (default true). The parent's evaluation of that minibatch is already
   * paid for: the proposal pays only for its child. (With it on,
   * `makeReflectiveDataset` is asked for every component at once; the
   * parent's scores and the other components' records are kept in the saved
   * state, so a resumed run continues as the uninterrupted one.) A new
   * minibatch is drawn after an accepted child, once every component was
   * tried on it, and for another parent; a candidate of one component never
   * reuses one. Only with one proposal in flight (`parallelProposals` and
   * `proposalsPerStep` 1); other strategies draw a minibatch per proposal.
   *
   * @since 0.3.0
   */
  readonly reuseMinibatch?: boolean
  /**
   * when a step validates one accepted child, start the next step at once
   * with that child as its parent, while the child is validated, instead of
   * waiting for its validation and selecting the next parent then. The
   * validation, the slowest part of a step, then overlaps the next step's
   * minibatch and reflection. The child always joins the pool (unless it was
   * validated on what was left of the budget: then the next step waits), so
   * only the parent of the step after an acceptance changes: the newest
   * child, as the candidate most likely to improve further, instead of a
   * Pareto draw. The default for a candidate of one component
   * (`Strategy.defaultFor`), where it measured as good per budget and faster
   * (bench/RESULTS.md), unless the config shapes the steps
   * (`proposalsPerStep`, `proposalSampling`, `proposalSelection`,
   * `rewritesPerMinibatch`, `stepWidth`); only for a candidate of one
   * component, with one step in flight (`parallelProposals` 1) and
   * `foldOrder: "plan"`. A stop condition that
   * holds once the child is folded lets the step started on it finish.
   *
   * @since 0.3.0
   */
  readonly buildOnChild?: boolean
  /**
   * with `buildOnChild`: the step built on a child reflects on that child's
   * own results on the minibatch it was just judged on (default true). That
   * evaluation is paid already (children are then evaluated with traces), so
   * the step pays only for its own children and starts its reflection at
   * once, instead of first evaluating the child on a newly drawn minibatch.
   * Only the step's first rewrites of one minibatch read it (its first
   * proposal, when each proposal draws its own minibatch); the rest of the
   * step draws as usual. A minibatch serves at most two steps in a row: the
   * step after a child built this way draws a new one. So does the step on
   * a child whose results cannot serve: perfect on every example, an example
   * that failed, or records that are not JSON values (they are saved with the
   * plan, so a resumed run reads them back). With an adapter without `traceCodec`, a
   * run resumed after a crash evaluates the children of the step in flight
   * again, as it does their parent (traced evaluations are stored only with
   * a codec).
   *
   * @since 0.3.0
   */
  readonly reuseChildMinibatch?: boolean
  /**
   * the order finished proposals are folded into the state (default `"plan"`).
   * `"plan"`: in the order they were planned, through a reorder window, so a
   * deterministic adapter and model give the same result for the same seed
   * whatever the timing. `"completion"`: as they finish, so the next plan
   * sees results a little sooner; the result then depends on timing.
   */
  readonly foldOrder?: "plan" | "completion"
  /**
   * proposals in a row that failed before the run fails (default 5): every
   * evaluation of the proposal failed, or the reflection model (or proposer)
   * failed
   */
  readonly maxConsecutiveFailedIterations?: number
  /** the evaluation cache: `true` (default) in memory, `false` off, or a cache */
  readonly cache?: boolean | EvaluationCache<O>
  /** keep each validation example's best output in the result (default true) */
  readonly trackBestOutputs?: boolean
  /**
   * a run directory (see `RunDir`): the state is saved there after every
   * iteration and the run resumes from it; the evaluation cache is persisted
   * there unless `cache` is `false` or a cache of your own. Ignored when
   * `store` is set.
   */
  readonly runDir?: string
  /** persistence of the run (a run directory); see `RunDir` */
  readonly store?: Effect.Effect<RunStore<O>, PersistenceError | ConfigError, Scope.Scope>
  /** receives every event */
  readonly onEvent?: (event: GepaEvent) => void | Effect.Effect<void>
  /**
   * the run's own metrics and logs (see `Telemetry.observer`): `true`
   * (default) updates the `Telemetry` metrics and logs through Effect's
   * Logger with the run's start and end and the iteration summaries at
   * debug (so a run under Effect's default logger prints nothing; give
   * `{ summaryLevel: "info" }` to log them at info), details at debug and
   * errors at warning; an object picks what is on; `false` turns it off.
   * The model calls of the reflection model are instrumented
   * (`Telemetry.instrumentModel`) unless this is `false`.
   *
   * @since 0.2.0
   */
  readonly telemetry?: boolean | ObserverOptions
}

/**
 * The default of every option of `Config` that has one: the single table the
 * engine resolves a configuration against, and that the option tables of the
 * docs (docs/configuration.md, docs/cli.md) are checked against (test/configDefaults.test.ts). Options without
 * an entry are required or have no default (`maxMetricCalls`, `stop`,
 * `valset`: the trainset, `adapter` and `reflectionModel`: the context).
 *
 * `proposalsPerStep`, `proposalSampling`, `proposalSelection` and
 * `stepWidth` have no entry: their default depends on the candidate's shape
 * (`Strategy.defaultFor`).
 *
 * The proposal settings (`parallelProposals`, `proposalsPerStep`, `stepWidth`,
 * `proposalSampling`, `proposalSelection`, `earlyRejection`, `reuseMinibatch`, `buildOnChild`,
 * `reuseChildMinibatch`) are algorithm
 * settings, never derived from `maxConcurrency`: concurrency is an execution
 * resource, and the same seed and settings give the same result at any
 * concurrency. They were chosen by measurement (bench/ "concurrency":
 * held-out score per budget over 10 seeds, and wall time when calls are slow).
 *
 * @since 0.3.0
 * @category constants
 */
export const defaults = {
  seed: 0,
  minibatchSize: 3,
  candidateSelector: "pareto",
  componentSelector: "round_robin",
  evaluationPolicy: "full",
  acceptance: "strict_improvement",
  frontierType: "instance",
  skipPerfectScore: true,
  perfectScore: 1,
  merge: false,
  maxConcurrency: 8,
  chunkSize: 1,
  fallbackScore: 0,
  parallelProposals: 1,
  earlyRejection: true,
  reuseMinibatch: true,
  reuseChildMinibatch: true,
  foldOrder: "plan",
  maxConsecutiveFailedIterations: 5,
  cache: true,
  trackBestOutputs: true,
  telemetry: true
} as const satisfies { readonly [K in keyof Config<unknown>]?: Config<unknown>[K] }

/**
 * The defaults of `MergeConfig`: what `merge: true` means.
 *
 * @since 0.3.0
 * @category constants
 */
export const mergeDefaults = {
  maxInvocations: 5,
  overlapFloor: 5,
  subsampleSize: 5
} as const satisfies Required<MergeConfig>
