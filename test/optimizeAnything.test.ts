import { assert, describe, it } from "@effect/vitest"
import { Command } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Cause, Effect, Either, Exit, Logger, Option } from "effect"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Regex from "../examples/anything/regex.js"
import * as Candidate from "../src/Candidate.js"
import * as EvaluationCache from "../src/EvaluationCache.js"
import * as Fingerprint from "../src/Fingerprint.js"
import type { GepaEvent } from "../src/Event.js"
import * as Gepa from "../src/Gepa.js"
import * as adapter from "../src/internal/optimizeAnything/adapter.js"
import * as sideInfo from "../src/internal/optimizeAnything/sideInfo.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as AnythingCommand from "../src/internal/optimizeAnything/cliCommand.js"
import * as OptimizeAnything from "../src/OptimizeAnything.js"
import { renderRecords } from "../src/Reflection.js"

/** A reflection model that records its prompts and answers with `answer(prompt)` in a fenced block. */
const recording = (answer: (prompt: string, call: number) => string) => {
  const prompts: Array<string> = []
  const model = LanguageModel.fromFunction((prompt) => {
    const text = LanguageModel.promptText(prompt)
    prompts.push(text)
    return "```\n" + answer(text, prompts.length) + "\n```"
  })
  return { model, prompts }
}

const currentText = (prompt: string): string => /# Current text of "[^"]+"\s+```+\n([\s\S]*?)\n```+/.exec(prompt)?.[1] ?? ""

/** Appends "!" until the evaluator is happy; the evaluator says how many are missing. */
const bangs = (text: string) => (text.match(/!/g) ?? []).length

/** Strings holding JSON structures parsed back, recursively. */
const deepParse = (value: unknown): unknown => {
  if (typeof value === "string" && /^[[{]/.test(value)) {
    try {
      return deepParse(JSON.parse(value))
    } catch {
      return value
    }
  }
  if (Array.isArray(value)) return value.map(deepParse)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deepParse(v)]))
  }
  return value
}

const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "gepa-anything-"))

describe("optimizeAnything: modes", () => {
  it.effect("single task: the evaluator gets no example, one internal example, the side info drives the fix", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const { model, prompts } = recording((prompt) => {
        const missing = Number(/### missing\n\n(\d+)/.exec(prompt)?.[1] ?? "0")
        return currentText(prompt) + "!".repeat(missing)
      })
      const result = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "hello",
        objective: "Three exclamation marks.",
        evaluator: (text, example) =>
          Effect.sync(() => {
            seen.push(example)
            const missing = Math.max(0, 3 - bangs(text))
            return { score: missing === 0 ? 1 : 0, sideInfo: { missing } }
          }),
        reflectionModel: model,
        maxMetricCalls: 10
      })
      assert.strictEqual(result.mode, "single-task")
      assert.strictEqual(result.bestCandidate, "hello!!!")
      assert.strictEqual(result.seedCandidate, "hello")
      assert.strictEqual(result.bestScore, 1)
      assert.deepStrictEqual(Object.keys(result.valScores[0]!), ["0"])
      assert.isTrue(seen.length > 0 && seen.every((e) => e === undefined))
      // no example input is shown in single-task mode; objective steers the prompt
      assert.notInclude(prompts[0]!, "### Input")
      assert.include(prompts[0]!, "Objective: Three exclamation marks.")
    }))

  it.effect("multi-task: the dataset is both learned from and ranked on", () =>
    Effect.gen(function*() {
      const dataset = [{ need: 1 }, { need: 2 }, { need: 3 }]
      const { model, prompts } = recording((prompt) => currentText(prompt) + "!")
      const result = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: (text: string, ex: { need: number }) => Effect.succeed(bangs(text) >= ex.need ? 1 : 0),
        dataset,
        reflectionModel: model,
        maxMetricCalls: 40,
        seed: 3
      })
      assert.strictEqual(result.mode, "multi-task")
      assert.deepStrictEqual(Object.keys(result.valScores[0]!).sort(), ["0", "1", "2"])
      assert.strictEqual(result.bestScore, 1)
      assert.include(prompts[0]!, "### Input")
    }))

  it.effect("generalization: candidates are ranked on the validation set", () =>
    Effect.gen(function*() {
      const ranked: Array<string> = []
      const { model } = recording((prompt) => currentText(prompt) + "!")
      const result = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: (text: string, ex: { id: string; need: number }) =>
          Effect.sync(() => {
            ranked.push(ex.id)
            return bangs(text) >= ex.need ? 1 : 0
          }),
        dataset: [{ id: "t1", need: 1 }, { id: "t2", need: 2 }],
        valset: [{ id: "v1", need: 2 }, { id: "v2", need: 2 }, { id: "v3", need: 1 }, { id: "v4", need: 2 }],
        reflectionModel: model,
        maxMetricCalls: 40
      })
      assert.strictEqual(result.mode, "generalization")
      assert.deepStrictEqual(Object.keys(result.valScores[0]!).sort(), ["0", "1", "2", "3"])
      assert.isTrue(ranked.includes("v4") && ranked.includes("t1"))
      assert.strictEqual(result.bestScore, 1)
    }))

  it.effect("a Candidate seed gives a record; the evaluator sees the record", () =>
    Effect.gen(function*() {
      const { model } = recording((prompt) => currentText(prompt) + " ok")
      const result = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: { rule: "a", note: "b" },
        evaluator: (c) => Effect.succeed(c.rule.endsWith("ok") || c.note.endsWith("ok") ? 1 : 0),
        reflectionModel: model,
        componentSelector: "all",
        maxMetricCalls: 6
      })
      const best: { readonly rule: string; readonly note: string } = result.bestCandidate
      assert.deepStrictEqual(best, { rule: "a ok", note: "b ok" })
      assert.deepStrictEqual(result.bestComponents, { rule: "a ok", note: "b ok" })
    }))

  it.effect("side info about one component is shown only when that component is revised", () =>
    Effect.gen(function*() {
      const { model, prompts } = recording((prompt) => currentText(prompt) + "+")
      yield* OptimizeAnything.optimizeAnything({
        seedCandidate: { rule: "r", note: "n" },
        evaluator: (c) =>
          Effect.succeed({
            score: (c.rule.length + c.note.length) / 10,
            sideInfo: { shared: "both see this" },
            componentSideInfo: { rule: "only for the rule", note: "only for the note" }
          }),
        reflectionModel: model,
        maxMetricCalls: 10
      })
      const forRule = prompts.filter((p) => p.includes("text artifact called \"rule\""))
      const forNote = prompts.filter((p) => p.includes("text artifact called \"note\""))
      assert.isAbove(forRule.length, 0)
      assert.isAbove(forNote.length, 0)
      for (const p of forRule) {
        assert.include(p, "### About \"rule\"\n\nonly for the rule")
        assert.notInclude(p, "only for the note")
        assert.include(p, "both see this")
      }
      for (const p of forNote) assert.notInclude(p, "only for the rule")
    }))

  it.effect("bad input fails with one line naming the field", () =>
    Effect.gen(function*() {
      const { model } = recording(() => "x")
      // configurations as a JavaScript caller may write them: the types reject
      // some of them (test/types/optimizeAnything.test-d.ts), the run checks all
      const run = (config: Record<string, unknown>) =>
        Effect.flip(OptimizeAnything.optimizeAnything(
          {
            evaluator: () => Effect.succeed(1),
            reflectionModel: model,
            maxMetricCalls: 5,
            ...config
          } as unknown as OptimizeAnything.SeededConfig<string, unknown> & { readonly reflectionModel: LanguageModel.LanguageModel }
        ))
      const noObjective = yield* run({})
      assert.strictEqual(noObjective._tag, "ConfigError")
      assert.include(noObjective.message, "\"objective\"")
      const valOnly = yield* run({ seedCandidate: "x", valset: [1] })
      assert.include(valOnly.message, "\"valset\"")
      const badLimit = yield* run({ seedCandidate: "x", sideInfo: { maxDepth: 0 } })
      assert.include(badLimit.message, "sideInfo.maxDepth")
    }))
})

