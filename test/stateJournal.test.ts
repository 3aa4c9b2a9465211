import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Journal from "../src/internal/runDir/stateJournal.js"

// JSON values as the state holds them: no undefined inside arrays, no -0 (JSON writes it as 0)
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0)),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 6 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constant("__proto__")), tie("value"), { maxKeys: 5 })
  )
})).value

/** A value changed a little: what a save of the next iteration looks like. */
interface Rng {
  readonly nextInt: (min: number, max: number) => number
}

/** A small deterministic generator (mulberry32). */
const rng = (seed: number): Rng => {
  let a = seed >>> 0
  return {
    nextInt: (min, max) => {
      a = (a + 0x6d2b79f5) >>> 0
      let t = Math.imul(a ^ (a >>> 15), 1 | a)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return min + (((t ^ (t >>> 14)) >>> 0) % (max - min + 1))
    }
  }
}

const edit = (value: unknown, rng: Rng): unknown => {
  if (Array.isArray(value)) {
    const out = value.map((x) => (rng.nextInt(0, 4) === 0 ? edit(x, rng) : x))
    const grow = rng.nextInt(0, 3)
    for (let i = 0; i < grow; i++) out.push(rng.nextInt(0, 100))
    return rng.nextInt(0, 6) === 0 ? out.slice(0, rng.nextInt(0, out.length)) : out
  }
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      const r = rng.nextInt(0, 6)
      if (r === 0) continue
      out[k] = r === 1 ? edit(v, rng) : v
    }
    if (rng.nextInt(0, 3) === 0) out[`k${rng.nextInt(0, 9)}`] = rng.nextInt(0, 9)
    return out
  }
  return rng.nextInt(0, 3) === 0 ? rng.nextInt(0, 100) : value
}

const roundTrip = (u: unknown): unknown => JSON.parse(JSON.stringify(u))

describe("state journal", () => {
  it("apply(prev, diff(prev, next)) equals next, through JSON", () => {
    // unrelated values (the change is a replacement) and small edits of one value (the change is a patch)
    fc.assert(
      fc.property(json, fc.integer(), (prev, seed) => {
        const next = edit(prev, rng(seed))
        const change = Journal.diff(prev, next)
        const restored = change === undefined ? prev : Journal.apply(prev, roundTrip(change) as Journal.Change)
        expect(roundTrip(restored)).toEqual(roundTrip(next))
      })
    )
    fc.assert(
      fc.property(json, json, (prev, next) => {
        const change = Journal.diff(prev, next)
        const restored = change === undefined ? prev : Journal.apply(prev, roundTrip(change) as Journal.Change)
        expect(roundTrip(restored)).toEqual(roundTrip(next))
      })
    )
  })

  it("a growing array becomes an append of its new elements only", () => {
    const trace = Array.from({ length: 1000 }, (_, i) => ({ iteration: i, outcome: "accepted" }))
    const next = [...trace, { iteration: 1000, outcome: "rejected" }]
    const change = Journal.diff({ trace, iteration: 1000 }, { trace: next, iteration: 1001 })
    expect(change).toEqual({ o: { trace: { e: [[1000, { v: { iteration: 1000, outcome: "rejected" } }]], n: 1001 }, iteration: { v: 1001 } } })
  })

  it("a growing array named so journals what was appended, as a full comparison would, without walking its entries", () => {
    const growing = new Set(["trace"])
    fc.assert(
      fc.property(fc.array(json, { maxLength: 8 }), fc.array(json, { maxLength: 4 }), json, (kept, added, other) => {
        const prev = { trace: kept, other: 1 }
        // the same entries (the engine appends to a copy), then the new ones
        const next = { trace: [...kept, ...added], other }
        const change = Journal.diff(prev, next, undefined, growing)
        expect(change).toEqual(Journal.diff(prev, next))
        const restored = change === undefined ? prev : Journal.apply(prev, roundTrip(change) as Journal.Change)
        expect(roundTrip(restored)).toEqual(roundTrip(next))
      })
    )
    // the entries it had are not compared: a proxy counts the reads
    let reads = 0
    const kept = Array.from({ length: 1000 }, (_, i) => ({ iteration: i }))
    const counted = new Proxy(kept, {
      get: (target, key) => {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++
        return Reflect.get(target, key, target)
      }
    })
    const change = Journal.diff({ trace: counted }, { trace: [...kept, { iteration: 1000 }] }, undefined, growing)
    expect(change).toEqual({ o: { trace: { e: [[1000, { v: { iteration: 1000 } }]], n: 1001 } } })
    expect(reads).toBeLessThanOrEqual(1)
  })

  it("unchanged values and skipped keys write nothing; undefined is an absent key", () => {
    const state = { a: [1, 2], b: { c: 1 }, candidates: ["x"] }
    expect(Journal.diff(state, { ...state, b: { c: 1 } })).toBeUndefined()
    expect(Journal.diff(state, { ...state, candidates: ["x", "y"] }, new Set(["candidates"]))).toBeUndefined()
    expect(Journal.diff({ a: 1 }, { a: 1, f: undefined })).toBeUndefined()
    expect(Journal.diff({ a: 1, f: 2 }, { a: 1, f: undefined })).toEqual({ o: {}, d: ["f"] })
  })

  it("a change that does not fit the value is refused", () => {
    expect(() => Journal.apply(3, { o: {} })).toThrow()
    expect(() => Journal.apply([1], { e: [[3, { v: 1 }]], n: 4 })).toThrow()
  })

  it("parseLines keeps the complete prefix: a cut or garbled line ends it", () => {
    const line = (g: number) => JSON.stringify({ g, n: 1 }) + "\n"
    const text = line(1) + line(2) + "{\"g\":3,"
    const log = Journal.parseLines(text, Journal.isJournalLine)
    expect(log.lines.map((l) => l.g)).toEqual([1, 2])
    expect(log.ends).toEqual([line(1).length, line(1).length + line(2).length])
    expect(Journal.parseLines(line(1) + "garbled\n" + line(3), Journal.isJournalLine).lines).toHaveLength(1)
  })

  it("snapshots are due when the journal would outgrow the snapshot", () => {
    expect(Journal.shouldSnapshot(1000, 900, 50)).toBe(false)
    expect(Journal.shouldSnapshot(1000, 980, 50)).toBe(true)
  })
})
