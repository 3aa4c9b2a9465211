/**
 * `npm run bench:scaleout` (add `-- --quick` for a shorter run): the same
 * latency-bound evaluation on 1, 2 and 4 runner processes of a cluster
 * (SQLite storage, loopback sockets), each runner with the same fixed
 * concurrency, driven through `ClusterAdapter` as the engine would drive it.
 *
 * - throughput: evaluations per second, and relative to one runner (the goal
 *   is at least 0.8 x N on N runners);
 * - overhead per remote evaluation: the mean time of one call through the
 *   cluster minus the mean time of the same call in process, calls made one
 *   at a time.
 *
 * Writes bench/results/scaleout-<latency>ms[-postgres][-quick].json and prints
 * a markdown table. The same file is the runner process (`--runner`).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Context, Duration, Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Adapter from "../src/Adapter.js"
import * as ClusterAdapter from "../src/ClusterAdapter.js"
import * as ClusterEvaluation from "../src/ClusterEvaluation.js"
import * as ClusterRunner from "../src/ClusterRunner.js"

interface Example {
  readonly id: number
}

type Trace = Adapter.ExampleTrace<Example, never, string>

const latencyMs = Number(process.env["SCALEOUT_LATENCY_MS"] ?? "500")

/** The evaluation: a fixed latency per example (a remote model or sandbox call), a trivial score. */
export const evaluation = ClusterEvaluation.define({
  adapter: Adapter.fromExample((example: Example, candidate) =>
    Effect.as(Effect.sleep(Duration.millis(latencyMs)), {
      output: `${candidate["text"] ?? ""}:${example.id}`,
      score: example.id % 2
    })
  )
})

export interface ScaleoutOptions {
  readonly runners: ReadonlyArray<number>
  /** evaluations at once on each runner */
  readonly perRunner: number
  /** evaluations measured per runner */
  readonly callsPerRunner: number
  /** sequential calls for the overhead figure */
  readonly overheadCalls: number
  readonly latencyMs: number
  /** a Postgres URL (default: a fresh SQLite file per configuration) */
  readonly storage?: string | undefined
}

export interface ScaleoutRow {
  readonly runners: number
  readonly calls: number
  readonly wallMs: number
  readonly perSecond: number
  /** throughput over the one-runner throughput */
  readonly relative: number
  /** relative / runners */
  readonly efficiency: number
  /** CPU time the optimizer process spent per evaluation */
  readonly clientCpuMsPerEvaluation: number
}

export interface ScaleoutResult {
  readonly options: ScaleoutOptions
  readonly machine: { readonly node: string; readonly cpus: number; readonly loadAverage: ReadonlyArray<number> }
  readonly storage: string
  readonly rows: ReadonlyArray<ScaleoutRow>
  readonly overhead: { readonly localMs: number; readonly remoteMs: number; readonly perEvaluationMs: number }
}

const self = fileURLToPath(import.meta.url)

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const startRunner = (storage: string, options: ScaleoutOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => freePort()).pipe(Effect.flatMap((port) =>
      Effect.async<ChildProcess, Error>((resume) => {
        const child = spawn(process.execPath, ["--import", "tsx", self, "--runner"], {
          stdio: ["ignore", "pipe", "pipe"],
          env: {
            ...process.env,
            GEPA_CLUSTER_STORAGE: storage,
            GEPA_CLUSTER_FAILOVER: "6 seconds",
            GEPA_RUNNER_HOST: "127.0.0.1",
            GEPA_RUNNER_PORT: String(port),
            GEPA_RUNNER_CONCURRENCY: String(options.perRunner),
            SCALEOUT_LATENCY_MS: String(options.latencyMs)
          }
        })
        let out = ""
        let ready = false
        child.stdout!.on("data", (d: Buffer) => {
          out += d.toString()
          if (!ready && out.includes(" ready")) {
            ready = true
            resume(Effect.succeed(child))
          }
        })
        child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
        child.on("exit", (code) => {
          if (!ready) resume(Effect.fail(new Error(`runner exited (${code}) before it was ready: ${out}`)))
        })
      })
    )),
    // a clean stop (shards released, runner unregistered) before the next configuration starts
    (child) =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        const force = setTimeout(() => child.kill("SIGKILL"), 10_000)
        child.once("exit", () => {
          clearTimeout(force)
          resume(Effect.void)
        })
        child.kill("SIGTERM")
      })
  )

type Evaluate = Adapter.Adapter<Example, Trace, string>["evaluate"]

/** `calls` one-example calls, at most `concurrency` in flight; each call a new candidate (no cache, no dedup). */
const drive = (evaluate: Evaluate, calls: number, concurrency: number, tag: string) =>
  Effect.gen(function*() {
    const start = performance.now()
    const cpu = process.cpuUsage()
    yield* Effect.forEach(
      Array.from({ length: calls }, (_, i) => i),
      (i) => evaluate([{ id: i }], { text: `${tag}-${i}` }, { captureTraces: false }),
      { concurrency, discard: true }
    )
    const used = process.cpuUsage(cpu)
    return { wallMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000 }
  })

