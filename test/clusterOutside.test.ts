/**
 * An evaluation module that lives outside the project (a folder of its own,
 * no node_modules) imports `effect`, `effect-gepa` and
 * `effect-gepa/ClusterEvaluation`, and `gepa runner` of this checkout, which
 * was never built or installed, serves it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Adapter from "../src/Adapter.js"
import * as ClusterAdapter from "../src/ClusterAdapter.js"
import * as ClusterEvaluation from "../src/ClusterEvaluation.js"
import { commonJsHint } from "../src/internal/shared/userModule.js"
import { tmpDir } from "./fixtures/tmp.js"
import { freePort } from "./fixtures/freePort.js"

const bin = path.join(import.meta.dirname, "..", "bin", "gepa.js")

// the user's module: nothing of this repository is reachable from its folder by Node's own resolution
const evaluationSource = `
import { Effect, Schema } from "effect"
import { Adapter } from "effect-gepa"
import * as ClusterEvaluation from "effect-gepa/ClusterEvaluation"

export default ClusterEvaluation.define({
  adapter: Adapter.fromExample((example: { readonly id: number }, candidate: Record<string, string>) =>
    Effect.succeed({ output: "outside:" + (candidate["text"] ?? "") + ":" + example.id, score: example.id % 2 })),
  output: Schema.String
})
`

/** `gepa runner --module file` started in `dir`; resolves once ready, killed when the scope closes. */
const startRunner = (dir: string, module: string, storage: string) =>
  Effect.acquireRelease(
    Effect.promise(() => freePort()).pipe(Effect.flatMap((port) =>
      Effect.async<{ readonly port: number; readonly kill: () => void }, Error>((resume) => {
        const child = spawn(process.execPath, [
          bin,
          "runner",
          "--module",
          module,
          "--storage",
          storage,
          "--host",
          "127.0.0.1",
          "--port",
          String(port),
          "--status-every",
          "0"
        ], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
        let out = ""
        let ready = false
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString()
          if (!ready && out.includes(" ready")) {
            ready = true
            resume(Effect.succeed({ port, kill: () => child.kill("SIGKILL") }))
          }
        })
        child.stderr.on("data", (d: Buffer) => (out += d.toString()))
        child.on("exit", (code) => {
          if (!ready) resume(Effect.fail(new Error(`runner exited (${code}) before it was ready: ${out}`)))
        })
      })
    )),
    (runner) => Effect.sync(() => runner.kill())
  )

describe("an evaluation module outside the project", () => {
  it.live("imports effect-gepa from an unbuilt checkout: gepa runner loads it and serves its evaluations", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-outside-")
      expect(path.relative(path.join(import.meta.dirname, ".."), dir).startsWith("..")).toBe(true)
      fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }))
      fs.writeFileSync(path.join(dir, "evaluation.ts"), evaluationSource)
      const storage = path.join(dir, "cluster.db")
      yield* startRunner(dir, "evaluation.ts", storage)

      // the optimizer's side needs only the schemas: evaluate runs on the runner
      const definition = ClusterEvaluation.define({
        adapter: Adapter.fromExample<{ readonly id: number }, string>(() => Effect.die("evaluated in the optimizer")),
        output: Schema.String
      })
      const ctx = yield* Layer.build(ClusterAdapter.layerCluster(definition, { storage }))
      const remote = Context.get(ctx, Adapter.tag<{ readonly id: number }, Adapter.ExampleTrace<{ readonly id: number }, never, string>, string>())
      const result = yield* remote.evaluate([{ id: 1 }, { id: 2 }], { text: "hi" }, { captureTraces: false })
      expect(result.outputs).toEqual(["outside:hi:1", "outside:hi:2"])
      expect(result.scores).toEqual([1, 0])
    }).pipe(Effect.scoped), 120_000)

  it("a .ts module in a CommonJS folder fails with a hint naming the fix", () => {
    const dir = tmpDir("gepa-outside-cjs-")
    expect(commonJsHint(path.join(dir, "evaluation.ts"))).toMatch(/evaluation\.ts is loaded as CommonJS here: name it \.mts/)
    expect(commonJsHint(path.join(dir, "evaluation.mts"))).toBeUndefined()
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }))
    expect(commonJsHint(path.join(dir, "evaluation.ts"))).toBeUndefined()
  })
})
