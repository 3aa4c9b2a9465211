/**
 * The live dashboard of a typed run, in headless Chromium (Debian's
 * `chromium`, driven by playwright-core): a candidate's structured component
 * is shown as indented JSON, its changes against the parent listed path by
 * path, and its text component as is.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import * as fs from "node:fs"
import { type Browser, chromium } from "playwright-core"
import * as CandidateSchema from "../src/CandidateSchema.js"
import * as Dashboard from "../src/Dashboard.js"
import * as Gepa from "../src/Gepa.js"
import * as Task from "./fixtures/typedTask.js"

const CHROME = process.env["CHROME_PATH"] ?? "/usr/bin/chromium"
// locally a machine without the browser skips; CI installs it (.ci/run) and must run these
const skip = !fs.existsSync(CHROME) && process.env["CI"] === undefined

let browser: Browser | undefined
beforeAll(async () => {
  if (skip) return
  browser = await chromium.launch({ executablePath: CHROME, timeout: 60_000 })
}, 90_000)
afterAll(async () => {
  await browser?.close()
})

describe.skipIf(skip)("dashboard of a typed run in the browser", () => {
  it.live("shows a structured component as indented JSON with its changes against the parent path by path", () =>
    Effect.gen(function*() {
      const info = yield* Dashboard.Dashboard
      const events = yield* Stream.runCollect(Gepa.stream({
        candidateSchema: Task.shape,
        seedCandidate: Task.seedCandidate,
        adapter: CandidateSchema.fromExample(Task.shape, (example: Task.Example, c) =>
          Effect.succeed({ output: c.settings.threshold, score: Task.score(c, example) })),
        trainset: Task.dataset,
        reflectionModel: Task.reflectionModel(),
        maxMetricCalls: 40,
        minibatchSize: 2,
        merge: false
      }))
      const end = Chunk.toReadonlyArray(events).find((e) =>
        e._tag === "OptimizationEnded"
      )
      if (end?._tag !== "OptimizationEnded") throw new Error("no OptimizationEnded event")
      const { result } = end
      // a candidate whose settings changed against its one parent
      const child = result.candidates.findIndex((c, i) => {
        const parents = result.parents[i] ?? []
        return parents.length === 1 && result.candidates[parents[0]!]!.settings.threshold !== c.settings.threshold
      })
      expect(child).toBeGreaterThan(0)
      const parent = result.candidates[result.parents[child]![0]!]!
      const mine = result.candidates[child]!

      const page = yield* Effect.promise(() => browser!.newPage({ viewport: { width: 1400, height: 900 }, bypassCSP: true }))
      yield* Effect.promise(() => page.goto(info.url))
      yield* Effect.promise(() =>
        page.waitForFunction(`document.body.getAttribute("data-candidates") === "${result.candidates.length}"`, null, { timeout: 30_000 })
      )
      yield* Effect.promise(() => page.locator(`#chart .pt[data-i="${child}"]`).dispatchEvent("click"))
      yield* Effect.promise(() => page.waitForSelector("#detail-body ul.changes li", { timeout: 30_000 }))
      const changes = yield* Effect.promise(() => page.locator("#detail-body ul.changes li").allTextContents())
      expect(changes).toEqual([
        `+ labels[${parent.settings.labels.length}]: ${JSON.stringify(mine.settings.labels.at(-1))}`,
        `threshold: ${parent.settings.threshold} -> ${mine.settings.threshold}`
      ])
      // the diff runs over the indented JSON: what changed is marked inside its own lines
      const added = yield* Effect.promise(() => page.locator("#detail-body ins").allTextContents())
      expect(added).toContain(String(mine.settings.threshold))
      expect(added.join("\n")).toContain(`"l${mine.settings.threshold}"`)
      const text = yield* Effect.promise(() => page.locator("#detail-body").innerText())
      // indented JSON, one key a line (the stored form is one canonical line)
      expect(text).toContain(`settings\n`)
      expect(text).toContain(`{\n  "labels": [\n    ${JSON.stringify(parent.settings.labels[0])}`)
      expect(text).toMatch(/\n {2}"threshold": \d+\n\}/)
      const removed = yield* Effect.promise(() => page.locator("#detail-body del").allTextContents())
      expect(removed).toContain(String(parent.settings.threshold))
      expect(text).toContain(mine.prompt)
      yield* Effect.promise(() => page.close())
    }).pipe(Effect.scoped, Effect.provide(Dashboard.layer())), 120_000)
})
