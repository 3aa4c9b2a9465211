/**
 * The reflective proposer: evaluate the parent on its minibatch with traces
 * and build the reflective dataset (or read the evidence another proposal
 * paid for: `evidence.ts`), ask for new texts (the reflection model, a
 * custom proposer, or the adapter's own `proposeNewTexts`), evaluate the
 * child on the same minibatch and judge it. It owns these steps and returns
 * a `ProposalResult` with what it spent; it never touches the run's state.
 *
 * @internal
 */
import { Effect, Either } from "effect"
import type { ReflectiveDataset } from "../../Adapter.js"
import * as Candidate from "../../Candidate.js"
import { AdapterContractError, type ModelUnrecoverable, ReflectionUnusable } from "../../Errors.js"
import { GepaEvent } from "../../Event.js"
import { ProposalResult } from "../../Proposal.js"
import * as Reflection from "../../Reflection.js"
import * as Secrets from "../../Secrets.js"
import type * as State from "../../State.js"
import { nameOf } from "../../Telemetry.js"
import { at, defined } from "../shared/invariant.js"
import * as Ledger from "./ledger.js"
import { currentProposal } from "./currentProposal.js"
import * as Early from "./early.js"
import type { Outcome } from "./evaluate.js"
import { childEvidence, evaluateParent, memberView, type ParentEvaluation, reusableOf, type StepEvidence } from "./evidence.js"
import { describeError, noUsage, type Proposed, type Usage } from "./proposed.js"
import { addFailures, type Failures, noFailures, type Session } from "./session.js"

// the first `max` characters, without cutting a "[redacted]" in two
const startOf = (text: string, max: number): string => {
  if (text.length <= max) return text
  const open = text.lastIndexOf("[redacted]", max)
  const cut = open >= 0 && open + 10 > max ? open + 10 : max
  return cut >= text.length ? text : `${text.slice(0, cut)}…`
}

/** The new texts of a proposal's components, with what reflection skipped or could not use and what it cost. */
interface NewTexts {
  readonly texts: Readonly<Record<string, string>>
  readonly skipped: ReadonlyArray<string>
  readonly unusable: ReadonlyArray<string>
  readonly usage: Usage
}

// components with a proposer of their own are changed by it; the rest by
// reflection (or the custom proposer). A value failing its component's
// schema, whoever wrote it, rejects the proposal with a `ComponentRejected`
// event.
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
    if (Either.isLeft(others)) return others
    // a typed run reads what the model (or a custom proposer) wrote through
    // the component's schema: a value it rejects never reaches the adapter
    const read = s.r.readComponent
    const written: Record<string, string> = {}
    for (const [component, text] of Object.entries(others.right.texts)) {
      const stored = read === undefined ? Either.right(text) : read(component, text)
      if (Either.isLeft(stored)) {
        const reason = Secrets.scrub(stored.left)
        yield* s.emit("ComponentRejected", () => GepaEvent.ComponentRejected({ ...at, component, reason }))
        return Either.left(`component "${component}": ${reason}`)
      }
      written[component] = stored.right
    }
    return Either.right({ ...others.right, texts: { ...texts, ...written } })
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
  }).pipe(s.span("gepa.reflect", { captureStackTrace: false }))

/**
 * Runs a planned reflective proposal on `parent` (the parent's texts as
 * they were when it was planned; candidates never change once added).
 * `shared`: the evidence it shares, for a proposal of a `"same_minibatch"`
 * step (see `stepEvidence`).
 *
 * @internal
 */
