import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Cli from "../../src/Cli.js"
import * as LanguageModel from "../../src/LanguageModel.js"
import { tmpDir } from "../fixtures/tmp.js"

// An uppercase task: the answer is right when the system prompt says "uppercase".
const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
const writeData = (dir: string) =>
  fs.writeFileSync(path.join(dir, "data.jsonl"), words.map((w) => JSON.stringify({ input: w, expected: w.toUpperCase() })).join("\n"))

const userText = (prompt: LanguageModel.Prompt) => (typeof prompt === "string" ? prompt : prompt.messages.at(-1)!.content)
const systemText = (prompt: LanguageModel.Prompt) => typeof prompt === "string" ? "" : prompt.messages.find((m) => m.role === "system")?.content ?? ""

const taskModel = LanguageModel.fromFunction((p) => (/uppercase/i.test(systemText(p)) ? userText(p).toUpperCase() : userText(p)))
// a reflection model that never finds the answer: every proposal is a new, useless text
let proposals = 0
const uselessReflection = LanguageModel.fromFunction(() => "```\nRepeat the text, variant " + ++proposals + ".\n```")
const helpfulReflection = LanguageModel.fromFunction(() => "```\nRepeat the text in uppercase.\n```")

const capture = (cwd: string, reflection: LanguageModel.LanguageModel = helpfulReflection) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const env: Cli.Environment = {
    cwd,
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    makeModel: (role) => Effect.succeed(role === "task" ? taskModel : reflection)
  }
  return { env, out: () => out.join(""), err: () => err.join("") }
}

const runCli = (cwd: string, args: ReadonlyArray<string>, reflection?: LanguageModel.LanguageModel) => {
  const io = capture(cwd, reflection)
  return Effect.map(Cli.run(["node", "gepa", ...args], io.env), (code) => ({ code, out: io.out(), err: io.err() }))
}

const base = (seedPrompt: string, runDir = "run", budget = 400) => [
  "optimize",
  "--train",
  "data.jsonl",
  "--seed-prompt",
  seedPrompt,
  "--task-model",
  "t",
  "--reflection-model",
  "r",
  "--max-metric-calls",
  String(budget),
  "--minibatch-size",
  "2",
  "--run-dir",
  runDir
]

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>

describe("the CLI stops when nothing is left to gain, and says why in words", () => {
  it.effect("a perfect seed stops at once: no reflection, only the validation calls spent", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-fc-")
      writeData(dir)
      const r = yield* runCli(dir, base("Repeat the text in uppercase."))
      expect(r.err).toBe("")
      expect(r.code).toBe(0)
      expect(r.out).toContain("Done: the validation score is perfect (1.000), nothing left to improve")
      const result = readJson(path.join(dir, "run", "result.json"))
      expect(result["totalMetricCalls"]).toBe(words.length)
      expect(result["reflectionCalls"]).toBe(0)
      expect(result["stoppedBy"]).toEqual({ kind: "condition", condition: "perfectScore(1)" })
    }))

  it.effect("a run that stops improving stops after --patience iterations; --no-patience runs to the budget", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-fc-")
      writeData(dir)
      const stalled = yield* runCli(dir, [...base("Repeat the text.", "stalled"), "--patience", "3"], uselessReflection)
      expect(stalled.code).toBe(0)
      expect(stalled.out).toMatch(/Done: no better validation score in the last 3 iterations \(best 0\.000, found by the seed\)/)
      const result = readJson(path.join(dir, "stalled", "result.json"))
      expect(result["stoppedBy"]).toEqual({ kind: "condition", condition: "noImprovement(3)" })
      expect(result["iterations"]).toBe(3)
      // the default window is documented and on
      expect(Cli.defaults.patience).toBe(30)
      const endless = yield* runCli(dir, [...base("Repeat the text.", "endless", 60), "--no-patience"], uselessReflection)
      expect(endless.code).toBe(0)
      expect(endless.out).toMatch(/Done: used the budget of 60 metric calls/)
      expect((readJson(path.join(dir, "endless", "result.json"))["stoppedBy"] as { kind: string }).kind).toBe("budget")
    }))

  it.effect("the stop reason is in the summary, show, show --format json, the report and the events", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-fc-")
      writeData(dir)
      const run = yield* runCli(dir, base("Repeat the text."))
      expect(run.code).toBe(0)
      const words = "the validation score is perfect (1.000), nothing left to improve"
      expect(run.out).toContain(`Done: ${words}`)
      // the demo's summary lines
      for (const label of ["validation score", "candidates", "merges", "iterations", "metric calls", "reflection calls", "time"]) {
        expect(run.out).toMatch(new RegExp(`^  ${label} +\\S`, "m"))
      }
      const show = yield* runCli(dir, ["show", "run"])
      expect(show.out).toContain(`stopped because  ${words}`)
      const json = JSON.parse((yield* runCli(dir, ["show", "run", "--format", "json"])).out) as {
        stop: { reason: string; kind: string; condition: string }
        result: { stoppedBy: unknown }
      }
      expect(json.stop).toEqual({ reason: words, kind: "condition", condition: "perfectScore(1)" })
      expect(json.result.stoppedBy).toEqual({ kind: "condition", condition: "perfectScore(1)" })
      expect(fs.readFileSync(path.join(dir, "run", "report.html"), "utf8")).toContain(words)
      const ended = fs.readFileSync(path.join(dir, "run", "events.jsonl"), "utf8").split("\n").filter((l) => l.includes("OptimizationEnded"))
      expect(ended.join("")).toContain(words)
    }))
})

