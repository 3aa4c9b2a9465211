/**
 * The ledger against an adapter's own count. A model of a run drives the
 * ledger exactly as the engine and the run folder do (plan by reservation,
 * write-ahead blocks, spend on fold, lost and owed calls on resume, settle at
 * the end) through random sequences of plans, evaluations, folds, saves,
 * pauses and crashes, and counts the adapter's calls itself.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Ledger from "../src/internal/engine/ledger.js"
import * as PublicLedger from "../src/Ledger.js"

/** One proposal as planned: its worst case and the evaluations it makes (fixed by the plan, so a relaunch replays them). */
interface Script {
  readonly reserved: number
  readonly evaluations: ReadonlyArray<number>
}
const script = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 3 }).chain((evaluations) =>
  fc.integer({ min: 0, max: 4 }).map((slack): Script => ({ evaluations, reserved: Ledger.sum(evaluations) + slack }))
)

type Op =
  | { readonly _tag: "plan" }
  | { readonly _tag: "run"; readonly pick: number; readonly chunk: number; readonly block: number }
  | {
    readonly _tag: "interrupt"
    readonly pick: number
    readonly chunk: number
    readonly block: number
    readonly afterChunks: number
    /** pause: a save and a clean stop; stored: killed after the chunk's results were stored; cut: killed during the chunk's calls */
    readonly how: "pause" | "stored" | "cut"
  }
  | { readonly _tag: "fold"; readonly pick: number }
  | { readonly _tag: "save" }
  | { readonly _tag: "crash" }

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant<Op>({ _tag: "plan" }), weight: 4 },
  {
    arbitrary: fc.record({ pick: fc.nat(), chunk: fc.integer({ min: 1, max: 3 }), block: fc.integer({ min: 1, max: 4 }) })
      .map((o): Op => ({ _tag: "run", ...o })),
    weight: 6
  },
  {
    arbitrary: fc.record({
      pick: fc.nat(),
      chunk: fc.integer({ min: 1, max: 3 }),
      block: fc.integer({ min: 1, max: 4 }),
      afterChunks: fc.nat({ max: 2 }),
      how: fc.constantFrom("pause" as const, "stored" as const, "cut" as const)
    }).map((o): Op => ({ _tag: "interrupt", ...o })),
    weight: 1
  },
  { arbitrary: fc.nat().map((pick): Op => ({ _tag: "fold", pick })), weight: 3 },
  { arbitrary: fc.constant<Op>({ _tag: "save" }), weight: 2 },
  { arbitrary: fc.constant<Op>({ _tag: "crash" }), weight: 1 }
)

interface Book extends Ledger.Book {
  /** the next iteration to plan */
  readonly iteration: number
  readonly folded: ReadonlySet<number>
}

interface Outcome {
  /** calls the adapter ran */
  readonly adapterCalls: number
  /** the run's charge at the end: spent plus lost */
  readonly charged: number
  /** calls on record and never started when a process was killed (charged as lost, never run) */
  readonly overRecorded: number
  /** calls killed mid-call: charged once as lost and run again by the relaunched proposal */
  readonly cutShort: number
  /** the adapter's count never went past this */
  readonly peakOverBudget: number
}