describe("optimizeAnything: seedless start", () => {
  it.effect("an unusable first answer is asked again; the seed step is an event and in the result", () =>
    Effect.gen(function*() {
      const prompts: Array<string> = []
      const answers = ["I'm sorry, I cannot help with that.", "Here it is:\n```\nstart\n```", "```\nstart!\n```"]
      const model = LanguageModel.fromFunction((prompt) => {
        prompts.push(LanguageModel.promptText(prompt))
        return answers[Math.min(prompts.length - 1, answers.length - 1)]!
      })
      const events: Array<GepaEvent> = []
      const result = yield* OptimizeAnything.optimizeAnything({
        objective: "Write a greeting that ends with an exclamation mark.",
        background: "Greetings are short.",
        evaluator: (text, _ex: { lang: string }) => Effect.succeed(text.endsWith("!") ? 1 : 0),
        dataset: [{ lang: "en" }, { lang: "fr" }],
        reflectionModel: model,
        maxMetricCalls: 8,
        onEvent: (e) => {
          events.push(e)
        }
      })
      assert.strictEqual(result.seedCandidate, "start")
      assert.deepStrictEqual(result.seedGeneration?.attempts, 2)
      assert.lengthOf(result.seedGeneration!.rejected, 1)
      assert.include(result.seedGeneration!.rejected[0]!, "declined")
      assert.strictEqual(result.bestCandidate, "start!")
      // the seed prompt: objective, background and sample inputs; the retry says why
      assert.include(prompts[0]!, "Write a greeting")
      assert.include(prompts[0]!, "Greetings are short.")
      assert.include(prompts[0]!, "\"lang\": \"en\"")
      assert.include(prompts[1]!, "could not be used")
      const seeded = events.find((e) => e._tag === "SeedGenerated")
      assert.isDefined(seeded)
      assert.strictEqual(events[0]!._tag, "SeedGenerated")
    }))

  it.effect("no usable answer within seedAttempts fails with the reasons", () =>
    Effect.gen(function*() {
      const model = yield* LanguageModel.scripted(["", "```\n\n```"])
      const error = yield* Effect.flip(OptimizeAnything.optimizeAnything({
        objective: "anything",
        evaluator: () => Effect.succeed(1),
        reflectionModel: model,
        seedAttempts: 2,
        maxMetricCalls: 4
      }))
      assert.strictEqual(error._tag, "SeedGenerationFailed")
      if (error._tag === "SeedGenerationFailed") {
        assert.strictEqual(error.attempts, 2)
        assert.deepStrictEqual(error.reasons, ["the answer is empty", "the fenced block in the answer is empty"])
      }
    }))

  it.scoped("a seedless run resumed from its run directory keeps its generated seed", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      let seedCalls = 0
      const model = (seedText: string) =>
        LanguageModel.fromFunction((prompt) => {
          const text = LanguageModel.promptText(prompt)
          if (text.includes("Write the first version")) {
            seedCalls++
            return "```\n" + seedText + "\n```"
          }
          return "```\n" + currentText(text) + "!\n```"
        })
      const config = {
        objective: "Exclamations.",
        evaluator: (text: string) => Effect.succeed(Math.min(1, bangs(text) / 5)),
        runDir: dir
      }
      const first = yield* OptimizeAnything.optimizeAnything({ ...config, reflectionModel: model("one"), maxMetricCalls: 3 })
      assert.strictEqual(first.seedCandidate, "one")
      const second = yield* OptimizeAnything.optimizeAnything({ ...config, reflectionModel: model("two"), maxMetricCalls: 6 })
      assert.strictEqual(seedCalls, 1)
      assert.strictEqual(second.seedCandidate, "one")
      assert.isUndefined(second.seedGeneration)
      assert.isTrue(second.totalMetricCalls > first.totalMetricCalls)
      const events = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8")
      assert.strictEqual(events.split("\n").filter((l) => l.includes("\"SeedGenerated\"")).length, 1)
    }))
})

