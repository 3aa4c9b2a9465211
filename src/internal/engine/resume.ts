/**
 * Resuming: the configuration a resume continues with, and the check that a
 * saved state belongs to this configuration (its seed, frontier, settings
 * and data).
 *
 * @internal
 */
import { Effect, Either } from "effect"
import { ResumeConflict } from "../../Errors.js"
import { GepaEvent } from "../../Event.js"
import * as Fingerprint from "../../Fingerprint.js"
import { Rng } from "../../Rng.js"
import type * as State from "../../State.js"
import * as Ledger from "./ledger.js"
import { minimumRemainderValidation, validationIds } from "./plan.js"
import type { Resolved } from "./resolved.js"

const isPositiveInt = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n > 0

const samplings = ["independent", "same_parent", "same_minibatch"] as const
const samplingOf = (saved: string | undefined) => samplings.find((s) => s === saved)
const selectionOf = (saved: string | undefined): Resolved<unknown, unknown, unknown>["proposalSelection"] | undefined => {
  if (saved === "best" || saved === "all" || saved === "combine") return saved
  const topK = /^\{"topK":(\d+)\}$/.exec(saved ?? "")
  return topK === null ? undefined : { topK: Number(topK[1]) }
}

/**
 * The configuration a resume continues with. Runs saved by 0.2 derived the
 * pipeline depth from `maxConcurrency` and planned one proposal per step,
 * and runs saved without `reuseMinibatch` drew a new minibatch for every proposal:
 * without explicit settings, such a run continues as it was planned (these
 * settings change the schedule, and so the result). The strategy
 * (`proposalsPerStep`, `proposalSampling`, `proposalSelection`,
 * `rewritesPerMinibatch`) left to its
 * default continues as saved too: a run saved before the default followed
 * the candidate's shape keeps its one proposal per step, and one saved
 * before `stepWidth` its fixed steps.
 *
 * @internal
 */
export const adoptSaved = <D, T, O>(r: Resolved<D, T, O>, state: State.GepaState): Resolved<D, T, O> => {
  const settings = state.fingerprint?.settings
  if (settings === undefined) return r
  const saved = Number(settings["parallelProposals"])
  const depth = r.given.parallelProposals || !isPositiveInt(saved) ? r.parallelProposals : saved
  // a fingerprint without the step settings was written by 0.2: one proposal per step
  const legacy = settings["proposalsPerStep"] === undefined
  const savedPerStep = Number(settings["proposalsPerStep"])
  // the default strategy was chosen when the run started (and 0.2 planned one proposal per step): a resume keeps it
  const perStep = r.given.proposalsPerStep ? r.proposalsPerStep : legacy ? 1 : isPositiveInt(savedPerStep) ? savedPerStep : r.proposalsPerStep
  const sampling = r.given.proposalSampling ? r.proposalSampling : legacy ? "independent" : samplingOf(settings["proposalSampling"]) ?? r.proposalSampling
  const selection = r.given.proposalSelection ? r.proposalSelection : legacy ? "best" : selectionOf(settings["proposalSelection"]) ?? r.proposalSelection
  // runs saved without the setting planned every step `proposalsPerStep` wide
  const savedWidth = settings["stepWidth"]
  const width = r.given.stepWidth ? r.stepWidth : savedWidth === "adaptive" || savedWidth === "fixed" ? savedWidth : "fixed"
  // runs saved without the setting rewrote a component once per minibatch
  const savedRewrites = Number(settings["rewritesPerMinibatch"])
  const rewrites = r.given.rewritesPerMinibatch ? r.rewritesPerMinibatch : isPositiveInt(savedRewrites) ? savedRewrites : 1
  // 0.2 judged every child on its whole minibatch
  const early = r.given.earlyRejection || !legacy ? r.earlyRejection : false
  // runs saved without the setting drew a new minibatch for every proposal
  const reuse = r.given.reuseMinibatch || settings["reuseMinibatch"] !== undefined ? r.reuseMinibatch : false
  // the saved choice (runs saved without the setting planned every step after the fold)
  const onChild = r.given.buildOnChild ? r.buildOnChild : settings["buildOnChild"] === "true"
  // (runs saved without the setting drew a new minibatch for the step on a child)
  const childMinibatch = onChild && (r.given.reuseChildMinibatch ? r.reuseChildMinibatch : settings["reuseChildMinibatch"] === "true")
  if (
    depth === r.parallelProposals && perStep === r.proposalsPerStep && width === r.stepWidth && sampling === r.proposalSampling &&
    settings["proposalSelection"] === r.fingerprint.settings["proposalSelection"] && early === r.earlyRejection &&
    reuse === r.reuseMinibatch && rewrites === r.rewritesPerMinibatch && onChild === r.buildOnChild &&
    childMinibatch === r.reuseChildMinibatch
  ) return r
  const next = {
    ...r,
    parallelProposals: depth,
    proposalsPerStep: perStep,
    stepWidth: width,
    proposalSampling: sampling,
    proposalSelection: selection,
    rewritesPerMinibatch: rewrites,
    earlyRejection: early,
    reuseMinibatch: reuse,
    buildOnChild: onChild,
    reuseChildMinibatch: childMinibatch
  }
  const fingerprintSettings: Record<string, string> = {
    ...r.fingerprint.settings,
    parallelProposals: String(depth),
    proposalsPerStep: String(perStep),
    stepWidth: width,
    proposalSampling: sampling,
    proposalSelection: typeof selection === "string" ? selection : Fingerprint.stableStringify(selection),
    rewritesPerMinibatch: String(rewrites),
    reuseMinibatch: String(reuse),
    buildOnChild: String(onChild),
    reuseChildMinibatch: String(childMinibatch)
  }
  if (legacy) {
    delete fingerprintSettings["proposalsPerStep"]
    delete fingerprintSettings["proposalSampling"]
    delete fingerprintSettings["proposalSelection"]
    delete fingerprintSettings["earlyRejection"]
  }
  return { ...next, fingerprint: { ...r.fingerprint, settings: fingerprintSettings } }
}

