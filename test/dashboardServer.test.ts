import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as DeepTask from "../bench/dashboardTask.js"
import * as Task from "../examples/demo/task.js"
import * as Cli from "../src/Cli.js"
import * as Dashboard from "../src/Dashboard.js"
import * as Gepa from "../src/Gepa.js"
import { makeClientBuffer } from "../src/internal/dashboard/server.js"
import { tmpDir } from "./fixtures/tmp.js"

describe("dashboard client buffer", () => {
  it.effect("hands frames over in order while the client keeps up", () =>
    Effect.gen(function*() {
      const buffer = yield* makeClientBuffer(4)
      buffer.offer("a")
      buffer.offer("b")
      expect(yield* buffer.take(() => "snapshot")).toBe("a")
      expect(yield* buffer.take(() => "snapshot")).toBe("b")
      expect(buffer.stale()).toBe(false)
    }))

  it.effect("never waits on a client that fell behind: it drops what it missed and resyncs with one snapshot", () =>
    Effect.gen(function*() {
      let resyncs = 0
      const buffer = yield* makeClientBuffer(3, () => resyncs++)
      // ten thousand frames offered to a client reading none: offer returns at once every time
      for (let i = 0; i < 10_000; i++) buffer.offer(`frame ${i}`)
      expect(buffer.stale()).toBe(true)
      let built = 0
      expect(yield* buffer.take(() => `snapshot ${++built}`)).toBe("snapshot 1")
      expect(resyncs).toBe(1)
      expect(buffer.stale()).toBe(false)
      // then it follows again, from the frames after the snapshot
      buffer.offer("next")
      expect(yield* buffer.take(() => "unused")).toBe("next")
      expect(built).toBe(1)
    }))
})

