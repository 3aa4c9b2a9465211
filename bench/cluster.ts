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
 * Each case starts once the runners have handed their shards over (see
 * `settled`), and reports where its slow calls lost their time (`slow`) and
 * each process's event-loop stalls (`stalls`); bench/README.md explains.
 *
 * `npx tsx bench/cluster.ts load|overhead|scaleout|failover [--storage postgres] [--quick]`;
 * writes bench/results/cluster-<mode>-<storage>[-quick].json and prints it (JSON).
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Adapter from "../src/Adapter.js"
import * as ClusterAdapter from "../src/ClusterAdapter.js"
import { ConfigError } from "../src/Errors.js"
import * as ClusterConfig from "../src/internal/cluster/config.js"
import * as Storage from "../src/internal/cluster/storage.js"
import * as Gepa from "../src/Gepa.js"
import { crashConfig } from "../test/fixtures/crashChild.js"
import toyEvaluation from "../test/fixtures/clusterEvaluation.js"
import * as Postgres from "../test/fixtures/postgres.js"
import * as Toy from "../test/fixtures/toy.js"
import { define, type Example, self as runnerScript, stamp, type Trace } from "./clusterEvaluation.js"
import * as Runners from "./clusterRunner.js"
import * as Stalls from "./clusterStalls.js"

const args = process.argv.slice(2)
const mode = args[0] ?? "load"
const quick = args.includes("--quick")
const graceful = args.includes("--graceful")
const backend = args.includes("--storage") ? args[args.indexOf("--storage") + 1] ?? "sqlite" : "sqlite"
// --eval io:50|cpu:5: only that evaluation (scaleout)
const only = args.includes("--eval") ? args[args.indexOf("--eval") + 1] : undefined
// --shards N: the cluster's shard count (runners and optimizer); default: the library's
const shards = args.includes("--shards") ? Number(args[args.indexOf("--shards") + 1]) : undefined
// --no-settle: measure at once, while runners started together still hand shards over (to see what that costs)
const noSettle = args.includes("--no-settle")
// --runners 1,2,4: the cluster sizes of scaleout
const sizes = args.includes("--runners") ? (args[args.indexOf("--runners") + 1] ?? "1,2,4").split(",").map(Number) : [1, 2, 4]
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
  body: (evaluate: Evaluate, runners: ReadonlyArray<Runners.Runner>) => Effect.Effect<A, E>,
  warmUp?: (evaluate: Evaluate) => Effect.Effect<unknown, E>
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
    // runners started together hand shards over for a second or two after they are ready (the first one
    // holds them all): a message of a shard in transit waits for its new owner. Measure after that.
    const settledMs = noSettle ? undefined : yield* settled(storage, n)
    const ctx = yield* Layer.build(ClusterAdapter.layerCluster(define(spec), { storage, ...shardSettings }))
    const adapter = Context.get(ctx, Adapter.tag<Example, Trace, string>())
    // warm every path (sockets, prepared statements, JIT) and let assignments settle
    yield* drive(adapter.evaluate, n * concurrency * 4, n * concurrency * 2, 4, "warm")
    if (warmUp !== undefined) yield* warmUp(adapter.evaluate)
    const result = yield* withCpu(runners, body(adapter.evaluate, runners))
    return { ...result, settledMs }
  }))

/**
 * Waits until the shard locks in `storage` (rows on SQLite, advisory locks
 * on Postgres) are held by `n` runners, every
 * shard locked, unchanged for 1.5 s (three assignment refreshes: the
 * optimizer's view of the assignments follows); the time it took, ms
 * (undefined: not settled within 30 s, measured anyway).
 */
const settled = (storage: string, n: number) =>
  Effect.scoped(Effect.gen(function*() {
    const kind = Storage.parse(storage)
    if (kind instanceof ConfigError) return yield* kind
    const sql = Context.get(yield* Layer.build(Storage.layer(kind)), SqlClient)
    const total = shards ?? ClusterConfig.defaults.shards
    const start = performance.now()
    let last = ""
    let since = start
    while (performance.now() - start < 30_000) {
      // SQLite: a row per shard lock; Postgres: an advisory lock per shard, held by each runner's connection
      const rows = yield* (kind._tag === "Sqlite"
        ? sql<{ readonly address: string; readonly held: number }>`
          SELECT address, COUNT(*) AS held FROM cluster_locks GROUP BY address ORDER BY address`
        : sql<{ readonly address: string; readonly held: number }>`
          SELECT CAST(pid AS TEXT) AS address, COUNT(*) AS held FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          GROUP BY pid ORDER BY pid`).pipe(Effect.orElseSucceed(() => []))
      const key = rows.map((r) => `${r.address}=${r.held}`).join(" ")
      const now = performance.now()
      if (key !== last) {
        last = key
        since = now
      }
      if (rows.length === n && rows.reduce((a, r) => a + Number(r.held), 0) === total && now - since >= 1500) return Math.round(now - start)
      yield* Effect.sleep(100)
    }
    return undefined
  }))

