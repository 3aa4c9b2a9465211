/**
 * Side information: turning whatever an evaluator reports (JSON values,
 * nested records, lists, errors, class instances, cycles) into JSON-like data
 * of bounded size, and into the reflective records the reflection model
 * reads.
 *
 * @internal
 */
import type { ReflectiveRecord } from "../../Adapter.js"
import type { ObjectiveScores } from "../../EvaluationBatch.js"
import { field, isRecord } from "../shared/fields.js"

// a key such as "__proto__" from user data must become an own field, not a prototype
/** @internal */
export const setOwn = (target: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/** @internal */
export interface Limits {
  readonly maxStringLength: number
  readonly maxListItems: number
  readonly maxDepth: number
  readonly maxRecordLength: number
  /**
   * characters of the whole reflection prompt, at most; `undefined`: from
   * the reflection model's context window, else `defaultPromptBudget`
   */
  readonly promptBudget?: number | undefined
  /** deprecated per-evaluation cut: strings as shown in the reflection prompt, at most */
  readonly promptStringLength?: number | undefined
  /** deprecated per-evaluation cut: one evaluation's side information in the prompt (JSON characters), at most */
  readonly promptRecordLength?: number | undefined
}

/**
 * The stored limits. They only guard memory, the cache and the run
 * directory against runaway output (a log of megabytes): a failure list of
 * hundreds of records, a summary of pages, stays whole. What the prompt
 * shows is bounded by the prompt budget instead (`promptBudget.ts`).
 *
 * @internal
 */
export const defaultLimits: Limits = {
  maxStringLength: 20_000,
  maxListItems: 1_000,
  maxDepth: 8,
  maxRecordLength: 100_000
}

/**
 * The limits of what one evaluation shows in the reflection prompt: the
 * stored limits, cut further only by the deprecated per-evaluation options
 * when the user set them (the prompt budget is applied to the whole prompt,
 * not here).
 *
 * @internal
 */
export const promptLimits = (limits: Limits): Limits => ({
  ...limits,
  maxStringLength: Math.min(limits.maxStringLength, limits.promptStringLength ?? Infinity),
  maxRecordLength: Math.min(limits.maxRecordLength, limits.promptRecordLength ?? Infinity)
})

/**
 * A JSON-like copy of `value`: plain objects and arrays are kept; errors
 * become `{ name, message }`; maps, sets, dates, bigints, binary data and
 * functions get a faithful plain form; repeated references inside their own
 * ancestry become "[circular]".
 *
 * @internal
 */
export const toJsonLike = (value: unknown): unknown => {
  const ancestors: Array<unknown> = []
  const go = (v: unknown): unknown => {
    if (v === null || typeof v === "string" || typeof v === "boolean") return v
    if (typeof v === "number") return Number.isFinite(v) ? v : String(v)
    if (typeof v === "bigint") return `${v}`
    if (v === undefined) return null
    if (typeof v === "function") return `[function ${v.name || "anonymous"}]`
    if (typeof v === "symbol") return v.toString()
    if (ancestors.includes(v)) return "[circular]"
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? "Invalid Date" : v.toISOString()
    if (v instanceof Uint8Array || v instanceof ArrayBuffer) return `[binary data, ${v.byteLength} bytes]`
    ancestors.push(v)
    try {
      if (v instanceof Error) {
        const out: Record<string, unknown> = { name: v.name, message: v.message }
        if (v.cause !== undefined) out["cause"] = go(v.cause)
        return out
      }
      if (Array.isArray(v)) return v.map(go)
      if (v instanceof Set) return Array.from(v, go)
      if (v instanceof Map) {
        const out: Record<string, unknown> = {}
        for (const [k, x] of v) setOwn(out, typeof k === "string" ? k : JSON.stringify(go(k)), go(x))
        return out
      }
      const json = field(v, "toJSON")
      if (typeof json === "function") return go(json.call(v))
      const out: Record<string, unknown> = {}
      for (const [k, x] of Object.entries(v)) {
        if (x !== undefined) setOwn(out, k, go(x))
      }
      return out
    } finally {
      ancestors.pop()
    }
  }
  return go(value)
}

/** The marker put where characters of a long string were cut. */
export const truncationMarker = (removed: number): string => `\n…[truncated ${removed} characters]…\n`

/**
 * `text` cut to about `max` characters: the head and the tail are kept (the
 * end of a log or an error output is often the most telling) with an
 * explicit marker where text was removed.
 *
 * @internal
 */
export const truncateString = (text: string, max: number): string => {
  if (text.length <= max) return text
  const keep = Math.max(0, max)
  const head = Math.ceil(keep * 2 / 3)
  const tail = keep - head
  return text.slice(0, head) + truncationMarker(text.length - keep) + (tail > 0 ? text.slice(text.length - tail) : "")
}

const shrink = (value: unknown, limits: Limits, depth: number): unknown => {
  if (typeof value === "string") return truncateString(value, limits.maxStringLength)
  if (value === null || typeof value !== "object") return value
  if (depth >= limits.maxDepth) return truncateString(JSON.stringify(value), limits.maxStringLength)
  if (Array.isArray(value)) {
    if (value.length <= limits.maxListItems) return value.map((v) => shrink(v, limits, depth + 1))
    const kept = value.slice(0, Math.max(1, limits.maxListItems - 1)).map((v) => shrink(v, limits, depth + 1))
    return [...kept, `…[${value.length - kept.length} more items truncated]`]
  }
  const out: Record<string, unknown> = {}
  const entries: Array<[string, unknown]> = isRecord(value) ? Object.entries(value) : []
  for (const [k, v] of entries.slice(0, limits.maxListItems)) setOwn(out, k, shrink(v, limits, depth + 1))
  if (entries.length > limits.maxListItems) out["…"] = `[${entries.length - limits.maxListItems} more fields truncated]`
  return out
}

const sizeOf = (value: unknown): number => JSON.stringify(value)?.length ?? 0

/**
 * A JSON-like `value` cut down to the limits: long strings keep their head
 * and tail around a marker, long lists and records keep their first items
 * and say how many were dropped, structures deeper than `maxDepth` become
 * (truncated) JSON text. When the whole is still longer than
 * `maxRecordLength` as JSON, the string and list limits are halved until it
 * fits; as a last resort the JSON text itself is truncated. Nothing is
 * dropped without a marker saying so.
 *
 * @internal
 */
export const budget = (value: unknown, limits: Limits): unknown => {
  let current = limits
  let out = shrink(value, current, 0)
  while (sizeOf(out) > limits.maxRecordLength && (current.maxStringLength > 40 || current.maxListItems > 2)) {
    current = {
      ...current,
      maxStringLength: Math.max(40, Math.floor(current.maxStringLength / 2)),
      maxListItems: Math.max(2, Math.floor(current.maxListItems / 2))
    }
    out = shrink(value, current, 0)
  }
  if (sizeOf(out) > limits.maxRecordLength) {
    return truncateString(JSON.stringify(out), Math.max(0, limits.maxRecordLength - 60))
  }
  return out
}

/** What one evaluation produced, as stored (the engine's output type). */
export interface EvaluationRecord {
  readonly score: number
  /** the side information, JSON-like and within the limits */
  readonly sideInfo: unknown
  readonly scores?: ObjectiveScores | undefined
  /** side information about single components, shown only when that component is revised */
  readonly componentSideInfo?: Readonly<Record<string, unknown>> | undefined
  /** what the evaluator logged through `Effect.log*`, one line per entry */
  readonly logs: ReadonlyArray<string>
}

/** The trace of one evaluation. */
export interface EvaluationTrace {
  /** the example, `undefined` in single-task mode */
  readonly example: unknown
  readonly record: EvaluationRecord
}

const RESERVED = new Set(["Input", "Score", "Scores (higher is better)", "Logs", "Side info"])

/**
 * The reflective record of one evaluation, before it is fitted to the prompt
 * budget: the input (unless single-task), the score, the objective scores,
 * the side information (a record's fields become headings of their own;
 * other values go under "Side info"), the side information about the
 * component being revised (under `About "<component>"`; other components'
 * is left out) and the captured logs. Shown as stored, unless the
 * deprecated per-evaluation limits are set (`promptLimits`).
 *
 * @internal
 */
export const rawRecord = (
  trace: EvaluationTrace,
  options: { readonly withInput: boolean; readonly limits: Limits; readonly component?: string | undefined }
): Record<string, unknown> => {
  const shown = promptLimits(options.limits)
  const out: Record<string, unknown> = {}
  if (options.withInput) out["Input"] = budget(toJsonLike(trace.example), shown)
  out["Score"] = trace.record.score
  if (trace.record.scores !== undefined) out["Scores (higher is better)"] = trace.record.scores
  const info = trace.record.sideInfo === undefined ? undefined : budget(trace.record.sideInfo, shown)
  if (isRecord(info) && !Array.isArray(info)) {
    for (const [k, v] of Object.entries(info)) {
      setOwn(out, RESERVED.has(k) || Object.prototype.hasOwnProperty.call(out, k) ? `${k} (side info)` : k, v)
    }
  } else if (info !== undefined && info !== null && info !== "") {
    out["Side info"] = info
  }
  const component = options.component
  const own = component === undefined ? undefined : trace.record.componentSideInfo
  if (component !== undefined && own !== undefined && Object.prototype.hasOwnProperty.call(own, component)) {
    setOwn(out, `About "${component}"`, budget(own[component], shown))
  }
  if (trace.record.logs.length > 0) {
    out["Logs"] = truncateString(trace.record.logs.join("\n"), shown.maxStringLength)
  }
  return out
}

/**
 * A record as the prompt shows it: small flat records (as values of its
 * fields) on one line of JSON.
 *
 * @internal
 */
export const inlineRecord = (record: ReflectiveRecord): ReflectiveRecord => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(record)) setOwn(out, k, inlineSmall(v))
  return out
}

