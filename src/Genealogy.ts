/**
 * Component versions and genealogy: per candidate and per component, which
 * candidate created the component's current value (`origin`) and how many
 * proposals changed it along the way (`version`).
 *
 * Comparing components by origin instead of by text makes merges exact: two
 * lineages that reach the same text independently still count as two
 * changes, and a component copied by a merge keeps the identity it had in
 * the parent it was taken from.
 *
 * @since 0.3.0
 */
import { Schema } from "effect"
import type { Candidate } from "./Candidate.js"

/**
 * The metadata of one component of one candidate.
 *
 * @since 0.3.0
 * @category models
 */
export const ComponentVersion = Schema.Struct({
  /** proposals that changed this component since the seed (0 in the seed) */
  version: Schema.Number,
  /** the candidate whose proposal produced this value (0: the seed) */
  origin: Schema.Number
})

/**
 * One component's version and origin, as decoded from `ComponentVersion`.
 *
 * @since 0.3.0
 * @category models
 */
export type ComponentVersion = typeof ComponentVersion.Type

/**
 * The metadata of every component of one candidate.
 *
 * @since 0.3.0
 * @category models
 */
export const CandidateVersions = Schema.Record({ key: Schema.String, value: ComponentVersion })

/**
 * A candidate's component versions, as decoded from `CandidateVersions`.
 *
 * @since 0.3.0
 * @category models
 */
export type CandidateVersions = typeof CandidateVersions.Type

/**
 * The seed's metadata: every component at version 0, created by candidate 0.
 *
 * @since 0.3.0
 * @category constructors
 */
export const seed = (componentNames: ReadonlyArray<string>): CandidateVersions => {
  const out: Record<string, ComponentVersion> = {}
  for (const name of componentNames) out[name] = { version: 0, origin: 0 }
  return out
}

const metaOf = (versions: CandidateVersions, name: string): ComponentVersion => versions[name] ?? { version: 0, origin: 0 }

/**
 * The metadata of a new candidate `index`.
 *
 * - One parent (a reflective proposal, possibly rebased): a component whose
 *   value differs from the parent's is a change: version + 1, origin `index`;
 *   the others keep the parent's metadata.
 * - Several parents (a merge): each component keeps the metadata of the
 *   parent it was taken from, `sources[k]` for the k-th component when the
 *   merge recorded it, otherwise the first parent holding the same value. A
 *   merge copies components, it changes none.
 *
 * @since 0.3.0
 * @category constructors
 */
export const child = (options: {
  readonly index: number
  readonly componentNames: ReadonlyArray<string>
  readonly candidate: Candidate
  readonly parents: ReadonlyArray<number>
  readonly candidates: ReadonlyArray<Candidate>
  readonly versions: ReadonlyArray<CandidateVersions>
  /** per component (in `componentNames` order), the parent a merge took it from */
  readonly sources?: ReadonlyArray<number> | undefined
}): CandidateVersions => {
  const out: Record<string, ComponentVersion> = {}
  const { candidate, candidates, versions } = options
  if (options.parents.length === 0) return seed(options.componentNames)
  if (options.parents.length === 1) {
    const p = options.parents[0] ?? 0
    const parentTexts = candidates[p] ?? {}
    const parentMeta = versions[p] ?? {}
    for (const name of options.componentNames) {
      const before = metaOf(parentMeta, name)
      out[name] = parentTexts[name] === candidate[name] ? before : { version: before.version + 1, origin: options.index }
    }
    return out
  }
  options.componentNames.forEach((name, k) => {
    const recorded = options.sources?.[k]
    const from = recorded !== undefined && candidates[recorded]?.[name] === candidate[name]
      ? recorded
      : options.parents.find((p) => candidates[p]?.[name] === candidate[name])
    if (from === undefined) {
      // a value none of the parents holds: a change made by this candidate
      const base = options.parents.reduce((m, p) => Math.max(m, metaOf(versions[p] ?? {}, name).version), 0)
      out[name] = { version: base + 1, origin: options.index }
    } else {
      out[name] = metaOf(versions[from] ?? {}, name)
    }
  })
  return out
}

/**
 * The metadata of every candidate, rebuilt from texts and parents alone (for
 * states saved before versions were recorded). Exact unless a merge took a
 * component whose text both parents hold with different origins: then the
 * first parent's is assumed.
 *
 * @since 0.3.0
 * @category constructors
 */
export const derive = (
  componentNames: ReadonlyArray<string>,
  candidates: ReadonlyArray<Candidate>,
  parents: ReadonlyArray<ReadonlyArray<number>>
): ReadonlyArray<CandidateVersions> => {
  const versions: Array<CandidateVersions> = []
  candidates.forEach((candidate, index) => {
    versions.push(child({ index, componentNames, candidate, parents: parents[index] ?? [], candidates, versions }))
  })
  return versions
}

/**
 * Whether two candidates hold the same value of `name` by genealogy (same
 * origin), whatever their texts.
 *
 * @since 0.3.0
 * @category utils
 */
export const sameValue = (a: CandidateVersions, b: CandidateVersions, name: string): boolean => metaOf(a, name).origin === metaOf(b, name).origin
