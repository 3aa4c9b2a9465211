/**
 * Reads that cannot miss by construction: an index below the length it was
 * checked against, a key the same code put in. With `noUncheckedIndexedAccess`
 * such a read is typed `A | undefined`; these helpers give back `A` and turn
 * a broken invariant into a loud internal error at the read itself, where a
 * non-null assertion (`!`) would let `undefined` flow on and fail far away.
 * Not for arrays whose elements may legitimately be `undefined`.
 *
 * @internal
 */

/** The element at `index`, which the caller knows is there. */
export const at = <A>(array: ArrayLike<A>, index: number): A => {
  const value = array[index]
  if (value === undefined) throw new Error(`internal error: no element at index ${index} (length ${array.length})`)
  return value
}

/** `value`, which the caller knows is set; `what` names it in the error. */
export const defined = <A>(value: A | undefined, what: string): A => {
  if (value === undefined) throw new Error(`internal error: ${what} is missing`)
  return value
}