/**
 * `body`'s result with the CPU time it took in this process (the optimizer's
 * side) and in the runners, in ms: on a machine without idle cores, CPU
 * per call, not wall time, says what the cluster itself costs.
 */
const withCpu = <A extends object, E>(runners: ReadonlyArray<Runners.Runner>, body: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const from = Date.now()
    const before = { optimizer: process.cpuUsage(), runners: Runners.runnersCpuMs(runners), machine: cpuSample() }
    const result = yield* body
    const optimizer = process.cpuUsage(before.optimizer)
    const to = Date.now()
    const during = (stalls: ReadonlyArray<Stalls.Stall>) => stalls.filter((s) => s.at >= from && s.at <= to)
    return {
      ...result,
      stalls: summarizeStalls([
        ["optimizer", during(optimizerStalls)],
        ...runners.map((r): readonly [string, ReadonlyArray<Stalls.Stall>] => [String(r.port), during(Stalls.parse(r.output()))])
      ]),
      idleCoresDuring: idleBetween(before.machine, cpuSample()),
      optimizerCpuMs: (optimizer.user + optimizer.system) / 1000,
      runnersCpuMs: Runners.runnersCpuMs(runners) - before.runners
    }
  })

// the optimizer's (this process's) event-loop stalls
const optimizerStalls: Array<Stalls.Stall> = []
Stalls.monitor((s) => optimizerStalls.push(s))

/**
 * Event-loop stalls over 100 ms per process during a phase: how many, the
 * longest, and where their time went (on a CPU, waiting for one, asleep in a
 * system call such as SQLite's wait for another process's lock).
 */
const summarizeStalls = (byProcess: ReadonlyArray<readonly [string, ReadonlyArray<Stalls.Stall>]>) =>
  Object.fromEntries(
    byProcess.filter(([, stalls]) => stalls.length > 0).map(([name, stalls]) => {
      const sum = (f: (s: Stalls.Stall) => number) => stalls.reduce((a, s) => a + f(s), 0)
      const longest = stalls.reduce((a, s) => (s.ms > a.ms ? s : a))
      return [name, {
        count: stalls.length,
        totalMs: sum((s) => s.ms),
        cpuMs: sum((s) => s.cpuMs),
        waitingForCpuMs: sum((s) => s.waitingForCpuMs),
        asleepMs: sum((s) => s.asleepMs),
        longest
      }]
    })
  )

/** One call's timeline, ms from the start of its phase: sent, evaluation start/end on the runner, answered. */
interface Timeline {
  readonly i: number
  readonly sent: number
  readonly started: number
  readonly ended: number
  readonly answered: number
  readonly port: string
}

/**
 * Where the slow calls lost their time: calls slower than `threshold` ms
 * (default: 4 x the median, at least 150 ms), split into before the
 * evaluation started on its runner (routing, storage, the runner's queue)
 * and after it ended (the reply's way back), and when in the phase they
 * were sent.
 */
const slowCalls = (timeline: ReadonlyArray<Timeline>, threshold?: number) => {
  const latency = (t: Timeline) => t.answered - t.sent
  const limit = threshold ?? Math.max(150, 4 * percentile(timeline.map(latency), 50))
  const slow = timeline.filter((t) => latency(t) > limit)
  const round = (x: number) => Math.round(x)
  const row = (t: Timeline) => [round(t.sent), round(t.started - t.sent), round(t.ended - t.started), round(t.answered - t.ended), t.port]
  return {
    thresholdMs: round(limit),
    count: slow.length,
    // the median call, for comparison
    typical: {
      beforeMs: percentile(timeline.map((t) => t.started - t.sent), 50),
      afterMs: percentile(timeline.map((t) => t.answered - t.ended), 50)
    },
    beforeEvaluationMs: { p50: percentile(slow.map((t) => t.started - t.sent), 50), max: Math.max(0, ...slow.map((t) => t.started - t.sent)) },
    afterEvaluationMs: { p50: percentile(slow.map((t) => t.answered - t.ended), 50), max: Math.max(0, ...slow.map((t) => t.answered - t.ended)) },
    byRunner: Object.fromEntries([...new Set(slow.map((t) => t.port))].map((p) => [p, slow.filter((t) => t.port === p).length])),
    // the first ones, and the slowest 8 calls: [sent at, ms before evaluation, ms evaluating, ms after evaluation, runner port]
    first: slow.slice(0, 12).map(row),
    slowest: [...timeline].sort((a, b) => latency(b) - latency(a)).slice(0, 8).map(row)
  }
}

