/**
 * What a run's meaning depends on, as content hashes: every example of the
 * training and validation sets (a stable serialization of the data instance,
 * hashed), and the settings that change what a run computes. A saved state
 * carries its fingerprint; a resume whose data or settings differ is refused
 * (`ResumeConflict` naming the field, and for data the first differing
 * example id), so a stored score can never be attached to other content.
 *
 * The same examples in another order are refused too: ids of array data are
 * positions, and the training order drives the minibatch sampler, so a
 * reordered set is a different run.
 *
 * Settings that do not change the run's meaning may change between a stop
 * and a resume: the budget and stop conditions, models, timeouts, retries,
 * `maxConcurrency`, `chunkSize`.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { createHash } from "node:crypto"
import { at } from "./internal/shared/invariant.js"

/**
 * A stable serialization of a value: object keys sorted, `undefined`
 * properties left out (as JSON does), and the values JSON cannot hold
 * written with a tag (`bigint`, `Date`, `Map`, `Set`, typed arrays,
 * non-finite numbers), so that equal data always serializes alike and
 * different data differently. Functions and symbols serialize by kind only;
 * a cycle is written as a back-reference.
 *
 * @since 0.2.0
 * @category utils
 */
export const stableStringify = (value: unknown): string => {
  const seen: Array<unknown> = []
  const go = (v: unknown): string => {
    switch (typeof v) {
      case "string":
        return JSON.stringify(v)
      case "number":
        return Number.isFinite(v) ? (Object.is(v, -0) ? "-0" : String(v)) : `#${String(v)}`
      case "boolean":
        return v ? "true" : "false"
      case "bigint":
        return `#${v.toString()}n`
      case "undefined":
        return "#undefined"
      case "function":
        return "#function"
      case "symbol":
        return "#symbol"
    }
    // (undefined was written above; testing it again narrows `v` to an object)
    if (v === null || v === undefined) return "null"
    const back = seen.indexOf(v)
    if (back >= 0) return `#ref${back}`
    seen.push(v)
    try {
      if (Array.isArray(v)) return `[${v.map(go).join(",")}]`
      if (v instanceof Date) return `#date${JSON.stringify(Number.isNaN(v.getTime()) ? "invalid" : v.toISOString())}`
      if (v instanceof Map) {
        const entries = [...v.entries()].map(([k, x]) => `${go(k)}:${go(x)}`).sort()
        return `#map{${entries.join(",")}}`
      }
      if (v instanceof Set) return `#set[${[...v].map(go).sort().join(",")}]`
      if (ArrayBuffer.isView(v)) return `#bytes[${Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)).join(",")}]`
      const entries: Array<[string, unknown]> = Object.entries(v).filter(([, x]) => x !== undefined)
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${go(x)}`).join(",")}}`
    } finally {
      seen.pop()
    }
  }
  return go(value)
}

/**
 * The content hash of one example: equal data, equal hash, whatever the key
 * order of its objects.
 *
 * @since 0.2.0
 * @category utils
 */
export const exampleHash = (example: unknown): string => createHash("sha256").update(stableStringify(example)).digest("hex").slice(0, 24)

/**
 * The examples of one data set: ids in the loader's order, with the content
 * hash of each (same positions).
 *
 * @since 0.2.0
 * @category models
 */
export const DataFingerprint = Schema.Struct({
  ids: Schema.Array(Schema.String),
  hashes: Schema.Array(Schema.String)
})

/**
 * The ids and content hashes of a data set, as decoded from `DataFingerprint`.
 *
 * @since 0.2.0
 * @category models
 */
export type DataFingerprint = typeof DataFingerprint.Type

/**
 * A run's fingerprint. `settings` maps each meaning-changing setting to a
 * canonical text (a custom function is `"custom"`: it cannot be compared, so
 * any custom function matches another).
 *
 * @since 0.2.0
 * @category models
 */
export const RunFingerprint = Schema.Struct({
  settings: Schema.Record({ key: Schema.String, value: Schema.String }),
  trainset: DataFingerprint,
  valset: DataFingerprint
})

/**
 * What a resume is checked against, as decoded from `RunFingerprint`.
 *
 * @since 0.2.0
 * @category models
 */
export type RunFingerprint = typeof RunFingerprint.Type

/**
 * The first difference between a saved and a requested data set, as the
 * `saved` / `requested` texts of a conflict, or `undefined` when they are the
 * same examples in the same order.
 *
 * @since 0.2.0
 * @category utils
 */
export const compareData = (
  saved: DataFingerprint,
  requested: DataFingerprint
): { readonly saved: string; readonly requested: string } | undefined => {
  const n = Math.min(saved.ids.length, requested.ids.length)
  for (let i = 0; i < n; i++) {
    if (saved.ids[i] !== requested.ids[i] || saved.hashes[i] !== requested.hashes[i]) {
      const id = at(saved.ids, i)
      const pos = requested.ids.indexOf(id)
      if (pos >= 0 && requested.hashes[pos] === saved.hashes[i]) {
        return {
          saved: `example "${id}" at position ${i}`,
          requested: `the same examples in a different order (example "${id}" at position ${pos}); reordered data is refused`
        }
      }
      return pos < 0
        ? { saved: `example "${id}" at position ${i}`, requested: `no example with id "${id}" (position ${i} is "${requested.ids[i]}")` }
        : { saved: `example "${id}" with content ${saved.hashes[i]}`, requested: `example "${id}" with different content (${requested.hashes[pos]})` }
    }
  }
  if (saved.ids.length !== requested.ids.length) {
    const extra = saved.ids.length > requested.ids.length ? at(saved.ids, n) : at(requested.ids, n)
    return {
      saved: `${saved.ids.length} examples`,
      requested: `${requested.ids.length} examples (first difference: example "${extra}" at position ${n})`
    }
  }
  return undefined
}

/**
 * The first setting that differs, or `undefined`. A setting missing on one
 * side (saved by a version that did not record it) is not compared.
 *
 * @since 0.2.0
 * @category utils
 */
export const compareSettings = (
  saved: Readonly<Record<string, string>>,
  requested: Readonly<Record<string, string>>
): { readonly field: string; readonly saved: string; readonly requested: string } | undefined => {
  for (const [field, r] of Object.entries(requested).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const s = saved[field]
    if (s !== undefined && s !== r) return { field, saved: s, requested: r }
  }
  return undefined
}
