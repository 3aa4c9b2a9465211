/**
 * Events nobody receives are never built. Every construction of a
 * `GepaEvent` is counted through a spy on the module (every part of the
 * engine builds its events with `GepaEvent.<Tag>(...)`): a run without
 * `onEvent`, stream, run folder or telemetry builds none; with the default
 * telemetry at the default log level, only the events its metrics and span
 * attributes read; with an `onEvent`, each event exactly once, and every
 * one of them is delivered.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, HashMap, Logger, LogLevel, Metric } from "effect"
import { vi } from "vitest"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import type { GepaEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"
import * as GepaMetric from "../src/Metric.js"
import * as Telemetry from "../src/Telemetry.js"
import * as UpperCase from "./fixtures/upperCase.js"

const built = vi.hoisted(() => new Map<string, number>())

vi.mock(import("../src/Event.js"), async (importOriginal) => {
  const actual = await importOriginal()
  const counting = new Proxy(actual.GepaEvent, {
    get: (target, key, receiver): unknown => {
      const value: unknown = Reflect.get(target, key, receiver)
      // `$is` and `$match` build nothing
      if (typeof key !== "string" || key.startsWith("$") || typeof value !== "function") return value
      return (...args: ReadonlyArray<unknown>): unknown => {
        built.set(key, (built.get(key) ?? 0) + 1)
        return Reflect.apply(value, undefined, args)
      }
    }
  })
  return { ...actual, GepaEvent: counting }
})

// "f" fails every time: failures, `ExampleFailed` and (once its minibatch fails) an `Error` event
const task = UpperCase.task(["f"])

const total = () => [...built.values()].reduce((a, b) => a + b, 0)

/**
 * What was built, an `IterationEnded` counted once: a sink that may keep it
 * gets a copy whose state is built only when read (`AppendOnly.asOf`), the
 * telemetry observer the run's own.
 */
const once = (counts: ReadonlyMap<string, number>, keepers: boolean) =>
  Object.fromEntries([...counts].map(([tag, n]) => [tag, tag === "IterationEnded" && keepers ? n / 2 : n]))

/** A small run; what was built, logged and delivered. */
const runWith = (options: {
  readonly level: LogLevel.LogLevel
  readonly telemetry?: boolean | Telemetry.ObserverOptions
  readonly onEvent?: (event: GepaEvent) => void
}) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const capture = Logger.make(({ annotations, logLevel, message }) => {
      // (the run's id is random)
      const { run: _, ...fields } = Object.fromEntries(HashMap.toEntries(annotations))
      lines.push(`${logLevel.label} ${String(message)} ${JSON.stringify(fields)}`)
    })
    const adapter = yield* DefaultAdapter.make<UpperCase.Example>({
      model: task,
      input: (e) => e.q,
      metric: GepaMetric.exactMatch((e) => e.a)
    })
    const counters = Effect.all([Metric.value(Telemetry.iterations), Metric.value(Telemetry.metricCalls), Metric.value(Telemetry.evaluationFailures)])
    const before = yield* counters
    built.clear()
    const result = yield* Gepa.optimize({
      ...UpperCase.runOf(adapter),
      maxMetricCalls: 40,
      ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
      ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent })
    }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)), Logger.withMinimumLogLevel(options.level))
    const counts = new Map(built)
    const after = yield* counters
    return {
      counts,
      lines,
      result,
      metrics: after.map((a, i) => a.count - (before[i]?.count ?? 0)),
      fingerprint: JSON.stringify({ candidates: result.candidates, valScores: result.valScores, calls: result.totalMetricCalls, trace: result.state.trace })
    }
  })

describe("events nobody receives", () => {
  it.effect("a run with no onEvent, no stream, no run folder and telemetry off builds no event at all", () =>
    Effect.gen(function*() {
      const quiet = yield* runWith({ level: LogLevel.Debug, telemetry: false })
      expect(quiet.result.iterations).toBeGreaterThan(2)
      expect(Object.fromEntries(quiet.counts)).toEqual({})
      expect(total()).toBe(0)
    }))

  it.effect("the default telemetry at info builds only what its metrics and spans read, and logs and counts as an observer of every event does", () =>
    Effect.gen(function*() {
      for (const telemetry of [undefined, { summaryLevel: "info" as const }]) {
        for (const level of [LogLevel.Info, LogLevel.Warning]) {
          const filtered = yield* runWith({ level, ...(telemetry === undefined ? {} : { telemetry }) })
          // a no-op onEvent makes every event built and handed to the observer too
          const everything = yield* runWith({ level, ...(telemetry === undefined ? {} : { telemetry }), onEvent: () => {} })
          expect(filtered.fingerprint).toBe(everything.fingerprint)
          expect(filtered.lines).toEqual(everything.lines)
          expect(filtered.metrics).toEqual(everything.metrics)
          expect(filtered.metrics[0]).toBe(filtered.result.iterations)
          for (const tag of ["CandidateSelected", "MinibatchSampled", "ProposalStarted", "ReflectiveDatasetBuilt", "CandidateAccepted", "ParetoFrontUpdated"]) {
            expect(filtered.counts.get(tag)).toBeUndefined()
            expect(everything.counts.get(tag) ?? 0).toBeGreaterThan(tag === "CandidateAccepted" || tag === "ParetoFrontUpdated" ? -1 : 0)
          }
          expect(filtered.counts.get("IterationEnded")).toBe(filtered.result.iterations)
          expect(filtered.counts.get("EvaluationEnded")).toBeGreaterThan(0)
        }
      }
    }))

  it.effect("debug lines passing the level make the observer read every event", () =>
    Effect.gen(function*() {
      const debug = yield* runWith({ level: LogLevel.Debug })
      const everything = yield* runWith({ level: LogLevel.Debug, onEvent: () => {} })
      expect(once(debug.counts, false)).toEqual(once(everything.counts, true))
      expect(everything.counts.get("IterationEnded")).toBe(2 * everything.result.iterations)
      expect(debug.lines).toEqual(everything.lines)
      expect(debug.lines.some((l) => l.startsWith("DEBUG iteration 1: parent 0"))).toBe(true)
    }))

  it.effect("with an onEvent, every event is built once and delivered", () =>
    Effect.gen(function*() {
      const received = new Map<string, number>()
      const run = yield* runWith({
        level: LogLevel.Info,
        telemetry: false,
        onEvent: (e) => {
          received.set(e._tag, (received.get(e._tag) ?? 0) + 1)
        }
      })
      expect(received.get("ExampleFailed") ?? 0).toBeGreaterThan(0)
      expect(once(run.counts, true)).toEqual(Object.fromEntries(received))
    }))
})
