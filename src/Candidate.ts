/**
 * A candidate is a set of named text components: the prompts (or any texts)
 * of the user's system that the optimizer evolves.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { createHash } from "node:crypto"

/**
 * A candidate: named text components (component name to text), the thing GEPA
 * evolves.
 *
 * @since 0.1.0
 * @category models
 */
export const Candidate = Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
  identifier: "Candidate",
  description: "Named text components (component name -> text)"
})

/**
 * A candidate's value: a record of component name to text.
 *
 * @since 0.1.0
 * @category models
 */
export type Candidate = typeof Candidate.Type

/**
 * A stable content hash of a candidate: equal components give equal hashes
 * whatever the key order. Used as the evaluation-cache key.
 *
 * @since 0.1.0
 * @category utils
 */
export const hash = (candidate: Candidate): string => {
  const h = createHash("sha256")
  // (the names in code-unit order, as `<` orders them; each text fed as it
  // is: hashed once per new candidate, without a copy of its texts)
  for (const name of Object.keys(candidate).sort()) {
    const text = candidate[name]!
    // length-prefixed so that no two different candidates serialize alike
    h.update(`${name.length}:${name}${text.length}:`)
    h.update(text)
  }
  // the first 16 bytes' hex written out on its own: a slice of the whole
  // digest's hex would keep all 64 characters alive as long as the key
  return h.digest().toString("hex", 0, 16)
}

/**
 * Whether two candidates have the same components with the same texts.
 *
 * @since 0.1.0
 * @category utils
 */
export const equals = (a: Candidate, b: Candidate): boolean => {
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k])
}

/**
 * The components in which `child` differs from `parent`.
 *
 * @since 0.1.0
 * @category utils
 */
export const changedComponents = (parent: Candidate, child: Candidate): ReadonlyArray<string> =>
  // copied to its exact size: `filter` leaves room for about 16 names, and a
  // run's trace keeps one such list per proposal
  Object.keys(child).filter((k) => parent[k] !== child[k]).slice()
