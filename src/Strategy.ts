/**
 * The proposal strategy of a run: how many proposals a step plans, how they
 * share parents and minibatches, which children a step validates
 * (`Config.proposalsPerStep`, `proposalSampling`, `proposalSelection`,
 * `stepWidth`, `rewritesPerMinibatch`), and the default a run takes for each
 * of them it leaves out, read from what the search can see (`defaultFor`).
 *
 * @since 0.3.0
 */
import { defaults } from "./Config.js"

/**
 * A step's proposal strategy: `Config.proposalsPerStep`, `proposalSampling`,
 * `proposalSelection`, `stepWidth` and `rewritesPerMinibatch` together.
 *
 * @since 0.3.0
 * @category models
 */
export interface Strategy {
  readonly proposalsPerStep: number
  readonly proposalSampling: "independent" | "same_parent" | "same_minibatch"
  readonly proposalSelection: "best" | "all" | "combine" | { readonly topK: number }
  /** `"fixed"` when absent (see `Config.stepWidth`) */
  readonly stepWidth?: "fixed" | "adaptive"
  /** 1 when absent (see `Config.rewritesPerMinibatch`) */
  readonly rewritesPerMinibatch?: number
  /** `false` when absent (see `Config.buildOnChild`) */
  readonly buildOnChild?: boolean
  /** with `buildOnChild`, `true` when absent (see `Config.reuseChildMinibatch`) */
  readonly reuseChildMinibatch?: boolean
}

/**
 * The most proposals per step the default plans: a step of every component
 * of a candidate of many components would ask the model that many times
 * at once and spend a large share of a small budget on one parent.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultMaxProposalsPerStep = 8

/**
 * How many rounds of components a default step plans for a candidate of
 * several components: three rounds (each component rewritten three times,
 * from three reflections on the same evidence) keep more calls in flight
 * than one round and measured as good per budget (bench/RESULTS.md).
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultRoundsPerStep = 3

/**
 * How many rewrites of the component a default step on a candidate of one
 * component asks for, all from one minibatch's evidence (see
 * `Config.rewritesPerMinibatch`): three reflections side by side on the
 * same paid evidence, the best child validated. Measured better per budget
 * than the GEPA loop on the bench's one-component tasks and about 1.7x
 * faster when calls are slow; four were faster still and lost quality
 * (bench/RESULTS.md).
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultRewritesPerMinibatch = 3

/**
 * What the default strategy reads of a run besides its components, each
 * absent when unknown: the configured minibatch size (`Config.minibatchSize`,
 * its default when absent) and the training set's size (a minibatch holds
 * the smaller of the two), the budget of metric calls, and the validation
 * set's size.
 *
 * @since 0.3.0
 * @category models
 */
export interface SearchShape {
  readonly minibatchSize?: number | undefined
  readonly trainsetSize?: number | undefined
  readonly budget?: number | undefined
  readonly valsetSize?: number | undefined
}

/**
 * The fewest validations of the whole validation set a budget must hold for
 * the one-component default to rewrite its text several times per
 * minibatch (`defaultRewritesPerMinibatch`). A step of three rewrites pays
 * for up to three children's minibatch evaluations before its one
 * validation; with a budget of a few validations the run takes too few
 * steps for that to pay: on the bench's manifest task (validation set 12),
 * at 60 calls (5 validations) three rewrites scored 0.796 against the GEPA
 * loop's 0.831, and at 150 calls (12.5) 0.970 against 0.974 (30 seeds); from
 * 15 validations on they were better or level on every one-component task
 * measured (bench/RESULTS.md).
 *
 * @since 0.3.0
 * @category constants
 */
export const rewritesFromValidations = 15

/** The examples of one minibatch: the configured size, or the whole training set when it is smaller. */
const minibatchOf = (search: SearchShape): number => Math.min(search.minibatchSize ?? defaults.minibatchSize, search.trainsetSize ?? Infinity)

const rewritesPay = (search: SearchShape): boolean =>
  minibatchOf(search) >= 2 &&
  (search.budget === undefined || search.valsetSize === undefined || search.budget >= rewritesFromValidations * search.valsetSize)