describe("optimizeAnything: side info", () => {
  const limits = { maxStringLength: 100, maxListItems: 4, maxDepth: 3, maxRecordLength: 600, promptStringLength: 100, promptRecordLength: 600 }

  it("converts values to JSON-like data: errors, maps, sets, dates, cycles", () => {
    const cyclic: Record<string, unknown> = { name: "loop" }
    cyclic["self"] = cyclic
    const value = sideInfo.toJsonLike({
      error: new RangeError("out of range"),
      map: new Map([["a", 1]]),
      set: new Set([1, 2]),
      date: new Date("2026-01-02T03:04:05Z"),
      big: 10n,
      nan: Number.NaN,
      cyclic,
      skipped: undefined
    })
    assert.deepStrictEqual(value, {
      error: { name: "RangeError", message: "out of range" },
      map: { a: 1 },
      set: [1, 2],
      date: "2026-01-02T03:04:05.000Z",
      big: "10",
      nan: "NaN",
      cyclic: { name: "loop", self: "[circular]" }
    })
  })

  it("keeps a \"__proto__\" key of user data as a field", () => {
    const value = JSON.parse("{\"__proto__\": {\"polluted\": 1}, \"ok\": 2}") as unknown
    const out = sideInfo.budget(sideInfo.toJsonLike(value), sideInfo.defaultLimits)
    assert.strictEqual(JSON.stringify(out), "{\"__proto__\":{\"polluted\":1},\"ok\":2}")
    assert.isUndefined(({} as { polluted?: number }).polluted)
  })

  it("cuts long strings and lists with explicit markers, keeping head and tail", () => {
    const out = sideInfo.budget({ log: "a".repeat(150) + "END", items: [1, 2, 3, 4, 5, 6, 7] }, limits) as {
      log: string
      items: Array<unknown>
    }
    assert.include(out.log, "[truncated 53 characters]")
    assert.isTrue(out.log.startsWith("aaa") && out.log.endsWith("END"))
    assert.deepStrictEqual(out.items.slice(0, 3), [1, 2, 3])
    assert.strictEqual(out.items[3], "…[4 more items truncated]")
  })

  it("property: the budgeted side info stays within maxRecordLength and says when it cut", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const out = sideInfo.budget(value, limits)
        const size = typeof out === "string" ? out.length : (JSON.stringify(out) ?? "").length
        assert.isAtMost(size, limits.maxRecordLength)
        // deeper structures become JSON text, which loses nothing; any other change carries a marker
        if (JSON.stringify(deepParse(out)) !== JSON.stringify(deepParse(value))) assert.match(JSON.stringify(out), /truncated/)
      }),
      { numRuns: 500 }
    )
  })

  it("renders structured side info readably in the reflective record", () => {
    const record = sideInfo.reflectiveRecord({
      example: { question: "2+2" },
      record: {
        score: 0.5,
        sideInfo: { error: "off by one", cases: [{ input: 1, got: 2 }, { input: 3, got: 5 }], Score: "clash" },
        scores: { speed: 0.2 },
        logs: ["INFO step 1", "WARN slow"]
      }
    }, { withInput: true, limits: sideInfo.defaultLimits })
    const text = renderRecords([record])
    // small flat records are one line of JSON; the rest keeps its headings
    for (
      const piece of [
        "### Input\n\n{\"question\":\"2+2\"}",
        "### Score\n\n0.5",
        "### Scores (higher is better)\n\n{\"speed\":0.2}",
        "### error\n\noff by one",
        "### cases\n\n- {\"input\":1,\"got\":2}\n- {\"input\":3,\"got\":5}",
        "### Score (side info)",
        "### Logs",
        "WARN slow"
      ]
    ) {
      assert.include(text, piece)
    }
  })
})

