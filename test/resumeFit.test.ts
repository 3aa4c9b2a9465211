/**
 * Resume's fitting of saved plans in the budget (issue 35): what an
 * interrupted process paid and stored for a plan it never folded is owed to
 * that plan's reservation; once the plan is dropped, those calls count as
 * spent, and the plans left must fit them too.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as Ledger from "../src/Ledger.js"
import type { Owed } from "../src/internal/engine/ledger.js"
import * as State from "../src/State.js"
import type { Resolved } from "../src/internal/engine/resolved.js"
import { fitPending } from "../src/internal/engine/resume.js"

const valIds = Array.from({ length: 12 }, (_, i) => String(i))
// fitPending reads the budget, the validation set and the step width of a resolved configuration
const resolved = (budget: number) => ({ budget, valIds, parallelProposals: 2 }) as unknown as Resolved<unknown, unknown, unknown>

const stateWith = (metricCalls: number, lost: number, pending: ReadonlyArray<State.PendingProposal>): State.GepaState => {
  const initial = Either.getOrThrow(State.initial({
    seed: 7,
    seedCandidate: { a: "seed" },
    frontierType: "instance",
    valset: { scores: Object.fromEntries(valIds.map((id) => [id, 0])) },
    metricCalls
  }))
  return { ...initial, lostMetricCalls: lost, pending }
}

const reflective = (iteration: number, reserved: number, val: ReadonlyArray<string>): State.PendingProposal => ({
  _tag: "Reflective",
  iteration,
  parent: 0,
  ids: ["20", "21", "22"],
  components: ["a"],
  valIds: val,
  base: 1,
  reserved,
  remainder: true
})

// what the run may still pay for: its real spending (spent, lost, owed) plus every launched plan's worst case
const worstCase = (budget: number, state: State.GepaState, owed: Owed) => {
  const b = Ledger.balance(budget, state, owed)
  return b.spent + b.reserved
}

describe("fitPending", () => {
  it("counts the owed results of a dropped plan as spent: the plans left fit them too", () => {
    // seen in a killed run: 149 spent, 6 lost, results owed to both plans in flight (6 and 1)
    const state = stateWith(149, 6, [reflective(14, 15, ["5", "9", "10"]), reflective(15, 6, ["1", "3"])])
    const owed: Owed = new Map([[14, 6], [15, 1]])
    const fitted = fitPending(resolved(170), state, owed)
    expect(fitted.state.pending.map((p) => p.iteration)).toEqual([14])
    expect(fitted.events.map((e) => e._tag)).toEqual(["ProposalEnded"])
    // dropping the last plan alone leaves 1 call over: the owed result it leaves behind
    expect(worstCase(170, fitted.state, owed)).toBeLessThanOrEqual(170)
    expect(fitted.state.pending[0]!.reserved).toBe(14)
  })

  it("leaves plans alone when the budget holds them", () => {
    const state = stateWith(100, 6, [reflective(14, 15, ["5", "9", "10"]), reflective(15, 6, ["1", "3"])])
    const owed: Owed = new Map([[14, 6], [15, 1]])
    expect(fitPending(resolved(170), state, owed).state).toBe(state)
  })

  it("drops every plan when not even the first fits", () => {
    const state = stateWith(160, 6, [reflective(14, 15, ["5", "9", "10"]), reflective(15, 6, ["1", "3"])])
    const owed: Owed = new Map([[14, 6], [15, 1]])
    const fitted = fitPending(resolved(170), state, owed)
    expect(fitted.state.pending).toEqual([])
    expect(fitted.state.trace.filter((t) => t.outcome === "skipped").map((t) => t.iteration)).toEqual([14, 15])
  })
})
