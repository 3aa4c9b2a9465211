/**
 * Type tests: `src/internal/state.ts` sees the state through `Fields`, the
 * fields it reads and writes (it cannot import `State.ts`, which imports
 * it). `addCandidate` writes them over any state that has them, so each
 * must have exactly the type `GepaState` gives it, not a wider one.
 */
import { describe, expectTypeOf, it } from "vitest"
import type { Fields } from "../../src/internal/state.js"
import type { GepaState } from "../../src/State.js"

describe("State's implementation", () => {
  it("types each field it uses as GepaState does", () => {
    expectTypeOf<Fields>().toEqualTypeOf<Pick<GepaState, keyof Fields>>()
  })
})