const simulate = (budget: number | undefined, scripts: readonly [Script, ...Array<Script>], ops: ReadonlyArray<Op>): Outcome => {
  const scriptOf = (iteration: number): Script => scripts[iteration % scripts.length] ?? scripts[0]
  // the world outside the process: the adapter, the write-ahead record, stored results, the saved state
  let adapterCalls = 0
  let overRecorded = 0
  let cutShort = 0
  let peakOverBudget = Number.NEGATIVE_INFINITY
  const record: Array<{ readonly n?: number; readonly base?: number }> = []
  const stored: Array<number> = []
  let saved: Book | undefined
  // the process
  let book: Book = { metricCalls: 0, lostMetricCalls: 0, pending: [], iteration: 0, folded: new Set() }
  let owed = Ledger.owedBook()
  let progress = new Map<number, { next: number; charged: number }>()

  const check = () => {
    if (budget !== undefined) peakOverBudget = Math.max(peakOverBudget, adapterCalls - budget)
    const balance = Ledger.balance(budget, book, owed.byIteration)
    expect(balance.reserved).toBe(Ledger.sum(book.pending.map((p) => p.reserved)))
  }
  const resume = () => {
    const from: Book = saved ?? { metricCalls: 0, lostMetricCalls: 0, pending: [], iteration: 0, folded: new Set() }
    owed = Ledger.owedBook()
    // results the saved state does not count: owed (charged when used)
    for (const i of stored) if (!from.folded.has(i)) owed.add(i, 1)
    const onRecord = record.reduce(Ledger.onRecordAfter, 0)
    const lost = Ledger.lostOnRecord(onRecord, Ledger.accounted(from, owed.total()))
    book = Ledger.chargeLost(from, lost)
    // proposals in flight at the save start again as planned
    progress = new Map(from.pending.map((p) => [p.iteration, { next: 0, charged: 0 }]))
  }
  const pick = (n: number) => (book.pending.length === 0 ? undefined : book.pending[n % book.pending.length])
  /** one evaluation of a proposal in flight; true when the process ended during it */
  const evaluate = (n: number, chunk: number, block: number, interrupt?: { readonly afterChunks: number; readonly how: "pause" | "stored" | "cut" }) => {
    const plan = pick(n)
    if (plan === undefined) return false
    const p = progress.get(plan.iteration)
    if (p === undefined) return false
    const size = scriptOf(plan.iteration).evaluations[p.next]
    if (size === undefined) return false
    // results the proposal paid for before a crash serve it first (owed hits)
    const hits = Math.min(size, owed.byIteration.get(plan.iteration) ?? 0)
    owed.add(plan.iteration, -hits)
    const toRun = size - hits
    const writeAhead = Ledger.writeAhead(toRun, Math.max(block, Math.ceil(toRun / 2)))
    let started = 0
    for (let c = 0; started < toRun; c++) {
      const calls = Math.min(chunk, toRun - started)
      const more = writeAhead.admit(calls)
      if (more > 0) record.push({ n: more })
      writeAhead.start(calls)
      adapterCalls += calls
      started += calls
      check()
      if (interrupt !== undefined && c === interrupt.afterChunks) {
        if (interrupt.how === "cut") cutShort += calls
        else for (let k = 0; k < calls; k++) stored.push(plan.iteration)
        if (interrupt.how === "pause") {
          // a pause gives back what it reserved and never started, and saves
          const unused = writeAhead.unused()
          if (unused > 0) record.push({ n: -unused })
          saved = book
        } else {
          overRecorded += writeAhead.unused()
        }
        resume()
        return true
      }
      for (let k = 0; k < calls; k++) stored.push(plan.iteration)
    }
    p.next++
    p.charged = Ledger.sum([p.charged, Ledger.charge(toRun, hits)])
    return false
  }

  for (const o of ops) {
    switch (o._tag) {
      case "plan": {
        const s = scriptOf(book.iteration)
        // reserve before evaluating: planned only when the worst case fits
        if (s.reserved <= Ledger.available(Ledger.balance(budget, book, owed.byIteration))) {
          progress.set(book.iteration, { next: 0, charged: 0 })
          book = { ...book, pending: [...book.pending, { iteration: book.iteration, reserved: s.reserved }], iteration: book.iteration + 1 }
        }
        break
      }
      case "run":
        evaluate(o.pick, o.chunk, o.block)
        break
      case "interrupt":
        evaluate(o.pick, o.chunk, o.block, o)
        break
      case "fold": {
        const plan = pick(o.pick)
        if (plan === undefined) break
        const p = progress.get(plan.iteration)
        if (p === undefined) break
        // a proposal folds once its evaluations are done; its reservation is released and what it spent added
        while (p.next < scriptOf(plan.iteration).evaluations.length) evaluate(book.pending.indexOf(plan), 1, 1)
        progress.delete(plan.iteration)
        book = Ledger.spend({
          ...book,
          pending: book.pending.filter((x) => x !== plan),
          folded: new Set([...book.folded, plan.iteration])
        }, p.charged)
        break
      }
      case "save":
        saved = book
        break
      case "crash":
        resume()
        break
    }
    check()
  }
  // the end of the run: everything in flight folds, unused owed results are lost work
  for (let plan = book.pending[0]; plan !== undefined; plan = book.pending[0]) {
    const p = progress.get(plan.iteration)
    if (p === undefined) throw new Error(`no progress for iteration ${plan.iteration}`)
    while (p.next < scriptOf(plan.iteration).evaluations.length) evaluate(0, 1, 1)
    book = Ledger.spend({ ...book, pending: book.pending.slice(1), folded: new Set([...book.folded, plan.iteration]) }, p.charged)
    check()
  }
  const final = Ledger.settle(book, owed.byIteration)
  return {
    adapterCalls,
    charged: Ledger.accounted(final, 0),
    overRecorded,
    cutShort,
    peakOverBudget
  }
}

