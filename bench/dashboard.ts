/**
 * `npm run bench:dashboard`: what the live dashboard costs a run.
 *
 * 1. Wall time of the synthetic run (`dashboardTask.ts`: an instant adapter,
 *    so every microsecond the engine spends on events shows; default
 *    settings, telemetry on) without the dashboard, with it served and no
 *    browser, and with a headless Chromium page connected, runs interleaved,
 *    medians reported. An instant adapter is
 *    the worst case: with a real model a run spends seconds per proposal
 *    waiting, and the dashboard's share shrinks accordingly.
 * 2. Memory of the dashboard holding a run of 1,000 candidates: the heap
 *    after a forced GC with the finished run's server still up, minus the
 *    heap once it is closed (run with `--expose-gc`).
 *
 * Prints a markdown table and writes bench/results/dashboard.json. Needs
 * Chromium (`/usr/bin/chromium` or CHROME_PATH); without it, part 1 runs
 * with the dashboard but no browser, and says so.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium } from "playwright-core"
import * as Dashboard from "../src/Dashboard.js"
import * as Gepa from "../src/Gepa.js"
import { makeConfig } from "./dashboardTask.js"

const quick = process.argv.includes("--quick")
const candidates = quick ? 150 : 300
const reps = quick ? 2 : 7
const memoryCandidates = quick ? 300 : 1000
const CHROME = process.env["CHROME_PATH"] ?? "/usr/bin/chromium"

const gc = (globalThis as { gc?: () => void }).gc
const heap = () => {
  gc?.()
  gc?.()
  return process.memoryUsage().heapUsed
}

const plain = (n: number) => Effect.runPromise(Gepa.optimize(makeConfig({ maxCandidates: n })).pipe(Effect.asVoid))

const withUi = (n: number, browser: Browser | undefined) =>
  Effect.runPromise(Effect.scoped(
    Effect.gen(function*() {
      const info = yield* Dashboard.Dashboard
      const page = browser === undefined ? undefined : yield* Effect.promise(() => browser.newPage({ viewport: { width: 1400, height: 900 }, bypassCSP: true }))
      if (page !== undefined) {
        yield* Effect.promise(() => page.goto(info.url))
        yield* Effect.promise(() => page.waitForFunction(`document.querySelector("#status")?.textContent !== "connecting"`))
      }
      yield* Gepa.optimize(makeConfig({ maxCandidates: n }))
      if (page !== undefined) yield* Effect.promise(() => page.close())
    }).pipe(Effect.provide(Dashboard.layer()))
  ))

// wall time, and the CPU time of this process (the engine and the server,
// not the browser): the CPU figure is far less sensitive to other load on a
// shared machine
const cpuWithout: Array<number> = []
const cpuWith: Array<number> = []
const cpuServed: Array<number> = []
const time = async (f: () => Promise<void>, cpu: Array<number>) => {
  const start = performance.now()
  const before = process.cpuUsage()
  await f()
  const used = process.cpuUsage(before)
  cpu.push((used.user + used.system) / 1000)
  return performance.now() - start
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const main = async () => {
  const browser = fs.existsSync(CHROME) ? await chromium.launch({ executablePath: CHROME }) : undefined
  // warm-up: JIT, module loading, the first page
  await plain(30)
  await withUi(30, browser)
  const without: Array<number> = []
  const served: Array<number> = []
  const withDashboard: Array<number> = []
  const variants = [
    { name: "without", wall: without, cpu: cpuWithout, run: () => plain(candidates) },
    { name: "served, no browser", wall: served, cpu: cpuServed, run: () => withUi(candidates, undefined) },
    { name: "with browser", wall: withDashboard, cpu: cpuWith, run: () => withUi(candidates, browser) }
  ]
  for (let r = 0; r < reps; r++) {
    // rotate the order so drift on a shared machine hits every variant
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(r + k) % variants.length]!
      v.wall.push(await time(v.run, v.cpu))
    }
    console.error(
      `[bench] rep ${r + 1}/${reps}: ` + variants.map((v) => `${v.name} ${v.wall[r]!.toFixed(0)} ms wall, ${v.cpu[r]!.toFixed(0)} ms cpu`).join("; ")
    )
  }
  await browser?.close()

  // memory with the finished run still served
  const before = heap()
  let held = 0
  let snapshotBytes = 0
  await Effect.runPromise(Effect.scoped(
    Effect.gen(function*() {
      const info = yield* Dashboard.Dashboard
      yield* Gepa.optimize(makeConfig({ maxCandidates: memoryCandidates }))
      yield* Effect.sleep("400 millis")
      snapshotBytes = (yield* Effect.promise(() => fetch(info.url.replace("/?", "/snapshot.json?")).then((r) => r.text()))).length
      held = heap()
    }).pipe(Effect.provide(Dashboard.layer()))
  ))
  const after = heap()

  const ratio = median(withDashboard) / median(without)
  const cpuRatio = median(cpuWith) / median(cpuWithout)
  // per pair: the ratio of the two runs next to each other
  const pairs = without.map((w, i) => withDashboard[i]! / w)
  const report = {
    date: new Date().toISOString(),
    node: process.version,
    quick,
    browser: browser === undefined ? "none (chromium missing)" : "headless chromium, one page connected",
    overhead: {
      candidates,
      reps,
      withoutMs: without.map(Math.round),
      withMs: withDashboard.map(Math.round),
      medianWithoutMs: Math.round(median(without)),
      medianWithMs: Math.round(median(withDashboard)),
      slowdownPercent: Number(((ratio - 1) * 100).toFixed(2)),
      medianPairSlowdownPercent: Number(((median(pairs) - 1) * 100).toFixed(2)),
      cpuWithoutMs: cpuWithout.map(Math.round),
      cpuWithMs: cpuWith.map(Math.round),
      cpuSlowdownPercent: Number(((cpuRatio - 1) * 100).toFixed(2)),
      servedNoBrowserMs: served.map(Math.round),
      servedNoBrowserCpuMs: cpuServed.map(Math.round),
      servedSlowdownPercent: Number(((median(served) / median(without) - 1) * 100).toFixed(2)),
      servedCpuSlowdownPercent: Number(((median(cpuServed) / median(cpuWithout) - 1) * 100).toFixed(2)),
      goal: "at most 2% slower"
    },
    memory: {
      candidates: memoryCandidates,
      gcExposed: gc !== undefined,
      heapHeldMiB: Number(((held - after) / 2 ** 20).toFixed(2)),
      heapBeforeMiB: Number((before / 2 ** 20).toFixed(1)),
      snapshotKiB: Number((snapshotBytes / 1024).toFixed(1))
    }
  }
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results")
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, quick ? "dashboard-quick.json" : "dashboard.json"), JSON.stringify(report, null, 2) + "\n")
  console.log([
    "| dashboard | figure |",
    "|---|---|",
    `| wall time, ${candidates} candidates, instant adapter, median of ${reps} | ${report.overhead.medianWithoutMs} ms without, ${report.overhead.medianWithMs} ms with dashboard + ${report.browser} |`,
    `| wall-time slowdown (goal ≤ 2%): of the medians; median of the ${reps} pairs | ${report.overhead.slowdownPercent}%; ${report.overhead.medianPairSlowdownPercent}% |`,
    `| served with no browser connected: wall, CPU (medians, vs without) | ${Math.round(median(served))} ms (${report.overhead.servedSlowdownPercent}%), ${
      Math.round(median(cpuServed))
    } ms (${report.overhead.servedCpuSlowdownPercent}%) |`,
    `| CPU time of the run's process (engine + server, not the browser), medians | ${Math.round(median(cpuWithout))} ms without, ${
      Math.round(median(cpuWith))
    } ms with: ${report.overhead.cpuSlowdownPercent}% |`,
    `| server heap holding ${memoryCandidates} candidates | ${report.memory.heapHeldMiB} MiB${gc === undefined ? " (no --expose-gc: rough)" : ""} |`,
    `| snapshot a new page loads | ${report.memory.snapshotKiB} KiB |`
  ].join("\n"))
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