describe("the CLI's messages", () => {
  it.effect("flags gepa resume does not take are named as such; a typo gets the closest flag", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-fc-")
      writeData(dir)
      expect((yield* runCli(dir, base("Repeat the text in uppercase."))).code).toBe(0)
      const seed = yield* runCli(dir, ["resume", "run", "--seed", "3"])
      expect(seed.code).toBe(2)
      expect(seed.err.trim().split("\n")).toHaveLength(1)
      expect(seed.err).toMatch(/^gepa: --seed is not a flag of gepa resume: it is saved with the run/)
      const typo = yield* runCli(dir, ["optimize", "--max-metrc-calls", "5"])
      expect(typo.code).toBe(2)
      expect(typo.err).toBe("gepa: unknown flag --max-metrc-calls for gepa optimize (did you mean --max-metric-calls?)\n")
      const resumeTypo = yield* runCli(dir, ["resume", "run", "--max-iteration", "5"])
      expect(resumeTypo.err).toContain("(did you mean --max-iterations?)")
      const command = yield* runCli(dir, ["optimise"])
      expect(command.code).toBe(2)
      expect(command.err).toContain(`unknown command "optimise" (did you mean "optimize"?)`)
    }))

  it.effect("a config field typo gets the closest field; baseURL is read as baseUrl with a warning", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-fc-")
      writeData(dir)
      fs.writeFileSync(path.join(dir, "typo.json"), JSON.stringify({ train: "data.jsonl", maxMetricCall: 10 }))
      const typo = yield* runCli(dir, ["optimize", "--config", "typo.json"])
      expect(typo.code).toBe(2)
      expect(typo.err).toBe(`gepa: ${path.join(dir, "typo.json")}: unknown field "maxMetricCall" (did you mean "maxMetricCalls"?)\n`)
      fs.writeFileSync(path.join(dir, "model.json"), JSON.stringify({ train: "data.jsonl", taskModel: { model: "t", baseUrI: "x" } }))
      expect((yield* runCli(dir, ["optimize", "--config", "model.json"])).err).toContain(`(did you mean "taskModel.baseUrl"?)`)
      fs.writeFileSync(
        path.join(dir, "spelled.json"),
        JSON.stringify({
          train: "data.jsonl",
          seedPrompt: "Repeat the text in uppercase.",
          taskModel: { model: "t", baseURL: "http://127.0.0.1:1/v1" },
          reflectionModel: "r",
          maxMetricCalls: 50,
          runDir: "spelled"
        })
      )
      const spelled = yield* runCli(dir, ["optimize", "--config", "spelled.json"])
      expect(spelled.code).toBe(0)
      expect(spelled.err).toBe(
        `gepa: warning: ${path.join(dir, "spelled.json")}: "taskModel.baseURL" is spelled "taskModel.baseUrl" in a config file; read as such\n`
      )
      expect((readJson(path.join(dir, "spelled", "config.json"))["taskModel"] as { baseUrl: string }).baseUrl).toBe("http://127.0.0.1:1/v1")
    }))

  it.effect("file-system problems name the path in one line with exit 2, nothing written; an existing empty folder is a run directory", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-fc-")
      writeData(dir)
      fs.writeFileSync(path.join(dir, "afile"), "x")
      const under = yield* runCli(dir, base("Repeat the text.", "afile/run"))
      expect(under.code).toBe(2)
      expect(under.err).toBe(`gepa: ${path.join(dir, "afile", "run")}: cannot create the run directory: ${path.join(dir, "afile")} is a file\n`)
      for (const args of [["show", "afile/run"], ["report", "afile/run"], ["resume", "afile/run"]]) {
        const r = yield* runCli(dir, args)
        expect(r.code, args.join(" ")).toBe(2)
        expect(r.err.trim().split("\n"), args.join(" ")).toHaveLength(1)
        expect(r.err, args.join(" ")).toContain(path.join(dir, "afile", "run"))
      }
      expect(fs.readdirSync(dir).sort()).toEqual(["afile", "data.jsonl"])
      // the documented `optimize --resume --run-dir DIR` with a folder that exists
      fs.mkdirSync(path.join(dir, "empty"))
      const empty = yield* runCli(dir, [...base("Repeat the text in uppercase.", "empty"), "--resume"])
      expect(empty.err).toBe("")
      expect(empty.code).toBe(0)
      expect(fs.existsSync(path.join(dir, "empty", "result.json"))).toBe(true)
      const out = yield* runCli(dir, ["report", "empty", "--out", "afile/report.html"])
      expect(out.code).toBe(2)
      expect(out.err).toMatch(new RegExp(`^gepa: ${path.join(dir, "afile", "report.html")}: cannot write the report: `))
    }))

  it.effect("--merge is refused with the reason (one component)", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-fc-")
      writeData(dir)
      const r = yield* runCli(dir, [...base("Repeat the text."), "--merge"])
      expect(r.code).toBe(2)
      expect(r.err).toMatch(/^gepa: --merge: merges combine the components of two candidates, and gepa optimize evolves one/)
      expect(fs.readdirSync(dir)).toEqual(["data.jsonl"])
    }))

  it.effect("--quiet prints no progress, only the summary", () =>
    Effect.gen(function*() {
      const dir = tmpDir("gepa-fc-")
      writeData(dir)
      const loud = yield* runCli(dir, base("Repeat the text.", "loud"))
      expect(loud.out).toContain("Starting: 6 training")
      expect(loud.out).toContain("seed candidate: 0.000")
      const quiet = yield* runCli(dir, [...base("Repeat the text.", "quiet"), "--quiet"])
      expect(quiet.out).not.toContain("Starting")
      expect(quiet.out).not.toContain("seed candidate")
      expect(quiet.out).toContain("Done: ")
    }))
})