describe("optimizeAnything: logs, failures, timeouts", () => {
  it.effect("logs of concurrent evaluations never mix", () =>
    Effect.gen(function*() {
      const oa = adapter.make((candidate, example) =>
        Effect.gen(function*() {
          for (let step = 0; step < 5; step++) {
            yield* Effect.log(`example ${example} step ${step}`)
            // a child fiber inherits the evaluation's logger
            yield* Effect.fork(Effect.log(`example ${example} child ${step}`)).pipe(Effect.flatMap((f) => f.await))
            yield* Effect.yieldNow()
          }
          return 1
        }), {
        view: (c) => c,
        withExample: true,
        timeout: undefined,
        captureLogs: true,
        limits: sideInfo.defaultLimits,
        onMalformed: () => {}
      })
      const batch = Array.from({ length: 12 }, (_, i) => i)
      const evaluation = yield* oa.evaluate(batch, { text: "x" }, { captureTraces: true })
      evaluation.outputs.forEach((record, i) => {
        assert.lengthOf(record.logs, 10)
        for (const line of record.logs) assert.match(line, new RegExp(`^INFO example ${i} (step|child) \\d$`))
      })
    }))

  it.effect("loggers the user installed still receive the evaluator's logs; the capture is local", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const recorder = Logger.make(({ message }) => {
        seen.push(message)
      })
      const [result, lines] = yield* adapter.withCapturedLogs(
        Effect.log("inside").pipe(Effect.zipRight(Effect.logDebug("below the minimum level")), Effect.as(7))
      ).pipe(Effect.zipLeft(Effect.log("outside")), Effect.provide(Logger.add(recorder)))
      assert.deepStrictEqual(result, Either.right(7))
      assert.deepStrictEqual(lines, ["INFO inside"])
      assert.deepStrictEqual(seen, [["inside"], ["outside"]])
    }))

  it.effect("captured logs reach the reflection prompt of their own example only", () =>
    Effect.gen(function*() {
      const { model, prompts } = recording((prompt) => currentText(prompt) + "!")
      yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: (text: string, ex: { id: string }) =>
          Effect.gen(function*() {
            yield* Effect.logInfo(`evaluating ${ex.id}`)
            yield* Effect.yieldNow()
            yield* Effect.logWarning(`done ${ex.id}`)
            return 0
          }),
        dataset: ["a", "b", "c", "d"].map((id) => ({ id })),
        minibatchSize: 4,
        maxConcurrency: 4,
        reflectionModel: model,
        // seed 4 + a proposal's two minibatches 8 + its child's validation 4:
        // a proposal whose child could not be validated is never started
        maxMetricCalls: 16
      })
      assert.isAbove(prompts.length, 0)
      const examples = prompts[0]!.split(/^## Example \d+$/m).slice(1)
      assert.lengthOf(examples, 4)
      for (const section of examples) {
        const id = /### Input\n\n\{"id":"(\w)"\}/.exec(section)![1]!
        assert.include(section, `INFO evaluating ${id}\nWARN done ${id}`)
        assert.notMatch(section, new RegExp(`(evaluating|done) [^${id}\\W]`))
      }
    }))

  it.effect("an evaluator failure is a failed evaluation, not a cached score; its message and logs reach reflection", () =>
    Effect.gen(function*() {
      const { model, prompts } = recording((prompt) => currentText(prompt) + "!")
      const cache = EvaluationCache.memory<OptimizeAnything.EvaluationRecord>()
      const events: Array<GepaEvent> = []
      const result = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: (text: string, ex: { id: string }) =>
          ex.id === "bad"
            ? Effect.logError("compiling failed at line 3").pipe(
              Effect.zipRight(Effect.try(() => {
                throw new SyntaxError("syntax error near 'go'")
              }))
            )
            : Effect.succeed(bangs(text) > 0 ? 1 : 0),
        dataset: [{ id: "ok1" }, { id: "bad" }, { id: "ok2" }],
        minibatchSize: 3,
        cache,
        reflectionModel: model,
        maxMetricCalls: 12,
        onEvent: (e) => {
          events.push(e)
        }
      })
      const failed = events.filter((e): e is Extract<GepaEvent, { _tag: "ExampleFailed" }> => e._tag === "ExampleFailed")
      assert.isAbove(failed.length, 0)
      assert.include(failed[0]!.error, "UnknownException")
      assert.include(failed[0]!.error, "(cause: SyntaxError: syntax error near 'go')")
      assert.include(failed[0]!.error, "compiling failed at line 3")
      assert.include(prompts[0]!, "syntax error near 'go'")
      assert.include(prompts[0]!, "ERROR compiling failed at line 3")
      // the failed example was never cached for any candidate
      const cached = yield* Effect.forEach(result.candidates, (c) =>
        cache.get({ candidateHash: Candidate.hash(c), split: "val", id: "1", contentHash: Fingerprint.exampleHash({ id: "bad" }) }))
      assert.isTrue(cached.every(Option.isNone))
      // cache keys stand for the example's content (issue 12)
      const ok = yield* cache.get({
        candidateHash: Candidate.hash(result.candidates[0]!),
        split: "val",
        id: "0",
        contentHash: Fingerprint.exampleHash({ id: "ok1" })
      })
      assert.isTrue(Option.isSome(ok))
    }))

  it.live("a timed-out evaluation fails with the limit and the logs written before it", () =>
    Effect.gen(function*() {
      const events: Array<GepaEvent> = []
      const { model } = recording((prompt) => currentText(prompt) + "!")
      yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: (_text: string, ex: { slow: boolean }) =>
          ex.slow ? Effect.log("started the slow case").pipe(Effect.zipRight(Effect.never)) : Effect.succeed(1),
        dataset: [{ slow: false }, { slow: true }],
        evaluationTimeout: "30 millis",
        reflectionModel: model,
        maxMetricCalls: 4,
        onEvent: (e) => {
          events.push(e)
        }
      })
      const failed = events.find((e): e is Extract<GepaEvent, { _tag: "ExampleFailed" }> => e._tag === "ExampleFailed")
      assert.isDefined(failed)
      assert.include(failed!.error, "did not finish within 30 ms")
      assert.include(failed!.error, "INFO started the slow case")
    }))

  it.effect("a crash inside the evaluator is a failed evaluation too", () =>
    Effect.gen(function*() {
      const events: Array<GepaEvent> = []
      const { model } = recording((prompt) => currentText(prompt) + "!")
      yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: OptimizeAnything.evaluator((text: string, ex: number) => {
          if (ex === 1) throw new TypeError("cannot read x of undefined")
          return Promise.resolve(text.length)
        }),
        dataset: [0, 1],
        reflectionModel: model,
        maxMetricCalls: 4,
        onEvent: (e) => {
          events.push(e)
        }
      })
      const failed = events.find((e): e is Extract<GepaEvent, { _tag: "ExampleFailed" }> => e._tag === "ExampleFailed")
      assert.include(failed!.error, "TypeError: cannot read x of undefined")
    }))

  it.effect("a malformed evaluator result stops the run with one clear line", () =>
    Effect.gen(function*() {
      const { model } = recording(() => "x")
      const error = yield* Effect.flip(OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: () => Effect.succeed({ scor: 1 } as unknown as number),
        reflectionModel: model,
        maxMetricCalls: 4
      }))
      assert.strictEqual(error._tag, "AdapterContractError")
      assert.include(error.message, "evaluator")
      assert.include(error.message, "expected a number or { score, sideInfo?, scores?")
    }))
})