/** Checks that a saved state belongs to this configuration. @internal */
export const checkResume = (
  state: State.GepaState,
  r: Resolved<unknown, unknown, unknown>
): Effect.Effect<void, ResumeConflict> => {
  const conflict = (field: string, saved: string, requested: string) => Effect.fail(new ResumeConflict({ field, saved, requested }))
  const seedNames = Object.keys(r.seedCandidate).sort()
  const savedNames = [...state.componentNames].sort()
  if (seedNames.join("\u0000") !== savedNames.join("\u0000")) {
    return conflict("seedCandidate", `components [${savedNames.join(", ")}]`, `components [${seedNames.join(", ")}]`)
  }
  for (const name of seedNames) {
    if (state.candidates[0]?.[name] !== r.seedCandidate[name]) {
      return conflict(`seedCandidate.${name}`, "a different seed text", "this seed text")
    }
  }
  const frontierType = r.frontierType
  if (state.frontierType !== frontierType) return conflict("frontierType", state.frontierType, frontierType)
  if (state.fingerprint !== undefined) {
    const setting = Fingerprint.compareSettings(state.fingerprint.settings, r.fingerprint.settings)
    if (setting !== undefined) return conflict(setting.field, setting.saved, setting.requested)
    for (const split of ["trainset", "valset"] as const) {
      const data = Fingerprint.compareData(state.fingerprint[split], r.fingerprint[split])
      if (data !== undefined) return conflict(split, data.saved, data.requested)
    }
  }
  // a typed run reads every saved component back through its schema
  const read = r.readComponent
  if (read !== undefined) {
    for (const [i, candidate] of state.candidates.entries()) {
      for (const name of state.componentNames) {
        const problem = read(name, candidate[name] ?? "")
        if (Either.isLeft(problem)) return conflict(`candidates[${i}].${name}`, problem.left, "a value its schema accepts")
      }
    }
  }
  const savedVal = new Set<string>()
  for (const scores of state.valScores) for (const id in scores) savedVal.add(id)
  const valSet = new Set(r.valIds)
  const unknownVal = [...savedVal].find((id) => !valSet.has(id))
  if (unknownVal !== undefined) {
    return conflict("valset", `contains example id "${unknownVal}"`, `${r.valIds.length} examples without that id`)
  }
  if (state.sampler.trainSize !== 0 && state.sampler.trainSize !== r.trainIds.length) {
    return conflict("trainset", `${state.sampler.trainSize} examples`, `${r.trainIds.length} examples`)
  }
  const trainSet = new Set(r.trainIds)
  const unknownTrain = state.sampler.order.find((id) => !trainSet.has(id))
  if (unknownTrain !== undefined) {
    return conflict("trainset", `contains example id "${unknownTrain}"`, `${r.trainIds.length} examples without that id`)
  }
  return Effect.void
}

