/**
 * System-aware merge (crossover) as pure functions: two candidates from
 * different lineages that share an ancestor are combined component by
 * component, keeping what each lineage changed. With component versions
 * (`Genealogy`), "changed" is judged by origin, not by text: exact when two
 * lineages reach the same text independently.
 *
 * Two reference defects are fixed on purpose:
 * - the cap: `maxInvocations` bounds the number of merge proposals that are
 *   evaluated (so also the number accepted); the reference counted only
 *   accepted merges and could schedule more than its maximum;
 * - an ancestor draw whose score weights are all zero (or negative) falls
 *   back to a uniform draw instead of failing.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { type Candidate, equals } from "./Candidate.js"
import * as Genealogy from "./Genealogy.js"
import type { Rng } from "./Rng.js"

/**
 * Merge bookkeeping, persisted with the optimizer state.
 *
 * @since 0.1.0
 * @category models
 */
export const MergeState = Schema.Struct({
  /** merges scheduled and not yet attempted */
  due: Schema.Number,
  /** merge proposals evaluated (accepted or rejected) */
  attempted: Schema.Number,
  /** merge proposals accepted */
  accepted: Schema.Number,
  /** whether the last iteration accepted a new candidate */
  lastIterFoundNew: Schema.Boolean,
  /** (id1, id2, ancestor) triples already merged */
  triedTriples: Schema.Array(Schema.Tuple(Schema.Number, Schema.Number, Schema.Number)),
  /** (id1, id2, component sources) descriptions already produced */
  triedDescriptions: Schema.Array(Schema.String)
})

/**
 * The merge scheduler's saved state, as decoded from `MergeState`.
 *
 * @since 0.1.0
 * @category models
 */
export type MergeState = typeof MergeState.Type

/**
 * The merge state of a new run: nothing scheduled, nothing tried.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initial: MergeState = {
  due: 0,
  attempted: 0,
  accepted: 0,
  lastIterFoundNew: false,
  triedTriples: [],
  triedDescriptions: []
}

/**
 * After an accepted reflective proposal: a merge becomes due, unless the
 * merges already attempted or due would reach the cap.
 *
 * @since 0.1.0
 * @category scheduling
 */
export const schedule = (state: MergeState, maxInvocations: number): MergeState => ({
  ...state,
  lastIterFoundNew: true,
  due: state.attempted + state.due < maxInvocations ? state.due + 1 : state.due
})

/**
 * Whether a merge should be attempted this iteration.
 *
 * @since 0.1.0
 * @category scheduling
 */
export const isDue = (state: MergeState, maxInvocations: number): boolean => state.lastIterFoundNew && state.due > 0 && state.attempted < maxInvocations

/**
 * Records an evaluated merge proposal; it consumes one due merge.
 *
 * @since 0.1.0
 * @category scheduling
 */
export const recordAttempt = (state: MergeState, accepted: boolean): MergeState => ({
  ...state,
  due: Math.max(0, state.due - 1),
  attempted: state.attempted + 1,
  accepted: state.accepted + (accepted ? 1 : 0),
  lastIterFoundNew: false
})

/**
 * All ancestors of `node` (not including itself).
 *
 * @since 0.1.0
 * @category lineage
 */
export const ancestors = (parents: ReadonlyArray<ReadonlyArray<number>>, node: number): Set<number> => {
  const found = new Set<number>()
  const stack = [...(parents[node] ?? [])]
  while (stack.length > 0) {
    const p = stack.pop()!
    if (found.has(p)) continue
    found.add(p)
    for (const q of parents[p] ?? []) if (!found.has(q)) stack.push(q)
  }
  return found
}

/**
 * How two candidates' values of one component compare: by genealogy (same
 * origin) when versions are known, by text otherwise.
 */
const sameComponent = (input: Pick<MergeInput, "candidates" | "versions">) => {
  const versions = input.versions
  if (versions !== undefined && versions.length >= input.candidates.length) {
    return (x: number, y: number, name: string): boolean => {
      const vx = versions[x]
      const vy = versions[y]
      return vx !== undefined && vy !== undefined && Genealogy.sameValue(vx, vy, name)
    }
  }
  return (x: number, y: number, name: string): boolean => input.candidates[x]?.[name] === input.candidates[y]?.[name]
}

