/**
 * Stop from the page, then the dashboard closes with the run (as `gepa
 * optimize --ui` does when the run ends): the page must show the final
 * status, "stopped" with the stop reason, not "disconnected" with a button
 * stuck on "Stopping…" (issue 35). Twenty times in headless Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { type Browser, chromium } from "playwright-core"
import { runDemo, simulatedModels } from "../examples/demo/run.js"
import { pacedModels } from "../examples/demo/ui.js"
import * as Dashboard from "../src/Dashboard.js"
import { repeats } from "./fixtures/repeats.js"
import { tmpDir } from "./fixtures/tmp.js"

const CHROME = process.env["CHROME_PATH"] ?? "/usr/bin/chromium"
const skip = !fs.existsSync(CHROME) && process.env["CI"] === undefined
// light (test/fixtures/repeats.ts): 3
const tries = repeats(20, 3)

let browser: Browser | undefined
beforeAll(async () => {
  if (skip) return
  browser = await chromium.launch({ executablePath: CHROME, timeout: 60_000 })
}, 90_000)
afterAll(async () => {
  await browser?.close()
})

describe.skipIf(skip)("dashboard Stop", () => {
  it.live(`the page shows the final status ${tries} of ${tries} times once the dashboard closed`, () =>
    Effect.gen(function*() {
      const shown: Array<string> = []
      for (let i = 0; i < tries; i++) {
        const page = yield* Effect.promise(() => browser!.newPage({ bypassCSP: true }))
        const stopReason = yield* Effect.scoped(
          Effect.gen(function*() {
            const info = yield* Dashboard.Dashboard
            const run = yield* Effect.fork(runDemo({
              models: pacedModels(simulatedModels(i)),
              runDir: path.join(tmpDir("gepa-dash-stop-"), "run"),
              writeReport: false
            }))
            yield* Effect.promise(() => page.goto(info.url))
            yield* Effect.promise(() => page.waitForFunction(`document.querySelector("#status")?.textContent.startsWith("running")`, null, { timeout: 60_000 }))
            yield* Effect.promise(() => page.locator("#stop").click())
            const { result } = yield* Fiber.join(run)
            return result.stopReason
            // the dashboard's scope closes here, with the run
          }).pipe(Effect.provide(Dashboard.layer()))
        )
        expect(stopReason).toBe("stopped by request (dashboard)")
        // whatever the page shows a moment after the dashboard closed is what it keeps
        yield* Effect.sleep("300 millis")
        shown.push(yield* Effect.promise(async () => `${await page.locator("#status").textContent()} | ${await page.locator("#stop").textContent()}`))
        yield* Effect.promise(() => page.close())
      }
      const wrong = shown.filter((s) => !s.startsWith("stopped: stopped by request (dashboard)") || s.includes("Stopping"))
      expect(wrong, shown.join("\n")).toEqual([])
    }), 600_000)
})
