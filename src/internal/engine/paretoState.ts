/**
 * The Pareto index of a run's state (see `paretoIndex.ts`), kept per run and
 * brought up to date with each state asked about: shared by the Pareto
 * parent selection and by the stop rule that asks which parents it can
 * still pick (`learned.ts`).
 *
 * @internal
 */
import * as State from "../../State.js"
import * as ParetoIndex from "./paretoIndex.js"

// Keyed by the run's seed candidate, which every later state shares: adding
// a candidate changes a few fronts, and only those are looked at again.
const indexes = new WeakMap<object, ParetoIndex.ParetoIndex>()

const tablesOf = (state: State.GepaState): ParetoIndex.FrontTables => {
  switch (state.frontierType) {
    case "instance":
      return [state.fronts.instance.programs]
    case "objective":
      return [state.fronts.objective.programs]
    case "hybrid":
      return [state.fronts.instance.programs, state.fronts.objective.programs]
    case "cartesian":
      return [state.fronts.cartesian.programs]
  }
}

/** The run's Pareto index, synchronised with `state`. @internal */
export const indexOf = (state: State.GepaState): ParetoIndex.ParetoIndex => {
  const owner: object = state.candidates[0] ?? state.fronts
  let ix = indexes.get(owner)
  if (ix === undefined) {
    ix = ParetoIndex.make()
    indexes.set(owner, ix)
  }
  ParetoIndex.sync(ix, tablesOf(state), [state.valAverages, state.valCoverage], state.candidates.length, State.scoreOf(state))
  return ix
}