export const reflect = <D, T, O>(
  s: Session<D, T, O>,
  plan: Extract<State.PendingProposal, { readonly _tag: "Reflective" }>,
  parentCandidate: Candidate.Candidate,
  shared?: Effect.Effect<StepEvidence, AdapterContractError | Effect.Effect.Error<ReturnType<Session<D, T, O>["evaluate"]>>>
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
    const parentEval = reused !== undefined
      ? Either.right<ParentEvaluation>({ before: reused.scores, dataset: reused.records, spent: 0, failures: noFailures, others: undefined })
      : shared !== undefined
      ? yield* Effect.flatMap(shared, (evidence) => memberView(plan, evidence))
      : yield* evaluateParent(s, plan, parentCandidate)
    if (Either.isLeft(parentEval)) return parentEval.left
    const paid = parentEval.right
    const { before, dataset } = paid
    const done = (result: ProposalResult, spent: number, failures: Failures, usage: Usage = noUsage, reason?: string): Proposed => {
      // a rejected proposal leaves its evidence for the next component
      const reusable = result._tag === "Rejected" ? reusableOf(iteration, before, paid.others) : undefined
      // (no leading spread: V8 gives each field added after one a shape of its own)
      return {
        result,
        spent,
        failures,
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
        // (the step built on an accepted child reflects on its traced results: `reuseChildMinibatch`)
        captureTraces: s.r.reuseChildMinibatch,
        call: `evaluate(child of candidate ${parent}, minibatch)`,
        visibleUpTo: plan.sees
      })
    const changed = Candidate.changedComponents(parentCandidate, child)
    // the child's judgment, field by field (see `done`)
    const judged = (subsampleIds: ReadonlyArray<string>, scoresBefore: ReadonlyArray<number>, scoresAfter: ReadonlyArray<number>) => ({
      kind,
      candidate: child,
      parents: [parent],
      components: changed,
      subsampleIds,
      scoresBefore,
      scoresAfter
    })
    // the child judged on the whole minibatch; an accepted one the next step may build on
    // (`Config.buildOnChild`) carries its evaluation, which that step reflects on
    const judge = (
      after: ReadonlyArray<number>,
      // (in minibatch order; asked for only when the child's evaluation is carried)
      outcomes: () => ReadonlyArray<Outcome<T, O>>,
      spent: number,
      failures: Failures
    ): Effect.Effect<Proposed> => {
      const accepted = s.r.accept(before, after)
      const result = done(
        accepted ? ProposalResult.Accepted(judged(ids, before, after)) : ProposalResult.Rejected(judged(ids, before, after)),
        spent,
        failures,
        usage
      )
      // a child judged on a minibatch that served its parent's step already: the next step draws a new one
      if (!accepted || !s.r.reuseChildMinibatch || plan.reuses !== undefined) return Effect.succeed(result)
      return Effect.map(
        childEvidence(s, child, ids, outcomes(), components),
        (childEvidence) => childEvidence === undefined ? result : { ...result, childEvidence }
      )
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
          ProposalResult.Rejected(judged(split.open, split.open.map((id) => at(before, ids.indexOf(id))), partial)),
          Ledger.sum([paid.spent, first?.spent ?? 0]),
          first === undefined ? paid.failures : addFailures(paid.failures, first.failures),
          usage,
          Early.rejectionReason(split)
        )
      }
      const rest = yield* evaluateChild(split.solved)
      const after = Early.combine(ids, split, partial, rest.outcomes.map((o) => o.score))
      const failed = addFailures(paid.failures, first === undefined ? rest.failures : addFailures(first.failures, rest.failures))
      return yield* judge(
        after,
        () => {
          const byId = new Map([...(first?.outcomes ?? []), ...rest.outcomes].map((o) => [o.id, o] as const))
          return ids.map((id) => defined(byId.get(id), "a minibatch example's outcome"))
        },
        Ledger.sum([paid.spent, first?.spent ?? 0, rest.spent]),
        failed
      )
    }
    const childEval = yield* evaluateChild(ids)
    return yield* judge(
      childEval.outcomes.map((o) => o.score),
      () => childEval.outcomes,
      Ledger.sum([paid.spent, childEval.spent]),
      addFailures(paid.failures, childEval.failures)
    )
  }).pipe(
    (self) => s.r.readsProposal ? Effect.locally(self, currentProposal, { iteration: plan.iteration, parent: plan.parent }) : self,
    s.span("gepa.propose", { attributes: { iteration: plan.iteration, parent: plan.parent }, captureStackTrace: false })
  )
