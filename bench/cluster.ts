/**
 * Cluster benchmarks, each on SQLite or a throwaway Postgres
 * (`--storage sqlite|postgres`, default sqlite):
 *
 * - `load`: 3 runners (4 at once each), 2,000 calls of 5 ms CPU, 12 in
 *   flight; every call its own candidate (one request per call: the
 *   storage's worst case) and then 8 calls per candidate (batched). Storage
 *   and deprecation warnings printed by the runners, call latency p50/p99.
 * - `overhead`: one runner, rounds of B calls of one candidate (B = 1, 8,
 *   16; the runner runs B at once), 5 ms I/O each: time per round through
 *   the cluster minus in process, per example.
 * - `scaleout`: 1, 2, 4 runners (4 at once each), 5 ms CPU and 50 ms I/O.
 * - `failover`: 10 optimizations on 3 runners, the busiest SIGKILLed mid-run
 *   (or `--graceful`: SIGTERM): time from the kill until the last call it
 *   held completed, and whether the result equals the in-process run.
 *
 * `npx tsx bench/cluster.ts load|overhead|scaleout|failover [--storage postgres] [--quick]`;
 * writes bench/results/cluster-<mode>-<storage>[-quick].json and prints markdown.
 */
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Adapter from "../src/Adapter.js"
import * as ClusterAdapter from "../src/ClusterAdapter.js"
import * as Gepa from "../src/Gepa.js"
import { crashConfig } from "../test/fixtures/crashChild.js"
import toyEvaluation from "../test/fixtures/clusterEvaluation.js"
import * as Postgres from "../test/fixtures/postgres.js"
import * as Toy from "../test/fixtures/toy.js"
import { define, type Example, self as runnerScript, type Trace } from "./clusterEvaluation.js"
import * as Runners from "./clusterRunner.js"

const args = process.argv.slice(2)
const mode = args[0] ?? "load"
const quick = args.includes("--quick")
const graceful = args.includes("--graceful")
const backend = args.includes("--storage") ? args[args.indexOf("--storage") + 1] ?? "sqlite" : "sqlite"
// --eval io:50|cpu:5: only that evaluation (scaleout)
const only = args.includes("--eval") ? args[args.indexOf("--eval") + 1] : undefined
// --shards N: the cluster's shard count (runners and optimizer); default: the library's
const shards = args.includes("--shards") ? Number(args[args.indexOf("--shards") + 1]) : undefined
const shardSettings = shards === undefined ? {} : { shards }
const shardEnv: Record<string, string> = shards === undefined ? {} : { GEPA_CLUSTER_SHARDS: String(shards) }

const cpuSample = () =>
  os.cpus().reduce((a, c) => ({ idle: a.idle + c.times.idle, total: a.total + Object.values(c.times).reduce((x, y) => x + y, 0) }), { idle: 0, total: 0 })
const idleBetween = (a: ReturnType<typeof cpuSample>, b: ReturnType<typeof cpuSample>) =>
  ((b.idle - a.idle) / Math.max(1, b.total - a.total)) * os.cpus().length

/** Idle cores over `ms`, from the kernel's CPU counters. */
export const idleCores = (ms = 1000) =>
  Effect.promise(async () => {
    const a = cpuSample()
    await new Promise((r) => setTimeout(r, ms))
    return idleBetween(a, cpuSample())
  })

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}

let pg: Postgres.Postgres | undefined
let databases = 0
/** A fresh, empty storage address. */
const freshStorage = (dir: string) => {
  if (backend === "postgres") return pg!.database(`bench_${process.pid}_${databases++}`)
  return path.join(dir, `cluster-${databases++}.db`)
}

type Evaluate = Adapter.Adapter<Example, Trace, string>["evaluate"]

/** A cluster of `n` runners with evaluation `spec`, and the optimizer's adapter on it. */
const onCluster = <A extends object, E>(
  n: number,
  spec: string,
  concurrency: number,
  body: (evaluate: Evaluate, runners: ReadonlyArray<Runners.Runner>) => Effect.Effect<A, E>
) =>
  Effect.scoped(Effect.gen(function*() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-bench-cluster-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    const storage = freshStorage(dir)
    const runners = yield* Runners.startMany(runnerScript, {
      GEPA_CLUSTER_STORAGE: storage,
      GEPA_RUNNER_CONCURRENCY: String(concurrency),
      GEPA_RUNNER_STATUS_EVERY: "0",
      BENCH_EVAL: spec,
      ...shardEnv
    }, n)
    const ctx = yield* Layer.build(ClusterAdapter.layerCluster(define(spec), { storage, ...shardSettings }))
    const adapter = Context.get(ctx, Adapter.tag<Example, Trace, string>())
    // warm every path (sockets, prepared statements, JIT) and let assignments settle
    yield* drive(adapter.evaluate, n * concurrency * 4, n * concurrency * 2, 4, "warm")
    return yield* withCpu(runners, body(adapter.evaluate, runners))
  }))