/** What `fitPending` left of the saved plans. @internal */
export interface Fitted {
  readonly state: State.GepaState
  /** a plan shrunk or dropped: the `ProposalEnded` of each dropped one */
  readonly events: ReadonlyArray<GepaEvent>
}

/**
 * The saved plans a resumed run may launch. Calls a crashed process started
 * and never stored are charged as lost work; the plans they belonged to run
 * again in full, and pay for them a second time. When what is spent, lost and
 * reserved is more than the budget, the last plans give back the difference
 * before anything starts, as the end of a run does: the last plan's child is
 * validated on a smaller sample when that is enough, otherwise the last plans
 * are dropped (each recorded as a skipped proposal), so that the adapter never
 * runs more calls than the budget.
 *
 * @internal
 */
export const fitPending = <D, T, O>(r: Resolved<D, T, O>, state: State.GepaState, owed: Ledger.Owed): Fitted => {
  // recomputed after every change: a dropped plan's owed results are no longer within a
  // reservation, so they count as spent (charged as lost at the end) and the next plan must fit them too
  const overOf = (pending: ReadonlyArray<State.PendingProposal>) => -Ledger.available(Ledger.balance(r.budget, { ...state, pending }, owed))
  if (!(overOf(state.pending) > 0)) return { state, events: [] }
  const pending = [...state.pending]
  const trace = [...state.trace]
  const events: Array<GepaEvent> = []
  const reason = (lost: number) =>
    `dropped on resume: the budget of ${r.budget} metric calls cannot hold it after ${lost} calls lost with the interrupted process`
  for (let over = overOf(pending); over > 0 && pending.length > 0; over = overOf(pending)) {
    const last = pending[pending.length - 1]!
    const shrunk = shrinkValidation(r, state, last, pending, over)
    if (shrunk !== undefined) {
      pending[pending.length - 1] = shrunk
      continue
    }
    pending.pop()
    const parents = last._tag === "Reflective" ? [last.parent] : [last.id1, last.id2]
    trace.push({
      iteration: last.iteration,
      kind: last._tag === "Reflective" ? "reflective" : "merge",
      parents,
      outcome: "skipped",
      reason: reason(state.lostMetricCalls),
      metricCalls: state.metricCalls
    })
    events.push(GepaEvent.ProposalEnded({ iteration: last.iteration, parent: parents[0]!, outcome: "skipped", reason: reason(state.lostMetricCalls) }))
  }
  // the trace stays in plan order
  trace.sort((a, b) => a.iteration - b.iteration)
  return { state: { ...state, pending, trace }, events }
}

/**
 * The last plan with its child validated on a smaller sample, giving back
 * `over` calls, when it is a reflective plan alone in what is left of its step
 * that reserves its own validation, and the sample keeps at least what the
 * end of a run would validate on.
 */
const shrinkValidation = <D, T, O>(
  r: Resolved<D, T, O>,
  state: State.GepaState,
  last: State.PendingProposal,
  pending: ReadonlyArray<State.PendingProposal>,
  over: number
): State.PendingProposal | undefined => {
  if (last._tag !== "Reflective" || last.reuses !== undefined || (last.shares !== undefined && last.shares !== last.iteration)) return undefined
  if (last.step !== undefined && pending.some((p) => p !== last && p._tag === "Reflective" && p.step === last.step)) return undefined
  const valIds = validationIds(r, last)
  const full = Ledger.distinct(valIds)
  const factor = r.parallelProposals > 1 ? 4 : 2
  const val = full - over
  if (val < Math.max(1, minimumRemainderValidation(full, r.budget, factor)) || Ledger.lessReserved(last.reserved, over) < val) return undefined
  // drawn from the saved state's generator without advancing it: the same on every resume
  const chosen = new Set(Rng.fromState(state.rng).sample([...new Set(valIds)], val))
  return { ...last, valIds: r.valIds.filter((id) => chosen.has(id)), remainder: true, reserved: Ledger.lessReserved(last.reserved, over) }
}