/** `calls` one-example calls, `inFlight` at once, `perCandidate` consecutive calls per candidate. */
const drive = (evaluate: Evaluate, calls: number, inFlight: number, perCandidate: number, tag: string) =>
  Effect.gen(function*() {
    const latencies: Array<number> = []
    const timeline: Array<Timeline> = []
    const start = performance.now()
    const epoch = Date.now()
    yield* Effect.forEach(
      Array.from({ length: calls }, (_, i) => i),
      (i) => {
        const t = performance.now()
        const sent = Date.now() - epoch
        return evaluate([{ id: i }], { text: `${tag}-${Math.floor(i / perCandidate)}` }, { captureTraces: false }).pipe(
          Effect.tap((result) =>
            Effect.sync(() => {
              latencies.push(performance.now() - t)
              const s = stamp(result.outputs[0] ?? "")
              timeline.push({ i, sent, started: s.start - epoch, ended: s.end - epoch, answered: Date.now() - epoch, port: s.port })
            })
          )
        )
      },
      { concurrency: inFlight, discard: true }
    )
    const wallMs = performance.now() - start
    return {
      wallMs,
      perSecond: calls / (wallMs / 1000),
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      max: Math.max(...latencies),
      slow: slowCalls(timeline)
    }
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
  const rounds = args.includes("--rounds") ? Number(args[args.indexOf("--rounds") + 1]) : quick ? 40 : 200
  const rows = []
  for (const batch of args.includes("--batch") ? [Number(args[args.indexOf("--batch") + 1])] : [1, 8, 16]) {
    const round = (evaluate: Evaluate, tag: string, n: number) =>
      Effect.gen(function*() {
        const start = performance.now()
        for (let r = 0; r < n; r++) {
          yield* Effect.forEach(Array.from({ length: batch }, (_, i) => i), (i) => evaluate([{ id: i }], { text: `${tag}-${r}` }, { captureTraces: false }), {
            concurrency: "unbounded",
            discard: true
          })
        }
        return { msPerRound: (performance.now() - start) / n }
      })
    // steady state: 30 rounds first (JIT, statement caches), on both sides
    const warmRounds = 30
    const local = yield* Effect.scoped(
      Effect.flatMap(Layer.build(define("io:5").adapter), (ctx) => {
        const evaluate = Context.get(ctx, Adapter.tag<Example, Trace, string>()).evaluate
        return Effect.zipRight(
          round(evaluate, "local-warm", warmRounds),
          Effect.suspend(() => {
            const cpu = process.cpuUsage()
            return Effect.map(round(evaluate, "local", rounds), (r) => {
              const used = process.cpuUsage(cpu)
              return { ...r, cpuMs: (used.user + used.system) / 1000 }
            })
          })
        )
      })
    )
    const remote = yield* onCluster(
      1,
      "io:5",
      batch,
      (evaluate) => round(evaluate, `remote${batch}`, rounds),
      (evaluate) => round(evaluate, `warm${batch}`, warmRounds)
    )
    rows.push({
      batch,
      rounds,
      localMsPerRound: local.msPerRound,
      remoteMsPerRound: remote.msPerRound,
      overheadMsPerExample: (remote.msPerRound - local.msPerRound) / batch,
      // the evaluation itself in process (a 5 ms sleep in Effect): the floor of the runner's figure
      localCpuMsPerExample: local.cpuMs / (rounds * batch),
      optimizerCpuMsPerExample: remote.optimizerCpuMs / (rounds * batch),
      runnerCpuMsPerExample: remote.runnersCpuMs / (rounds * batch),
      idleCoresDuring: remote.idleCoresDuring,
      stalls: remote.stalls
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
    for (const n of sizes) {
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
        relative: base[0] === undefined ? null : r.perSecond / base[0],
        shardsSettledMs: r.settledMs,
        stalls: r.stalls,
        p50: r.p50,
        p90: r.p90,
        p99: r.p99,
        max: r.max,
        slow: r.slow,
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
