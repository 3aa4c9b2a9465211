/**
 * The evidence a reflective proposal reads: its parent's traced evaluation
 * of the minibatch and the records built from it per component. It is paid
 * once and read by several proposals when a rejected proposal leaves it for
 * the next component (`reuseMinibatch`), when the proposals of a
 * `"same_minibatch"` step share it, or when the step built on an accepted
 * child reads the child's own evaluation (`reuseChildMinibatch`).
 *
 * @internal
 */
import { Effect, Either, Option } from "effect"
import type { ReflectiveRecord } from "../../Adapter.js"
import type * as Candidate from "../../Candidate.js"
import { AdapterContractError } from "../../Errors.js"
import { GepaEvent } from "../../Event.js"
import { stableStringify } from "../../Fingerprint.js"
import { ProposalResult } from "../../Proposal.js"
import type * as State from "../../State.js"
import type { Outcome } from "./evaluate.js"
import { type ChildEvidence, describeError, ended, type Proposed } from "./proposed.js"
import { reusesMinibatches } from "./resolved.js"
import { type Failures, noFailures, type Session } from "./session.js"

/** What a proposal reflects on: the parent's scores on the minibatch and the records per component. @internal */
export interface ParentEvaluation {
  readonly before: ReadonlyArray<number>
  readonly dataset: Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>>
  readonly spent: number
  readonly failures: Failures
  /** the records of the components the proposal does not reflect on, kept for a next one (`reuseMinibatch`) */
  readonly others: Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>> | undefined
}

/** Records that are JSON values, and so can be kept in the saved state. */
const isJson = (records: ReadonlyArray<ReflectiveRecord>): boolean => {
  try {
    return stableStringify(JSON.parse(JSON.stringify(records) ?? "null")) === stableStringify(records)
  } catch {
    return false
  }
}

/**
 * What a rejected proposal leaves for a next one to reflect on: the other
 * components' records that can be saved as they are (a resumed run reads
 * them back); `undefined` when none can.
 *
 * @internal
 */
export const reusableOf = (
  paidBy: number,
  scores: ReadonlyArray<number>,
  others: Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>> | undefined
): State.ReusedEvaluation | undefined => {
  const records = others === undefined ? undefined : jsonRecords(others)
  return records === undefined ? undefined : { paidBy, scores, records }
}

/** The components whose records can be saved as they are (JSON values); `undefined` when none can. */
const jsonRecords = (
  all: Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>>
): Record<string, ReadonlyArray<ReflectiveRecord>> | undefined => {
  const records = Object.fromEntries(Object.entries(all).filter(([, r]) => isJson(r)))
  return Object.keys(records).length === 0 ? undefined : records
}

/** The records of each of `components`, or the contract error naming the first the adapter gave no list for. */
const datasetOf = (
  components: ReadonlyArray<string>,
  recordsOf: (component: string) => ReadonlyArray<ReflectiveRecord> | undefined
): Effect.Effect<Record<string, ReadonlyArray<ReflectiveRecord>>, AdapterContractError> =>
  Effect.suspend(() => {
    const dataset: Record<string, ReadonlyArray<ReflectiveRecord>> = {}
    for (const component of components) {
      const records = recordsOf(component)
      if (records === undefined) {
        return Effect.fail(new AdapterContractError({ call: "makeReflectiveDataset", detail: `no record list for component "${component}"` }))
      }
      dataset[component] = records
    }
    return Effect.succeed(dataset)
  })

const knownReason = "all minibatch scores are perfect (known from earlier evaluations)"

/**
 * A parent already known to be perfect on every example of its minibatch,
 * from results the proposal may see (`plan.sees`): the proposal is skipped
 * without paying for the evaluation that would show it again. Synchronous,
 * and the same answer whenever it is asked, so the pipeline settles such a
 * proposal when it is launched (`pipeline.ts`), before any evidence is
 * asked for: `evaluateParent` never sees one.
 *
 * @internal
 */
export const knownPerfect = <D, T, O>(
  s: Session<D, T, O>,
  plan: Extract<State.PendingProposal, { readonly _tag: "Reflective" }>,
  parentCandidate: Candidate.Candidate
): Proposed | undefined => {
  if (!s.r.skipPerfect) return undefined
  const known = s.known(parentCandidate, plan.ids, plan.iteration, plan.sees)
  if (known === undefined || known.length === 0 || !known.every((x) => x !== undefined && x >= s.r.perfectScore)) return undefined
  return ended(ProposalResult.Skipped({ kind: "reflective", parents: [plan.parent], reason: knownReason }), 0, noFailures)
}