describe("optimizeAnything: objectives and test set", () => {
  it.effect("per-objective scores reach the objective frontier; score stays the ranking score", () =>
    Effect.gen(function*() {
      const proposals = ["fast", "accurate"]
      const { model } = recording(() => proposals.shift() ?? "fast")
      const scoresOf = (text: string) =>
        text === "fast" ? { speed: 1, accuracy: 0.1 } : text === "accurate" ? { speed: 0.1, accuracy: 1 } : { speed: 0.1, accuracy: 0.1 }
      const result = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "seed",
        evaluator: (text: string, _ex: number) => {
          const scores = scoresOf(text)
          return Effect.succeed({ score: (scores.speed + scores.accuracy) / 2, scores })
        },
        dataset: [0, 1],
        frontierType: "objective",
        acceptance: "improvement_or_equal",
        reflectionModel: model,
        maxMetricCalls: 14,
        // one proposal at a time, so that each scripted answer is validated
        proposalsPerStep: 1
      })
      const fast = result.candidates.findIndex((c) => c[OptimizeAnything.textComponent] === "fast")
      const accurate = result.candidates.findIndex((c) => c[OptimizeAnything.textComponent] === "accurate")
      assert.isAbove(fast, 0)
      assert.isAbove(accurate, 0)
      const fronts = result.state.fronts.objective.programs
      assert.deepStrictEqual(fronts["speed"], [fast])
      assert.deepStrictEqual(fronts["accuracy"], [accurate])
      assert.deepStrictEqual(result.objectiveScores[fast], { speed: 1, accuracy: 0.1 })
      assert.strictEqual(result.valAggregateScores[fast], 0.55)
    }))

  it.effect("objective frontier without scores fails clearly", () =>
    Effect.gen(function*() {
      const { model } = recording(() => "x")
      const error = yield* Effect.flip(OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: () => Effect.succeed(1),
        frontierType: "objective",
        reflectionModel: model,
        maxMetricCalls: 4
      }))
      assert.strictEqual(error._tag, "MissingObjectiveScores")
    }))

  it.effect("the test set scores the best candidate only, unless the seed is asked for", () =>
    Effect.gen(function*() {
      let calls = 0
      const { model } = recording((prompt) => currentText(prompt) + "!")
      const result = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: (text: string, ex: { need: number }) =>
          Effect.sync(() => {
            calls++
            return bangs(text) >= ex.need ? 1 : 0
          }),
        dataset: [{ need: 1 }, { need: 2 }],
        testset: [{ need: 0 }, { need: 1 }, { need: 2 }, { need: 3 }],
        reflectionModel: model,
        maxMetricCalls: 20,
        cache: false
      })
      const test = result.test!
      assert.isAbove(result.bestIndex, 0)
      assert.isUndefined(test.seed)
      assert.strictEqual(test.metricCalls, 4)
      assert.deepStrictEqual(test.best.scores, [1, 1, 1, 0])
      assert.strictEqual(calls, result.totalMetricCalls + 4)
      // a seed that stays the best is scored once, as the best, and reported as both
      const { model: stuck } = recording((prompt) => currentText(prompt) + "?")
      const unchanged = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: (text: string, ex: { need: number }) => Effect.succeed(bangs(text) >= ex.need ? 1 : 0),
        dataset: [{ need: 1 }],
        testset: [{ need: 0 }, { need: 1 }],
        reflectionModel: stuck,
        maxMetricCalls: 6
      })
      assert.strictEqual(unchanged.bestIndex, 0)
      assert.strictEqual(unchanged.test!.metricCalls, 2)
      assert.strictEqual(unchanged.test!.seed, unchanged.test!.best)
    }))

  it.effect("with testSeed the test set scores the seed and the best candidate once, outside the budget", () =>
    Effect.gen(function*() {
      let calls = 0
      const { model } = recording((prompt) => currentText(prompt) + "!")
      const result = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "go",
        evaluator: (text: string, ex: { need: number }) =>
          Effect.sync(() => {
            calls++
            return bangs(text) >= ex.need ? 1 : 0
          }),
        dataset: [{ need: 1 }, { need: 2 }],
        testset: [{ need: 0 }, { need: 1 }, { need: 2 }, { need: 3 }],
        testSeed: true,
        reflectionModel: model,
        maxMetricCalls: 20,
        cache: false
      })
      const test = result.test!
      assert.strictEqual(test.size, 4)
      assert.strictEqual(test.metricCalls, 8)
      assert.strictEqual(test.seed?.candidate, 0)
      assert.deepStrictEqual(test.seed?.scores, [1, 0, 0, 0])
      assert.strictEqual(test.best.candidate, result.bestIndex)
      assert.deepStrictEqual(test.best.scores, [1, 1, 1, 0])
      assert.strictEqual(test.best.score, 0.75)
      assert.isAtMost(result.totalMetricCalls, 20)
      assert.strictEqual(calls, result.totalMetricCalls + test.metricCalls)
    }))
})

