/**
 * The live dashboard, the way a person uses it: a real offline run with the
 * page open in headless Chromium (Debian's `chromium`, driven by
 * playwright-core), the chart and the lineage growing, the Stop button
 * ending the run with its state saved; markup in a candidate shown as text;
 * the token required; `watch` following a folder that another run writes,
 * across a resume.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import * as DeepTask from "../bench/dashboardTask.js"
import { runDemo, simulatedModels } from "../examples/demo/run.js"
import { pacedModels } from "../examples/demo/ui.js"
import * as Dashboard from "../src/Dashboard.js"
import type { GepaEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"
import * as Report from "../src/Report.js"
import * as RunDir from "../src/RunDir.js"
import { tmpDir } from "./fixtures/tmp.js"

const CHROME = process.env["CHROME_PATH"] ?? "/usr/bin/chromium"
// locally a machine without the browser skips; CI installs it (.ci/run) and must run these
const skip = !fs.existsSync(CHROME) && process.env["CI"] === undefined

let browser: Browser | undefined
beforeAll(async () => {
  if (skip) return
  browser = await chromium.launch({ executablePath: CHROME, timeout: 60_000 })
  process.stderr.write(`dashboard tests: chromium ${browser.version()}\n`)
}, 90_000)
afterAll(async () => {
  await browser?.close()
})

const open = (url: string, width = 1400) =>
  Effect.promise(async () => {
    // the page's Content-Security-Policy forbids evaluating strings; the test's own probes may
    const page = await browser!.newPage({ viewport: { width, height: 900 }, bypassCSP: true })
    const dialogs: Array<string> = []
    page.on("dialog", (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    await page.goto(url)
    return { page, dialogs }
  })

const waitFor = (page: Page, fn: string, timeout = 30_000) => Effect.promise(() => page.waitForFunction(fn, null, { timeout, polling: 100 }))

const count = (page: Page, selector: string) => Effect.promise(() => page.locator(selector).count())

const get = (url: string) => Effect.promise(() => fetch(url).then(async (r) => ({ status: r.status, text: await r.text() })))

describe.skipIf(skip)("dashboard in the browser", () => {
  it.live("follows a real offline run: the chart grows, the lineage gains nodes, Stop ends the run with its state saved", () =>
    Effect.gen(function*() {
      const runDir = path.join(tmpDir("gepa-dash-"), "run")
      const info = yield* Dashboard.Dashboard
      const tags: Array<string> = []
      const run = yield* Effect.fork(runDemo({
        models: pacedModels(simulatedModels(0)),
        runDir,
        writeReport: false,
        onEvent: (e: GepaEvent) => void tags.push(e._tag)
      }))
      const { page } = yield* open(info.url)
      yield* waitFor(page, `document.querySelectorAll("#chart .pt").length >= 2`)
      const pointsBefore = yield* count(page, "#chart .pt")
      const nodesBefore = yield* count(page, "#lineage .node")
      yield* waitFor(page, `document.querySelectorAll("#chart .pt").length >= ${pointsBefore + 2}`)
      yield* waitFor(page, `document.querySelectorAll("#lineage .node").length >= ${nodesBefore + 2}`)
      expect(yield* count(page, "#events li")).toBeGreaterThan(3)
      expect(yield* Effect.promise(() => page.locator("#status").textContent())).toContain("running")
      // a candidate's detail: a diff against its parent, the minibatch scores, the feedback
      yield* Effect.promise(() => page.locator(`#chart .pt[data-i="1"]`).dispatchEvent("click"))
      yield* waitFor(page, `document.querySelector("#detail-body")?.textContent.includes("Feedback shown to the reflection model")`)
      expect(yield* count(page, "#detail-body ins, #detail-body del")).toBeGreaterThan(0)
      expect(yield* count(page, "#detail-body table.mb tr")).toBeGreaterThan(1)

      yield* Effect.promise(() => page.locator("#stop").click())
      const { result } = yield* Fiber.join(run)
      expect(result.stopReason).toBe("stopped by request (dashboard)")
      yield* waitFor(page, `document.querySelector("#status")?.textContent.startsWith("stopped")`)
      // the state is saved and the run resumes from it
      const saved = yield* RunDir.readState(runDir)
      expect(Option.isSome(saved) && saved.value.candidates.length).toBe(result.candidates.length)
      const resumed: Array<GepaEvent> = []
      yield* runDemo({ runDir, writeReport: false, maxMetricCalls: result.totalMetricCalls + 60, onEvent: (e) => void resumed.push(e) })
      const start = resumed.find((e) => e._tag === "OptimizationStarted")
      expect(start?._tag === "OptimizationStarted" && start.resumed).toBe(true)
      yield* Effect.promise(() => page.close())
    }).pipe(Effect.scoped, Effect.provide(Dashboard.layer())), 120_000)

  it.live("shows a candidate holding <script> as text, on the page and in the static report", () =>
    Effect.gen(function*() {
      const info = yield* Dashboard.Dashboard
      const result = yield* Gepa.optimize(DeepTask.makeConfig({ maxCandidates: 12 }))
      const marked = result.candidates.findIndex((c) => Object.values(c).some((t) => t.includes("<script>alert(1)</script>")))
      expect(marked).toBeGreaterThan(0)
      const { dialogs, page } = yield* open(info.url)
      yield* waitFor(page, `document.body.getAttribute("data-candidates") === "${result.candidates.length}"`)
      yield* Effect.promise(() => page.locator(`#chart .pt[data-i="${marked}"]`).dispatchEvent("click"))
      yield* waitFor(page, `document.querySelector("#detail-body")?.textContent.includes("<script>alert(1)</script>")`)
      expect(yield* Effect.promise(() => page.evaluate(`document.querySelectorAll("body script").length`))).toBe(1)
      // the report, opened in the same browser
      // the report of a run whose best candidate holds the markup
      const html = Report.render({
        result: { ...result, bestIndex: marked, bestCandidate: result.candidates[marked]! },
        trace: result.state.trace,
        seedCandidate: DeepTask.seedCandidate,
        title: "<script>alert(2)</script>"
      })
      expect(html).not.toContain("<script>alert(")
      yield* Effect.promise(() => page.setContent(html))
      expect(yield* Effect.promise(() => page.evaluate(`document.body.textContent.includes("<script>alert(1)</script>")`))).toBe(true)
      yield* Effect.promise(() => page.waitForTimeout(300))
      expect(dialogs).toEqual([])
      yield* Effect.promise(() => page.close())
    }).pipe(Effect.scoped, Effect.provide(Dashboard.layer())), 120_000)

  it.live("refuses every request without the token with 401, the event stream included", () =>
    Effect.gen(function*() {
      const info = yield* Dashboard.Dashboard
      const base = `http://127.0.0.1:${info.port}`
      for (const p of ["/", "/events", "/snapshot.json", "/candidate.json?i=0"]) {
        expect((yield* get(`${base}${p}`)).status).toBe(401)
        expect((yield* get(`${base}${p}${p.includes("?") ? "&" : "?"}token=${"0".repeat(48)}`)).status).toBe(401)
      }
      const stop = yield* Effect.promise(() => fetch(`${base}/stop`, { method: "POST" }))
      expect(stop.status).toBe(401)
      const ok = yield* Effect.promise(() => fetch(info.url))
      expect(ok.status).toBe(200)
      expect(ok.headers.get("content-security-policy")).toMatch(/script-src 'nonce-[^']+'/)
      expect(info.host).toBe("127.0.0.1")
      // the browser sees the same 401
      const { page } = yield* open(`${base}/`)
      expect(yield* Effect.promise(() => page.evaluate(`document.body.textContent`))).toContain("unauthorized")
      yield* Effect.promise(() => page.close())
    }).pipe(Effect.scoped, Effect.provide(Dashboard.layer())), 60_000)

  it.live("watch follows a folder another run writes, stops it with the stop file, and keeps following the resumed run", () =>
    Effect.gen(function*() {
      const runDir = path.join(tmpDir("gepa-watch-"), "run")
      const models = pacedModels(simulatedModels(1))
      const first = yield* Effect.fork(runDemo({ models, runDir, writeReport: false, seed: 1 }))
      // the folder exists once the run has opened it
      yield* Effect.promise(() => waitUntil(() => fs.existsSync(path.join(runDir, RunDir.FILES.events))))
      const info = yield* Dashboard.watch(runDir)
      const { page } = yield* open(info.url, 800)
      yield* waitFor(page, `document.querySelectorAll("#lineage .node").length >= 3`)
      expect(yield* Effect.promise(() => page.locator("#status").textContent())).toContain("running")
      yield* Effect.promise(() => page.locator("#stop").click())
      const stopped = yield* Fiber.join(first)
      expect(stopped.result.stopReason).toBe("stopped by request (stop file)")
      yield* waitFor(page, `document.querySelector("#status")?.textContent.startsWith("stopped")`)
      const before = stopped.result.candidates.length
      yield* waitFor(page, `document.body.getAttribute("data-candidates") === "${before}"`)
      // the writer restarts on resume: the same page keeps following it
      const second = yield* runDemo({ runDir, writeReport: false, seed: 1, maxMetricCalls: stopped.result.totalMetricCalls + 150 })
      expect(second.result.candidates.length).toBeGreaterThan(before)
      yield* waitFor(page, `document.body.getAttribute("data-candidates") === "${second.result.candidates.length}"`)
      yield* waitFor(page, `document.querySelector("#status")?.textContent.startsWith("finished")`)
      yield* Effect.promise(() => page.close())
    }).pipe(Effect.scoped), 180_000)

  it.live("a browser that stops reading never holds the run up, and gets the whole run once it reads again", () =>
    Effect.gen(function*() {
      const info = yield* Dashboard.Dashboard
      const socket = yield* Effect.promise(() => connectPaused(info.port, `/events?token=${info.token}`))
      const result = yield* Gepa.optimize(DeepTask.makeConfig({ maxCandidates: 200 }))
      expect(result.candidates.length).toBe(200)
      expect(info.clients()).toBe(1)
      // reading again: snapshot and deltas (or a resync's snapshot) add up to the whole run
      const frames = yield* Effect.promise(() => readUntil(socket, `"status":"finished"`, 30_000))
      socket.destroy()
      const seen = new Set<number>()
      let seq = -1
      for (const f of frames) {
        if (f["snapshot"] === true) {
          seen.clear()
          seq = f["seq"] as number
          for (const c of f["candidates"] as Array<{ i: number }>) seen.add(c.i)
        } else if ((f["seq"] as number) > seq) {
          for (const c of (f["candidates"] ?? []) as Array<{ i: number }>) seen.add(c.i)
        }
      }
      expect(seen.size).toBe(200)
    }).pipe(Effect.scoped, Effect.provide(Dashboard.layer({ clientBuffer: 2, refreshMillis: 20 }))), 120_000)
})

const waitUntil = async (f: () => boolean, timeout = 30_000) => {
  const end = Date.now() + timeout
  while (!f()) {
    if (Date.now() > end) throw new Error("timed out")
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** An event-stream client that sends its request and then reads nothing. */
const connectPaused = (port: number, target: string) =>
  new Promise<net.Socket>((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1" }, () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`)
      socket.pause()
      // a small receive buffer, so the server's side fills quickly
      setTimeout(() => resolve(socket), 200)
    })
    socket.setNoDelay(true)
    socket.on("error", reject)
  })

/** Reads frames until one contains `marker`. */
const readUntil = (socket: net.Socket, marker: string, timeout: number) =>
  new Promise<Array<Record<string, unknown>>>((resolve, reject) => {
    let text = ""
    const timer = setTimeout(() => reject(new Error(`no ${marker} within ${timeout} ms`)), timeout)
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8")
      if (!text.includes(marker)) return
      const end = text.indexOf("\n\n", text.indexOf(marker))
      if (end < 0) return
      clearTimeout(timer)
      const frames = text.slice(0, end).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)
      resolve(frames)
    })
    socket.resume()
  })
