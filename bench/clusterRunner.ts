/**
 * Runner processes for the cluster benchmarks (`bench/cluster.ts`): start
 * them, stop them, read what they printed. The runner is
 * `ClusterRunner.run` on `bench/clusterEvaluation.ts`, configured by the
 * environment.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

export interface Runner {
  readonly port: number
  readonly process: ChildProcess
  readonly output: () => string
}

/** Lines that report a storage problem or a deprecation, in what runners printed. */
export const warnings = (runners: ReadonlyArray<Runner>): ReadonlyArray<string> =>
  runners.flatMap((r) =>
    r.output().split("\n").filter((l) => /Could not|database is locked|DeprecationWarning|SqlError|PersistenceError/i.test(l))
  )

/**
 * Starts a runner of `script` (a file whose main runs `ClusterRunner.run`);
 * resolves once it is ready. Stopped with SIGTERM (a clean hand-over) when
 * the scope closes, unless it was killed before.
 */
export const start = (script: string, env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(() => freePort()).pipe(Effect.flatMap((port) =>
      Effect.async<Runner, Error>((resume) => {
        const child = spawn(process.execPath, ["--import", "tsx", path.resolve(script)], {
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
