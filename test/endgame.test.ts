import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { comparableTask } from "../bench/concurrency.js"
import { makeTask } from "../bench/task.js"
import * as Gepa from "../src/Gepa.js"
import * as State from "../src/State.js"

/** The state as it was before candidate `n` joined (what bestIndex reads). */
const before = (state: State.GepaState, n: number): State.GepaState => ({
  ...state,
  candidates: state.candidates.slice(0, n),
  valScores: state.valScores.slice(0, n),
  valAverages: state.valAverages.slice(0, n),
  valCoverage: state.valCoverage.slice(0, n)
})

const sumOn = (scores: Readonly<Record<string, number>>, ids: ReadonlyArray<string>) => ids.reduce((t, id) => t + (scores[id] ?? Number.NaN), 0)

describe("the budget's last child", () => {
  it.effect("joins only when it beats the best candidate on the sample it was validated on; otherwise the trace says why", () =>
    Effect.gen(function*() {
      let joined = 0
      let refused = 0
      for (let seed = 0; seed < 20; seed++) {
        const task = makeTask(comparableTask)
        const result = yield* Gepa.optimize({
          seedCandidate: task.seedCandidate,
          trainset: task.trainset,
          valset: task.valset,
          adapter: task.adapter,
          reflectionModel: task.reflectionModel,
          maxMetricCalls: 500,
          merge: true,
          seed,
          telemetry: false
        })
        const state = result.state
        const valSize = task.valset.length
        for (const t of state.trace) {
          const reason = t.reason ?? ""
          if (t.outcome === "rejected" && reason.startsWith("validated on")) {
            refused++
            const found = /not above candidate \d+ on the same examples \((\d+(?:\.\d+)?) vs (\d+(?:\.\d+)?)\)/.exec(reason)
            assert.isNotNull(found, reason)
            assert.isAtMost(Number(found![1]), Number(found![2]))
          }
          const c = t.candidate
          if (t.outcome !== "accepted" || c === undefined || (state.valCoverage[c] ?? 0) >= valSize) continue
          // a child validated on a sample of what was left
          joined++
          const best = State.bestIndex(before(state, c))
          const ids = Object.keys(state.valScores[c]!)
          assert.isAbove(sumOn(state.valScores[c]!, ids), sumOn(state.valScores[best]!, ids), `seed ${seed}: candidate ${c}`)
        }
      }
      // these seeds have last children of both kinds
      assert.isAbove(joined, 0)
      assert.isAbove(refused, 0)
    }), 60_000)
})
