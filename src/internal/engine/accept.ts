/**
 * Folding a finished proposal into the state: its spending, the validated
 * child (added to the candidate pool and the Pareto fronts), the trace line,
 * the counters, the merge schedule, and the events that describe it.
 *
 * Pure: takes the state and the proposal's result, returns the next state.
 * The loop is the only caller, and the only place that assigns the result.
 *
 * @internal
 */
import { Either } from "effect"
import type { MissingObjectiveScores } from "../../Errors.js"
import { GepaEvent } from "../../Event.js"
import * as Merge from "../../Merge.js"
import { ProposalResult } from "../../Proposal.js"
import * as State from "../../State.js"
import * as AppendOnly from "./appendOnly.js"
import * as Ledger from "./ledger.js"
import type { Outcome } from "./evaluate.js"
import { at, defined } from "../shared/invariant.js"
import { type Draft, draft } from "./draft.js"
import type { Finished } from "./propose.js"
import type { Resolved } from "./resolved.js"
import { valsetOf, type Wants } from "./session.js"

/** @internal */
export interface Folded<T, O> {
  readonly state: State.GepaState
  readonly events: ReadonlyArray<GepaEvent>
  /** the new candidate's index and its validation outcomes, when one was added */
  readonly added: { readonly index: number; readonly outcomes: ReadonlyArray<Outcome<T, O>> } | undefined
  /** the proposal failed (every evaluation, or the proposer itself) */
  readonly failed: { readonly error: string; readonly allEvaluationsFailed: boolean } | undefined
}

const sumOf = (xs: ReadonlyArray<number>) => {
  let t = 0
  for (const x of xs) t += x
  return t
}

// the proposal's reflection cost on its ProposalEnded event (none for a custom proposer)
const spentOn = (usage: Finished<unknown, unknown>["usage"]) => (usage.calls === 0 ? {} : { usage })

/**
 * Why a child validated on the budget's remainder is not added, or
 * `undefined` when it beats the best candidate on the same examples.
 */
const remainderVerdict = <T, O>(state: State.GepaState, outcomes: ReadonlyArray<Outcome<T, O>>): string | undefined => {
  const best = State.bestIndex(state)
  const theirs = at(state.valScores, best)
  let mine = 0
  let other = 0
  let n = 0
  for (const o of outcomes) {
    const s = theirs[o.id]
    if (s === undefined) continue
    mine += o.score
    other += s
    n++
  }
  if (n > 0 && mine > other) return undefined
  return `validated on ${outcomes.length} examples, what the budget had left: ` +
    (n === 0 ? `candidate ${best} was not scored on them` : `not above candidate ${best} on the same examples (${mine} vs ${other})`)
}

/** Removes a plan from the pending list (the head in plan order). */
const withoutPending = (state: State.GepaState, iteration: number): ReadonlyArray<State.PendingProposal> =>
  state.pending[0]?.iteration === iteration ? state.pending.slice(1) : state.pending.filter((p) => p.iteration !== iteration)

/**
 * The proposal's spending charged to the fold's draft: its reservation is
 * released (it leaves `pending`) and what it spent is added.
 */
const charge = <T, O>(next: Draft<State.GepaState>, f: Finished<T, O>): void => {
  const { usage } = f
  next.pending = withoutPending(next, f.plan.iteration)
  next.reflectionCalls += usage.calls
  if (usage.calls !== 0) {
    next.reflectionUsage = {
      inputTokens: next.reflectionUsage.inputTokens + usage.inputTokens,
      outputTokens: next.reflectionUsage.outputTokens + usage.outputTokens,
      cost: next.reflectionUsage.cost + usage.cost
    }
  }
  Ledger.spendOn(next, f.spent)
}

