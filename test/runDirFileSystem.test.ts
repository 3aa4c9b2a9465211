/**
 * The run directory works through @effect/platform's FileSystem and Path:
 * a run given a file system of its own (here one that records every path it
 * writes, over Node's) writes every file of its folder through it, ends as
 * the same run on Node's file system, and a failure of that file system is
 * the run's PersistenceError naming the file.
 */
import * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Ref } from "effect"
import * as path from "node:path"
import * as Gepa from "../src/Gepa.js"
import * as RunDir from "../src/RunDir.js"
import * as StopCondition from "../src/StopCondition.js"
import * as Toy from "./fixtures/toy.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"

const tmpDir = () => makeTmpDir("gepa-rundir-fs-")

const config = <T>(adapter: Gepa.Config<Toy.Example, T, string>["adapter"] & object) => ({
  ...Toy.runConfig(adapter),
  maxMetricCalls: 200,
  stop: StopCondition.maxIterations(6)
})

/** Node's file system, recording the paths opened for writing, written, renamed to, truncated and removed. */
const recording = (written: Array<string>, failOpen?: (file: string) => boolean) =>
  Layer.merge(
    Layer.effect(
      FileSystem.FileSystem,
      Effect.map(FileSystem.FileSystem, (fs): FileSystem.FileSystem => ({
        ...fs,
        open: (file, options) => {
          if (failOpen?.(file) === true) {
            return Effect.fail(
              new PlatformError.SystemError({
                reason: "PermissionDenied",
                module: "FileSystem",
                method: "open",
                pathOrDescriptor: file,
                description: "EACCES: injected"
              })
            )
          }
          if ((options?.flag ?? "r") !== "r") written.push(file)
          return fs.open(file, options)
        },
        writeFileString: (file, data, options) => Effect.zipRight(Effect.sync(() => written.push(file)), fs.writeFileString(file, data, options)),
        rename: (from, to) => Effect.zipRight(Effect.sync(() => written.push(to)), fs.rename(from, to)),
        truncate: (file, length) => Effect.zipRight(Effect.sync(() => written.push(file)), fs.truncate(file, length)),
        remove: (file, options) => Effect.zipRight(Effect.sync(() => written.push(file)), fs.remove(file, options))
      }))
    ).pipe(Layer.provide(NodeFileSystem.layer)),
    NodePath.layer
  )

const names = (dir: string, written: ReadonlyArray<string>) => new Set(written.filter((f) => path.dirname(f) === dir).map((f) => path.basename(f)))

describe("RunDir on FileSystem", () => {
  it.effect("Gepa.optimize({ runDir }) writes every file of the folder through the context's FileSystem, and ends as on Node's", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const plain = tmpDir()
      const written: Array<string> = []
      const { adapter } = yield* Toy.makeAdapter()
      const result = yield* Gepa.optimize({ ...config(adapter), runDir: dir }).pipe(Effect.provide(recording(written)))
      const files = names(dir, written)
      for (
        const name of [
          RunDir.FILES.lock,
          RunDir.FILES.events,
          RunDir.FILES.cache,
          RunDir.FILES.candidates,
          RunDir.FILES.reservations,
          RunDir.FILES.journal,
          RunDir.FILES.state,
          RunDir.FILES.best,
          RunDir.FILES.result,
          RunDir.FILES.bestOutputs,
          RunDir.FILES.stop
        ]
      ) expect(files, name).toContain(name)
      // the snapshot is written to a temporary file, then renamed
      expect([...files].some((f) => f.startsWith(`.${RunDir.FILES.state}.tmp-`))).toBe(true)
      // the same run without a file system in the context: Node's, loaded by the run directory
      const { adapter: again } = yield* Toy.makeAdapter()
      const reference = yield* Gepa.optimize({ ...config(again), runDir: plain })
      expect(result.candidates).toEqual(reference.candidates)
      expect(result.totalMetricCalls).toBe(reference.totalMetricCalls)
      expect(Option.getOrThrow(yield* RunDir.readState(dir))).toEqual(Option.getOrThrow(yield* RunDir.readState(plain)))
    }))

  it.effect("RunDir.layer uses the file system it is built with", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const written: Array<string> = []
      const { adapter } = yield* Toy.makeAdapter()
      const result = yield* Gepa.optimize(config(adapter)).pipe(Effect.provide(Layer.provide(RunDir.layer(dir), recording(written))))
      expect(names(dir, written)).toContain(RunDir.FILES.cache)
      expect(Option.getOrThrow(yield* RunDir.readState(dir)).iteration).toBe(result.iterations)
    }))

  it.effect("a failure of the file system is the run's PersistenceError naming the file", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      const { adapter, examplesEvaluated } = yield* Toy.makeAdapter()
      const error = yield* Effect.flip(
        Gepa.optimize({ ...config(adapter), runDir: dir }).pipe(Effect.provide(recording([], (f) => f.endsWith(RunDir.FILES.cache))))
      )
      expect(error._tag).toBe("PersistenceError")
      expect(error.message).toContain(RunDir.FILES.cache)
      expect(error.message).toContain("EACCES: injected")
      // before anything was evaluated
      expect(yield* Ref.get(examplesEvaluated)).toBe(0)
    }))
})
