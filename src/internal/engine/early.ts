/**
 * Early rejection of a child on its minibatch. A child is accepted when its
 * score sum beats its parent's (`strict_improvement`) or matches it
 * (`improvement_or_equal`). On the examples the parent already solved with
 * the perfect score, the child can at best match it; so the child is first
 * evaluated on the other examples, and when even perfect scores on the
 * solved ones could not make it pass, it is rejected without paying for
 * them. The decision is the one the full evaluation would have made: no
 * run changes its path, it only spends less on children that fail.
 *
 * On by default (`earlyRejection`). Only for the built-in criteria (a custom criterion may judge otherwise),
 * and only while every score seen is at most `perfectScore` (the perfect
 * score is the highest one; a metric that scores above it gets the full
 * evaluation).
 *
 * Pure.
 *
 * @internal
 */
import * as Acceptance from "../../Acceptance.js"
import { at, defined } from "../shared/invariant.js"
import type { Resolved } from "./resolved.js"

/** @internal */
export interface Split {
  /** ids the parent did not solve perfectly, in minibatch order */
  readonly open: ReadonlyArray<string>
  /** ids the parent solved perfectly, in minibatch order */
  readonly solved: ReadonlyArray<string>
}

const sum = (xs: ReadonlyArray<number>) => {
  let t = 0
  for (const x of xs) t += x
  return t
}

/**
 * The split of a minibatch, or `undefined` when early rejection does not
 * apply: a custom criterion, a score above the perfect score, no solved
 * example (nothing to save), or a minibatch with repeated ids.
 *
 * @internal
 */
export const split = (
  r: Pick<Resolved<unknown, unknown, unknown>, "accept" | "perfectScore" | "earlyRejection">,
  ids: ReadonlyArray<string>,
  before: ReadonlyArray<number>
): Split | undefined => {
  if (!r.earlyRejection) return undefined
  if (r.accept !== Acceptance.strictImprovement && r.accept !== Acceptance.improvementOrEqual) return undefined
  if (new Set(ids).size !== ids.length) return undefined
  const open: Array<string> = []
  const solved: Array<string> = []
  for (const [i, id] of ids.entries()) {
    const score = at(before, i)
    if (score > r.perfectScore) return undefined
    if (score === r.perfectScore) solved.push(id)
    else open.push(id)
  }
  // copied to their exact sizes: a pushed-to array keeps room for about 16
  // ids, and a rejected child's trace line keeps `open` for the whole run
  return solved.length === 0 ? undefined : { open: open.slice(), solved: solved.slice() }
}

/**
 * Whether the child cannot pass whatever it scores on the solved examples.
 *
 * @internal
 */
export const hopeless = (
  r: Pick<Resolved<unknown, unknown, unknown>, "accept" | "perfectScore">,
  before: ReadonlyArray<number>,
  partial: ReadonlyArray<number>,
  s: Split
): boolean => {
  if (partial.some((x) => x > r.perfectScore)) return false
  const best = sum(partial) + r.perfectScore * s.solved.length
  const parent = sum(before)
  return r.accept === Acceptance.strictImprovement ? best <= parent : best < parent
}

/** The child's scores in minibatch order. @internal */
export const combine = (
  ids: ReadonlyArray<string>,
  s: Split,
  open: ReadonlyArray<number>,
  solved: ReadonlyArray<number>
): Array<number> => {
  const byId = new Map<string, number>()
  s.open.forEach((id, i) => byId.set(id, at(open, i)))
  s.solved.forEach((id, i) => byId.set(id, at(solved, i)))
  // the split partitions `ids`: every id is open or solved
  return ids.map((id) => defined(byId.get(id), "the score of a minibatch example"))
}

/**
 * The reason a trace line gives for a child rejected early. One string per
 * (open, total) pair, kept for the process: a run rejects hundreds of
 * children this way and keeps every line, and a string built each time is a
 * tree of a few concatenations that the young generation copies twice
 * before it settles. Minibatches are small, so the pairs are few; past a
 * thousand of them the reason is built each time.
 *
 * @internal
 */
export const rejectionReason = (split: Split): string => {
  const open = split.open.length
  const total = open + split.solved.length
  const key = open * 0x10000 + total
  const known = reasons.get(key)
  if (known !== undefined) return known
  const reason = `rejected after ${open} of ${total} minibatch examples: perfect scores on the other ${split.solved.length} could not beat the parent`
  if (reasons.size < 1000 && total < 0x10000) reasons.set(key, reason)
  return reason
}

const reasons = new Map<number, string>()
