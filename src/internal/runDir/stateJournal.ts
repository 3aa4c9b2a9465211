/**
 * The change journal of a run directory's state (`gepa_state.jsonl`): a save
 * appends what changed since the previous save instead of rewriting the
 * whole state, so the bytes a run writes grow with its changes, not with the
 * square of its length. The journal is replayed on top of the last snapshot
 * (`gepa_state.json`); a new snapshot is written when the journal has grown
 * as large as the snapshot (see `shouldSnapshot`), which keeps both loading
 * and the total written within a small factor of the state's size.
 *
 * A change is computed by walking the previous and the next state side by
 * side: values the engine did not touch are the same objects (its updates
 * share structure), and arrays that only grew (the trace, the per-candidate
 * arrays) become appends.
 *
 * @internal
 */

/**
 * What changed in one value: `v` replaces it; `o` changes an object's keys
 * (and `d` removes keys); `e` sets array elements by index and `n` gives the
 * array's new length.
 */
export type Change =
  | { readonly v: unknown }
  | { readonly o: { readonly [key: string]: Change }; readonly d?: ReadonlyArray<string> }
  | { readonly e: ReadonlyArray<readonly [number, Change]>; readonly n: number }

type Json = Readonly<Record<string, unknown>>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

// a key holding `undefined` is absent once written as JSON
const has = (o: Json, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key) && o[key] !== undefined

// defined, not assigned: a key such as "__proto__" (an example id) stays a key
const define = (o: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true })
}

/**
 * The change from `prev` to `next` (JSON values), or `undefined` when they
 * are equal. `skip` names top-level keys left out (kept elsewhere);
 * `growing` names top-level arrays that only ever grow at their end (the
 * trace): their change is what was appended, found without walking the
 * entries they had (which made every save walk the whole trace).
 */
export const diff = (prev: unknown, next: unknown, skip?: ReadonlySet<string>, growing?: ReadonlySet<string>): Change | undefined => {
  if (prev === next) return undefined
  if (Array.isArray(prev) && Array.isArray(next)) {
    const elements: Array<readonly [number, Change]> = []
    const common = Math.min(prev.length, next.length)
    for (let i = 0; i < common; i++) {
      const c = diff(prev[i], next[i])
      if (c !== undefined) elements.push([i, c])
    }
    for (let i = common; i < next.length; i++) elements.push([i, { v: next[i] }])
    if (elements.length === 0 && prev.length === next.length) return undefined
    // a change as large as the array itself is written as the array
    return elements.length > 0 && elements.length === next.length && common > 0 ? { v: next } : { e: elements, n: next.length }
  }
  if (isRecord(prev) && isRecord(next)) {
    const changed: Record<string, Change> = {}
    let any = false
    for (const key in next) {
      if (!has(next, key) || skip?.has(key) === true) continue
      const c = !has(prev, key) ? { v: next[key] } : growing?.has(key) === true ? appended(prev[key], next[key]) : diff(prev[key], next[key])
      if (c !== undefined) {
        define(changed, key, c)
        any = true
      }
    }
    const removed: Array<string> = []
    for (const key in prev) {
      if (has(prev, key) && !has(next, key) && skip?.has(key) !== true) removed.push(key)
    }
    if (!any && removed.length === 0) return undefined
    return removed.length === 0 ? { o: changed } : { o: changed, d: removed }
  }
  if (typeof prev === "number" && typeof next === "number" && Object.is(prev, next)) return undefined
  return { v: next }
}

/** An array that only grew at its end: the entries appended (any other change is a full comparison). */
const appended = (prev: unknown, next: unknown): Change | undefined => {
  if (prev === next) return undefined
  if (!Array.isArray(prev) || !Array.isArray(next) || next.length < prev.length || (prev.length > 0 && prev[prev.length - 1] !== next[prev.length - 1])) {
    return diff(prev, next)
  }
  if (next.length === prev.length) return undefined
  const elements: Array<readonly [number, Change]> = []
  for (let i = prev.length; i < next.length; i++) elements.push([i, { v: next[i] }])
  return { e: elements, n: next.length }
}

/**
 * Applies a change to a value, returning the new value (the input is not
 * modified). Fails with a message when the change does not fit the value
 * (a journal line that belongs to another state).
 */
export const apply = (value: unknown, change: Change): unknown => {
  if ("v" in change) return change.v
  if ("o" in change) {
    if (!isRecord(value)) throw new Error("an object change on a value that is not an object")
    const out: Record<string, unknown> = { ...value }
    for (const key in change.o) {
      const c = change.o[key]
      if (c !== undefined) define(out, key, apply(out[key], c))
    }
    for (const key of change.d ?? []) delete out[key]
    return out
  }
  if (!Array.isArray(value)) throw new Error("an array change on a value that is not an array")
  const out: Array<unknown> = value.slice(0, change.n)
  for (const [i, c] of change.e) {
    if (i > out.length) throw new Error(`an array change skips index ${out.length}`)
    out[i] = apply(out[i], c)
  }
  if (out.length !== change.n) throw new Error(`an array change leaves ${out.length} elements, expected ${change.n}`)
  return out
}

/** One line of `gepa_state.jsonl`: the change that makes generation `g` from generation `g - 1`. */
export interface JournalLine {
  readonly g: number
  /** how many lines of `candidates.jsonl` belong to generation `g` */
  readonly n: number
  readonly c?: Change
}

export const isJournalLine = (u: unknown): u is JournalLine =>
  isRecord(u) && Number.isInteger(u["g"]) && Number.isInteger(u["n"]) && (u["c"] === undefined || isRecord(u["c"]))

/**
 * A new snapshot is due when the journal would outgrow the snapshot it
 * starts from: the snapshots written over a run then sum to about twice the
 * last one, and a load replays at most one snapshot's worth of changes.
 */
export const shouldSnapshot = (snapshotBytes: number, journalBytes: number, lineBytes: number): boolean => journalBytes + lineBytes > snapshotBytes

/** Complete lines of an append-only log (up to the first unreadable one) and the byte offset after each. */
export interface LineLog<A> {
  readonly lines: Array<A>
  readonly ends: Array<number>
}

/**
 * Parses the usable prefix of an append-only JSON-lines log: it ends at the
 * first line that is not JSON or that `accept` refuses (a line cut by a
 * crash, or damage).
 */
export const parseLines = <A>(text: string, accept: (u: unknown, index: number) => u is A): LineLog<A> => {
  const lines: Array<A> = []
  const ends: Array<number> = []
  let offset = 0
  let start = 0
  while (start < text.length) {
    const nl = text.indexOf("\n", start)
    if (nl < 0) break
    const raw = text.slice(start, nl)
    start = nl + 1
    if (raw.length === 0) break
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      break
    }
    if (!accept(parsed, lines.length)) break
    offset += Buffer.byteLength(raw) + 1
    lines.push(parsed)
    ends.push(offset)
  }
  return { lines, ends }
}
