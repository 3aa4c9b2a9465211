/**
 * Runner processes for the cluster benchmarks (`bench/cluster.ts`): start
 * them, stop them, read what they printed. The runner is
 * `ClusterRunner.run` on `bench/clusterEvaluation.ts`, configured by the
 * environment.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { freePort } from "../test/fixtures/freePort.js"

export { freePort }

export interface Runner {
  readonly port: number
  readonly process: ChildProcess
  readonly output: () => string
}

/** CPU time (user + system, ms) a process has used so far, from /proc; 0 when it is gone or not on Linux. */
export const cpuMs = (pid: number | undefined): number => {
  if (pid === undefined || !fs.existsSync(`/proc/${pid}/stat`)) return 0
  try {
    // fields after the command name: state is 3rd, utime 14th, stime 15th (1-based over the whole line)
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []
    return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * (1000 / clockTicks)
  } catch {
    return 0
  }
}

// USER_HZ: 100 on every Linux this runs on
const clockTicks = 100

/** CPU time used by `runners` together, ms. */
export const runnersCpuMs = (runners: ReadonlyArray<Runner>): number => runners.reduce((n, r) => n + cpuMs(r.process.pid), 0)

/** Lines that report a storage problem or a deprecation, in what runners printed. */
export const warnings = (runners: ReadonlyArray<Runner>): ReadonlyArray<string> =>
  runners.flatMap((r) => r.output().split("\n").filter((l) => /Could not|database is locked|DeprecationWarning|SqlError|PersistenceError/i.test(l)))

/**
 * Starts a runner of `script` (a file whose main runs `ClusterRunner.run`);
 * resolves once it is ready. Stopped with SIGTERM (a clean hand-over) when
 * the scope closes, unless it was killed before.
 */
export const start = (script: string, env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(() => freePort()).pipe(Effect.flatMap((port) =>
      Effect.async<Runner, Error>((resume) => {
        // BENCH_RUNNER_NODE_ARGS: extra node flags for the runners (e.g. "--cpu-prof --cpu-prof-dir=prof")
        const extra = (process.env["BENCH_RUNNER_NODE_ARGS"] ?? "").split(" ").filter((a) => a !== "")
        const child = spawn(process.execPath, [...extra, "--import", "tsx", path.resolve(script)], {
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, ...env, GEPA_RUNNER_HOST: "127.0.0.1", GEPA_RUNNER_PORT: String(port) }
        })
        let out = ""
        let ready = false
        child.stdout!.on("data", (d: Buffer) => {
          out += d.toString()
          if (!ready && out.includes(" ready")) {
            ready = true
            resume(Effect.succeed({ port, process: child, output: () => out }))
          }
        })
        child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
        child.on("exit", (code, signal) => {
          if (!ready) resume(Effect.fail(new Error(`runner exited (${code ?? signal}) before it was ready: ${out}`)))
        })
      })
    )),
    (runner) =>
      Effect.async<void>((resume) => {
        const child = runner.process
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        const force = setTimeout(() => child.kill("SIGKILL"), 10_000)
        child.once("exit", () => {
          clearTimeout(force)
          resume(Effect.void)
        })
        child.kill("SIGTERM")
      })
  )

/** `n` runners started at the same instant. */
export const startMany = (script: string, env: Record<string, string>, n: number) =>
  Effect.all(Array.from({ length: n }, () => start(script, env)), { concurrency: "unbounded" })
