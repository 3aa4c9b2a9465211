/**
 * Runner start: from spawning a runner process to its `ready` line, on a
 * fresh SQLite file, three ways:
 *
 * - `script`: a script of the checkout running `ClusterRunner.run` under tsx
 *   (`node --import tsx bench/clusterEvaluation.ts`);
 * - `cli-source`: `gepa runner` of this checkout, not built (bin/gepa.js
 *   compiles the sources with tsx), serving a module in a folder outside
 *   the checkout that imports `effect-gepa`;
 * - `cli-dist`: the same with the compiled CLI (the package built into a
 *   temporary copy, as `npm run build` would).
 *
 * Wall time to ready and the CPU time the process had used by then (user +
 * system, all its threads, from /proc): on a loaded machine the CPU time is
 * the steady figure.
 *
 * `npx tsx bench/clusterStart.ts [--reps N]`; writes
 * bench/results/cluster-start.json and prints it.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { cpuMs, freePort } from "./clusterRunner.js"

const args = process.argv.slice(2)
const reps = args.includes("--reps") ? Number(args[args.indexOf("--reps") + 1]) : 5
const root = path.join(import.meta.dirname, "..")

const evaluationSource = `
import { Effect, Schema } from "effect"
import { Adapter } from "effect-gepa"
import * as ClusterEvaluation from "effect-gepa/ClusterEvaluation"

export default ClusterEvaluation.define({
  adapter: Adapter.fromExample((example: { readonly id: number }) => Effect.succeed({ output: String(example.id), score: 1 })),
  output: Schema.String
})
`

interface Start {
  readonly wallMs: number
  readonly cpuMs: number
}

/** Spawns `argv` in `cwd`, waits for its ready line, then kills it. */
const startOnce = async (argv: ReadonlyArray<string>, cwd: string, dir: string, i: number): Promise<Start> => {
  const port = await freePort()
  const storage = path.join(dir, `start-${i}.db`)
  const t = performance.now()
  return new Promise<Start>((resolve, reject) => {
    const child = spawn(process.execPath, [...argv], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        GEPA_CLUSTER_STORAGE: storage,
        GEPA_RUNNER_HOST: "127.0.0.1",
        GEPA_RUNNER_PORT: String(port),
        GEPA_RUNNER_STATUS_EVERY: "0",
        BENCH_EVAL: "io:5"
      }
    })
    let out = ""
    let ready = false
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString()
      if (!ready && out.includes(" ready")) {
        ready = true
        const started = { wallMs: performance.now() - t, cpuMs: cpuMs(child.pid) }
        child.kill("SIGKILL")
        resolve(started)
      }
    })
    child.stderr.on("data", (d: Buffer) => (out += d.toString()))
    child.on("exit", (code, signal) => {
      if (!ready) reject(new Error(`runner exited (${code ?? signal}) before it was ready: ${out}`))
    })
  })
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

/** The package compiled into a temporary copy (its node_modules linked): the compiled CLI. */
const buildCopy = (dir: string): string => {
  const copy = path.join(dir, "package")
  fs.mkdirSync(copy)
  for (const entry of ["bin", "src", "package.json", "tsconfig.json", "tsconfig.build.json"]) {
    fs.cpSync(path.join(root, entry), path.join(copy, entry), { recursive: true })
  }
  fs.symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"))
  execFileSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], {
    cwd: copy,
    stdio: "inherit"
  })
  return copy
}

const main = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-bench-start-"))
  try {
    const outside = path.join(dir, "outside")
    fs.mkdirSync(outside)
    fs.writeFileSync(path.join(outside, "package.json"), JSON.stringify({ type: "module" }))
    fs.writeFileSync(path.join(outside, "evaluation.ts"), evaluationSource)
    const copy = buildCopy(dir)
    const variants: ReadonlyArray<readonly [string, ReadonlyArray<string>, string]> = [
      ["script", ["--import", "tsx", path.join(root, "bench", "clusterEvaluation.ts")], root],
      ["cli-source", [path.join(root, "bin", "gepa.js"), "runner", "--module", "evaluation.ts"], outside],
      ["cli-dist", [path.join(copy, "bin", "gepa.js"), "runner", "--module", "evaluation.ts"], outside]
    ]
    const rows = []
    for (const [name, argv, cwd] of variants) {
      // one start first: tsx's transform cache, the file cache
      await startOnce(argv, cwd, dir, -1)
      const starts: Array<Start> = []
      for (let i = 0; i < reps; i++) starts.push(await startOnce(argv, cwd, dir, i))
      const row = {
        variant: name,
        starts: reps,
        wallMsMedian: median(starts.map((s) => s.wallMs)),
        wallMsMin: Math.min(...starts.map((s) => s.wallMs)),
        cpuMsMedian: median(starts.map((s) => s.cpuMs)),
        cpuMsMin: Math.min(...starts.map((s) => s.cpuMs)),
        loadAverage: os.loadavg()[0]
      }
      console.error(`[start] ${JSON.stringify(row)}`)
      rows.push(row)
    }
    const result = { machine: { node: process.version, cpus: os.cpus().length, loadAverage: os.loadavg() }, rows }
    const out = path.join(import.meta.dirname, "results", "cluster-start.json")
    fs.writeFileSync(out, JSON.stringify(result, null, 2) + "\n")
    console.log(JSON.stringify(result, null, 2))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

await main()