/**
 * The default strategy for a candidate of `components` components, from
 * what the search can see (`SearchShape`), used for each setting a
 * configuration leaves out. It depends only on
 * what the search sees, never on `maxConcurrency`, so the same seed gives the
 * same run at any concurrency; it is saved with the run, and a resumed run
 * keeps the saved strategy unless the settings are given.
 *
 * - One component: `defaultRewritesPerMinibatch` proposals per step, all
 *   rewriting the component from one minibatch's evidence, paid once
 *   (`"same_minibatch"`, `Config.rewritesPerMinibatch`), and the best child
 *   validated; the next step starts on that child while it is validated
 *   (`Config.buildOnChild`) and reflects on the child's own results on the
 *   minibatch it was judged on (`Config.reuseChildMinibatch`). Steps of
 *   several proposals on as many minibatches lost quality per budget on
 *   one component in every measurement; rewrites of
 *   one minibatch's evidence measured better per budget than the GEPA loop
 *   and faster (bench/RESULTS.md). With minibatches of one example
 *   (`minibatchSize`, or a training set, of 1: optimize-anything's
 *   single-task mode) there is only one order to show the evidence in, and
 *   a budget of fewer than `rewritesFromValidations` validations leaves
 *   too few steps: then the default stays the GEPA loop, with `"adaptive"`
 *   steps of up to `defaultMaxProposalsPerStep` once few proposals pass
 *   (`Config.stepWidth`).
 * - Several components: `defaultRoundsPerStep` rounds of components per
 *   step (each component rewritten that many times, at most
 *   `defaultMaxProposalsPerStep` proposals), on one shared minibatch whose
 *   evidence is paid once (`"same_minibatch"`), and one validation that
 *   keeps every accepted component's change (`"combine"`). Measured as good
 *   per budget as one round of components on the bench's two- and
 *   four-component tasks and on the demo's task, and 1.3-1.8x faster when
 *   calls are slow.
 *
 * @since 0.3.0
 * @category constructors
 */
export const defaultFor = (components: number, search: SearchShape = {}): Strategy =>
  components <= 1
    ? rewritesPay(search)
      ? {
        proposalsPerStep: defaultRewritesPerMinibatch,
        proposalSampling: "same_minibatch",
        proposalSelection: "best",
        rewritesPerMinibatch: defaultRewritesPerMinibatch,
        buildOnChild: true,
        reuseChildMinibatch: true
      }
      // one record to reflect on (every rewrite would read the same prompt), or a budget of a few validations
      : { proposalsPerStep: defaultMaxProposalsPerStep, proposalSampling: "independent", proposalSelection: "best", stepWidth: "adaptive" }
    : {
      proposalsPerStep: Math.min(components * defaultRoundsPerStep, defaultMaxProposalsPerStep),
      proposalSampling: "same_minibatch",
      proposalSelection: "combine"
    }

/**
 * A strategy in one line, as the run's settings print it.
 *
 * @since 0.3.0
 * @category formatting
 */
export const format = (s: Strategy): string => {
  const selection = typeof s.proposalSelection === "string" ? s.proposalSelection : `top ${s.proposalSelection.topK}`
  const width = s.stepWidth === "adaptive" && s.proposalsPerStep > 1
    ? `1 to ${s.proposalsPerStep} proposals per step (wider as fewer are accepted)`
    : `${s.proposalsPerStep} ${s.proposalsPerStep === 1 ? "proposal" : "proposals"} per step`
  const rewrites = s.rewritesPerMinibatch !== undefined && s.rewritesPerMinibatch > 1 && s.proposalSampling === "same_minibatch"
    ? `, ${s.rewritesPerMinibatch} rewrites per minibatch`
    : ""
  const onChild = s.buildOnChild !== true
    ? ""
    : s.reuseChildMinibatch === false
    ? ", next step on the validated child"
    : ", next step on the validated child and its minibatch"
  return `${width}, ${s.proposalSampling}${rewrites}, ${selection}${onChild}`
}
