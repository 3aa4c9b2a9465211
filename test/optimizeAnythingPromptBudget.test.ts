/**
 * optimizeAnything's prompt budget: side information reaches the reflection
 * prompt whole within the budget; over it, failing records are kept before
 * passing ones, kept records keep every field, and the prompt counts what it
 * does not show.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as fc from "fast-check"
import * as SideInfoBench from "../bench/sideInfo.js"
import * as PromptBudget from "../src/internal/optimizeAnything/promptBudget.js"
import * as sideInfo from "../src/internal/optimizeAnything/sideInfo.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as OpenAiLanguageModel from "../src/OpenAiLanguageModel.js"
import * as OptimizeAnything from "../src/OptimizeAnything.js"
import * as Telemetry from "../src/Telemetry.js"
import { renderRecords } from "../src/Reflection.js"

interface FileRecord {
  readonly file: string
  readonly expected: string
  readonly predicted: string
  readonly ok: boolean
  readonly owner: string
  readonly reason: string
}

const record = (i: number, ok: boolean): FileRecord => ({
  file: `src/module${i}/file${i}.ts`,
  expected: ok ? "source" : "test",
  predicted: "source",
  ok,
  owner: `team-${i % 7}`,
  reason: ok ? `matched rule ${i}` : `classified as 'source' by the extension default; the manifest lists file${i} as 'test' (case ${i})`
})

/** a run of one proposal in single-task mode; the prompts the reflection model received */
const promptsOf = (
  records: ReadonlyArray<FileRecord>,
  summary: string,
  options: { readonly sideInfo?: OptimizeAnything.SideInfoLimits; readonly contextWindow?: number } = {}
) =>
  Effect.gen(function*() {
    const prompts: Array<string> = []
    const base = LanguageModel.fromFunction((prompt) => {
      prompts.push(LanguageModel.promptText(prompt))
      return "```\nrules v" + prompts.length + "\n```"
    })
    const model: LanguageModel.LanguageModel = options.contextWindow === undefined ? base : { ...base, contextWindow: options.contextWindow }
    yield* OptimizeAnything.optimizeAnything({
      seedCandidate: "rules v0",
      evaluator: (text: string) => Effect.succeed({ score: text === "rules v0" ? 0.4 : 0.3, sideInfo: { summary, files: records } }),
      reflectionModel: model,
      maxMetricCalls: 10,
      ...(options.sideInfo === undefined ? {} : { sideInfo: options.sideInfo })
    })
    assert.isAbove(prompts.length, 0)
    return prompts[0]!
  })

/** the record of `r` as the prompt renders it: every field under its heading */
const shownWhole = (prompt: string, r: FileRecord): boolean =>
  Object.entries(r).every(([k, v]) => prompt.includes(`##### ${k}\n\n${typeof v === "string" ? v : JSON.stringify(v)}`))

