/**
 * A reflection model that never answers usably (no fenced block: chatter,
 * a refusal, bare text) stops the run after `reflection.maxUnusableAnswers`
 * answers in a row, with one line naming the model, the component, the
 * count and the start of the last answer, secrets scrubbed; the state is
 * saved, and the run resumes once the model answers as asked.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Cli from "../src/Cli.js"
import * as Strategy from "../src/Strategy.js"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import { ConfigError, ReflectionUnusable } from "../src/Errors.js"
import * as Gepa from "../src/Gepa.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as Metric from "../src/Metric.js"
import * as Reflection from "../src/Reflection.js"
import * as Secrets from "../src/Secrets.js"
import * as Hostile from "./fixtures/hostile.js"
import * as FakeServer from "./fixtures/openaiServer.js"
import { tmpDir } from "./fixtures/tmp.js"

interface Example {
  readonly q: string
  readonly a: string
}

const trainset: ReadonlyArray<Example> = ["alpha", "beta", "gamma", "delta"].map((q) => ({ q, a: q.toUpperCase() }))

const chatter = (key: string) => `I would rather not rewrite this prompt; it already looks reasonable to me (${key}). Perhaps add more examples?`

describe("a reflection model that never answers usably", () => {
  it.effect("stops after maxUnusableAnswers in a row with ReflectionUnusable; a usable answer resets the count", () =>
    Effect.gen(function*() {
      let calls = 0
      const reflection = LanguageModel.fromFunction(() => {
        calls++
        // one usable answer after two unusable ones: the count starts again
        return calls === 3 ? "```\nAnswer in capitals.\n```" : `Sure! Bare text, attempt ${calls}.`
      })
      const task = LanguageModel.fromFunction(() => "no idea")
      const adapter = yield* DefaultAdapter.make<Example>({ model: task, input: (e) => e.q, metric: Metric.exactMatch<Example>((e) => e.a) })
      const run = Gepa.optimize({
        seedCandidate: { system_prompt: "Answer." },
        trainset,
        adapter,
        reflectionModel: reflection,
        maxMetricCalls: 400,
        minibatchSize: 2,
        parallelProposals: 1,
        reflection: { maxUnusableAnswers: 3 }
      })
      const failure = yield* Effect.flip(run)
      expect(failure).toBeInstanceOf(ReflectionUnusable)
      const e = failure as ReflectionUnusable
      expect(e.answers).toBe(3)
      // two unusable, one usable (resets), then three unusable
      expect(calls).toBe(6)
      expect(e.component).toBe("system_prompt")
      expect(e.message).toMatch(
        /^the reflection model "[^"]+" gave 3 unusable answers in a row; the last, for component "system_prompt": the answer has no fenced code block/
      )
      expect(e.message).toContain(`it began: "Sure! Bare text, attempt`)
      expect(e.message.split("\n")).toHaveLength(1)
    }))

  it.effect("the limit is checked: a positive integer", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Reflection.validateConfig({ maxUnusableAnswers: 0 }))
      expect(error).toBeInstanceOf(ConfigError)
      expect(error.message).toBe(`Invalid configuration "reflection.maxUnusableAnswers": must be a positive integer, got 0`)
      expect(Reflection.defaultMaxUnusableAnswers).toBe(5)
    }))

  it.scopedLive("through the CLI: one line, exit 1, state saved; resume works once the model answers as asked", () =>
    Effect.gen(function*() {
      Secrets.unsafeClear()
      const key = Hostile.makeKey("unusable")
      const server = yield* FakeServer.make
      let fixed = false
      server.setFallback((request) => {
        if (!Hostile.isReflection(request)) return FakeServer.ok("no idea")
        return FakeServer.ok(fixed ? "```\nAnswer in capitals.\n```" : chatter(key.key))
      })
      const dir = tmpDir("gepa-unusable-")
      fs.writeFileSync(path.join(dir, "train.jsonl"), trainset.map((e) => JSON.stringify({ input: e.q, expected: e.a })).join("\n"))
      const run = (args: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const out: Array<string> = []
          const err: Array<string> = []
          const code = yield* Cli.run(["node", "gepa", ...args], {
            cwd: dir,
            stdout: (t) => out.push(t),
            stderr: (t) => err.push(t),
            makeModel: Cli.openAiModel({ OPENAI_API_KEY: key.key })
          })
          return { code, out: out.join(""), err: err.join("") }
        })
      const first = yield* run([
        "optimize",
        "--train",
        "train.jsonl",
        "--seed-prompt",
        "Answer.",
        "--task-model",
        "tasker",
        "--task-base-url",
        server.baseURL,
        "--reflection-model",
        "reflector",
        "--reflection-base-url",
        server.baseURL,
        "--max-metric-calls",
        "60",
        "--minibatch-size",
        "2",
        "--run-dir",
        "run"
      ])
      expect(first.code).toBe(1)
      // the failed proposals before the limit are warnings; the run ends with one line
      const lines = first.err.trim().split("\n")
      expect(lines.slice(0, -1).every((l) => l.startsWith("gepa [warn] ")), first.err).toBe(true)
      const stop = lines.filter((l) => l.startsWith("gepa: "))
      expect(stop, first.err).toHaveLength(1)
      expect(stop[0]).toBe(lines[lines.length - 1])
      expect(stop[0]).toMatch(
        /^gepa: the reflection model "reflector" gave 5 unusable answers in a row; the last, for component "system_prompt": the answer has no fenced code block/
      )
      expect(stop[0]).toContain(`it began: "I would rather not rewrite this prompt; it already looks reasonable to me ([redacted]`)
      expect(stop[0]).toMatch(/\(continue with "gepa resume \S*run" once fixed\)$/)
      expect(Hostile.leaksIn(first.err + first.out, key)).toEqual([])
      expect(fs.existsSync(path.join(dir, "run", "gepa_state.json"))).toBe(true)
      // the fifth unusable answer stops the run; the other rewrites of its step were asked at the same time (two more at most)
      const reflections = server.requests.filter(Hostile.isReflection).length
      expect(reflections).toBeGreaterThanOrEqual(5)
      expect(reflections).toBeLessThanOrEqual(5 + Strategy.defaultFor(1).proposalsPerStep - 1)

      fixed = true
      const resumed = yield* run(["resume", "run"])
      expect(resumed.err).toBe("")
      expect(resumed.code).toBe(0)
      expect(resumed.out).toContain("Resuming")
      expect(server.requests.filter(Hostile.isReflection).length).toBeGreaterThan(reflections)
    }), 60_000)
})
