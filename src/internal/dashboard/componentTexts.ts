/**
 * A candidate's component texts as the page's candidate detail shows them:
 * a structured component (canonical JSON, see `CandidateSchema`) indented,
 * and its changes against a parent path by path.
 *
 * Which components are structured: the kinds a typed run recorded in its
 * state decide; without them (an untyped run, or no state yet), the look.
 *
 * @internal
 */
import * as CandidateSchema from "../../CandidateSchema.js"
import type { GepaState } from "../../State.js"
import * as Typed from "../engine/typed.js"

/**
 * The components, each structured one indented.
 *
 * @internal
 */
// a structured component is shown indented, so the page's line diff shows
// what changed rather than one long line
export const readable = (state: GepaState | undefined, components: Readonly<Record<string, string>>): Record<string, string> => {
  const kinds = Typed.structuredNames(state)
  const out: Record<string, string> = {}
  for (const [name, text] of Object.entries(components)) out[name] = Typed.readable(kinds, name, text)
  return out
}

/**
 * Per structured component, its changes path by path against a parent.
 *
 * @internal
 */
export const structuredChanges = (
  state: GepaState | undefined,
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>
): Record<string, ReadonlyArray<string>> => {
  const kinds = Typed.structuredNames(state)
  const out: Record<string, ReadonlyArray<string>> = {}
  for (const [name, text] of Object.entries(after)) {
    const was = before[name]
    if (was === undefined || was === text || (kinds !== undefined && !kinds.has(name))) continue
    if (kinds === undefined && (CandidateSchema.format(was) === was || CandidateSchema.format(text) === text)) continue
    out[name] = CandidateSchema.diff(was, text)
  }
  return out
}