describe("optimizeAnything: faces", () => {
  it.effect("Gepa.optimizeAnything is the same function; the reflection model can come from the context", () =>
    Effect.gen(function*() {
      assert.strictEqual(Gepa.optimizeAnything, OptimizeAnything.optimizeAnything)
      const { model } = recording((prompt) => currentText(prompt) + "!")
      const result = yield* Gepa.optimizeAnything({
        seedCandidate: "a",
        evaluator: (text) => Effect.succeed(bangs(text) > 0 ? 1 : 0),
        maxMetricCalls: 4
      }).pipe(Effect.provide(LanguageModel.layerReflection(model)))
      assert.strictEqual(result.bestCandidate, "a!")
    }))

  it.effect("the evaluator's requirements flow to the result", () =>
    Effect.gen(function*() {
      class Threshold extends Effect.Tag("Threshold")<Threshold, { readonly value: number }>() {}
      const { model } = recording((prompt) => currentText(prompt) + "!")
      const program = OptimizeAnything.optimizeAnything({
        seedCandidate: "a",
        evaluator: (text) => Effect.map(Threshold, (t) => Math.min(1, bangs(text) / t.value)),
        reflectionModel: model,
        maxMetricCalls: 12
      })
      const result = yield* Effect.provideService(program, Threshold, { value: 2 })
      assert.strictEqual(result.bestCandidate, "a!!")
    }))

  it("the Promise form resolves with the result and rejects with the tagged error", async () => {
    const { model } = recording((prompt) => currentText(prompt) + "!")
    const result = await OptimizeAnything.optimizeAnythingPromise({
      seedCandidate: "a",
      evaluator: OptimizeAnything.evaluator((text: string) => (bangs(text) > 0 ? 1 : 0)),
      reflectionModel: model,
      maxMetricCalls: 4
    })
    assert.strictEqual(result.bestCandidate, "a!")
    // @ts-expect-error: neither a seed nor an objective (a JavaScript caller gets the ConfigError)
    const error = await OptimizeAnything.optimizeAnythingPromise({
      evaluator: () => Effect.succeed(1),
      reflectionModel: model,
      maxMetricCalls: 4
    }).then(() => undefined, (e: unknown) => e)
    assert.strictEqual((error as { _tag: string })._tag, "ConfigError")
  })

  it.live("interrupting the run interrupts the evaluator (not a failed evaluation)", () =>
    Effect.gen(function*() {
      const { model } = recording(() => "x")
      let interrupted = false
      const exit = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: "a",
        evaluator: () =>
          Effect.never.pipe(Effect.onInterrupt(() =>
            Effect.sync(() => {
              interrupted = true
            })
          )),
        reflectionModel: model,
        maxMetricCalls: 4
      }).pipe(Effect.timeout("20 millis"), Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.strictEqual(Option.getOrThrow(Exit.causeOption(exit).pipe(Option.flatMap(Cause.failureOption)))._tag, "TimeoutException")
      assert.isTrue(interrupted)
    }))
})

