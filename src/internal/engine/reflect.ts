/**
 * The reflective proposer: evaluate the parent on its minibatch with traces,
 * build the reflective dataset, ask for new texts (the reflection model, a
 * custom proposer, or the adapter's own `proposeNewTexts`), evaluate the
 * child on the same minibatch and judge it. It owns these steps and returns
 * a `ProposalResult` with what it spent; it never touches the run's state.
 *
 * @internal
 */
import { Effect, Either, Option } from "effect"
import type { ReflectiveDataset, ReflectiveRecord } from "../../Adapter.js"
import * as Candidate from "../../Candidate.js"
import { AdapterContractError, type ModelUnrecoverable, ReflectionUnusable } from "../../Errors.js"
import { GepaEvent } from "../../Event.js"
import { stableStringify } from "../../Fingerprint.js"
import { ProposalResult } from "../../Proposal.js"
import * as Reflection from "../../Reflection.js"
import * as Secrets from "../../Secrets.js"
import type * as State from "../../State.js"
import { nameOf } from "../../Telemetry.js"
import { at, defined } from "../invariant.js"
import * as Ledger from "../ledger.js"
import * as Spans from "../spans.js"
import * as Early from "./early.js"
import { reusesMinibatches } from "./resolve.js"
import { addFailures, type Failures, noFailures, type Session } from "./session.js"

/** Reflection-model usage of one proposal. @internal */
export interface Usage {
  readonly calls: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cost: number
}

/** @internal */
export const noUsage: Usage = { calls: 0, inputTokens: 0, outputTokens: 0, cost: 0 }

/** What a proposer hands back to the loop. @internal */
export interface Proposed {
  readonly result: ProposalResult
  /** metric calls spent on minibatches or the merge subsample */
  readonly spent: number
  readonly failures: Failures
  readonly usage: Usage
  /** why a child was rejected, when its scores alone do not say it */
  readonly reason?: string | undefined
  /**
   * for a rejected proposal that paid for its parent's evaluation: the
   * scores and the other components' records, for a next proposal that
   * reflects on the same minibatch (`reuseMinibatch`)
   */
  readonly reusable?: State.ReusedEvaluation | undefined
}

// the first `max` characters, without cutting a "[redacted]" in two
const startOf = (text: string, max: number): string => {
  if (text.length <= max) return text
  const open = text.lastIndexOf("[redacted]", max)
  const cut = open >= 0 && open + 10 > max ? open + 10 : max
  return cut >= text.length ? text : `${text.slice(0, cut)}…`
}

// a proposer's error may quote a key: scrubbed like every text of the run
const describeError = (e: unknown): string => Secrets.scrub(e instanceof Error ? e.message : String(e))

/** The new texts of a proposal's components, with what reflection skipped or could not use and what it cost. */
interface NewTexts {
  readonly texts: Readonly<Record<string, string>>
  readonly skipped: ReadonlyArray<string>
  readonly unusable: ReadonlyArray<string>
  readonly usage: Usage
}

// components with a proposer of their own are changed by it; the rest by
// reflection (or the custom proposer). A value failing its component's
// schema rejects the proposal with a `ComponentRejected` event.
const proposeTexts = <D, T, O>(
  s: Session<D, T, O>,
  parent: Candidate.Candidate,
  dataset: ReflectiveDataset,
  components: ReadonlyArray<string>,
  at: { readonly iteration: number; readonly parent: number }
): Effect.Effect<Either.Either<NewTexts, string>, ModelUnrecoverable | ReflectionUnusable> =>
  Effect.gen(function*() {
    const own = s.r.componentProposers
    const mine = components.filter((c) => own[c] !== undefined)
    const rest = mine.length === 0 ? components : components.filter((c) => own[c] === undefined)
    const texts: Record<string, string> = {}
    for (const component of mine) {
      const propose = own[component]
      if (propose === undefined) continue
      const result = yield* Effect.either(propose({ parent, component, records: dataset[component] ?? [], iteration: at.iteration }))
      if (Either.isLeft(result)) {
        const e = result.left
        if (e._tag === "ComponentValueRejected") {
          yield* s.emit("ComponentRejected", () => GepaEvent.ComponentRejected({ ...at, component, reason: Secrets.scrub(e.reason) }))
        }
        return Either.left(describeError(e))
      }
      texts[component] = result.right
    }
    if (rest.length === 0) return Either.right({ texts, skipped: [], unusable: [], usage: noUsage })
    const others = yield* reflectTexts(s, parent, dataset, rest)
    return Either.map(others, (o) => ({ ...o, texts: { ...texts, ...o.texts } }))
  })

