/**
 * A run's start: the saved state on resume, checked against the
 * configuration, with the work a crashed process lost charged; or the seed
 * candidate scored on the validation set. And what the loop's steps share.
 *
 * @internal
 */
import { Effect, Option } from "effect"
import { AllEvaluationsFailed, type OptimizeError } from "../../Errors.js"
import { GepaEvent } from "../../Event.js"
import type { RunStore } from "../../RunStore.js"
import * as State from "../../State.js"
import * as Strategy from "../../Strategy.js"
import type * as Learned from "./learned.js"
import * as Ledger from "./ledger.js"
import type { Resolved } from "./resolved.js"
import { checkResume, fitPending } from "./resume.js"
import * as Session from "./session.js"

/**
 * What the steps of one run share: the resolved config, the session, the
 * store and the best outputs.
 *
 * @internal
 */
export interface Run<D, T, O> {
  readonly r: Resolved<D, T, O>
  readonly s: Session.Session<D, T, O>
  readonly store: RunStore<O>
  readonly best: Session.Best<O>
  readonly save: (state: State.GepaState) => Effect.Effect<void, OptimizeError>
  readonly emitAll: (events: ReadonlyArray<GepaEvent>) => Effect.Effect<void>
  /** work a crashed process paid for and the saved state does not count */
  readonly unaccounted: Effect.Effect<{ readonly lost: number; readonly owed: ReadonlyMap<number, number> }, OptimizeError>
  /** the cache's training scores as a proposal planned after an iteration sees them (for `learned.ts`) */
  readonly known: Learned.KnownScores
}

/**
 * The run's first state: the saved one on resume (its plans fitted to the
 * budget left), else the seed scored on the validation set.
 *
 * @internal
 */
export const start = <D, T, O>(
  { best, emitAll, r, s, save, unaccounted }: Run<D, T, O>,
  loaded: Option.Option<State.GepaState>
): Effect.Effect<State.GepaState, OptimizeError> =>
  Effect.gen(function*() {
    const started = (resumed: boolean) =>
      s.emit("OptimizationStarted", () =>
        GepaEvent.OptimizationStarted({
          resumed,
          trainSize: r.trainIds.length,
          valSize: r.valIds.length,
          budget: r.budget,
          strategy: Strategy.format(r)
        }))
    const { lost } = yield* unaccounted
    const chargeLost = (state: State.GepaState) =>
      lost === 0 ? Effect.void : s.emit("LostWorkCharged", () => GepaEvent.LostWorkCharged({ metricCalls: lost, totalLost: state.lostMetricCalls }))
    if (Option.isSome(loaded)) {
      yield* checkResume(loaded.value, r as unknown as Resolved<unknown, unknown, unknown>)
      const charged = Ledger.chargeLost({ ...loaded.value, fingerprint: r.fingerprint }, lost)
      yield* started(true)
      yield* chargeLost(charged)
      // the lost calls run again with the plans they belonged to: the budget must still hold them
      const fitted = fitPending(r, charged, (yield* unaccounted).owed)
      yield* emitAll(fitted.events)
      return fitted.state
    }
    yield* started(false)
    const seedEval = yield* s.evaluate({
      iteration: 0,
      purpose: "seed-validation",
      candidate: r.seedCandidate,
      ids: r.valIds,
      captureTraces: false,
      call: "evaluate(seed candidate, valset)"
    })
    if (r.trackBestOutputs) Session.recordBest(best, 0, seedEval.outcomes)
    const initial = yield* State.initial({
      seed: r.seed,
      seedCandidate: r.seedCandidate,
      frontierType: r.frontierType,
      valset: Session.valsetOf(seedEval.outcomes),
      metricCalls: seedEval.spent,
      fingerprint: r.fingerprint
    })
    const state = Ledger.chargeLost(initial, lost)
    yield* chargeLost(state)
    if (seedEval.failures.evaluated > 0 && seedEval.failures.failed === seedEval.failures.evaluated) {
      return yield* new AllEvaluationsFailed({ iterations: 0, lastError: seedEval.failures.lastError ?? "unknown" })
    }
    yield* s.emit("ValsetEvaluated", () =>
      GepaEvent.ValsetEvaluated({ iteration: 0, candidate: 0, score: state.valAverages[0]!, coverage: state.valCoverage[0]! }))
    yield* s.emit("BudgetUpdated", () =>
      GepaEvent.BudgetUpdated({ metricCalls: state.metricCalls, budget: r.budget }))
    yield* save(state)
    return state
  })