describe("optimizeAnything: the anything command", () => {
  const setup = () => {
    const dir = tmpDir()
    fs.writeFileSync(
      path.join(dir, "evaluate.mjs"),
      [
        "export const evaluate = async (candidate, example) => {",
        "  const have = (candidate.match(/!/g) ?? []).length",
        "  return { score: have >= example.need ? 1 : 0, sideInfo: { need: example.need, have } }",
        "}"
      ].join("\n")
    )
    fs.writeFileSync(path.join(dir, "seed.txt"), "hi\n")
    fs.writeFileSync(path.join(dir, "data.jsonl"), "{\"need\": 1}\n\n{\"need\": 2}\n")
    fs.writeFileSync(path.join(dir, "test.jsonl"), "{\"need\": 0}\n{\"need\": 3}\n")
    return dir
  }

  it.scoped("loads the evaluator module, seed and data files, and writes the run directory and report", () =>
    Effect.gen(function*() {
      const dir = setup()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const out: Array<string> = []
      const { model } = recording((prompt) => currentText(prompt) + "!")
      const result = yield* OptimizeAnything.runCommand({
        evaluator: "evaluate.mjs",
        seed: "seed.txt",
        objective: "Enough exclamation marks.",
        dataset: "data.jsonl",
        testset: "test.jsonl",
        testSeed: true,
        runDir: "run",
        engine: { maxMetricCalls: 20 }
      }, { reflectionModel: model, stdout: (t) => out.push(t), cwd: dir })
      assert.strictEqual(result.bestCandidate, "hi!!")
      const text = out.join("")
      assert.include(text, "Done (multi-task)")
      assert.include(text, "test score    seed 0.500 -> best 0.500")
      for (const name of ["report.html", "result.json", "events.jsonl", "gepa_state.json", "test_scores.json"]) {
        assert.isTrue(fs.existsSync(path.join(dir, "run", name)), name)
      }
    }))

  it.scoped("a seedless command run says the reflection model wrote the seed", () =>
    Effect.gen(function*() {
      const dir = setup()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const out: Array<string> = []
      const { model } = recording((prompt) => (prompt.includes("Write the first version") ? "hey" : currentText(prompt) + "!"))
      const result = yield* OptimizeAnything.runCommand({
        evaluator: "evaluate.mjs",
        objective: "Enough exclamation marks.",
        dataset: "data.jsonl",
        runDir: "run",
        engine: { maxMetricCalls: 12 }
      }, { reflectionModel: model, stdout: (t) => out.push(t), cwd: dir })
      assert.strictEqual(result.seedCandidate, "hey")
      assert.include(out.join(""), "seed written by the reflection model (1 call)")
      assert.include(fs.readFileSync(path.join(dir, "run", "report.html"), "utf8"), "seed written by the reflection model")
    }))

  it.scoped("bad input names the flag and writes nothing", () =>
    Effect.gen(function*() {
      const dir = setup()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      fs.writeFileSync(path.join(dir, "bad.jsonl"), "{\"need\": 1}\nnot json\n")
      const { model } = recording(() => "x")
      const run = (options: Partial<OptimizeAnything.CommandOptions>) =>
        Effect.flip(OptimizeAnything.runCommand({ evaluator: "evaluate.mjs", seed: "seed.txt", runDir: "run", ...options }, {
          reflectionModel: model,
          stdout: () => {},
          cwd: dir
        }))
      const missing = yield* run({ dataset: "nope.jsonl" })
      assert.include(missing.message, "\"--dataset\"")
      assert.include(missing.message, "file not found")
      const bad = yield* run({ dataset: "bad.jsonl" })
      assert.include(bad.message, "bad.jsonl:2: invalid JSON")
      const noModule = yield* run({ evaluator: "missing.mjs" })
      assert.include(noModule.message, "\"--evaluator\"")
      fs.writeFileSync(path.join(dir, "empty.mjs"), "export const other = 1\n")
      const noFunction = yield* run({ evaluator: "empty.mjs" })
      assert.include(noFunction.message, "must export a function named \"evaluate\"")
      assert.isFalse(fs.existsSync(path.join(dir, "run")))
    }))
})