const onCluster = <A, E>(
  runners: number,
  options: ScaleoutOptions,
  body: (evaluate: Evaluate) => Effect.Effect<A, E>
) =>
  Effect.scoped(Effect.gen(function*() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-scaleout-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    // SQLite by default (a fresh file per configuration); SCALEOUT_STORAGE=postgres://... to compare
    const storage = options.storage ?? path.join(dir, "cluster.db")
    // one after the other: runners racing on an empty database's tables is a known hazard
    for (let i = 0; i < runners; i++) yield* startRunner(storage, options)
    const ctx = yield* Layer.build(ClusterAdapter.layerCluster(evaluation, { storage, failover: Duration.seconds(6) }))
    const adapter = Context.get(ctx, Adapter.tag<Example, Trace, string>())
    // let shard assignments settle, then warm every path (sockets, prepared statements, JIT)
    yield* Effect.sleep("5 seconds")
    yield* drive(adapter.evaluate, runners * options.perRunner * 2, runners * options.perRunner * 3, "warm")
    return yield* body(adapter.evaluate)
  }))

export const scaleout = (options: ScaleoutOptions, log: (line: string) => void = () => {}) =>
  Effect.gen(function*() {
    const rows: Array<Omit<ScaleoutRow, "relative" | "efficiency">> = []
    for (const n of options.runners) {
      log(`${n} runner(s)`)
      const calls = n * options.callsPerRunner
      // the optimizer keeps more calls in flight than the cluster runs at once, so that no runner
      // waits for work because the shard hash gave it more or fewer entities than the others
      const { cpuMs, wallMs } = yield* onCluster(n, options, (evaluate) => drive(evaluate, calls, n * options.perRunner * 3, `n${n}`))
      rows.push({ runners: n, calls, wallMs, perSecond: calls / (wallMs / 1000), clientCpuMsPerEvaluation: cpuMs / calls })
    }
    const base = rows.find((r) => r.runners === 1)?.perSecond ?? rows[0]!.perSecond
    log("overhead")
    const local = evaluation.adapter.pipe(Layer.build, Effect.map((ctx) => Context.get(ctx, Adapter.tag<Example, Trace, string>())))
    const localMs = (yield* Effect.scoped(Effect.flatMap(local, (a) => drive(a.evaluate, options.overheadCalls, 1, "local")))).wallMs
    const remoteMs = (yield* onCluster(1, options, (evaluate) => drive(evaluate, options.overheadCalls, 1, "remote"))).wallMs
    const result: ScaleoutResult = {
      // the URL may hold a password: never written out
      options: { ...options, storage: options.storage === undefined ? undefined : "postgres (url redacted)" },
      machine: { node: process.version, cpus: os.cpus().length, loadAverage: os.loadavg() },
      storage: options.storage === undefined ? "sqlite" : "postgres",
      rows: rows.map((r) => ({ ...r, relative: r.perSecond / base, efficiency: r.perSecond / base / r.runners })),
      overhead: {
        localMs: localMs / options.overheadCalls,
        remoteMs: remoteMs / options.overheadCalls,
        perEvaluationMs: (remoteMs - localMs) / options.overheadCalls
      }
    }
    return result
  })

export const markdown = (r: ScaleoutResult): string => {
  const o = r.options
  const lines = [
    `## Scale-out (${o.latencyMs} ms per evaluation, ${o.perRunner} evaluations at once per runner, ${r.storage} storage)`,
    "",
    `Machine: node ${r.machine.node}, ${r.machine.cpus} CPUs, load average ${r.machine.loadAverage.map((x) => x.toFixed(1)).join(" ")}.`,
    "",
    "| runners | evaluations | wall s | evaluations / s | relative to 1 runner | goal (>= 0.8 x N) | optimizer CPU ms / evaluation |",
    "|---|---|---|---|---|---|---|"
  ]
  for (const row of r.rows) {
    lines.push(
      `| ${row.runners} | ${row.calls} | ${(row.wallMs / 1000).toFixed(2)} | ${row.perSecond.toFixed(1)} | ${row.relative.toFixed(2)}x | ${
        row.relative >= 0.8 * row.runners ? "met" : "**not met**"
      } | ${row.clientCpuMsPerEvaluation.toFixed(1)} |`
    )
  }
  lines.push(
    "",
    `Overhead per remote evaluation (calls one at a time): ${r.overhead.remoteMs.toFixed(1)} ms through the cluster vs ${
      r.overhead.localMs.toFixed(1)
    } ms in process = ${r.overhead.perEvaluationMs.toFixed(1)} ms.`,
    ""
  )
  return lines.join("\n")
}

const storage = process.env["SCALEOUT_STORAGE"]
export const fullOptions: ScaleoutOptions = { runners: [1, 2, 4], perRunner: 4, callsPerRunner: 100, overheadCalls: 30, latencyMs, storage }
export const quickOptions: ScaleoutOptions = { runners: [1, 2, 4], perRunner: 4, callsPerRunner: 24, overheadCalls: 10, latencyMs, storage }

const main = async () => {
  if (process.argv.includes("--runner")) {
    // runMain: SIGTERM shuts the runner down cleanly
    NodeRuntime.runMain(ClusterRunner.run({ definition: evaluation }))
    return
  }
  const quick = process.argv.includes("--quick")
  const result = await Effect.runPromise(scaleout(quick ? quickOptions : fullOptions, (line) => console.error(`[scaleout] ${line}`)))
  const dir = path.join(path.dirname(self), "results")
  fs.mkdirSync(dir, { recursive: true })
  const name = `scaleout-${latencyMs}ms${storage === undefined ? "" : "-postgres"}${quick ? "-quick" : ""}.json`
  fs.writeFileSync(path.join(dir, name), JSON.stringify(result, null, 2) + "\n")
  process.stdout.write(markdown(result))
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === self) {
  main().catch((e: unknown) => {
    console.error(e)
    process.exit(1)
  })
}