/**
 * The reflective record of one evaluation as shown when it fits the prompt
 * (`rawRecord`, then `inlineRecord`).
 *
 * @internal
 */
export const reflectiveRecord = (
  trace: EvaluationTrace,
  options: { readonly withInput: boolean; readonly limits: Limits; readonly component?: string | undefined }
): ReflectiveRecord => inlineRecord(rawRecord(trace, options))

/** Flat records up to this many characters of JSON are shown on one line. */
const INLINE_LENGTH = 100

/**
 * `value` with every small flat record (scalar fields only, short as JSON)
 * turned into one line of JSON: a heading per field costs more than the
 * field itself.
 */
const inlineSmall = (value: unknown): unknown => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(inlineSmall)
  const entries = Object.entries(value)
  if (entries.length > 0 && entries.every(([, v]) => v === null || typeof v !== "object")) {
    const json = JSON.stringify(value)
    if (json.length <= INLINE_LENGTH) return json
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of entries) setOwn(out, k, inlineSmall(v))
  return out
}

/** Values shorter than this (as JSON) are shown again rather than referred to. */
const REPEAT_THRESHOLD = 80

/**
 * The records of one reflection with repeated content shown once: a field
 * whose value equals the same field of an earlier record (a warning every
 * evaluation logs, a shared measurement) becomes `(same as Example n)`.
 * The score and short values are always shown.
 *
 * @internal
 */
export const dropRepeats = (records: ReadonlyArray<ReflectiveRecord>): ReadonlyArray<ReflectiveRecord> => {
  const first = new Map<string, Map<string, number>>()
  return records.map((record, i) => {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(record)) {
      const json = JSON.stringify(v) ?? ""
      const seen = first.get(k)
      const earlier = seen?.get(json)
      if (k !== "Score" && json.length >= REPEAT_THRESHOLD && earlier !== undefined) {
        setOwn(out, k, `(same as Example ${earlier + 1})`)
        continue
      }
      setOwn(out, k, v)
      if (seen === undefined) first.set(k, new Map([[json, i]]))
      else if (!seen.has(json)) seen.set(json, i)
    }
    return out
  })
}
