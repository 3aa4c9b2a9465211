/**
 * The report as a person sees it: rendered in headless Chromium (Debian's
 * `chromium`, driven by playwright-core) for a generated deep run (200
 * generations, 1,000 candidates), at 1400 and 800 px wide. The lineage
 * nodes must not overlap, their labels must be at least 10 px tall, and the
 * page must use the window's width. Screenshots go to REPORT_SHOTS_DIR
 * (default: a temporary folder). Without the browser the test is skipped
 * locally and fails in CI (CI installs it, see .ci/run).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Browser, chromium } from "playwright-core"
import * as Report from "../src/Report.js"
import { deepRun } from "./fixtures/deepRun.js"
import { tmpDir } from "./fixtures/tmp.js"

const CHROME = process.env["CHROME_PATH"] ?? "/usr/bin/chromium"
const available = fs.existsSync(CHROME)

interface Box {
  readonly id: string
  readonly x: number
  readonly y: number
  readonly w: number
  readonly h: number
}

interface Measured {
  readonly nodes: ReadonlyArray<Box>
  readonly labels: ReadonlyArray<{ readonly id: string; readonly fontSize: number; readonly height: number; readonly width: number; readonly boxWidth: number }>
  readonly bodyWidth: number
  readonly lineageWidth: number
  readonly viewport: number
}

// runs in the page (a string, so that the test compiles without the DOM types)
const measure = `(() => {
  const nodes = [...document.querySelectorAll("#lineage-tree g.node")].map((g) => {
    const r = g.querySelector("rect").getBoundingClientRect()
    return { id: g.id, x: r.x, y: r.y, w: r.width, h: r.height }
  })
  const labels = [...document.querySelectorAll("#lineage-tree g.node")].map((g) => {
    const t = g.querySelector("text.label")
    const r = t.getBoundingClientRect()
    return { id: g.id, fontSize: parseFloat(getComputedStyle(t).fontSize), height: r.height, width: r.width,
      boxWidth: g.querySelector("rect").getBoundingClientRect().width }
  })
  return { nodes, labels, bodyWidth: document.body.getBoundingClientRect().width,
    lineageWidth: document.querySelector(".lineage-scroll").getBoundingClientRect().width, viewport: window.innerWidth }
})()`

const overlaps = (boxes: ReadonlyArray<Box>): ReadonlyArray<string> => {
  // sweep by x: only boxes whose x-ranges meet can overlap
  const sorted = [...boxes].sort((a, b) => a.x - b.x)
  const found: Array<string> = []
  const active: Array<Box> = []
  for (const b of sorted) {
    for (let k = active.length - 1; k >= 0; k--) if (active[k]!.x + active[k]!.w <= b.x) active.splice(k, 1)
    for (const a of active) {
      if (a.y < b.y + b.h && b.y < a.y + a.h) found.push(`${a.id} and ${b.id}`)
    }
    active.push(b)
  }
  return found
}

describe.skipIf(!available && !process.env["CI"])("the report in a browser", () => {
  let browser: Browser | undefined
  const shots = process.env["REPORT_SHOTS_DIR"] ?? tmpDir("gepa-report-shots-")
  const file = path.join(tmpDir("gepa-report-"), "report.html")

  beforeAll(async () => {
    const result = deepRun({ depth: 200, count: 1000 })
    fs.writeFileSync(file, Report.render({ result, title: "GEPA run deep-200", generatedAt: "2026-01-01T00:00:00Z" }))
    fs.mkdirSync(shots, { recursive: true })
    browser = await chromium.launch({ executablePath: CHROME, timeout: 60_000 })
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
  })

  for (const width of [1400, 800]) {
    it(`at ${width} px: the lineage of 1,000 candidates over 200 generations has no overlapping nodes and labels of 10 px or more`, async () => {
      const page = await browser!.newPage({ viewport: { width, height: 900 } })
      await page.goto(`file://${file}`)
      const m = (await page.evaluate(measure)) as Measured
      expect(m.nodes).toHaveLength(1000)
      expect(overlaps(m.nodes)).toEqual([])
      for (const label of m.labels) {
        expect(label.fontSize, label.id).toBeGreaterThanOrEqual(10)
        expect(label.height, label.id).toBeGreaterThanOrEqual(10)
        // the label fits its box
        expect(label.width, label.id).toBeLessThanOrEqual(label.boxWidth)
      }
      // the page uses the window's width (less its margins)
      expect(m.bodyWidth).toBeGreaterThanOrEqual(m.viewport - 20)
      expect(m.lineageWidth).toBeGreaterThanOrEqual(m.viewport - 100)
      await page.screenshot({ path: path.join(shots, `report-${width}.png`) })
      await page.locator("#lineage").scrollIntoViewIfNeeded()
      await page.screenshot({ path: path.join(shots, `report-${width}-lineage.png`) })
      // fit to width: the whole tree in the window's width
      await page.locator("label[for=zoom-fit]").click()
      const fitted = (await page.evaluate(`document.querySelector("#lineage-tree").getBoundingClientRect().width`)) as number
      expect(fitted).toBeLessThanOrEqual(m.lineageWidth)
      await page.screenshot({ path: path.join(shots, `report-${width}-fit.png`) })
      await page.close()
    }, 60_000)
  }

  it("logs the browser's version", () => {
    expect(browser!.version()).toMatch(/^\d+\./)
    if (process.env["CI"]) console.log(`chromium ${browser!.version()}, screenshots in ${shots}`)
    void os
  })
})
