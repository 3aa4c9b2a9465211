/**
 * The dashboard's Pareto grid: the members of the state's own frontier and
 * their scores per example (or objective, or pair), rebuilt only when the
 * members or the frontier's best scores changed.
 *
 * @internal
 */
import { Array as Arr } from "effect"
import * as Pareto from "../../Pareto.js"
import * as State from "../../State.js"
import type { GepaState } from "../../State.js"
import type { ParetoView } from "./types.js"

/**
 * The Pareto view of a state, with the key it was built for; `undefined`
 * when the state's key is `previousKey` (the view has not changed).
 *
 * @internal
 */
export const paretoView = (s: GepaState, previousKey: string): { readonly key: string; readonly view: ParetoView } | undefined => {
  // the Pareto view: members of the state's own frontier type
  // a hybrid frontier is drawn by its examples
  const kind = s.frontierType === "hybrid" ? "instance" : s.frontierType
  const table = s.fronts[kind]
  const keys = Object.keys(table.programs).sort()
  // the members: the programs left after dominated-program removal, the
  // set parent selection draws from
  const members = Pareto.dominators(State.frontSets(s), State.scoreOf(s))
    .sort((a, b) => (Arr.unsafeGet(s.valAverages, b) - Arr.unsafeGet(s.valAverages, a)) || a - b)
  const key = `${members.join(",")}|${keys.length}|${keys.map((k) => table.best[k]).join(",")}`
  if (key === previousKey) return undefined
  const examples = keys
  // instance: the example's score; objective: the objective's aggregate;
  // cartesian: the pair's best, for the candidates that hold it
  const scoreOf = (p: number, k: string): number | null =>
    kind === "instance"
      ? s.valScores[p]?.[k] ?? null
      : kind === "objective"
      ? s.objectiveScores[p]?.[k] ?? null
      : table.programs[k]?.includes(p) === true
      ? table.best[k] ?? null
      : null
  return {
    key,
    view: {
      examples,
      members,
      scores: members.map((p) => examples.map((k) => scoreOf(p, k))),
      best: examples.map((k) => table.best[k] ?? null)
    }
  }
}