/** The event of a skip `knownPerfect` decided, by the proposal that would have paid for the evidence. @internal */
export const reportKnownPerfect = <D, T, O>(s: Session<D, T, O>, iteration: number, parent: number): Effect.Effect<void> =>
  s.emit("EvaluationSkipped", () => GepaEvent.EvaluationSkipped({ iteration, candidate: parent, reason: knownReason }))

/**
 * The parent's traced evaluation of the minibatch and the records built from
 * it; or the proposal's end (a minibatch shown perfect, every evaluation
 * failed, the records could not be built). A parent already known to be
 * perfect on it was settled at launch (`knownPerfect`). With `reuseMinibatch`, the
 * records of the other components are built in the same call, so that a
 * next proposal can reflect on this minibatch without paying for it again.
 *
 * @internal
 */
export const evaluateParent = <D, T, O>(
  s: Session<D, T, O>,
  plan: Extract<State.PendingProposal, { readonly _tag: "Reflective" }>,
  parentCandidate: Candidate.Candidate
): Effect.Effect<
  Either.Either<ParentEvaluation, Proposed>,
  AdapterContractError | Effect.Effect.Error<ReturnType<Session<D, T, O>["evaluate"]>>
> =>
  Effect.gen(function*() {
    const { iteration, parent, ids, components } = plan
    const kind = "reflective" as const
    const evaluated = yield* s.evaluate({
      iteration,
      purpose: "parent-minibatch",
      candidate: parentCandidate,
      ids,
      captureTraces: true,
      call: `evaluate(candidate ${parent}, minibatch, captureTraces)`,
      visibleUpTo: plan.sees
    })
    const { spent, failures } = evaluated
    const before = evaluated.outcomes.map((o) => o.score)
    const ok = evaluated.outcomes.filter((o) => o.error === undefined)
    if (ok.length === 0) {
      const error = evaluated.outcomes[0]?.error ?? "no example evaluated"
      const result = ProposalResult.Failed({ kind, parents: [parent], error: `every minibatch evaluation failed: ${error}`, allEvaluationsFailed: true })
      return Either.left(ended(result, spent, failures))
    }
    if (s.r.skipPerfect && before.every((x) => x >= s.r.perfectScore)) {
      yield* s.emit("EvaluationSkipped", () => GepaEvent.EvaluationSkipped({ iteration, candidate: parent, reason: "all minibatch scores are perfect" }))
      return Either.left(ended(ProposalResult.Skipped({ kind, parents: [parent], reason: "all minibatch scores are perfect" }), spent, failures))
    }
    const objectiveScores = ok.flatMap((o) => (o.objectiveScores === undefined ? [] : [o.objectiveScores]))
    const batch = {
      outputs: ok.map((o) => Option.getOrThrow(o.output)),
      scores: ok.map((o) => o.score),
      trajectories: ok.map((o) => Option.getOrThrow(o.trajectory)),
      // only when every example has them
      objectiveScores: objectiveScores.length === ok.length ? objectiveScores : undefined
    }
    const rest = reusesMinibatches(s.r) || plan.shares !== undefined
      ? Object.keys(parentCandidate).filter((c) => !components.includes(c))
      : []
    const built = yield* Effect.either(s.r.adapter.makeReflectiveDataset(parentCandidate, batch, [...components, ...rest]))
    if (Either.isLeft(built)) {
      return Either.left(
        ended(ProposalResult.Failed({ kind, parents: [parent], error: describeError(built.left), allEvaluationsFailed: false }), spent, failures)
      )
    }
    const failed = evaluated.outcomes.filter((o) => o.error !== undefined)
    const recordsOf = (component: string): ReadonlyArray<ReflectiveRecord> | undefined => {
      const records = built.right[component]
      if (!Array.isArray(records)) return undefined
      // failed examples still teach something: the reflection sees the error
      return failed.length === 0 ? records : [
        ...records,
        ...failed.map((f): ReflectiveRecord => ({
          "Example": f.id,
          "Feedback": `The system failed on this example before producing an output: ${f.error}`
        }))
      ]
    }
    const dataset = yield* datasetOf(components, recordsOf)
    let others: Record<string, ReadonlyArray<ReflectiveRecord>> | undefined
    for (const component of rest) {
      const records = recordsOf(component)
      if (records !== undefined) (others ??= {})[component] = records
    }
    return Either.right({ before, dataset, spent, failures, others })
  })