const reflectTexts = <D, T, O>(
  s: Session<D, T, O>,
  parent: Candidate.Candidate,
  dataset: ReflectiveDataset,
  components: ReadonlyArray<string>
): Effect.Effect<Either.Either<NewTexts, string>, ModelUnrecoverable | ReflectionUnusable> =>
  Effect.gen(function*() {
    if (s.r.proposer !== undefined) {
      const texts = yield* s.r.proposer(parent, dataset, components).pipe(Effect.mapError(describeError), Effect.either)
      return Either.map(texts, (t) => ({ texts: t, skipped: [], unusable: [], usage: noUsage }))
    }
    // a reflection model that can never succeed stops the run at once;
    // other model failures fail this proposal only
    // the run's settings require a reflection model when there is no proposer
    const model = defined(s.r.reflectionModel, "the reflection model")
    const proposals = yield* Reflection.proposeAll(model, parent, dataset, components, s.r.reflection).pipe(
      Effect.map(Either.right),
      Effect.catchAll((e) => e._tag === "ModelUnrecoverable" ? Effect.fail(e) : Effect.succeed(Either.left(describeError(e))))
    )
    if (Either.isLeft(proposals)) return Either.left(proposals.left)
    const texts: Record<string, string> = {}
    const skipped: Array<string> = []
    const unusable: Array<string> = []
    let usage = noUsage
    for (const p of proposals.right) {
      const completion = p.completion
      if (completion !== undefined) {
        usage = {
          calls: usage.calls + 1,
          inputTokens: usage.inputTokens + (completion.usage?.inputTokens ?? 0),
          outputTokens: usage.outputTokens + (completion.usage?.outputTokens ?? 0),
          cost: usage.cost + (completion.cost ?? 0)
        }
      }
      if (p._tag === "Proposed") texts[p.component] = p.text
      else if (p._tag === "Unusable") unusable.push(`${p.component}: ${p.reason}`)
      else skipped.push(`${p.component}: ${p.reason}`)
      // a model that never answers usably stops the run with one line,
      // rather than failing proposal after proposal (the tally spans them)
      if (p._tag === "Proposed") s.r.unusable.streak = 0
      else if (p._tag === "Unusable" && ++s.r.unusable.streak >= s.r.maxUnusableAnswers) {
        const answers = s.r.unusable.streak
        s.r.unusable.streak = 0
        const start = Secrets.scrub(p.completion.text).replace(/\s+/g, " ").trim()
        return yield* Effect.fail(
          new ReflectionUnusable({
            model: nameOf(model) ?? p.completion.model ?? "unnamed",
            component: p.component,
            answers,
            reason: p.reason,
            start: startOf(start, 80)
          })
        )
      }
    }
    return Either.right({ texts, skipped, unusable, usage })
  }).pipe(Spans.withSpan("gepa.reflect", { captureStackTrace: false }))

/** What a proposal reflects on: the parent's scores on the minibatch and the records per component. */
interface ParentEvaluation {
  readonly before: ReadonlyArray<number>
  readonly dataset: Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>>
  readonly spent: number
  readonly failures: Failures
  /** the records of the components the proposal does not reflect on, kept for a next one (`reuseMinibatch`) */
  readonly others: Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>> | undefined
}

const ended = (result: ProposalResult, spent: number, failures: Failures): Proposed => ({ result, spent, failures, usage: noUsage })

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
 */
const reusableOf = (
  paidBy: number,
  scores: ReadonlyArray<number>,
  others: Readonly<Record<string, ReadonlyArray<ReflectiveRecord>>> | undefined
): State.ReusedEvaluation | undefined => {
  if (others === undefined) return undefined
  const records = Object.fromEntries(Object.entries(others).filter(([, r]) => isJson(r)))
  return Object.keys(records).length === 0 ? undefined : { paidBy, scores, records }
}