/**
 * `body`'s result with the CPU time it took in this process (the optimizer's
 * side) and in the runners, in ms: on a machine without idle cores, CPU
 * per call, not wall time, says what the cluster itself costs.
 */
const withCpu = <A extends object, E>(runners: ReadonlyArray<Runners.Runner>, body: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const before = { optimizer: process.cpuUsage(), runners: Runners.runnersCpuMs(runners), machine: cpuSample() }
    const result = yield* body
    const optimizer = process.cpuUsage(before.optimizer)
    return {
      ...result,
      idleCoresDuring: idleBetween(before.machine, cpuSample()),
      optimizerCpuMs: (optimizer.user + optimizer.system) / 1000,
      runnersCpuMs: Runners.runnersCpuMs(runners) - before.runners
    }
  })

/** `calls` one-example calls, `inFlight` at once, `perCandidate` consecutive calls per candidate. */
const drive = (evaluate: Evaluate, calls: number, inFlight: number, perCandidate: number, tag: string) =>
  Effect.gen(function*() {
    const latencies: Array<number> = []
    const start = performance.now()
    yield* Effect.forEach(
      Array.from({ length: calls }, (_, i) => i),
      (i) => {
        const t = performance.now()
        return evaluate([{ id: i }], { text: `${tag}-${Math.floor(i / perCandidate)}` }, { captureTraces: false }).pipe(
          Effect.tap(() => Effect.sync(() => latencies.push(performance.now() - t)))
        )
      },
      { concurrency: inFlight, discard: true }
    )
    const wallMs = performance.now() - start
    return { wallMs, perSecond: calls / (wallMs / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies) }
  })

const load = Effect.gen(function*() {
  const calls = quick ? 500 : 2000
  const rows = []
  for (const perCandidate of [1, 8]) {
    const idle = yield* idleCores()
    const row = yield* onCluster(
      3,
      "cpu:5",
      4,
      (evaluate, runners) => Effect.map(drive(evaluate, calls, 12, perCandidate, `load${perCandidate}`), (r) => ({ ...r, warnings: Runners.warnings(runners) }))
    )
    rows.push({
      perCandidate,
      calls,
      idleCoresBefore: idle,
      ...row,
      optimizerCpuMsPerCall: row.optimizerCpuMs / calls,
      runnersCpuMsPerCall: row.runnersCpuMs / calls,
      warnings: row.warnings.length,
      warningLines: row.warnings.slice(0, 5)
    })
  }
  return rows
})

const overhead = Effect.gen(function*() {
  const rounds = quick ? 20 : 60
  const rows = []
  for (const batch of [1, 8, 16]) {
    const round = (evaluate: Evaluate, tag: string) =>
      Effect.gen(function*() {
        const start = performance.now()
        for (let r = 0; r < rounds; r++) {
          yield* Effect.forEach(Array.from({ length: batch }, (_, i) => i), (i) => evaluate([{ id: i }], { text: `${tag}-${r}` }, { captureTraces: false }), {
            concurrency: "unbounded",
            discard: true
          })
        }
        return { msPerRound: (performance.now() - start) / rounds }
      })
    const local = yield* Effect.scoped(
      Effect.flatMap(Layer.build(define("io:5").adapter), (ctx) => round(Context.get(ctx, Adapter.tag<Example, Trace, string>()).evaluate, "local"))
    )
    const remote = yield* onCluster(1, "io:5", batch, (evaluate) => round(evaluate, `remote${batch}`))
    rows.push({
      batch,
      rounds,
      localMsPerRound: local.msPerRound,
      remoteMsPerRound: remote.msPerRound,
      overheadMsPerExample: (remote.msPerRound - local.msPerRound) / batch,
      optimizerCpuMsPerExample: remote.optimizerCpuMs / (rounds * batch),
      runnerCpuMsPerExample: remote.runnersCpuMs / (rounds * batch),
      idleCoresDuring: remote.idleCoresDuring
    })
  }
  return rows
})

const scaleout = Effect.gen(function*() {
  const rows = []
  for (const spec of only === undefined ? ["io:50", "cpu:5"] : [only]) {
    const perRunner = 4
    const callsPerRunner = spec.startsWith("io") ? (quick ? 80 : 320) : (quick ? 200 : 800)
    const idle = yield* idleCores()
    const base: Array<number> = []
    for (const n of [1, 2, 4]) {
      const r = yield* onCluster(n, spec, perRunner, (evaluate) => drive(evaluate, n * callsPerRunner, n * perRunner * 2, 8, `s${n}`))
      if (n === 1) base.push(r.perSecond)
      rows.push({
        eval: spec,
        runners: n,
        perRunner,
        calls: n * callsPerRunner,
        idleCoresBefore: idle,
        idleCoresDuring: r.idleCoresDuring,
        perSecond: r.perSecond,
        relative: r.perSecond / base[0]!,
        p99: r.p99,
        optimizerCpuMsPerCall: r.optimizerCpuMs / (n * callsPerRunner),
        runnersCpuMsPerCall: r.runnersCpuMs / (n * callsPerRunner)
      })
    }
  }
  return rows
})