/** The reason the trace gives for what happened to a reflective proposal in flight (not chosen, rebased, superseded). */
const inFlightReason = <T, O>(f: Finished<T, O>): { readonly reason?: string } => {
  const plan = f.plan
  return plan._tag !== "Reflective"
    ? {}
    : f.unselected !== undefined
    ? { reason: f.unselected }
    : f.reason !== undefined
    ? { reason: f.reason }
    : f.rebasedOnto !== undefined
    ? { reason: `rebased on candidate ${f.rebasedOnto}, which superseded candidate ${plan.parent} while the proposal was in flight` }
    : f.supersededBy !== undefined
    ? { reason: `superseded: candidate ${f.supersededBy} improved the same text of candidate ${plan.parent} while the proposal was in flight` }
    : {}
}

/**
 * What one outcome adds to the folded state (before the iteration's closing
 * counters and events): the fold's draft, or a fresh state made from it.
 */
interface Step<T, O> {
  readonly next: Draft<State.GepaState>
  readonly added?: Folded<T, O>["added"]
  readonly failed?: Folded<T, O>["failed"]
}

/** The events of a fold: each built only when someone wants its tag. */
interface Events {
  readonly wants: Wants
  readonly list: Array<GepaEvent>
}

type TraceEntry = {
  readonly iteration: number
  readonly kind: ProposalResult["kind"]
  readonly parents: ReadonlyArray<number>
  readonly reason?: string
}

/**
 * A trace line: the entry's fields, then the outcome's, in that order (a
 * field of both keeps the entry's place and takes the outcome's value).
 * Not `{ ...entry, outcome, ... }`: V8 gives each field added after a
 * leading spread a shape of its own, about 0.3 KB a field on every fold.
 */
const line = (entry: TraceEntry, outcome: Omit<State.TraceEntry, "iteration" | "kind" | "parents">): State.TraceEntry =>
  entry.reason === undefined
    ? { iteration: entry.iteration, kind: entry.kind, parents: entry.parents, ...outcome }
    : { iteration: entry.iteration, kind: entry.kind, parents: entry.parents, reason: entry.reason, ...outcome }

/** An accepted child joins the pool and the fronts; the merge schedule moves on. */
const foldAccepted = <D, T, O>(
  r: Resolved<D, T, O>,
  next: State.GepaState,
  f: Finished<T, O>,
  result: Extract<ProposalResult, { _tag: "Accepted" }>,
  entry: TraceEntry,
  events: Events,
  owner: AppendOnly.Owner | undefined
): Either.Either<Step<T, O>, MissingObjectiveScores> => {
  const iteration = entry.iteration
  const discoveryBudget = next.metricCalls
  const validation = defined(f.validation, "the validation of an accepted proposal")
  const charged = Ledger.spend(next, validation.spent)
  const addedState = State.addCandidate(charged, {
    candidate: result.candidate,
    parents: result.parents,
    valset: valsetOf(validation.outcomes),
    discoveryBudget,
    append: AppendOnly.appender(owner),
    sources: f.plan._tag === "Merge" ? f.plan.sources : undefined
  })
  if (Either.isLeft(addedState)) return Either.left(addedState.left)
  const [withChild, index] = addedState.right
  const isMerge = result.kind === "merge"
  const folded: Draft<State.GepaState> = {
    ...withChild,
    acceptedProposals: withChild.acceptedProposals + (isMerge ? 0 : 1),
    merge: r.merge === undefined
      ? withChild.merge
      : isMerge
      ? { ...withChild.merge, accepted: withChild.merge.accepted + 1 }
      : Merge.schedule(withChild.merge, r.merge.maxInvocations),
    trace: AppendOnly.append(
      owner,
      withChild.trace,
      line(entry, {
        outcome: "accepted",
        candidate: index,
        ...(isMerge ? {} : { components: result.components }),
        subsampleIds: result.subsampleIds,
        scoresBefore: result.scoresBefore,
        scoresAfter: result.scoresAfter,
        metricCalls: withChild.metricCalls
      })
    )
  }
  const { list, wants } = events
  if (wants("ValsetEvaluated")) {
    list.push(GepaEvent.ValsetEvaluated({ iteration, candidate: index, score: folded.valAverages[index]!, coverage: folded.valCoverage[index]! }))
  }
  if (wants("ParetoFrontUpdated")) {
    // front lists are ascending and the child is the newest program: on a
    // front exactly when it is its last member (no search of long fronts)
    let joined = 0
    const fronts = folded.fronts.instance.programs
    for (const key in fronts) {
      const members = fronts[key]!
      if (members[members.length - 1] === index) joined++
    }
    list.push(GepaEvent.ParetoFrontUpdated({ iteration, candidate: index, frontsJoined: joined }))
  }
  if (isMerge && wants("MergeAccepted")) list.push(GepaEvent.MergeAccepted({ iteration, candidate: index, parents: result.parents }))
  if (wants("CandidateAccepted")) {
    list.push(GepaEvent.CandidateAccepted({
      iteration,
      candidate: index,
      parents: result.parents,
      score: folded.valAverages[index]!,
      components: result.candidate
    }))
  }
  if (!isMerge && wants("ProposalEnded")) {
    list.push(GepaEvent.ProposalEnded({ iteration, parent: f.result.parents[0]!, outcome: "accepted", ...spentOn(f.usage) }))
  }
  return Either.right({ next: folded, added: { index, outcomes: validation.outcomes } })
}

