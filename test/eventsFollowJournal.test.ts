/**
 * The event log follows the saved state (issue 35): a save writes its events
 * after the journal line that holds what they describe. Killed (in process,
 * with a file system that lets nothing more reach the disk from the kill on)
 * at every write to the journal (and every other write to the event log) of a run, the event log
 * never names a candidate, or ends an iteration, that the saved state lacks;
 * resumed, the run writes each accepted candidate's event once.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Candidate from "../src/Candidate.js"
import * as Gepa from "../src/Gepa.js"
import * as RunDir from "../src/RunDir.js"
import * as StopCondition from "../src/StopCondition.js"
import * as Toy from "./fixtures/toy.js"
import { tmpDir } from "./fixtures/tmp.js"

interface Process {
  /** dies as its n-th write to `file` starts (that write is lost) */
  readonly killAt: { readonly file: string; readonly n: number }
  dead: boolean
  writes: number
}

const killed = Effect.die("killed")

/** Node's file system, in a process that dies at its kill point. */
const mortal = (p: Process) => {
  const alive = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.suspend(() => (p.dead ? killed : effect))
  const wrapFile = (file: string, f: FileSystem.File): FileSystem.File =>
    new Proxy(f, {
      get: (target, key) => {
        if (key === "writeAll" || key === "write") {
          return (buffer: Uint8Array) =>
            Effect.suspend(() => {
              if (!p.dead && path.basename(file) === p.killAt.file && ++p.writes === p.killAt.n) p.dead = true
              return alive((target[key] as (b: Uint8Array) => Effect.Effect<unknown, unknown>)(buffer))
            })
        }
        if (key === "sync") return alive(target.sync)
        if (key === "truncate") return (length?: FileSystem.SizeInput) => alive(target.truncate(length))
        const value: unknown = Reflect.get(target, key, target)
        return typeof value === "function" ? value.bind(target) : value
      }
    })
  return Layer.merge(
    Layer.effect(
      FileSystem.FileSystem,
      Effect.map(FileSystem.FileSystem, (fs): FileSystem.FileSystem => ({
        ...fs,
        open: (file, options) => alive(Effect.map(fs.open(file, options), (f) => wrapFile(file, f))),
        writeFileString: (file, data, options) => alive(fs.writeFileString(file, data, options)),
        writeFile: (file, data, options) => alive(fs.writeFile(file, data, options)),
        rename: (from, to) => alive(fs.rename(from, to)),
        truncate: (file, length) => alive(fs.truncate(file, length)),
        remove: (file, options) => alive(fs.remove(file, options)),
        link: (from, to) => alive(fs.link(from, to)),
        copyFile: (from, to) => alive(fs.copyFile(from, to)),
        makeDirectory: (file, options) => alive(fs.makeDirectory(file, options))
      }))
    ).pipe(Layer.provide(NodeFileSystem.layer)),
    NodePath.layer
  )
}

const config = () =>
  Effect.map(Toy.makeAdapter(), ({ adapter }) => ({
    ...Toy.runConfig(adapter),
    maxMetricCalls: 300,
    // four steps of the default's six proposals, two in flight
    stop: StopCondition.maxIterations(24),
    parallelProposals: 2
  }))

interface EventLine {
  readonly _tag: string
  readonly iteration?: number
  readonly candidate?: number
  readonly components?: Candidate.Candidate
}

const readEvents = (dir: string): Array<EventLine> => {
  const file = path.join(dir, RunDir.FILES.events)
  if (!fs.existsSync(file)) return []
  return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as EventLine)
}

/** What the event log says that the saved state does not hold. */
const ahead = (
  events: ReadonlyArray<EventLine>,
  state: Option.Option<{ readonly candidates: ReadonlyArray<Candidate.Candidate>; readonly iteration: number }>
) => {
  const candidates = Option.match(state, { onNone: () => [], onSome: (s) => s.candidates })
  const iteration = Option.match(state, { onNone: () => -1, onSome: (s) => s.iteration })
  const found: Array<string> = []
  for (const e of events) {
    if ((e._tag === "CandidateAccepted" || e._tag === "MergeAccepted") && e.candidate !== undefined) {
      const saved = candidates[e.candidate]
      if (saved === undefined) found.push(`${e._tag} of candidate ${e.candidate}: the state holds ${candidates.length}`)
      else if (e.components !== undefined && !Candidate.equals(saved, e.components)) found.push(`${e._tag} of candidate ${e.candidate}: other texts`)
    }
    if (e._tag === "IterationEnded" && e.iteration !== undefined && e.iteration > iteration) {
      found.push(`IterationEnded ${e.iteration}: the state is at iteration ${iteration}`)
    }
    if (e._tag === "ValsetEvaluated" && e.candidate !== undefined && e.candidate >= candidates.length) {
      found.push(`ValsetEvaluated of candidate ${e.candidate}: the state holds ${candidates.length}`)
    }
  }
  return found
}

/**
 * Kills at every `step`-th write to `file` until the run ends before its kill
 * point; returns the kills. `complete`: every accepted candidate is announced
 * after the resume (a kill after a journal line and before its events loses
 * those events: the log may say less than the state, never more).
 */
const everyWrite = (file: string, step: number, complete: boolean) =>
  Effect.gen(function*() {
    let kills = 0
    for (let n = 1;; n += step) {
      const dir = tmpDir("gepa-events-journal-")
      const p: Process = { killAt: { file, n }, dead: false, writes: 0 }
      const exit = yield* Effect.exit(Gepa.optimize({ ...(yield* config()), runDir: dir }).pipe(Effect.provide(mortal(p))))
      if (!p.dead) {
        expect(Exit.isSuccess(exit)).toBe(true)
        return kills
      }
      kills++
      const label = `killed at write ${n} to ${file}`
      const saved = yield* RunDir.readState(dir)
      expect(ahead(readEvents(dir), saved), label).toEqual([])
      // resumed: the event log and the final state agree, each accepted candidate announced once
      fs.rmSync(path.join(dir, RunDir.FILES.lock), { force: true })
      const result = yield* Gepa.optimize({ ...(yield* config()), runDir: dir })
      const events = readEvents(dir)
      expect(ahead(events, Option.some({ candidates: result.candidates, iteration: result.iterations })), label).toEqual([])
      const announced = events.filter((e) => e._tag === "CandidateAccepted" || e._tag === "MergeAccepted").map((e) => e.candidate)
      expect(new Set(announced).size, label).toBe(announced.length)
      if (complete) expect(announced.length, label).toBe(result.candidates.length - 1)
      else expect(announced.length, label).toBeLessThanOrEqual(result.candidates.length - 1)
    }
  })

describe("the event log follows the saved state", () => {
  it.effect("killed at every journal write: no event for a candidate the state lacks", () =>
    Effect.gen(function*() {
      expect(yield* everyWrite(RunDir.FILES.journal, 1, true)).toBeGreaterThan(3)
    }), 180_000)

  it.effect("killed at every other event log write: no event for a candidate the state lacks", () =>
    Effect.gen(function*() {
      expect(yield* everyWrite(RunDir.FILES.events, 2, false)).toBeGreaterThan(3)
    }), 180_000)
})