/**
 * The records in the order the `rewrite`-th rewrite of a component from the
 * same evidence reads them: rotated by `rewrite`, and reversed from the
 * `length`-th on, so that up to twice as many rewrites as records each get
 * an order of their own. A model that answers the same prompt the same way
 * (temperature 0, a cache, a seed) would otherwise write the same child
 * again, and one that samples is still shown the evidence from another side.
 *
 * @internal
 */
export const rotated = <A>(records: ReadonlyArray<A> | undefined, rewrite: number): ReadonlyArray<A> | undefined => {
  if (records === undefined || rewrite === 0 || records.length < 2) return records
  const n = records.length
  const base = Math.floor(rewrite / n) % 2 === 0 ? records : [...records].reverse()
  const k = rewrite % n
  return k === 0 ? base : [...base.slice(k), ...base.slice(0, k)]
}

/** The evidence proposals of a `"same_minibatch"` step share, or how each of them ends. @internal */
export type StepEvidence = Either.Either<ParentEvaluation, Proposed>

/**
 * The parent's traced evaluation of a minibatch shared by proposals of a
 * `"same_minibatch"` step, with the records of every component: run once
 * (the pipeline shares it between the proposals), always as the proposal
 * that pays for it (`shares`), whichever asks first, so that its events,
 * its cache entries and what it is charged do not depend on timing.
 *
 * @internal
 */
export const stepEvidence = <D, T, O>(
  s: Session<D, T, O>,
  plan: Extract<State.PendingProposal, { readonly _tag: "Reflective" }>,
  parentCandidate: Candidate.Candidate
) => evaluateParent(s, { ...plan, iteration: plan.shares ?? plan.iteration, components: [] }, parentCandidate)

/**
 * One proposal's view of the shared evidence: the records of its own
 * components, and the calls and failures only for the proposal charged
 * with them.
 *
 * @internal
 */
export const memberView = (
  plan: Extract<State.PendingProposal, { readonly _tag: "Reflective" }>,
  evidence: StepEvidence
): Effect.Effect<StepEvidence, AdapterContractError> => {
  const pays = plan.shares === undefined || plan.shares === plan.iteration
  if (Either.isLeft(evidence)) return Effect.succeed(pays ? evidence : Either.left(ended(evidence.left.result, 0, noFailures)))
  const paid = evidence.right
  const all = paid.others ?? {}
  const rewrite = plan.rewrite ?? 0
  return Effect.map(datasetOf(plan.components, (c) => rotated(all[c], rewrite)), (dataset) =>
    Either.right({
      before: paid.before,
      dataset,
      spent: pays ? paid.spent : 0,
      failures: pays ? paid.failures : noFailures,
      others: undefined
    }))
}

/**
 * What the step built on an accepted child reflects on (`Config.reuseChildMinibatch`):
 * the child's scores and records on the minibatch it was judged on, from its
 * traced evaluation there; `undefined` when they cannot serve (an example
 * failed, every example is perfect, the adapter gave no records or records
 * that are not JSON values: they are saved with the plan).
 *
 * @internal
 */
export const childEvidence = <D, T, O>(
  s: Session<D, T, O>,
  child: Candidate.Candidate,
  ids: ReadonlyArray<string>,
  outcomes: ReadonlyArray<Outcome<T, O>>,
  components: ReadonlyArray<string>
): Effect.Effect<ChildEvidence | undefined> =>
  Effect.gen(function*() {
    if (outcomes.some((o) => o.error !== undefined || Option.isNone(o.trajectory) || Option.isNone(o.output))) return undefined
    const scores = outcomes.map((o) => o.score)
    if (scores.every((x) => x >= s.r.perfectScore)) return undefined
    const batch = {
      outputs: outcomes.map((o) => Option.getOrThrow(o.output)),
      scores,
      trajectories: outcomes.map((o) => Option.getOrThrow(o.trajectory))
    }
    const built = yield* Effect.either(s.r.adapter.makeReflectiveDataset(child, batch, components))
    if (Either.isLeft(built)) return undefined
    const records = jsonRecords(built.right)
    if (records === undefined || components.some((c) => records[c] === undefined)) return undefined
    return { ids, scores, records }
  })