/** A rejected child: counted and traced on the fold's draft. */
const foldRejected = <T, O>(
  next: Draft<State.GepaState>,
  f: Finished<T, O>,
  result: Extract<ProposalResult, { _tag: "Rejected" }>,
  entry: TraceEntry,
  rebased: { readonly reason?: string },
  events: Events,
  owner: AppendOnly.Owner | undefined
): Step<T, O> => {
  const iteration = entry.iteration
  const isMerge = result.kind === "merge"
  const reason = isMerge
    ? `merged subsample score ${sumOf(result.scoresAfter)} is below both parents (${result.scoresBefore[0]}, ${result.scoresBefore[1]})`
    : undefined
  next.rejectedProposals += isMerge ? 0 : 1
  next.trace = AppendOnly.append(
    owner,
    next.trace,
    line(entry, {
      outcome: "rejected",
      ...(isMerge ? { reason } : { components: result.components }),
      ...rebased,
      subsampleIds: result.subsampleIds,
      scoresBefore: result.scoresBefore,
      scoresAfter: result.scoresAfter,
      metricCalls: next.metricCalls
    })
  )
  const { list, wants } = events
  if (isMerge) {
    if (wants("MergeRejected")) list.push(GepaEvent.MergeRejected({ iteration, parents: result.parents, reason: reason! }))
  } else {
    if (wants("CandidateRejected")) {
      list.push(GepaEvent.CandidateRejected({ iteration, parents: result.parents, before: sumOf(result.scoresBefore), after: sumOf(result.scoresAfter) }))
    }
    if (wants("ProposalEnded")) list.push(GepaEvent.ProposalEnded({ iteration, parent: f.result.parents[0]!, outcome: "rejected", ...spentOn(f.usage) }))
  }
  return { next }
}

/**
 * What the next proposal may reflect on again (`reuseMinibatch`): the
 * minibatch of a reflective proposal rejected on it, with the components
 * tried on it so far, while some component is left to try.
 */
const reuseAfter = <T, O>(state: State.GepaState, f: Finished<T, O>): State.MinibatchReuse | undefined => {
  const plan = f.plan
  // (only a run that reuses minibatches plans `reuses` and leaves `reusable`)
  if (plan._tag !== "Reflective" || f.result._tag !== "Rejected") return undefined
  // a proposal that reflected on a kept minibatch again passes on what is left of it
  const before = state.minibatchReuse
  const again = plan.reuses !== undefined && before !== undefined && before.paidBy === plan.reuses.paidBy ? before : undefined
  const kept = again ?? f.reusable
  if (kept === undefined) return undefined
  const tried = [...(again?.tried ?? []), ...plan.components]
  const records = Object.fromEntries(Object.entries(kept.records).filter(([c]) => !tried.includes(c)))
  if (Object.keys(records).length === 0) return undefined
  return { paidBy: kept.paidBy, scores: kept.scores, records, parent: plan.parent, ids: plan.ids, tried }
}