describe("optimizeAnything: prompt budget", () => {
  it.effect("a 42-record failure list reaches the reflection prompt whole at the default budget", () =>
    Effect.gen(function*() {
      const records = Array.from({ length: 42 }, (_, i) => record(i, false))
      const summary = "42 of 100 files misclassified (42 %); every one of them fell back to its extension's default class"
      const prompt = yield* promptsOf(records, summary)
      assert.include(prompt, `### summary\n\n${summary}`)
      for (const r of records) assert.isTrue(shownWhole(prompt, r), `record ${r.file} is not shown whole`)
      assert.strictEqual(prompt.match(/^#### Item \d+$/gm)?.length, 42)
      assert.notInclude(prompt, "not shown")
      assert.notInclude(prompt, "[truncated")
    }))

  it.effect("over the budget the failing records are kept first, whole, and the prompt counts the rest", () =>
    Effect.gen(function*() {
      // 60 records, a passing one after every second failing one
      const records = Array.from({ length: 60 }, (_, i) => record(i, i % 3 === 2))
      const failing = records.filter((r) => !r.ok)
      const summary = `${failing.length} of 60 files misclassified`
      const budget = 9_000
      const prompt = yield* promptsOf(records, summary, { sideInfo: { promptBudget: budget } })
      assert.isAtMost(prompt.length, budget)
      assert.include(prompt, `### summary\n\n${summary}`)
      const shown = records.filter((r) => prompt.includes(`##### file\n\n${r.file}\n`))
      // every record shown is shown with every field; none is cut
      for (const r of shown) assert.isTrue(shownWhole(prompt, r), `record ${r.file} is cut`)
      assert.notInclude(prompt, "[truncated")
      // failing records first: no passing record while a failing one is missing
      const shownFailing = shown.filter((r) => !r.ok).length
      const shownPassing = shown.filter((r) => r.ok).length
      assert.isAbove(shownFailing, 5)
      assert.isTrue(shownPassing === 0 || shownFailing === failing.length)
      // kept in their order, and the cut counted
      assert.deepStrictEqual(shown, records.filter((r) => shown.includes(r)))
      const line = /… (\d+) more records not shown \(([^)]*)\)/.exec(prompt)
      assert.isNotNull(line)
      assert.strictEqual(Number(line![1]), 60 - shown.length)
      const notShownFailing = failing.length - shownFailing
      const notShownPassing = 20 - shownPassing
      assert.strictEqual(
        line![2],
        [notShownFailing > 0 ? `${notShownFailing} failing` : "", notShownPassing > 0 ? `${notShownPassing} passing` : ""].filter((s) => s !== "").join(", ")
      )
    }))

  it.effect("the budget follows the reflection model's context window when its layer knows it", () =>
    Effect.gen(function*() {
      const records = Array.from({ length: 42 }, (_, i) => record(i, false))
      const whole = yield* promptsOf(records, "42 misclassified")
      // 3,000 tokens: a budget of 4,500 characters, far under the whole prompt
      const small = yield* promptsOf(records, "42 misclassified", { contextWindow: 3_000 })
      assert.strictEqual(PromptBudget.budgetFromContextWindow(3_000), 4_500)
      assert.isAbove(whole.length, 10_000)
      assert.isAtMost(small.length, 4_500)
      assert.match(small, /… \d+ more records not shown \(\d+ failing\)/)
      // an explicit promptBudget wins over the model's window
      const explicit = yield* promptsOf(records, "42 misclassified", { contextWindow: 3_000, sideInfo: { promptBudget: 1_000_000 } })
      assert.strictEqual(explicit, whole)
    }))

  it.effect("the deprecated per-evaluation limits still cut as before", () =>
    Effect.gen(function*() {
      const records = Array.from({ length: 42 }, (_, i) => record(i, false))
      const prompt = yield* promptsOf(records, "42 misclassified", { sideInfo: { promptStringLength: 400, promptRecordLength: 1_000 } })
      assert.include(prompt, "truncated")
      assert.isBelow(prompt.length, 5_000)
    }))

  it.effect("a model layer exposes the context window it is given, through instrumentation; a bad one is refused", () =>
    Effect.gen(function*() {
      const model = yield* OpenAiLanguageModel.make({ model: "m", apiKey: Redacted.make("unused"), contextWindow: 128_000 })
      assert.strictEqual(model.contextWindow, 128_000)
      assert.strictEqual(Telemetry.instrumentModel(model, { role: "reflection" }).contextWindow, 128_000)
      const none = yield* OpenAiLanguageModel.make({ model: "m", apiKey: Redacted.make("unused") })
      assert.isUndefined(none.contextWindow)
      const bad = yield* Effect.flip(OpenAiLanguageModel.make({ model: "m", apiKey: Redacted.make("unused"), contextWindow: 0 }))
      assert.strictEqual(bad.field, "contextWindow")
    }))

  it("over the budget after every list is down to one record, whole evaluations go, the best score first, and are counted", () => {
    const report = (n: number) => ({ summary: `evaluation ${n}: ${"detail ".repeat(300)}`, cases: [{ id: n, ok: false }] })
    const raw = [0.9, 0.1, 0.5].map((score, n) => ({ Score: score, ...report(n) }))
    const out = PromptBudget.fit(raw, [0.9, 0.1, 0.5], 2_500, sideInfo.defaultLimits)
    const text = renderRecords(out)
    assert.isAtMost(text.length, 2_500)
    // the lowest score is kept whole, the others are counted with their scores
    assert.lengthOf(out, 1)
    assert.strictEqual(out[0]!["Score"], 0.1)
    assert.strictEqual(out[0]!["summary"], report(1).summary)
    assert.strictEqual(out[0]!["Not shown"], "2 more evaluations of this text (scores 0.9, 0.5): the reflection prompt's budget is full")
  })

  it("statusOf reads pass and failure fields", () => {
    assert.strictEqual(PromptBudget.statusOf({ ok: false }), "fail")
    assert.strictEqual(PromptBudget.statusOf({ passed: true }), "pass")
    assert.strictEqual(PromptBudget.statusOf({ status: "FAILED" }), "fail")
    assert.strictEqual(PromptBudget.statusOf({ verdict: "pass" }), "pass")
    assert.strictEqual(PromptBudget.statusOf({ name: "x" }), "unmarked")
    assert.strictEqual(PromptBudget.statusOf("a line"), "unmarked")
  })

  it("property: fitted records are whole originals, failing ones kept before passing ones, the rest counted", () => {
    const item = fc.record({ id: fc.nat(), ok: fc.boolean(), note: fc.string({ maxLength: 60 }) })
    fc.assert(
      fc.property(
        fc.array(fc.record({ score: fc.double({ min: 0, max: 1, noNaN: true }), items: fc.array(item, { maxLength: 30 }) }), {
          minLength: 1,
          maxLength: 4
        }),
        fc.integer({ min: 200, max: 8_000 }),
        (evaluations, room) => {
          const raw = evaluations.map((e) => ({ Score: e.score, headline: "summary", items: e.items }))
          const out = PromptBudget.fit(raw, evaluations.map((e) => e.score), room, sideInfo.defaultLimits)
          const text = renderRecords(out)
          const fitsWithoutCutting = !text.includes("[truncated")
          if (fitsWithoutCutting && !text.includes("more evaluation")) {
            assert.strictEqual(out.length, raw.length)
            out.forEach((r, i) => {
              const original = evaluations[i]!.items
              const shown = r["items"]
              if (!Array.isArray(shown)) return
              const last = shown[shown.length - 1]
              const marker = typeof last === "string" && last.startsWith("…") ? last : undefined
              const kept = (marker === undefined ? shown : shown.slice(0, -1)).map((x) => typeof x === "string" ? JSON.parse(x) : x)
              // every kept item is an original item, whole and in order
              let from = 0
              for (const k of kept) {
                const at = original.findIndex((o, j) => j >= from && JSON.stringify(o) === JSON.stringify(k))
                assert.isAtLeast(at, 0)
                from = at + 1
              }
              const droppedFailing = original.filter((o) => !o.ok).length - kept.filter((k) => !k.ok).length
              const droppedPassing = original.filter((o) => o.ok).length - kept.filter((k) => k.ok).length
              // a passing record is kept only when every failing one is
              if (kept.some((k) => k.ok)) assert.strictEqual(droppedFailing, 0)
              if (marker !== undefined) {
                assert.include(marker, `${droppedFailing + droppedPassing} more record`)
              } else assert.strictEqual(kept.length, original.length)
            })
          }
        }
      ),
      { numRuns: 200 }
    )
  })
})

describe("optimizeAnything: bench/sideInfo.ts", () => {
  it("runs the manifest task at a tiny size and reports every field", async () => {
    const cells = await SideInfoBench.measure("manifest", [0], true, true, ["defaults", "old cut"])
    assert.deepStrictEqual(cells.map((c) => `${c.shape} ${c.budget} ${c.mode}`), [
      "generalization 60 defaults (whole within 100k)",
      "generalization 60 old cut (0.2 defaults)",
      "single-task 30 defaults (whole within 100k)",
      "single-task 30 old cut (0.2 defaults)"
    ])
    for (const c of cells) {
      assert.strictEqual(c.over, 0)
      assert.isTrue(c.testMean >= 0 && c.testMean <= 1 && c.promptMaxChars > 0)
    }
    assert.include(SideInfoBench.table(cells), "| manifest | held-out | 60 | defaults")
  })
})