describe("Ledger", () => {
  it("reserve/spend/release/crash/resume: the charge equals the adapter's own count, and the adapter stays within the budget", () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
        fc.tuple(script, fc.array(script, { maxLength: 5 })).map(([s, more]): readonly [Script, ...Array<Script>] => [s, ...more]),
        fc.array(op, { maxLength: 60 }),
        (budget, scripts, ops) => {
          const o = simulate(budget, scripts, ops)
          // every call the adapter ran is charged once, as spent or as lost work; the only
          // calls charged and never run are those on record at a kill that had not started
          expect(o.charged).toBe(o.adapterCalls + o.overRecorded)
          // never past the budget, except by re-running calls a kill cut short (charged as lost)
          if (budget !== undefined) expect(o.peakOverBudget).toBeLessThanOrEqual(o.cutShort)
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("without kills: the charge is exactly the adapter's count and never exceeds the budget", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 5, max: 60 }),
        fc.tuple(script, fc.array(script, { maxLength: 5 })).map(([s, more]): readonly [Script, ...Array<Script>] => [s, ...more]),
        fc.array(op.filter((o) => o._tag !== "crash" && (o._tag !== "interrupt" || o.how === "pause")), { maxLength: 60 }),
        (budget, scripts, ops) => {
          const o = simulate(budget, scripts, ops)
          expect(o.overRecorded).toBe(0)
          expect(o.charged).toBe(o.adapterCalls)
          expect(o.adapterCalls).toBeLessThanOrEqual(budget)
        }
      ),
      { numRuns: 1000 }
    )
  })

  it("write-ahead blocks: a call is on record before it starts, and what never started is given back", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.nat({ max: 40 }),
        (total, block, chunk, stopAt) => {
          const w = Ledger.writeAhead(total, block)
          let onRecord = 0
          let started = 0
          while (started < Math.min(total, stopAt)) {
            const calls = Math.min(chunk, total - started)
            onRecord += w.admit(calls)
            expect(onRecord).toBeGreaterThanOrEqual(started + calls)
            expect(onRecord).toBeLessThanOrEqual(total)
            w.start(calls)
            started += calls
          }
          expect(onRecord - w.unused()).toBe(started)
        }
      )
    )
  })

  it("a follower counts what a run adds, not what a resumed run's saved state spent", () => {
    const f = PublicLedger.follower()
    f.start(false)
    expect([f.to(4), f.to(4), f.to(9), f.to(7), f.to(10)]).toEqual([4, 0, 5, 0, 1])
    f.start(true)
    expect([f.to(100), f.to(103)]).toEqual([0, 3])
  })

  it("balance: owed results of a proposal in flight are within its reservation, the others are spent", () => {
    const book = { metricCalls: 10, lostMetricCalls: 2, pending: [{ iteration: 4, reserved: 6 }] }
    const b = PublicLedger.balance(30, book, new Map([[4, 3], [7, 2]]))
    expect(b).toEqual({ budget: 30, spent: 14, reserved: 6 })
    expect(PublicLedger.available(b)).toBe(10)
    expect(PublicLedger.available(PublicLedger.balance(undefined, book))).toBe(Number.POSITIVE_INFINITY)
  })
})