/**
 * The parent's traced evaluation of the minibatch and the records built from
 * it; or the proposal's end (a known-perfect minibatch, every evaluation
 * failed, the records could not be built). With `reuseMinibatch`, the
 * records of the other components are built in the same call, so that a
 * next proposal can reflect on this minibatch without paying for it again.
 */
const evaluateParent = <D, T, O>(
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
    // a parent already known to be perfect on every example of the minibatch
    // is skipped without paying for the evaluation that would show it again
    if (s.r.skipPerfect) {
      const known = s.known(parentCandidate, ids, iteration, plan.sees)
      if (known !== undefined && known.length > 0 && known.every((x) => x !== undefined && x >= s.r.perfectScore)) {
        const reason = "all minibatch scores are perfect (known from earlier evaluations)"
        yield* s.emit("EvaluationSkipped", () => GepaEvent.EvaluationSkipped({ iteration, candidate: parent, reason }))
        return Either.left(ended(ProposalResult.Skipped({ kind, parents: [parent], reason }), 0, noFailures))
      }
    }
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
    const rest = reusesMinibatches(s.r) ? Object.keys(parentCandidate).filter((c) => !components.includes(c)) : []
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
    const dataset: Record<string, ReadonlyArray<ReflectiveRecord>> = {}
    for (const component of components) {
      const records = recordsOf(component)
      if (records === undefined) {
        return yield* Effect.fail(new AdapterContractError({ call: "makeReflectiveDataset", detail: `no record list for component "${component}"` }))
      }
      dataset[component] = records
    }
    let others: Record<string, ReadonlyArray<ReflectiveRecord>> | undefined
    for (const component of rest) {
      const records = recordsOf(component)
      if (records !== undefined) (others ??= {})[component] = records
    }
    return Either.right({ before, dataset, spent, failures, others })
  })

/**
 * Runs a planned reflective proposal on `parent` (the parent's texts as
 * they were when it was planned; candidates never change once added).
 *
 * @internal
 */
export const reflect = <D, T, O>(
  s: Session<D, T, O>,
  plan: Extract<State.PendingProposal, { readonly _tag: "Reflective" }>,
  parentCandidate: Candidate.Candidate
): Effect.Effect<
  Proposed,
  AdapterContractError | ModelUnrecoverable | ReflectionUnusable | Effect.Effect.Error<ReturnType<Session<D, T, O>["evaluate"]>>