const failover = Effect.gen(function*() {
  const kills = quick ? 3 : 10
  const budget = 240
  const iterations = 25
  const baseline = yield* Effect.flatMap(Toy.makeAdapter(), (toy) => Gepa.optimize(crashConfig(toy.adapter, budget, iterations)))
  const same = (r: Gepa.OptimizeResult<string>) =>
    JSON.stringify([r.candidates, r.valScores, r.bestIndex, r.totalMetricCalls, r.iterations]) ===
      JSON.stringify([baseline.candidates, baseline.valScores, baseline.bestIndex, baseline.totalMetricCalls, baseline.iterations])
  const rows = []
  for (let k = 0; k < kills; k++) {
    const row = yield* Effect.scoped(Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-bench-failover-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const storage = freshStorage(dir)
      const logs = [0, 1, 2].map((i) => path.join(dir, `evals-${i}.log`))
      const runners: Array<Runners.Runner> = []
      for (const log of logs) {
        runners.push(
          yield* Runners.start(path.join(import.meta.dirname, "..", "test", "fixtures", "clusterRunner.ts"), {
            GEPA_CLUSTER_STORAGE: storage,
            GEPA_RUNNER_STATUS_EVERY: "0",
            GEPA_TEST_LOG: log,
            ...shardEnv
          })
        )
      }
      const count = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8").split("\n").length - 1 : 0)
      const ctx = yield* Layer.build(ClusterAdapter.layerCluster(toyEvaluation, { storage, ...shardSettings }))
      const remote = Context.get(ctx, Adapter.tag<Toy.Example, Adapter.ExampleTrace<Toy.Example, never, string>, string>())
      let killedAt: number | undefined
      let lastHeld = 0
      const timed: typeof remote = {
        ...remote,
        evaluate: (batch, candidate, options) => {
          const t = performance.now()
          return remote.evaluate(batch, candidate, options).pipe(Effect.tap(() =>
            Effect.sync(() => {
              const end = performance.now()
              if (killedAt !== undefined && t < killedAt && end > killedAt) lastHeld = Math.max(lastHeld, end - killedAt)
            })
          ))
        }
      }
      // the kill lands on a runner that started evaluations in the last 5 ms (15 ms each): it holds calls
      let seen = [0, 0, 0]
      const watcher = setInterval(() => {
        if (killedAt !== undefined) return
        const now = logs.map(count)
        const started = now.map((n, i) => n - seen[i]!)
        seen = now
        if (now.reduce((a, b) => a + b, 0) < 120) return
        const busiest = [0, 1, 2].sort((a, b) => started[b]! - started[a]!)[0]!
        if (started[busiest]! === 0) return
        killedAt = performance.now()
        runners[busiest]!.process.kill(graceful ? "SIGTERM" : "SIGKILL")
      }, 5)
      const result = yield* Gepa.optimize(crashConfig(timed, budget, iterations)).pipe(Effect.ensuring(Effect.sync(() => clearInterval(watcher))))
      return {
        kill: k + 1,
        signal: graceful ? "SIGTERM" : "SIGKILL",
        killed: killedAt !== undefined,
        failoverMs: lastHeld,
        identical: same(result),
        warnings: Runners.warnings(runners).length
      }
    }))
    console.error(`[failover] ${JSON.stringify(row)}`)
    rows.push(row)
  }
  return rows
})

const main = Effect.gen(function*() {
  if (backend === "postgres") pg = yield* Effect.promise(() => Postgres.start())
  const modes: Record<string, Effect.Effect<ReadonlyArray<unknown>, unknown>> = { load, overhead, scaleout, failover }
  const run = modes[mode]
  if (run === undefined) throw new Error(`unknown mode ${mode}: load, overhead, scaleout or failover`)
  const rows = yield* Effect.ensuring(run, Effect.sync(() => pg?.stop()))
  const result = {
    mode,
    storage: backend,
    graceful,
    shards: shards ?? "default",
    machine: { node: process.version, cpus: os.cpus().length, loadAverage: os.loadavg() },
    rows
  }
  const out = path.join(
    import.meta.dirname,
    "results",
    `cluster-${mode}${graceful ? "-graceful" : ""}-${backend}${shards === undefined ? "" : `-shards${shards}`}${quick ? "-quick" : ""}.json`
  )
  fs.mkdirSync(path.dirname(out), { recursive: true })
  fs.writeFileSync(out, JSON.stringify(result, null, 2) + "\n")
  console.log(JSON.stringify(result, null, 2))
})

Effect.runPromise(main).then(
  // done: handles the cluster client may leave behind must not keep the process
  () => process.exit(0),
  (e: unknown) => {
    console.error(e)
    process.exit(1)
  }
)
