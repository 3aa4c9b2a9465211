/**
 * The two "nothing left to learn" rules (`internal/engine/learned.ts`).
 * `learnedAll`: every candidate the parent selection may pick is known
 * perfect on the whole training set (checked on hand-built caches).
 * `freeSkips`: the trace ends with free skips on a pass's worth of
 * minibatches; checked against a model of the rule on random traces (free
 * and paid skips, other outcomes, shared and repeated minibatches, lines
 * saved without their minibatch).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { freeSkips, learnedAll } from "../src/internal/engine/learned.js"
import type * as State from "../src/State.js"

const entry = (
  outcome: State.TraceEntry["outcome"],
  metricCalls: number,
  subsampleIds: ReadonlyArray<string> | undefined
): State.TraceEntry => ({
  iteration: 0,
  kind: "reflective",
  parents: [0],
  outcome,
  metricCalls,
  ...(subsampleIds === undefined ? {} : { subsampleIds })
})

const stateOf = (trace: ReadonlyArray<State.TraceEntry>) => ({ trace }) as unknown as State.GepaState

// the rule, spelled out: walk back over the trailing free skips, counting
// changes of minibatch (a line without one counts as a minibatch of its own)
const model = (trace: ReadonlyArray<State.TraceEntry>, epoch: number): number | undefined => {
  const free: Array<State.TraceEntry> = []
  for (let i = trace.length - 1; i >= 1; i--) {
    const t = trace[i]!
    if (t.outcome !== "skipped" || t.kind !== "reflective" || t.metricCalls !== trace[i - 1]!.metricCalls) break
    free.unshift(t)
  }
  const key = (t: State.TraceEntry) => (t.subsampleIds === undefined ? undefined : JSON.stringify(t.subsampleIds))
  let minibatches = 0
  for (let j = free.length - 1; j >= 0; j--) {
    const k = key(free[j]!)
    if (k === undefined || j === free.length - 1 || k !== key(free[j + 1]!)) minibatches++
    if (minibatches >= epoch) {
      let first = trace.length - (free.length - j)
      while (first > 1 && k !== undefined && trace[first - 1]!.outcome === "skipped" && key(trace[first - 1]!) === k) first--
      return trace.length - first
    }
  }
  return undefined
}

const proposalsIn = (reason: string | undefined) => (reason === undefined ? undefined : Number(/the last (\d+) proposals/.exec(reason)?.[1]))

describe("freeSkips", () => {
  it("stops after a pass's worth of minibatches, counting shared ones once", () => {
    const a = ["1", "2", "3"]
    const b = ["4", "5", "6"]
    const trace = [entry("accepted", 10, a), entry("skipped", 10, a), entry("skipped", 10, a), entry("skipped", 10, b)]
    expect(freeSkips(stateOf(trace), 3)).toBeUndefined()
    expect(proposalsIn(freeSkips(stateOf(trace), 2))).toBe(3)
    // a paid skip ends the run of free ones
    expect(freeSkips(stateOf([...trace.slice(0, 2), entry("skipped", 13, b), entry("skipped", 13, a)]), 2)).toBeUndefined()
    // the same ids in another array are the same minibatch
    expect(freeSkips(stateOf([entry("rejected", 4, a), entry("skipped", 4, [...a]), entry("skipped", 4, [...a])]), 2)).toBeUndefined()
  })

  it("agrees with the rule on random traces", () => {
    const ids = fc.constantFrom<ReadonlyArray<string> | undefined>(["1", "2"], ["1", "2"], ["3", "4"], ["1"], [], undefined)
    const line = fc.record({
      outcome: fc.constantFrom<State.TraceEntry["outcome"]>("skipped", "skipped", "skipped", "rejected", "accepted"),
      paid: fc.boolean(),
      ids
    })
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.integer({ min: 1, max: 6 }), (lines, epoch) => {
        let calls = 0
        const trace = lines.map((l) => entry(l.outcome, l.paid ? (calls += 3) : calls, l.ids === undefined ? undefined : [...l.ids]))
        expect(proposalsIn(freeSkips(stateOf(trace), epoch))).toBe(model(trace, epoch))
      }),
      { numRuns: 2000 }
    )
  })
})

describe("learnedAll", () => {
  const ids = Array.from({ length: 150 }, (_, i) => `t${i}`)
  const candidates = [{ a: "seed" }, { a: "child" }, { a: "grandchild" }]
  const skipped = entry("skipped", 10, ["t1"])
  const state = (trace: ReadonlyArray<State.TraceEntry>) => ({ trace, candidates }) as unknown as State.GepaState
  // a custom selection: its choices cannot be told, so every candidate counts
  const r = (skipPerfect = true) => ({ skipPerfect, perfectScore: 1, trainIds: ids, selectCandidate: () => 0 })
  // every candidate perfect on every example, but `imperfect` (candidate text -> id) and `unknown`
  const knownOf =
    (imperfect: ReadonlyMap<string, string>, unknown: ReadonlyMap<string, string>) =>
    (candidate: { readonly [k: string]: string }, asked: ReadonlyArray<string>) =>
      asked.map((id) => (unknown.get(candidate.a!) === id ? undefined : imperfect.get(candidate.a!) === id ? 0.5 : 1))

  it("stops only when every candidate the selection may pick is known perfect on the whole training set", () => {
    const none = new Map<string, string>()
    expect(learnedAll(r(), state([skipped]), 10, knownOf(none, none))).toBe(
      "nothing left to learn: all 3 candidates the parent selection can pick are known to be perfect on all 150 training examples"
    )
    // one example of one candidate imperfect, or not known yet (the last example: past the first slice)
    expect(learnedAll(r(), state([skipped]), 10, knownOf(new Map([["child", "t149"]]), none))).toBeUndefined()
    expect(learnedAll(r(), state([skipped]), 10, knownOf(none, new Map([["grandchild", "t149"]])))).toBeUndefined()
    // asked only after a skipped reflective proposal, with the cache readable and skips on
    expect(learnedAll(r(), state([entry("rejected", 10, ["t1"])]), 10, knownOf(none, none))).toBeUndefined()
    expect(learnedAll(r(false), state([skipped]), 10, knownOf(none, none))).toBeUndefined()
    expect(learnedAll(r(), state([skipped]), 10, undefined)).toBeUndefined()
    expect(learnedAll(r(), state([skipped]), 10, () => undefined)).toBeUndefined()
  })

  it("reads the cache as the next proposal would see it", () => {
    const seen: Array<number> = []
    learnedAll(r(), state([skipped]), 42, (_, asked, sees) => {
      seen.push(sees)
      return asked.map(() => 1)
    })
    expect(new Set(seen)).toEqual(new Set([42]))
  })
})