/**
 * Whether merging `i` and `j` over `ancestor` brings something new: some
 * component changed on exactly one side. With `versions`, "changed" means
 * a different origin (genealogy), so independent arrivals at one text count
 * as changes; without, it means a different text.
 *
 * @since 0.1.0
 * @category merge
 */
export const hasDesirableComponents = (
  candidates: ReadonlyArray<Candidate>,
  componentNames: ReadonlyArray<string>,
  ancestor: number,
  i: number,
  j: number,
  versions?: ReadonlyArray<Genealogy.CandidateVersions>
): boolean => {
  const same = sameComponent({ candidates, versions })
  return componentNames.some((name) => (same(ancestor, i, name) || same(ancestor, j, name)) && !same(i, j, name))
}

/**
 * What the merge functions read from the optimizer state.
 *
 * @since 0.1.0
 * @category models
 */
export interface MergeInput {
  readonly candidates: ReadonlyArray<Candidate>
  readonly componentNames: ReadonlyArray<string>
  readonly parents: ReadonlyArray<ReadonlyArray<number>>
  /** aggregate validation score per candidate */
  readonly scores: ReadonlyArray<number>
  readonly merge: MergeState
  /**
   * per candidate, its components' versions and origins (since 0.3.0); when
   * present, merges compare components by genealogy instead of by text
   */
  readonly versions?: ReadonlyArray<Genealogy.CandidateVersions> | undefined
}

const tripleTried = (tried: MergeState["triedTriples"], i: number, j: number, a: number) => tried.some(([x, y, z]) => x === i && y === j && z === a)

/**
 * Picks two merge candidates that are not each other's ancestors and a common
 * ancestor that both outperform and that makes the merge worthwhile. The
 * ancestor is drawn with probability proportional to its score (uniformly when
 * all weights are zero).
 *
 * @since 0.1.0
 * @category merge
 */
export const findCommonAncestorPair = (
  input: MergeInput,
  programs: ReadonlyArray<number>,
  rng: Rng,
  maxAttempts = 10
): readonly [number, number, number] | undefined => {
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    if (programs.length < 2) return undefined
    let [i, j] = rng.sample(programs, 2) as [number, number]
    if (i === j) continue
    if (j < i) [i, j] = [j, i]
    const ai = ancestors(input.parents, i)
    const aj = ancestors(input.parents, j)
    if (ai.has(j) || aj.has(i)) continue
    const common: Array<number> = []
    for (const a of Array.from(ai).sort((x, y) => x - y)) {
      if (!aj.has(a)) continue
      if (tripleTried(input.merge.triedTriples, i, j, a)) continue
      if (input.scores[a]! > input.scores[i]! || input.scores[a]! > input.scores[j]!) continue
      if (!hasDesirableComponents(input.candidates, input.componentNames, a, i, j, input.versions)) continue
      common.push(a)
    }
    if (common.length > 0) {
      const ancestor = rng.weightedPick(common, common.map((a) => input.scores[a]!))
      return [i, j, ancestor]
    }
  }
  return undefined
}

/**
 * Combines `i` and `j` over their common `ancestor`, component by component:
 * - changed on one side only: take the changed side;
 * - changed on both sides differently: take the better-scoring parent, ties
 *   by a fair coin;
 * - identical on both sides: take it.
 * Returns the merged candidate and, per component, the candidate it came from.
 *
 * @since 0.1.0
 * @category merge
 */
