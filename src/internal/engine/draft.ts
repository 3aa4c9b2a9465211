/**
 * Fresh copies of the run's state, for the fold or plan that makes one to
 * fill in before anyone else sees it (a copy is never written to once it
 * is returned: the state stays immutable for everyone who holds it).
 *
 * Why not a spread: V8 copies a spread object in one step only at a spread
 * site that has seen few object shapes. The state has many (each place
 * that makes one gives it its own), so every site spreading it copies key
 * by key instead, growing the copy's property store as it goes: about
 * 1.3 KB for the state's ~30 fields instead of 0.3 KB, several times per
 * proposal. A copy listing every field is one allocation of one shape, and
 * the compiler checks that it lists them all.
 *
 * @internal
 */
import type * as State from "../../State.js"

/** `S` with its fields writable: a draft filled in by the function that made it. @internal */
export type Draft<S> = { -readonly [K in keyof S]: S[K] }

/** A fresh copy of `s` (same keys, same values, in the order the engine's states have them) for its maker to fill in. @internal */
export const draft = (s: State.GepaState): Draft<State.GepaState> =>
  // a state without one of the optional fields (the first ones of a run, an
  // old saved one) is spread: the copy has the same keys, no more
  "versions" in s && "fingerprint" in s && "minibatchReuse" in s
    ? {
      schemaVersion: s.schemaVersion,
      componentNames: s.componentNames,
      frontierType: s.frontierType,
      candidates: s.candidates,
      parents: s.parents,
      valScores: s.valScores,
      objectiveScores: s.objectiveScores,
      valAverages: s.valAverages,
      valCoverage: s.valCoverage,
      nextComponent: s.nextComponent,
      discoveryBudget: s.discoveryBudget,
      fronts: s.fronts,
      iteration: s.iteration,
      metricCalls: s.metricCalls,
      fullValEvals: s.fullValEvals,
      reflectionCalls: s.reflectionCalls,
      reflectionUsage: s.reflectionUsage,
      acceptedProposals: s.acceptedProposals,
      rejectedProposals: s.rejectedProposals,
      lastImprovementIteration: s.lastImprovementIteration,
      consecutiveFailedIterations: s.consecutiveFailedIterations,
      rng: s.rng,
      sampler: s.sampler,
      merge: s.merge,
      trace: s.trace,
      pending: s.pending,
      lostMetricCalls: s.lostMetricCalls,
      versions: s.versions,
      fingerprint: s.fingerprint,
      minibatchReuse: s.minibatchReuse
    } satisfies { readonly [K in keyof Required<State.GepaState>]: unknown }
    : { ...s }

/** `{ ...s, ...changes }`, copied as `draft` copies. @internal */
export const revise = (s: State.GepaState, changes: Partial<State.GepaState>): State.GepaState => Object.assign(draft(s), changes)
