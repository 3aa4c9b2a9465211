import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { field, isRecord } from "../src/internal/shared/fields.js"
import { at, defined } from "../src/internal/shared/invariant.js"

describe("invariant helpers", () => {
  it("at reads every index below the length, as indexing does", () => {
    fc.assert(fc.property(fc.array(fc.integer()), (xs) => {
      xs.forEach((x, i) => expect(at(xs, i)).toBe(x))
      expect(() => at(xs, xs.length)).toThrow(`no element at index ${xs.length}`)
      expect(() => at(xs, -1)).toThrow("internal error")
    }))
  })

  it("at reads typed arrays", () => {
    const xs = new Float64Array([1.5, -2])
    expect(at(xs, 1)).toBe(-2)
    expect(() => at(xs, 2)).toThrow("length 2")
  })

  it("defined gives the value back and names a missing one", () => {
    expect(defined(0, "zero")).toBe(0)
    expect(defined(null, "null")).toBe(null)
    expect(() => defined(undefined, "the parent's scores")).toThrow("internal error: the parent's scores is missing")
  })
})

describe("fields of unknown values", () => {
  it("reads a field of an object and nothing of anything else", () => {
    expect(field({ code: "ENOENT" }, "code")).toBe("ENOENT")
    expect(field(Object.assign(new Error("x"), { code: 7 }), "code")).toBe(7)
    for (const u of [null, undefined, "text", 3, true]) {
      expect(isRecord(u)).toBe(false)
      expect(field(u, "code")).toBeUndefined()
    }
    expect(isRecord([])).toBe(true)
  })
})