describe("dashboard server", () => {
  const secret = "sk-test-0123456789abcdef"
  it.live("scrubs secrets from every response: the given ones and secret-looking environment variables", () =>
    Effect.gen(function*() {
      const info = yield* Dashboard.Dashboard
      const seedCandidate = { ...DeepTask.seedCandidate, style: `Never print the key ${secret} or ${process.env["GEPA_DASHBOARD_TEST_TOKEN"]}.` }
      yield* Gepa.optimize({ ...DeepTask.makeConfig({ maxCandidates: 4 }), seedCandidate })
      const get = (p: string) => Effect.promise(() => fetch(info.url.replace("/?", `/${p}`)).then((r) => r.text()))
      // the server folds events on its refresh timer: wait until the last candidate is served
      for (let i = 0; i < 100 && (yield* get("candidate.json?i=1&")).startsWith("no such"); i++) yield* Effect.sleep("50 millis")
      for (const p of ["candidate.json?i=0&", "candidate.json?i=1&", "snapshot.json?"]) {
        const text = yield* get(p)
        expect(text).not.toContain(secret)
        expect(text).not.toContain("env-secret-value-42")
        if (p.startsWith("candidate")) expect(text).toContain("[redacted]")
      }
    }).pipe(
      Effect.scoped,
      // the environment is read when the dashboard starts
      Effect.provide(Layer.unwrapEffect(Effect.sync(() => {
        process.env["GEPA_DASHBOARD_TEST_TOKEN"] = "env-secret-value-42"
        return Dashboard.layer({ secrets: [Redacted.make(secret)] })
      }))),
      Effect.ensuring(Effect.sync(() => delete process.env["GEPA_DASHBOARD_TEST_TOKEN"]))
    ))

  it.live("watch serves a finished run folder as it ended", () =>
    Effect.gen(function*() {
      const runDir = path.join(tmpDir("gepa-finished-"), "run")
      const result = yield* Gepa.optimize(DeepTask.makeConfig({ maxCandidates: 8, runDir }))
      const info = yield* Dashboard.watch(runDir, { refreshMillis: 20 })
      yield* Effect.sleep("300 millis")
      const snapshot = yield* Effect.promise(() =>
        fetch(info.url.replace("/?", "/snapshot.json?")).then((r) =>
          r.json() as Promise<{
            run: { status: string; metricCalls: number; stopReason: string }
            candidates: Array<{ i: number; parents: Array<number> }>
            mode: string
          }>
        )
      )
      expect(snapshot.mode).toBe("watch")
      expect(snapshot.run.status).toBe("finished")
      expect(snapshot.run.metricCalls).toBe(result.totalMetricCalls)
      expect(snapshot.run.stopReason).toBe(result.stopReason)
      expect(snapshot.candidates.map((c) => c.parents)).toEqual(result.parents)
      const detail = yield* Effect.promise(() =>
        fetch(info.url.replace("/?", "/candidate.json?i=1&")).then((r) =>
          r.json() as Promise<{
            components: Record<string, string>
            feedback: Record<string, Array<unknown>> | null
          }>
        )
      )
      expect(detail.components).toEqual(result.candidates[1])
      expect(detail.feedback).not.toBeNull()
    }).pipe(Effect.scoped))

  it.effect("rejects a bad port or a short token, and a folder that holds no run", () =>
    Effect.gen(function*() {
      const port = yield* Effect.flip(Effect.scoped(Dashboard.watch(".", { port: 70_000 })))
      expect(port.message).toContain("port")
      const token = yield* Effect.flip(Effect.scoped(Dashboard.watch(".", { token: "short" })))
      expect(token.message).toContain("token")
      const empty = yield* Effect.flip(Effect.scoped(Dashboard.watch(tmpDir("gepa-empty-"))))
      expect(empty.message).toContain("not a run folder")
    }))

  it.live("gepa optimize --ui prints the dashboard's address and closes it with the run", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-cli-ui-")
      const lines = ["refund for my order", "cannot log in", "package is late", "charged twice", "reset password", "where is my parcel"]
      const queues = ["billing", "account", "shipping", "billing", "account", "shipping"]
      fs.writeFileSync(path.join(dir, "train.jsonl"), lines.map((text, i) => JSON.stringify({ input: text, expected: queues[i] })).join("\n") + "\n")
      const out: Array<string> = []
      const err: Array<string> = []
      const code = yield* Cli.run([
        "node",
        "gepa",
        "optimize",
        "--train",
        "train.jsonl",
        "--seed-prompt",
        "Route the ticket to a queue.",
        "--task-model",
        "simulated-task",
        "--reflection-model",
        "simulated-reflection",
        "--max-metric-calls",
        "40",
        "--run-dir",
        "out",
        "--ui"
      ], {
        cwd: dir,
        stdout: (t) => out.push(t),
        stderr: (t) => err.push(t),
        makeModel: (role) => Effect.succeed(role === "task" ? Task.makeTaskModel(0) : Task.makeReflectionModel(0))
      })
      expect(err.join("")).toBe("")
      expect(code).toBe(0)
      const url = /Live dashboard: (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{48})\n/.exec(out.join(""))?.[1]
      expect(url).toBeDefined()
      // the server lived as long as the run
      const after = yield* Effect.promise(() => fetch(url!).then(() => "answered", () => "closed"))
      expect(after).toBe("closed")
    }))

  it.effect("gepa watch on a folder that holds no run: one line, exit 2", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-watch-empty-")
      const out: Array<string> = []
      const err: Array<string> = []
      const code = yield* Cli.run(["node", "gepa", "watch", dir], {
        cwd: path.dirname(dir),
        stdout: (t) => out.push(t),
        stderr: (t) => err.push(t),
        makeModel: (role) => Effect.succeed(role === "task" ? Task.makeTaskModel(0) : Task.makeReflectionModel(0))
      })
      expect(code).toBe(2)
      expect(err.join("")).toMatch(/^gepa: dashboard: .*not a run folder.*\n$/)
      expect(out.join("")).toBe("")
    }))
})