export const mergeComponents = (
  input: MergeInput,
  i: number,
  j: number,
  ancestor: number,
  rng: Rng
): { readonly candidate: Candidate; readonly sources: ReadonlyArray<number> } => {
  const merged: Record<string, string> = { ...input.candidates[ancestor]! }
  const sources: Array<number> = []
  const same = sameComponent(input)
  for (const name of input.componentNames) {
    const ai = same(ancestor, i, name)
    const aj = same(ancestor, j, name)
    const ij = same(i, j, name)
    let from: number
    if ((ai || aj) && !ij) {
      // changed on one side only: the side that changed it
      from = ai ? j : i
    } else if (!ai && !aj && !ij) {
      const si = input.scores[i]!
      const sj = input.scores[j]!
      from = si > sj ? i : sj > si ? j : rng.pick([i, j])
    } else {
      from = i
    }
    merged[name] = input.candidates[from]![name]!
    sources.push(from)
  }
  return { candidate: merged, sources }
}

/**
 * A merge ready to be evaluated.
 *
 * @since 0.1.0
 * @category models
 */
export interface MergeAttempt {
  readonly candidate: Candidate
  readonly id1: number
  readonly id2: number
  readonly ancestor: number
  /** per component (in `componentNames` order), the parent it was taken from (since 0.3.0) */
  readonly sources: ReadonlyArray<number>
  /** the merge state with this merge recorded as tried */
  readonly merge: MergeState
}

/**
 * Looks for a new merge among `mergeCandidates` (the Pareto dominators).
 * Already tried triples and already produced combinations are skipped, so
 * is a combination identical to one of its parents (it would only duplicate
 * that parent and use up a merge), and the two parents must share at least
 * `overlapFloor` evaluated validation examples.
 *
 * @since 0.1.0
 * @category merge
 */
export const propose = (
  input: MergeInput,
  mergeCandidates: ReadonlyArray<number>,
  hasOverlap: (i: number, j: number) => boolean,
  rng: Rng,
  maxAttempts = 10
): MergeAttempt | undefined => {
  if (mergeCandidates.length < 2 || input.candidates.length < 3) return undefined
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const pair = findCommonAncestorPair(input, mergeCandidates, rng, maxAttempts)
    if (pair === undefined) continue
    const [id1, id2, ancestor] = pair
    const { candidate, sources } = mergeComponents(input, id1, id2, ancestor, rng)
    const description = JSON.stringify([id1, id2, sources])
    if (input.merge.triedDescriptions.includes(description)) continue
    // a combination identical to a parent would only re-add that parent
    if (equals(candidate, input.candidates[id1]!) || equals(candidate, input.candidates[id2]!)) continue
    if (!hasOverlap(id1, id2)) continue
    return {
      candidate,
      id1,
      id2,
      ancestor,
      sources,
      merge: {
        ...input.merge,
        triedTriples: [...input.merge.triedTriples, [id1, id2, ancestor]],
        triedDescriptions: [...input.merge.triedDescriptions, description]
      }
    }
  }
  return undefined
}

/**
 * A stratified subsample of the validation ids both parents were evaluated
 * on: up to a third where the first parent is better, a third where the
 * second is, a third where they tie, then topped up from the rest (with
 * repetition only when there are fewer shared ids than asked for).
 *
 * @since 0.1.0
 * @category merge
 */
export const subsample = (
  scores1: Readonly<Record<string, number>>,
  scores2: Readonly<Record<string, number>>,
  size: number,
  rng: Rng
): Array<string> => {
  const common = Object.keys(scores1).filter((id) => id in scores2)
  const better1 = common.filter((id) => scores1[id]! > scores2[id]!)
  const better2 = common.filter((id) => scores2[id]! > scores1[id]!)
  const ties = common.filter((id) => scores1[id]! === scores2[id]!)
  const perBucket = Math.max(1, Math.ceil(size / 3))
  const selected: Array<string> = []
  for (const bucket of [better1, better2, ties]) {
    if (selected.length >= size) break
    const take = Math.min(bucket.length, perBucket, size - selected.length)
    if (take > 0) selected.push(...rng.sample(bucket, take))
  }
  const remaining = size - selected.length
  if (remaining > 0) {
    const chosen = new Set(selected)
    const unused = common.filter((id) => !chosen.has(id))
    if (unused.length >= remaining) selected.push(...rng.sample(unused, remaining))
    else if (common.length > 0) { for (let k = 0; k < remaining; k++) selected.push(rng.pick(common)) }
  }
  return selected.slice(0, size)
}
