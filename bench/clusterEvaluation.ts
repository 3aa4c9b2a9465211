/**
 * The evaluation of the cluster benchmarks: a fixed cost per example, either
 * CPU (a busy loop: the runner's core is taken) or I/O (a sleep: a remote
 * model or sandbox call). `BENCH_EVAL=cpu:5` or `io:50` (milliseconds).
 *
 * Run as a script, it is a runner: `ClusterRunner.run` with this
 * definition, settings from the environment, stopped cleanly by SIGTERM.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Duration, Effect } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Adapter from "../src/Adapter.js"
import * as ClusterEvaluation from "../src/ClusterEvaluation.js"
import * as ClusterRunner from "../src/ClusterRunner.js"
import * as Stalls from "./clusterStalls.js"

export interface Example {
  readonly id: number
}

export type Trace = Adapter.ExampleTrace<Example, never, string>

/** `cpu:5`, `io:50`: what one example costs. */
export const parseKind = (spec: string): { readonly kind: "cpu" | "io"; readonly ms: number } => {
  const m = /^(cpu|io):(\d+(?:\.\d+)?)$/.exec(spec)
  if (m === null) throw new Error(`BENCH_EVAL: expected cpu:MS or io:MS, got "${spec}"`)
  return { kind: m[1] as "cpu" | "io", ms: Number(m[2]) }
}

const spin = (ms: number) => {
  const end = performance.now() + ms
  let x = 0
  while (performance.now() < end) x++
  return x
}

const port = process.env["GEPA_RUNNER_PORT"] ?? "local"

/** Where and when an output of `define` was made: the runner's port, its start and end (epoch ms). */
export const stamp = (output: string) => {
  const [, port, start, end] = output.split("@")
  return { port: port ?? "?", start: Number(start), end: Number(end) }
}

/** The definition for a cost. */
export const define = (spec: string) => {
  const { kind, ms } = parseKind(spec)
  return ClusterEvaluation.define({
    adapter: Adapter.fromExample((example: Example, candidate) =>
      Effect.suspend(() => {
        const started = Date.now()
        return (kind === "cpu" ? Effect.sync(() => spin(ms)) : Effect.sleep(Duration.millis(ms))).pipe(
          // the output carries where and when it ran (the bench's per-call timeline): text:id@port@start@end
          Effect.map(() => ({ output: `${candidate["text"] ?? ""}:${example.id}@${port}@${started}@${Date.now()}`, score: example.id % 2 }))
        )
      })
    )
  })
}

export const self = fileURLToPath(import.meta.url)

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === self) {
  // event-loop stalls of the runner, for the bench's timeline
  Stalls.monitor((s) => process.stderr.write(`${Stalls.line(s)}\n`))
  NodeRuntime.runMain(ClusterRunner.run({ definition: define(process.env["BENCH_EVAL"] ?? "io:50") }))
}
