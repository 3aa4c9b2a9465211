/**
 * Crash exactness (issue 12): runs with a run directory are killed with
 * SIGKILL at chosen points (inside a save, right after an append or an
 * fsync, during reflection, during validation, mid-evaluation; two proposals
 * in flight, merges on), resumed until done, and checked against an
 * uninterrupted run with an independent ledger of every example the adapter
 * started (test/fixtures/killChild.ts).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Candidate from "../src/Candidate.js"
import * as Gepa from "../src/Gepa.js"
import * as RunDir from "../src/RunDir.js"
import * as State from "../src/State.js"
import * as Toy from "./fixtures/toy.js"
import { killConfig } from "./fixtures/killChild.js"
import { cachedKeys, countBy, paidTwiceByOneStep, pooled, readLedger, rerunCompleted, runChild } from "./fixtures/killRun.js"
import { light } from "./fixtures/repeats.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"

// eight steps of the default's six proposals (a two-component candidate)
const iterations = 48

interface Outcome {
  readonly dir: string
  readonly kills: number
  readonly result: Gepa.OptimizeResult<string>
  readonly ledger: ReadonlyArray<string>
  readonly restarts: ReadonlyArray<{ readonly at: number; readonly cached: Map<string, number> }>
}

/** One run: killed at each point in turn, then resumed until done; invariants checked after every exit. */
const killedRun = async (budget: number, points: ReadonlyArray<string>): Promise<Outcome> => {
  const dir = makeTmpDir("gepa-crash-")
  let accepted: ReadonlyArray<Candidate.Candidate> = []
  let kills = 0
  const restarts: Array<{ readonly at: number; readonly cached: Map<string, number> }> = []
  for (const kill of [...points, "none", "none"]) {
    const killed = await runChild(dir, budget, iterations, kill)
    // the state on disk always decodes, and holds every candidate accepted before
    const stateFile = path.join(dir, RunDir.FILES.state)
    if (fs.existsSync(stateFile)) {
      let envelope: RunDir.SavedState | undefined
      try {
        envelope = JSON.parse(fs.readFileSync(stateFile, "utf8")) as RunDir.SavedState
      } catch {
        assert.fail(`${kill}: ${RunDir.FILES.state} is not JSON`)
      }
      assert.isTrue(Either.isRight(
        Schema.decodeUnknownEither(State.GepaState)({
          ...(envelope!.state as object),
          candidates: [],
          valScores: [],
          objectiveScores: []
        })
      ))
    }
    const saved = await Effect.runPromise(RunDir.readState(dir))
    if (Option.isSome(saved)) {
      for (const c of accepted) expect(saved.value.candidates.some((x) => Candidate.equals(x, c))).toBe(true)
      accepted = saved.value.candidates
    }
    if (killed) {
      kills++
      restarts.push({ at: readLedger(dir).length, cached: cachedKeys(dir) })
    } else break
  }
  const ledger = readLedger(dir)
  const result = JSON.parse(fs.readFileSync(path.join(dir, RunDir.FILES.result), "utf8")) as Gepa.OptimizeResult<string>
  return { dir, kills, result, ledger, restarts }
}

/** the uninterrupted run, with its own ledger */
const baseline = (budget: number) =>
  Effect.gen(function*() {
    const toy = yield* Toy.makeAdapter()
    const ledger: Array<string> = []
    const adapter: typeof toy.adapter = {
      ...toy.adapter,
      evaluate: (batch, candidate, options) =>
        Effect.suspend(() => {
          const hash = Candidate.hash(candidate)
          for (const ex of batch) ledger.push(`${hash}\t${ex.id}\t${options.captureTraces ? "T" : "N"}`)
          return toy.adapter.evaluate(batch, candidate, options)
        })
    }
    const result = yield* Gepa.optimize(killConfig(adapter, Toy.reflectionModel(), budget, iterations))
    return { result, ledger }
  })