/** @internal */
export const fold = <D, T, O>(
  r: Resolved<D, T, O>,
  state: State.GepaState,
  f: Finished<T, O>,
  /** the events someone receives: only those are built */
  wants: Wants,
  /** the run's owner of the state's arrays: appended in place when it made them (see internal/engine/appendOnly.ts) */
  owner?: AppendOnly.Owner | undefined
): Either.Either<Folded<T, O>, MissingObjectiveScores> => {
  const { plan, usage } = f
  const iteration = plan.iteration
  const parent = at(f.result.parents, 0)
  const events: Array<GepaEvent> = []
  const listen: Events = { wants, list: events }
  // the state the fold fills in (one copy per fold: see internal/engine/draft.ts)
  const next = draft(state)
  charge(next, f)
  let rebased = inFlightReason(f)
  // a child validated on a sample sized to the budget's remainder joins only
  // if it beats the best candidate on the same examples: its mean over a
  // sample is not comparable with means over the whole set
  let result = f.result
  if (result._tag === "Accepted" && plan._tag === "Reflective" && plan.remainder === true && f.validation !== undefined) {
    const verdict = remainderVerdict(state, f.validation.outcomes)
    if (verdict !== undefined) {
      Ledger.spendOn(next, f.validation.spent)
      result = ProposalResult.Rejected(result)
      rebased = { reason: verdict }
    }
  }
  const entry = { iteration, kind: result.kind, parents: result.parents, ...rebased }
  let step: Step<T, O>
  switch (result._tag) {
    case "Accepted": {
      const accepted = foldAccepted(r, next, f, result, entry, listen, owner)
      if (Either.isLeft(accepted)) return Either.left(accepted.left)
      step = accepted.right
      break
    }
    case "Rejected": {
      step = foldRejected(next, f, result, entry, rebased, listen, owner)
      break
    }
    case "Skipped": {
      // the minibatch is kept so that `freeSkips` counts minibatches, not
      // proposals: the proposals of a round share one
      next.trace = AppendOnly.append(
        owner,
        next.trace,
        line(entry, { outcome: "skipped", reason: result.reason, subsampleIds: plan.ids, metricCalls: next.metricCalls })
      )
      step = { next }
      if (wants("ProposalEnded")) events.push(GepaEvent.ProposalEnded({ iteration, parent, outcome: "skipped", reason: result.reason, ...spentOn(usage) }))
      break
    }
    case "Failed": {
      next.trace = AppendOnly.append(owner, next.trace, line(entry, { outcome: "failed", reason: result.error, metricCalls: next.metricCalls }))
      step = { next, failed: { error: result.error, allEvaluationsFailed: result.allEvaluationsFailed } }
      if (wants("Error")) events.push(GepaEvent.Error({ iteration, message: result.error, willContinue: true }))
      if (wants("ProposalEnded")) events.push(GepaEvent.ProposalEnded({ iteration, parent, outcome: "failed", reason: result.error, ...spentOn(usage) }))
      break
    }
  }

  // a proposal whose every evaluation failed counts as failed even if it was judged
  const allFailed = f.failures.evaluated > 0 && f.failures.failed === f.failures.evaluated
  const failed = step.failed ?? (allFailed ? { error: f.failures.lastError ?? "unknown", allEvaluationsFailed: true } : undefined)
  const added = step.added
  // (`state` is untouched: the draft, or the accepted child's state, is the fold's own)
  const folded = step.next
  folded.consecutiveFailedIterations = failed === undefined ? 0 : folded.consecutiveFailedIterations + 1
  folded.minibatchReuse = reuseAfter(state, f)
  if (wants("BudgetUpdated")) events.push(GepaEvent.BudgetUpdated({ metricCalls: folded.metricCalls, budget: r.budget }))
  if (wants("IterationEnded")) events.push(GepaEvent.IterationEnded({ iteration, accepted: added === undefined ? 0 : 1, state: folded }))
  return Either.right({ state: folded, events, added, failed })
}
