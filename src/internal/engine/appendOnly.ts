/**
 * Appending to the state's growing arrays (the trace, the per-candidate
 * arrays) without copying them on every fold.
 *
 * The state is immutable: a fold returns a new state and the old one is left
 * as it was. Copying an array of n entries to append one makes a run of n
 * folds cost n²/2 copies and, with tens of thousands of trace entries, fills
 * the heap with arrays too large for the young generation (at a million
 * metric calls that was most of the engine's growth in cost per call and a
 * good part of its memory).
 *
 * An `Owner` belongs to one run. An array the owner made is appended to in
 * place, so the state the loop folded from, which the loop drops at once,
 * shares it with the new one; any other array is copied once and owned from
 * then on. Before a state leaves the loop where someone may keep it (an
 * event to a listener of the user's, a save), the loop seals it: its arrays
 * are no longer owned, and the next append copies. The program lists of the
 * state's fronts grow the same way (`State.addCandidate`'s `append`). A state that was seen
 * never changes afterwards; one that nobody saw is never copied.
 *
 * @internal
 */
import type { GepaState } from "../../State.js"
import { at } from "../shared/invariant.js"

/** @internal */
export interface Owner {
  owned: WeakSet<ReadonlyArray<unknown>>
}

/** @internal */
export const makeOwner = (): Owner => ({ owned: new WeakSet() })

// an array the owner made: it is the owner's to change (the one place that says so)
const mutable = <A>(array: ReadonlyArray<A>): Array<A> => array as Array<A>

/**
 * `[...array, item]`, in place when `owner` made `array` (and did not seal
 * it); without an owner, always a copy.
 *
 * @internal
 */
export const append = <A>(owner: Owner | undefined, array: ReadonlyArray<A>, item: A): ReadonlyArray<A> => {
  if (owner === undefined) return [...array, item]
  if (owner.owned.has(array)) {
    mutable(array).push(item)
    return array
  }
  const copy = array.slice()
  copy.push(item)
  owner.owned.add(copy)
  return copy
}

/**
 * `array` with `array[index] = item`: in place when `owner` made `array` (and
 * did not seal or release it); otherwise a copy, owned from then on. Unlike
 * `append`, it changes an entry an earlier state shows: an array that goes
 * out with a state is released first (`release`), as a seal would.
 *
 * @internal
 */
export const set = <A>(owner: Owner | undefined, array: ReadonlyArray<A>, index: number, item: A): ReadonlyArray<A> => {
  if (array[index] === item) return array
  if (owner !== undefined && owner.owned.has(array)) {
    mutable(array)[index] = item
    return array
  }
  const copy = array.slice()
  copy[index] = item
  owner?.owned.add(copy)
  return copy
}

/** The next `set` or `append` to `array` copies it: a state holding it goes where it may be kept. @internal */
export const release = (owner: Owner, array: ReadonlyArray<unknown>): void => {
  owner.owned.delete(array)
}

/** `append` bound to an owner (`State.addCandidate`'s `append` option). @internal */
export const appender = (owner: Owner | undefined) => <A>(array: ReadonlyArray<A>, item: A): ReadonlyArray<A> => append(owner, array, item)

/**
 * Makes a state's arrays copy on their next append: someone outside the loop
 * may keep the state. Every array the owner made is let go at once (the
 * state's own, among them the program lists of its fronts, of which there is
 * one per validation example): the loop only ever appends to its current
 * state, so the arrays it owns are that state's or garbage.
 *
 * @internal
 */
export const seal = (owner: Owner): void => {
  owner.owned = new WeakSet()
}

/**
 * The state as it is now, made only when asked for. The arrays of a state
 * only ever grow at their end (in place while the run owns them, else by a
 * copy), and a front's program list only by the newest candidate: so the
 * first entries of each, as many as the state had, are that state whatever
 * the run appended since. The one array whose entries change
 * (`nextComponent`, see `set`) must be released by the caller. An `IterationEnded` carries its state this way to
 * listeners of the user's: a listener that never reads it (most read a few
 * kinds of event) costs no copy, where sealing the state made the next
 * append copy the trace, the per-candidate arrays and every front a new
 * candidate joins, on every iteration.
 *
 * @internal
 */
export const asOf = (state: GepaState): () => GepaState => {
  const n = state.candidates.length
  const t = state.trace.length
  let copy: GepaState | undefined
  const get = () => copy ??= snapshot(state, n, t)
  heads.set(get, { candidates: n, metricCalls: state.metricCalls })
  return get
}

/** The counts of a state made by `asOf`, by its getter. */
const heads = new WeakMap<() => GepaState, { readonly candidates: number; readonly metricCalls: number }>()

/**
 * The candidate count and metric calls of an event's state, without making
 * the state when the event carries it as `asOf` made it (a getter): the run
 * folder's event log writes these two for every iteration, and making the
 * state copies its trace, per-candidate arrays and fronts, which grow with
 * the run.
 *
 * @internal
 */
export const countsOf = (event: { readonly state: GepaState }): { readonly candidates: number; readonly metricCalls: number } => {
  const get = Object.getOwnPropertyDescriptor(event, "state")?.get
  const head = get === undefined ? undefined : heads.get(get)
  return head ?? { candidates: event.state.candidates.length, metricCalls: event.state.metricCalls }
}

const frontAsOf = (table: GepaState["fronts"]["instance"], n: number): GepaState["fronts"]["instance"] => {
  const programs: Record<string, ReadonlyArray<number>> = {}
  for (const [key, list] of Object.entries(table.programs)) {
    let end = list.length
    // ascending: later candidates are at the end
    while (end > 0 && at(list, end - 1) >= n) end--
    programs[key] = list.slice(0, end)
  }
  return { best: table.best, programs }
}

const snapshot = (state: GepaState, n: number, t: number): GepaState => ({
  ...state,
  trace: state.trace.slice(0, t),
  candidates: state.candidates.slice(0, n),
  parents: state.parents.slice(0, n),
  valScores: state.valScores.slice(0, n),
  objectiveScores: state.objectiveScores.slice(0, n),
  valAverages: state.valAverages.slice(0, n),
  valCoverage: state.valCoverage.slice(0, n),
  nextComponent: state.nextComponent.slice(0, n),
  discoveryBudget: state.discoveryBudget.slice(0, n),
  fronts: {
    instance: frontAsOf(state.fronts.instance, n),
    objective: frontAsOf(state.fronts.objective, n),
    cartesian: frontAsOf(state.fronts.cartesian, n)
  },
  ...(state.versions === undefined ? {} : { versions: state.versions.slice(0, n) })
})