> =>
  Effect.gen(function*() {
    const { iteration, parent, ids, components } = plan
    const kind = "reflective" as const
    const reused = plan.reuses
    // a minibatch reflected on again (`reuseMinibatch`): the parent's scores
    // and records are the ones an earlier proposal paid for
    const parentEval = reused === undefined
      ? yield* evaluateParent(s, plan, parentCandidate)
      : Either.right<ParentEvaluation>({ before: reused.scores, dataset: reused.records, spent: 0, failures: noFailures, others: undefined })
    if (Either.isLeft(parentEval)) return parentEval.left
    const paid = parentEval.right
    const { before, dataset } = paid
    const done = (result: ProposalResult, spent: number, failures: Failures, usage: Usage = noUsage, reason?: string): Proposed => {
      // a rejected proposal leaves its evidence for the next component
      const reusable = result._tag === "Rejected" ? reusableOf(iteration, before, paid.others) : undefined
      return {
        ...ended(result, spent, failures),
        usage,
        ...(reason === undefined ? {} : { reason }),
        ...(reusable === undefined ? {} : { reusable })
      }
    }
    yield* s.emit("ReflectiveDatasetBuilt", () =>
      GepaEvent.ReflectiveDatasetBuilt({
        iteration,
        components,
        records: components.reduce((n, c) => n + (dataset[c]?.length ?? 0), 0),
        // the feedback the reflection model reads (the live dashboard shows it)
        dataset
      }))
    const proposed = yield* proposeTexts(s, parentCandidate, dataset, components, { iteration, parent })
    if (Either.isLeft(proposed)) {
      return done(
        ProposalResult.Failed({ kind, parents: [parent], error: proposed.left, allEvaluationsFailed: false }),
        paid.spent,
        paid.failures
      )
    }
    const { texts, skipped, unusable, usage } = proposed.right
    const unknown = Object.keys(texts).find((k) => !(k in parentCandidate))
    if (unknown !== undefined) {
      return yield* Effect.fail(new AdapterContractError({ call: "proposeNewTexts", detail: `returned text for unknown component "${unknown}"` }))
    }
    const child = { ...parentCandidate, ...texts }
    if (Candidate.equals(child, parentCandidate) && unusable.length > 0) {
      // an answer that cannot be adopted is a failed proposal, not a skip
      const error = `no usable answer from the reflection model (${unusable.join("; ")})`
      return done(ProposalResult.Failed({ kind, parents: [parent], error, allEvaluationsFailed: false }), paid.spent, paid.failures, usage)
    }
    if (Candidate.equals(child, parentCandidate)) {
      const reason = skipped.length > 0 ? `no new text adopted (${skipped.join("; ")})` : "the proposal did not change any component"
      return done(ProposalResult.Skipped({ kind, parents: [parent], reason }), paid.spent, paid.failures, usage)
    }
    const evaluateChild = (on: ReadonlyArray<string>) =>
      s.evaluate({
        iteration,
        purpose: "child-minibatch",
        candidate: child,
        ids: on,
        captureTraces: false,
        call: `evaluate(child of candidate ${parent}, minibatch)`,
        visibleUpTo: plan.sees
      })
    const fields = {
      kind,
      candidate: child,
      parents: [parent],
      components: Candidate.changedComponents(parentCandidate, child),
      subsampleIds: ids,
      scoresBefore: before
    }
    // Early rejection: the examples the parent already solved perfectly can
    // add at most the perfect score each, so the child is first evaluated on
    // the others; when even perfect scores on the rest could not beat the
    // parent, the judgment is already made and the rest is not paid for.
    const split = Early.split(s.r, ids, before)
    if (split !== undefined) {
      const first = split.open.length === 0 ? undefined : yield* evaluateChild(split.open)
      const partial = first?.outcomes.map((o) => o.score) ?? []
      if (Early.hopeless(s.r, before, partial, split)) {
        return done(
          ProposalResult.Rejected({
            ...fields,
            subsampleIds: split.open,
            scoresBefore: split.open.map((id) => at(before, ids.indexOf(id))),
            scoresAfter: partial
          }),
          Ledger.sum([paid.spent, first?.spent ?? 0]),
          first === undefined ? paid.failures : addFailures(paid.failures, first.failures),
          usage,
          `rejected after ${split.open.length} of ${ids.length} minibatch examples: perfect scores on the other ${split.solved.length} could not beat the parent`
        )
      }
      const rest = yield* evaluateChild(split.solved)
      const after = Early.combine(ids, split, partial, rest.outcomes.map((o) => o.score))
      const failed = addFailures(paid.failures, first === undefined ? rest.failures : addFailures(first.failures, rest.failures))
      return done(
        s.r.accept(before, after) ? ProposalResult.Accepted({ ...fields, scoresAfter: after }) : ProposalResult.Rejected({ ...fields, scoresAfter: after }),
        Ledger.sum([paid.spent, first?.spent ?? 0, rest.spent]),
        failed,
        usage
      )
    }
    const childEval = yield* evaluateChild(ids)
    const after = childEval.outcomes.map((o) => o.score)
    return done(
      s.r.accept(before, after) ? ProposalResult.Accepted({ ...fields, scoresAfter: after }) : ProposalResult.Rejected({ ...fields, scoresAfter: after }),
      Ledger.sum([paid.spent, childEval.spent]),
      addFailures(paid.failures, childEval.failures),
      usage
    )
  }).pipe(
    // opened under any tracer, the built-in one too: optimize-anything's
    // adapter reads the proposal's iteration and parent from it
    Effect.withSpan("gepa.propose", { attributes: { iteration: plan.iteration, parent: plan.parent }, captureStackTrace: false })
  )