describe("optimizeAnything: the anything subcommand", () => {
  const gepa = (cwd: string, out: Array<string>, specs: Array<unknown>) => {
    const { model } = recording((prompt) => currentText(prompt) + "!")
    const anything = AnythingCommand.command({
      cwd,
      stdout: (t) => out.push(t),
      makeReflectionModel: (spec) => Effect.sync(() => (specs.push(spec), model))
    })
    const run = Command.run(Command.make("gepa").pipe(Command.withSubcommands([anything])), { name: "gepa", version: "0" })
    return (args: ReadonlyArray<string>) => run(["node", "gepa", "anything", ...args]).pipe(Effect.provide(NodeContext.layer))
  }

  it.scoped("parses the flags, builds the model and runs in the run directory; a second run needs --resume", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      fs.writeFileSync(path.join(dir, "evaluate.mjs"), "export default (c, ex) => ((c.match(/!/g) ?? []).length >= ex.need ? 1 : 0)\n")
      fs.writeFileSync(path.join(dir, "seed.txt"), "yo\n")
      fs.writeFileSync(path.join(dir, "data.jsonl"), "{\"need\": 1}\n{\"need\": 2}\n")
      const out: Array<string> = []
      const specs: Array<unknown> = []
      const run = gepa(dir, out, specs)
      const args = [
        "--evaluator",
        "evaluate.mjs",
        "--seed",
        "seed.txt",
        "--dataset",
        "data.jsonl",
        "--reflection-model",
        "m1",
        "--reflection-base-url",
        "http://localhost:1/v1",
        "--max-metric-calls",
        "20",
        "--run-dir",
        "run"
      ]
      yield* run(args)
      assert.deepStrictEqual(specs, [{ model: "m1", baseUrl: "http://localhost:1/v1" }])
      assert.include(out.join(""), "Done (multi-task)")
      assert.include(out.join(""), "yo!!")
      assert.isTrue(fs.existsSync(path.join(dir, "run", "report.html")))
      const again = yield* Effect.flip(run(args))
      assert.include((again as { message: string }).message, "already holds a run; continue it with --resume")
      yield* run([...args.slice(0, -4), "--max-metric-calls", "24", "--run-dir", "run", "--resume"])
    }))

  it("flag problems name the flag", () => {
    const problem = (values: AnythingCommand.FlagValues) => {
      const r = AnythingCommand.fromFlags(values)
      return Either.isLeft(r) ? r.left.field : "ok"
    }
    const base = { evaluator: "e.mjs", seed: "s.txt", reflectionModel: "m", maxMetricCalls: "10" }
    assert.strictEqual(problem(base), "ok")
    assert.strictEqual(problem({ ...base, evaluator: undefined }), "--evaluator")
    assert.strictEqual(problem({ ...base, seed: undefined }), "--objective")
    assert.strictEqual(problem({ ...base, seed: undefined, objective: "go" }), "ok")
    assert.strictEqual(problem({ ...base, valset: "v.jsonl" }), "--valset")
    assert.strictEqual(problem({ ...base, testSeed: true }), "--test-seed")
    assert.strictEqual(problem({ ...base, dataset: "d.jsonl", testset: "t.jsonl", testSeed: true }), "ok")
    assert.strictEqual(problem({ ...base, reflectionModel: undefined }), "--reflection-model")
    assert.strictEqual(problem({ ...base, maxMetricCalls: "ten" }), "--max-metric-calls")
    assert.strictEqual(problem({ ...base, maxMetricCalls: undefined }), "--max-metric-calls")
    assert.strictEqual(problem({ ...base, maxMetricCalls: undefined, timeout: "5m" }), "ok")
    assert.strictEqual(problem({ ...base, evaluationTimeout: "soon" }), "--evaluation-timeout")
    const ok = AnythingCommand.fromFlags({ ...base, evaluationTimeout: "30s", randomSeed: "7" }, new Date("2026-01-02T03:04:05.678Z"))
    assert.isTrue(Either.isRight(ok))
    if (Either.isRight(ok)) {
      assert.strictEqual(ok.right.options.runDir, path.join(".gepa-runs", "anything-2026-01-02T03-04-05Z"))
      assert.strictEqual(ok.right.options.engine?.seed, 7)
    }
  })
})

describe("optimizeAnything: the example", () => {
  it.effect("the regular expression improves through side info; without side info the same model cannot improve it", () =>
    Effect.gen(function*() {
      const result = yield* Regex.optimizeRegex()
      assert.isBelow(result.seedScore!, 1)
      assert.strictEqual(result.bestScore, 1)
      assert.strictEqual(result.test?.best.score, 1)
      assert.isAtMost(result.totalMetricCalls, 150)
      const blind = yield* OptimizeAnything.optimizeAnything({
        seedCandidate: result.seedCandidate,
        evaluator: (pattern: string, example: Regex.Case) => Effect.map(Regex.evaluate(pattern, example), (r) => r.score),
        captureLogs: false,
        dataset: Regex.dataset,
        valset: Regex.valset,
        reflectionModel: LanguageModel.fromFunction((prompt) => Regex.reflect(LanguageModel.promptText(prompt))),
        maxMetricCalls: 150,
        seed: 1
      })
      assert.strictEqual(blind.bestScore, blind.seedScore)
    }))
})
