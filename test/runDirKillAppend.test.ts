/**
 * A kill between an evaluation's calls and the append of their cache lines
 * (an evaluation's results go out in one write), and a kill as a call
 * starts: simulated in process with a file system that, at the kill, lets
 * nothing more reach the disk (the write at the kill point is dropped, and
 * so is every write not yet handed to the kernel: each waits for a turn of
 * the scheduler first; every later write, sync, rename or removal dies, as
 * the adapter's calls do), at every cache write of a run and at every
 * third call. The resumed run must charge every call the adapter made
 * exactly once: the calls whose lines were dropped as lost work (they are
 * on the write-ahead record before they start), none twice; the only calls
 * charged beyond the real ones are those on record that never started (the
 * write-ahead record errs on the safe side, by design).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Gepa from "../src/Gepa.js"
import * as RunDir from "../src/RunDir.js"
import * as StopCondition from "../src/StopCondition.js"
import * as Toy from "./fixtures/toy.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"

/** The calls `reservations.jsonl` has on record (the sum of its `n` since its last `base`). */
const onRecord = (dir: string): number => {
  const file = path.join(dir, RunDir.FILES.reservations)
  let n = 0
  for (const line of (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "").split("\n")) {
    if (line.length === 0) continue
    const parsed: { readonly n?: number; readonly base?: number } = JSON.parse(line)
    n = parsed.base ?? n + (parsed.n ?? 0)
  }
  return n
}

interface Process {
  /** where it dies: before its n-th write to cache.jsonl, or as its n-th call starts */
  readonly killAt: { readonly at: "cache write" | "call"; readonly n: number }
  /** the process is dead: nothing more reaches the disk, no call starts */
  dead: boolean
  /** adapter calls (examples) started while alive */
  calls: number
  /** writes to cache.jsonl so far */
  cacheWrites: number
  /** at the kill: the calls made */
  atKill?: { readonly calls: number }
}

const killed = (): Effect.Effect<never> => Effect.die("killed")

const die = (p: Process) => {
  p.dead = true
  p.atKill = { calls: p.calls }
}

/** Node's file system, in a process that dies at its kill point. */
const mortal = (p: Process) => {
  const alive = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.suspend(() => (p.dead ? killed() : effect))
  const wrapFile = (file: string, f: FileSystem.File): FileSystem.File =>
    new Proxy(f, {
      get: (target, key) => {
        if (key === "writeAll") {
          return (buffer: Uint8Array) =>
            Effect.suspend(() => {
              if (!p.dead && path.basename(file) === RunDir.FILES.cache && ++p.cacheWrites === p.killAt.n && p.killAt.at === "cache write") die(p)
              // the kernel has the bytes a turn later: a kill meanwhile loses them
              return Effect.zipRight(Effect.yieldNow(), alive(target.writeAll(buffer)))
            })
        }
        if (key === "write") return (buffer: Uint8Array) => Effect.zipRight(Effect.yieldNow(), alive(target.write(buffer)))
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

const budget = 150

const config = <T>(adapter: Gepa.Config<Toy.Example, T, string>["adapter"] & object) => ({
  ...Toy.runConfig(adapter),
  maxMetricCalls: budget,
  stop: StopCondition.maxIterations(8),
  // two proposals in flight: another evaluation may be under way at the kill
  parallelProposals: 2
})

/** The toy adapter, counting the examples it starts while the process is alive (a dead one starts none). */
const counted = (p: Process) =>
  Effect.map(Toy.makeAdapter(), ({ adapter }) => {
    const wrapped: typeof adapter = {
      ...adapter,
      evaluate: (batch, candidate, options) =>
        Effect.suspend(() => {
          if (p.dead) return killed()
          for (let i = 0; i < batch.length; i++) {
            // a call killed as it starts was made (it may have reached the model)
            p.calls++
            if (p.killAt.at === "call" && p.calls === p.killAt.n) {
              die(p)
              return killed()
            }
          }
          return adapter.evaluate(batch, candidate, options)
        })
    }
    return wrapped
  })

/** One run killed at `killAt`, then resumed to the end. */
const killAndResume = (killAt: Process["killAt"]) =>
  Effect.gen(function*() {
    const dir = makeTmpDir("gepa-kill-append-")
    const first: Process = { killAt, dead: false, calls: 0, cacheWrites: 0 }
    const exit = yield* Effect.exit(Gepa.optimize({ ...config(yield* counted(first)), runDir: dir }).pipe(Effect.provide(mortal(first))))
    if (first.atKill === undefined) return { killed: false, exit } as const
    expect(Exit.isFailure(exit)).toBe(true)
    // the calls on record, read once the dead process is over (no write starts after the kill)
    const atKill = { calls: first.atKill.calls, onRecord: onRecord(dir) }
    // the dead process's lock (the operating system would see its process gone)
    fs.rmSync(path.join(dir, RunDir.FILES.lock), { force: true })
    const second: Process = { killAt: { at: "call", n: 0 }, dead: false, calls: 0, cacheWrites: 0 }
    const result = yield* Gepa.optimize({ ...config(yield* counted(second)), runDir: dir })
    return { killed: true, result, first, second, atKill } as const
  })

/** Kills at `at` n = first, first + step, ... until the run ends before its kill point; checks each. */
const everyPoint = (at: Process["killAt"]["at"], step: number) =>
  Effect.gen(function*() {
    let kills = 0
    for (let n = 1;; n += step) {
      const run = yield* killAndResume({ at, n })
      if (!run.killed) {
        // past the run's last kill point of this kind: it ran to the end
        expect(Exit.isSuccess(run.exit)).toBe(true)
        break
      }
      kills++
      const { result, first, second, atKill } = run
      const label = `killed at ${at} ${n}: ${JSON.stringify({ atKill, second: second.calls, total: result.totalMetricCalls, lost: result.lostMetricCalls })}`
      // every call started was on record before it started
      expect(atKill.onRecord, label).toBeGreaterThanOrEqual(atKill.calls)
      const real = first.calls + second.calls
      // neither lost nor charged twice: the real calls, and the ones on record that never started
      expect(result.totalMetricCalls + result.lostMetricCalls, label).toBe(real + (atKill.onRecord - atKill.calls))
      expect(result.totalMetricCalls + result.lostMetricCalls, label).toBeLessThanOrEqual(budget)
    }
    return kills
  })

describe("a kill between an evaluation's calls and its cache append", () => {
  it.effect("charges every call the adapter made exactly once, killed at every cache write of a run", () =>
    Effect.gen(function*() {
      expect(yield* everyPoint("cache write", 1)).toBeGreaterThan(5)
    }), 120_000)

  it.effect("charges every call the adapter made exactly once, killed as every third call of a run starts", () =>
    Effect.gen(function*() {
      expect(yield* everyPoint("call", 3)).toBeGreaterThan(20)
    }), 120_000)
})