describe("crash exactness", () => {
  // 25 kill points (light: 10); the budget of 600 is not binding (the run ends after 48 iterations,
  // about 275 calls, and two steps in flight reserve their worst case, about 170 calls, on top of
  // what a kill loses), 170 is
  const loose = 600
  const tight = 170
  const runs: ReadonlyArray<{ readonly budget: number; readonly points: ReadonlyArray<string> }> = [
    { budget: loose, points: ["rename:1", "rename:4"] },
    { budget: loose, points: ["write:15", "write:120"] },
    { budget: loose, points: ["fsync:3", "fsync:25", "fsync:20"] },
    { budget: loose, points: ["reflect:1", "reflect:4"] },
    { budget: loose, points: ["validate:1", "validate:20"] },
    { budget: loose, points: ["eval:20", "eval:100", "eval:60"] },
    { budget: loose, points: ["rename:7", "reflect:3", "validate:5"] },
    // (a whole run makes about 200 writes, a number that varies with timing: a first point near it may never be reached)
    { budget: loose, points: ["write:100", "fsync:12", "eval:30"] },
    { budget: tight, points: ["eval:50", "validate:4"] },
    { budget: tight, points: ["fsync:30", "reflect:2", "rename:3"] }
  ]
  // light (test/fixtures/repeats.ts): two runs per budget, every kind of kill point still hit
  const chosen = light ? [runs[7]!, runs[8]!, runs[9]!, runs[3]!] : runs
  const pointCount = chosen.reduce((n, r) => n + r.points.length, 0)

  it.effect(
    `SIGKILL at ${pointCount} points: state decodes, nothing accepted lost, nothing completed re-run, real calls within budget, same result`,
    () =>
      Effect.gen(function*() {
        const expected = new Map([[loose, yield* baseline(loose)], [tight, yield* baseline(tight)]])
        expect(expected.get(loose)!.result.iterations).toBe(iterations)
        assert.include(expected.get(tight)!.result.stopReason, "budget")
        const outcomes = yield* Effect.promise(() => pooled(chosen.map((r) => () => killedRun(r.budget, r.points)), 4))
        let totalKills = 0
        for (const [k, outcome] of outcomes.entries()) {
          const { kills, result, ledger } = outcome
          const { budget, points } = chosen[k]!
          const label = `${points.join(",")} (budget ${budget})`
          const base = expected.get(budget)!
          totalKills += kills
          // kill points count events whose number can vary a little with timing (saves happen when
          // the loop waits): each run must be killed, the whole test at all but 5 of its points
          expect(kills, label).toBeGreaterThan(0)
          // the independent ledger: every call the adapter started, over every process
          // no completed evaluation runs again after a restart, also where two proposals in flight
          // paid for the same pair (each finds its own result again)
          const rerun = rerunCompleted(ledger, outcome.restarts, base.ledger, budget === loose)
          expect(rerun, `${label}: ${rerun.join("; ")}`).toEqual([])
          expect(paidTwiceByOneStep(outcome.dir), label).toEqual([])
          expect(ledger.length, label).toBeLessThanOrEqual(budget)
          // every real call is charged, as a counted metric call or as lost work (a reservation
          // whose calls never started is charged too: the write-ahead log errs on the safe side)
          expect(result.totalMetricCalls + result.lostMetricCalls, label).toBeGreaterThanOrEqual(ledger.length)
          expect(result.totalMetricCalls + result.lostMetricCalls, label).toBeLessThanOrEqual(budget)
          if (budget === loose) {
            // calls beyond the uninterrupted run's are the ones cut short by a kill: all charged as lost
            // (with a binding budget the lost calls leave less of it, and the end of the run, which is
            // sized to what is left, differs)
            const extra = [...countBy(ledger)].reduce((n, [line, c]) => n + Math.max(0, c - (countBy(base.ledger).get(line) ?? 0)), 0)
            expect(extra, label).toBeLessThanOrEqual(result.lostMetricCalls)
            expect(result.candidates, label).toEqual(base.result.candidates)
            expect(result.parents, label).toEqual(base.result.parents)
            expect(result.valScores, label).toEqual(base.result.valScores)
            expect(result.iterations, label).toBe(base.result.iterations)
            expect(result.totalMetricCalls, label).toBe(base.result.totalMetricCalls)
          } else {
            // lost work leaves less budget: the candidates are the uninterrupted run's, up to where it
            // ran out; the last two may come from the end of the run, sized to a smaller remainder
            // (two steps in flight, each of the default's six proposals reserving its worst case, are
            // planned against the remainder from about half of this budget on)
            const common = Math.max(1, result.candidates.length - 2)
            expect(result.candidates.slice(0, common), label).toEqual(base.result.candidates.slice(0, common))
            expect(result.parents.slice(0, common), label).toEqual(base.result.parents.slice(0, common))
            // fewer candidates only because lost work left less budget: the end of the run, sized to a
            // smaller remainder (a child validated on a sample, a plan dropped on resume), kept fewer, and
            // the run ended on its budget or on the iteration cap, which both bind near the end here
            if (result.candidates.length < base.result.candidates.length) {
              expect(result.lostMetricCalls, label).toBeGreaterThan(0)
              expect(result.stopReason, label).toMatch(new RegExp(`budget|maximum of ${iterations} iterations`))
            }
          }
          console.log(
            `${label}: ${kills} kills, ${ledger.length} real calls = ${result.totalMetricCalls} counted + ` +
              `${result.lostMetricCalls} lost (uninterrupted: ${base.ledger.length}), ${result.candidates.length} candidates`
          )
        }
        expect(totalKills).toBeGreaterThanOrEqual(pointCount - 5)
      }),
    // about two minutes on a quiet machine; the crash suite also runs beside CPU-heavy work
    1_200_000
  )
})
