import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Option } from "effect"
import fc from "fast-check"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Task from "../examples/demo/task.js"
import * as Cli from "../src/Cli.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as FakeOpenAi from "./fixtures/openaiServer.js"
import { ensureBuilt } from "./fixtures/bin.js"
import { light } from "./fixtures/repeats.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"

const root = path.resolve(__dirname, "..")
const bin = path.join(root, "bin", "gepa.js")

const tmpDir = () => makeTmpDir("gepa-cli-")

// The bin runs the compiled CLI when dist/ holds it (else the sources through
// tsx). Tests of the bin build it first when a source is newer, so that they
// never run a stale build.
const distMain = () =>
  [path.join(root, "dist", "src", "cli", "main.js"), path.join(root, "dist", "cli", "main.js")]
    .find((file) => fs.existsSync(file)) ?? path.join(root, "dist", "src", "cli", "main.js")
// a few processes at a time: the tests share the machine
const inBatches = async <A, B>(items: ReadonlyArray<A>, f: (a: A) => Promise<B>, size = 3): Promise<ReadonlyArray<B>> => {
  const out: Array<B> = []
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(f))))
  return out
}

// runs the bin without blocking the test worker's event loop
const gepa = (cwd: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) =>
  new Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, ...env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

const messageOf = <A>(either: Either.Either<A, Cli.CliInputError>): string => {
  if (Either.isRight(either)) throw new Error("expected an input error")
  return either.left.message
}

// the message of the input error an effect fails with
const failureOf = <A>(effect: Effect.Effect<A, Cli.CliInputError>): Effect.Effect<string> => Effect.map(Effect.either(effect), messageOf)

// The demo tickets as JSONL, the way a user would bring their data.
const writeTickets = (dir: string) => {
  const line = (t: Task.Ticket) => JSON.stringify({ id: t.id, text: t.text, queue: t.queue })
  fs.writeFileSync(path.join(dir, "train.jsonl"), Task.train.map(line).join("\n") + "\n")
  fs.writeFileSync(path.join(dir, "val.jsonl"), Task.validation.map(line).join("\n") + "\n")
  fs.writeFileSync(path.join(dir, "prompt.txt"), Task.seedCandidate[Task.componentName]!)
  // a metric module: the demo's metric, whose feedback the simulated
  // reflection model learns from
  fs.writeFileSync(
    path.join(dir, "metric.ts"),
    `import * as Task from ${JSON.stringify(path.join(root, "examples", "demo", "task.ts"))}\n` +
      `export const metric = (example: { record: { id: string; text: string; queue: Task.Queue } }, output: string) =>\n` +
      `  Task.metric(example.record, output)\n`
  )
}

const capture = (cwd: string) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const env: Cli.Environment = {
    cwd,
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    makeModel: (role) => Effect.succeed(role === "task" ? Task.makeTaskModel(0) : Task.makeReflectionModel(0))
  }
  return { env, out: () => out.join(""), err: () => err.join("") }
}

const runCli = (cwd: string, ...args: ReadonlyArray<string>) => {
  const io = capture(cwd)
  return Effect.map(Cli.run(["node", "gepa", ...args], io.env), (code) => ({ code, out: io.out(), err: io.err() }))
}

describe("data files", () => {
  it("names the file and the line of a bad JSONL line", () => {
    const text = `{"input": "a", "expected": "x"}\n\n{"input": "b", "expected": \n{"input": "c"}\n`
    const message = messageOf(Cli.parseRecords(text, "data/train.jsonl"))
    expect(message).toContain("data/train.jsonl:3")
    expect(message).toContain("line 3")
  })

  it("rejects a line that is not an object, and an item of a JSON array that is not one", () => {
    expect(messageOf(Cli.parseRecords(`{"input": "a"}\n[1, 2]\n`, "t.jsonl"))).toMatch(/^t\.jsonl:2: line 2 must be a JSON object/)
    expect(messageOf(Cli.parseRecords(`[{"input": "a"}, "b"]`, "t.json"))).toMatch(/^t\.json: item 1: expected a JSON object/)
  })

  it("names the missing input or expected field with its line", () => {
    const options = { inputField: "question", expectedField: "answer", expectedRequired: true }
    const noInput = messageOf(Cli.parseExamples(`{"question": "q1", "answer": "a"}\n{"answer": "b"}\n`, "qa.jsonl", options))
    expect(noInput).toContain(`qa.jsonl:2`)
    expect(noInput).toContain(`"question"`)
    const noExpected = messageOf(Cli.parseExamples(`{"question": "q1"}\n`, "qa.jsonl", options))
    expect(noExpected).toContain(`qa.jsonl:1`)
    expect(noExpected).toContain(`"answer"`)
    // a metric module needs no expected field
    const ok = Cli.parseExamples(`{"question": "q1"}\n`, "qa.jsonl", { ...options, expectedRequired: false })
    expect(Either.isRight(ok)).toBe(true)
  })

  it("uses line numbers as ids, or the id field, and rejects duplicate ids", () => {
    const text = `{"input": "a", "expected": "x", "key": "k1"}\n\n{"input": "b", "expected": "y", "key": "k2"}\n`
    const byLine = Either.getOrThrow(
      Cli.parseExamples(text, "d.jsonl", { inputField: "input", expectedField: "expected", expectedRequired: true })
    )
    expect(byLine.map((e) => e.id)).toEqual(["1", "3"])
    const byKey = Either.getOrThrow(
      Cli.parseExamples(text, "d.jsonl", { inputField: "input", expectedField: "expected", idField: "key", expectedRequired: true })
    )
    expect(byKey.map((e) => e.id)).toEqual(["k1", "k2"])
    const dup = `{"input": "a", "key": 1}\n{"input": "b", "key": 1}\n`
    expect(messageOf(Cli.parseExamples(dup, "d.jsonl", { inputField: "input", expectedField: "e", idField: "key", expectedRequired: false })))
      .toBe(`d.jsonl:2: duplicate id "1" (first at d.jsonl:1)`)
  })

  it.effect("reports a missing file by name", () =>
    Effect.gen(function*() {
      const file = path.join(tmpDir(), "nope.jsonl")
      expect(yield* failureOf(Cli.loadExamples(file, { inputField: "input", expectedField: "expected", expectedRequired: true })))
        .toBe(`${file}: file not found`)
    }))
})

describe("settings", () => {
  const base = { train: "/data/train.jsonl", seedPrompt: "Answer.", taskModel: { model: "m" }, reflectionModel: { model: "r" }, maxMetricCalls: 100 }

  it.effect("rejects an unknown metric, naming the choices", () =>
    Effect.gen(function*() {
      const message = yield* failureOf(Cli.resolveSettings({ ...base, metric: "fuzzy" }, {}, { cwd: "/" }))
      expect(message).toContain(`unknown metric "fuzzy"`)
      expect(message).toContain("exact, contains, regex, json-field")
    }))

  it("rejects invalid values in the config file, naming the field", () => {
    expect(messageOf(Cli.parseConfigFile(`{"maxMetricCalls": -3}`, "/x/gepa.json")))
      .toBe(`/x/gepa.json: field "maxMetricCalls": expected a positive integer, got -3`)
    expect(messageOf(Cli.parseConfigFile(`{"parallelProposals": 1.5}`, "gepa.json")))
      .toBe(`gepa.json: field "parallelProposals": expected a positive integer, got 1.5`)
    expect(messageOf(Cli.parseConfigFile(`{"taskModel": {"model": "m", "temperature": "warm"}}`, "gepa.json")))
      .toBe(`gepa.json: field "taskModel.temperature": expected a number, got "warm"`)
    expect(messageOf(Cli.parseConfigFile(`{"taskModel": {"model": "m", "timeout": "soon"}}`, "gepa.json")))
      .toBe(`gepa.json: field "taskModel.timeout": expected a duration such as "90s", "15m" or "2h", got "soon"`)
    expect(messageOf(Cli.parseConfigFile(`{"taskModel": {"temperature": 0}}`, "gepa.json")))
      .toBe(`gepa.json: missing field "taskModel.model"`)
    expect(messageOf(Cli.parseConfigFile(`{"taskModel": {"model": "m", "url": "x"}}`, "gepa.json")))
      .toMatch(/^gepa\.json: unknown field "taskModel\.url" \(known: model, baseUrl, temperature, maxOutputTokens, timeout\)$/)
    expect(messageOf(Cli.parseConfigFile(`{"pattern": "("}`, "gepa.json"))).toMatch(/^gepa\.json: field "pattern": invalid regular expression/)
    for (const text of [`{"maxMetricCalls": -3}`, `{"taskModel": 5}`, `{"ignoreCase": "yes"}`]) {
      expect(messageOf(Cli.parseConfigFile(text, "gepa.json")).split("\n")).toHaveLength(1)
    }
  })

  it("rejects unknown fields and invalid JSON in the config file", () => {
    expect(messageOf(Cli.parseConfigFile(`{"maxMetricCall": 3}`, "gepa.json"))).toMatch(/^gepa\.json: unknown field "maxMetricCall"/)
    expect(messageOf(Cli.parseConfigFile(`{"train": `, "gepa.json"))).toMatch(/^gepa\.json: invalid JSON/)
  })

  it.effect("resolves paths against the config file, lets flags win, and needs a budget", () =>
    Effect.gen(function*() {
      const file = Either.getOrThrow(Cli.parseConfigFile(
        JSON.stringify({
          train: "data/train.jsonl",
          seedPrompt: "Answer.",
          taskModel: { model: "m", baseUrl: "http://t/v1", temperature: 0.2 },
          reflectionModel: { model: "r", baseUrl: "http://x/v1" },
          maxMetricCalls: 100,
          timeout: "15m",
          metric: "./m.ts"
        }),
        "/proj/gepa.json"
      ))
      const flags: Cli.Input = { maxMetricCalls: 50, taskModel: { model: "m2" }, minibatchSize: 5 }
      const s = yield* Cli.resolveSettings(file, flags, { cwd: "/cwd", now: new Date("2026-01-02T03:04:05Z") })
      expect(s.train).toBe("/proj/data/train.jsonl")
      expect(s.metric).toBe("/proj/m.ts")
      expect(s.maxMetricCalls).toBe(50)
      expect(s.timeout).toEqual(Duration.minutes(15))
      // a model name from a flag keeps the file's other model fields
      expect(s.taskModel).toEqual({ model: "m2", baseUrl: "http://t/v1", temperature: 0.2 })
      expect(s.reflectionModel).toEqual({ model: "r", baseUrl: "http://x/v1" })
      expect(s.minibatchSize).toBe(5)
      expect(s.runDir).toBe("/cwd/.gepa-runs/run-2026-01-02T03-04-05Z")
      const { maxMetricCalls: _, ...noBudget } = base
      expect(yield* failureOf(Cli.resolveSettings(noBudget, {}, { cwd: "/" }))).toMatch(/^no budget/)
      const { seedPrompt: _s, ...noSeed } = base
      expect(yield* failureOf(Cli.resolveSettings(noSeed, {}, { cwd: "/" }))).toContain(`"seedPrompt"`)
      const { taskModel: _t, ...noTask } = base
      expect(yield* failureOf(Cli.resolveSettings(noTask, {}, { cwd: "/" }))).toContain(`"taskModel"`)
      expect(yield* failureOf(Cli.resolveSettings(noTask, { taskModel: { baseUrl: "http://t" } }, { cwd: "/" })))
        .toContain(`--task-model`)
    }))

  it.effect("saves settings as config.json and reads them back", () =>
    Effect.gen(function*() {
      const s = yield* Cli.resolveSettings(
        { ...base, timeout: Duration.seconds(90), taskModel: { model: "m", timeout: Duration.millis(1500) } },
        {},
        { cwd: "/cwd" }
      )
      const text = Cli.settingsJson(s)
      expect(JSON.parse(text)).toMatchObject({ timeout: "90s", taskModel: { model: "m", timeout: "1500ms" } })
      expect(Either.getOrThrow(Cli.parseSettingsJson(text, "config.json"))).toEqual(s)
      expect(messageOf(Cli.parseSettingsJson(`{"train": "x"}`, "/r/config.json"))).toMatch(/^\/r\/config\.json: missing field "/)
    }))

  it("reads durations back as they were written", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 ** 9 }), (millis) => {
      const d = Duration.millis(millis)
      expect(Duration.toMillis(Cli.parseDuration(Cli.formatDuration(d))!)).toBe(millis)
    }))
    expect(Cli.parseDuration("2h")).toEqual(Duration.hours(2))
    expect(Cli.parseDuration(0)).toBeUndefined()
    expect(Cli.parseDuration("soon")).toBeUndefined()
  })

  it.effect("lets budget, concurrency and where the models run change on resume, and nothing else", () =>
    Effect.gen(function*() {
      const saved = yield* Cli.resolveSettings(base, {}, { cwd: "/cwd", now: new Date(0) })
      const allowed: Cli.Settings = {
        ...saved,
        maxMetricCalls: 500,
        maxIterations: 3,
        timeout: Duration.hours(1),
        scoreThreshold: 0.9,
        maxConcurrency: 2,
        taskModel: { model: "m-renamed", baseUrl: "http://elsewhere/v1", timeout: Duration.seconds(5) },
        reflectionModel: { model: "r2", timeout: Duration.minutes(5) }
      }
      expect(Option.isNone(Cli.resumeConflict(saved, allowed))).toBe(true)
      const refused: ReadonlyArray<[Partial<Cli.Settings>, string]> = [
        [{ seedPrompt: "Other." }, `"seedPrompt" differs`],
        [{ train: "/data/other.jsonl" }, `"train" differs`],
        [{ minibatchSize: 7 }, `"minibatchSize" differs`],
        [{ metric: "contains" }, `"metric" differs`],
        [{ merge: true }, `"merge" differs`],
        [{ seed: 3 }, `"seed" differs`],
        [{ taskModel: { model: "m", temperature: 1 } }, `"taskModel.temperature" differs`],
        [{ validation: "/data/val.jsonl" }, `"validation" differs from the saved run (saved: null; now: "/data/val.jsonl")`]
      ]
      for (const [change, message] of refused) {
        expect(Option.getOrThrow(Cli.resumeConflict(saved, { ...saved, ...change }))).toContain(message)
      }
    }))
})

describe("gepa optimize / show / report / resume", () => {
  it.effect("stops at bad input with exit code 2 and writes nothing", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      writeTickets(dir)
      fs.writeFileSync(path.join(dir, "bad.jsonl"), `{"text": "ok", "queue": "billing"}\n{"text": oops}\n`)
      const common = ["--input-field", "text", "--expected-field", "queue", "--seed-prompt", "Route.", "--task-model", "t", "--reflection-model", "r"]
      const badLine = yield* runCli(dir, "optimize", "--train", "bad.jsonl", ...common, "--max-metric-calls", "50", "--run-dir", "out1")
      expect(badLine.code).toBe(2)
      expect(badLine.err).toContain(`${path.join(dir, "bad.jsonl")}:2: invalid JSON on line 2`)
      const badMetric = yield* runCli(
        dir,
        "optimize",
        "--train",
        "train.jsonl",
        ...common,
        "--max-metric-calls",
        "50",
        "--metric",
        "fuzzy",
        "--run-dir",
        "out2"
      )
      expect(badMetric.code).toBe(2)
      expect(badMetric.err).toContain(`unknown metric "fuzzy"`)
      const badNumber = yield* runCli(dir, "optimize", "--train", "train.jsonl", ...common, "--max-metric-calls", "many", "--run-dir", "out3")
      expect(badNumber.code).toBe(2)
      expect(badNumber.err).toBe(`gepa: --max-metric-calls: expected an integer, got "many"\n`)
      // the engine's own check (the budget cannot score the seed on the validation set) comes before any write
      const smallBudget = yield* runCli(
        dir,
        "optimize",
        "--train",
        "train.jsonl",
        "--validation",
        "val.jsonl",
        ...common,
        "--max-metric-calls",
        "3",
        "--run-dir",
        "out4"
      )
      expect(smallBudget.code).toBe(2)
      expect(smallBudget.err).toContain("maxMetricCalls")
      expect(smallBudget.err.trim().split("\n")).toHaveLength(1)
      for (const out of ["out1", "out2", "out3", "out4", ".gepa-runs"]) expect(fs.existsSync(path.join(dir, out))).toBe(false)
    }))

  it.effect("optimizes, then shows, reports and resumes the run", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      writeTickets(dir)
      fs.writeFileSync(
        path.join(dir, "gepa.json"),
        JSON.stringify(
          {
            train: "train.jsonl",
            validation: "val.jsonl",
            inputField: "text",
            expectedField: "queue",
            idField: "id",
            seedPromptFile: "prompt.txt",
            metric: "./metric.ts",
            taskModel: "simulated-task",
            reflectionModel: { model: "simulated-reflection" },
            maxMetricCalls: 300,
            parallelProposals: 2,
            runDir: "runs/one"
          },
          null,
          2
        )
      )
      const first = yield* runCli(dir, "optimize", "--config", "gepa.json")
      expect(first.err).toBe("")
      expect(first.code).toBe(0)
      const runDir = path.join(dir, "runs", "one")
      for (const f of ["config.json", "gepa_state.json", "result.json", "report.html", "events.jsonl"]) {
        expect(fs.existsSync(path.join(runDir, f)), f).toBe(true)
      }
      const saved = JSON.parse(fs.readFileSync(path.join(runDir, "config.json"), "utf8")) as Cli.Settings
      expect(saved.seedPrompt).toBe(Task.seedCandidate[Task.componentName])
      expect(saved.metric).toBe(path.join(dir, "metric.ts"))
      const result1 = JSON.parse(fs.readFileSync(path.join(runDir, "result.json"), "utf8")) as {
        bestScore: number
        seedScore: number
        totalMetricCalls: number
      }
      expect(result1.bestScore).toBeGreaterThan(result1.seedScore)

      // the same directory again without --resume is refused
      const again = yield* runCli(dir, "optimize", "--config", "gepa.json")
      expect(again.code).toBe(2)
      expect(again.err).toContain("already holds a run")

      // --resume with a setting that changes the run's meaning is refused, and config.json stays
      const configBefore = fs.readFileSync(path.join(runDir, "config.json"), "utf8")
      const changed = yield* runCli(dir, "optimize", "--config", "gepa.json", "--resume", "--minibatch-size", "5")
      expect(changed.code).toBe(2)
      expect(changed.err).toBe(`gepa: cannot resume ${runDir}: "minibatchSize" differs from the saved run (saved: 3; now: 5); use another --run-dir\n`)
      // a live run holds the directory: nothing is written into it
      const lock = path.join(runDir, "gepa.lock")
      fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString() }))
      const locked = yield* runCli(dir, "optimize", "--config", "gepa.json", "--resume", "--max-metric-calls", "400")
      fs.rmSync(lock)
      expect(locked.code).toBe(1)
      expect(locked.err).toContain(`in use by process ${process.pid}`)
      expect(locked.err.trim().split("\n")).toHaveLength(1)
      expect(fs.readFileSync(path.join(runDir, "config.json"), "utf8")).toBe(configBefore)

      // show names the broken file and its first problem, in one line
      const badResult = path.join(dir, "runs", "bad-result")
      fs.cpSync(runDir, badResult, { recursive: true })
      fs.writeFileSync(path.join(badResult, "result.json"), JSON.stringify({ ...result1, bestScore: "high" }))
      const shownBadResult = yield* runCli(dir, "show", "runs/bad-result")
      expect(shownBadResult.code).toBe(2)
      expect(shownBadResult.err).toBe(`gepa: ${path.join(badResult, "result.json")}: not a GEPA result: "bestScore": Expected number, actual "high"\n`)
      const badState = path.join(dir, "runs", "bad-state")
      fs.cpSync(runDir, badState, { recursive: true })
      fs.writeFileSync(path.join(badState, "gepa_state.json"), "{\"schemaVersion\": 1, \"state\": ")
      fs.rmSync(path.join(badState, "gepa_state.prev.json"), { force: true })
      fs.rmSync(path.join(badState, "result.json"))
      const shownBadState = yield* runCli(dir, "show", "runs/bad-state")
      expect(shownBadState.code).toBe(2)
      expect(shownBadState.err).toMatch(new RegExp(`^gepa: ${path.join(badState, "gepa_state.json").replace(/[.\\/]/g, "\\$&")}: not valid JSON \\(.+\\)\\n$`))

      const shown = yield* runCli(dir, "show", "runs/one")
      expect(shown.code).toBe(0)
      expect(shown.out).toContain(`best score       ${result1.bestScore.toFixed(3)}`)
      expect(shown.out).toContain("lineage of best  0 (")
      expect(shown.out).toContain("Routing rules")

      const json = yield* runCli(dir, "show", "runs/one", "--format", "json")
      expect(json.code).toBe(0)
      expect(JSON.parse(json.out)).toMatchObject({ finished: true, result: { bestScore: result1.bestScore, totalMetricCalls: result1.totalMetricCalls } })
      const badFormat = yield* runCli(dir, "show", "runs/one", "--format", "yaml")
      expect(badFormat.code).toBe(2)
      expect(badFormat.err).toBe(`gepa: --format: expected text or json, got "yaml"\n`)
      const elsewhere = path.join(dir, "elsewhere.html")
      const reportedElsewhere = yield* runCli(dir, "report", "runs/one", "--out", "elsewhere.html")
      expect(reportedElsewhere.code).toBe(0)
      expect(reportedElsewhere.out).toBe(`Report written to ${elsewhere}\n`)
      expect(fs.readFileSync(elsewhere, "utf8").startsWith("<!DOCTYPE html>")).toBe(true)

      fs.rmSync(path.join(runDir, "report.html"))
      const reported = yield* runCli(dir, "report", "runs/one")
      expect(reported.code).toBe(0)
      const html = fs.readFileSync(path.join(runDir, "report.html"), "utf8")
      expect(html.startsWith("<!DOCTYPE html>")).toBe(true)

      const resumed = yield* runCli(dir, "resume", "runs/one", "--max-metric-calls", "500")
      expect(resumed.err).toBe("")
      expect(resumed.code).toBe(0)
      expect(resumed.out).toContain("Resuming")
      const result2 = JSON.parse(fs.readFileSync(path.join(runDir, "result.json"), "utf8")) as { bestScore: number; totalMetricCalls: number }
      expect(result2.totalMetricCalls).toBeGreaterThan(result1.totalMetricCalls)
      expect(result2.bestScore).toBeGreaterThanOrEqual(result1.bestScore)

      const missing = yield* runCli(dir, "show", "runs/none")
      expect(missing.code).toBe(2)
      expect(missing.err).toContain("run directory not found")
    }))
})

describe("a run that fails once started", () => {
  it.effect("exits 1 with one line naming the failure, and says how to continue", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      writeTickets(dir)
      const runDir = path.join(dir, "run")
      const io = capture(dir)
      // the first reflection makes the state file unwritable: the save after it fails
      const reflection = Task.makeReflectionModel(0)
      let broken = false
      const env: Cli.Environment = {
        ...io.env,
        makeModel: (role) =>
          Effect.succeed(
            role === "task" ? Task.makeTaskModel(0) : {
              complete: (prompt) =>
                Effect.suspend(() => {
                  if (!broken) {
                    broken = true
                    fs.rmSync(path.join(runDir, "gepa_state.json"), { force: true })
                    fs.mkdirSync(path.join(runDir, "gepa_state.json"))
                  }
                  return reflection.complete(prompt)
                })
            }
          )
      }
      const code = yield* Cli.run([
        "node",
        "gepa",
        "optimize",
        "--train",
        "train.jsonl",
        "--input-field",
        "text",
        "--expected-field",
        "queue",
        "--seed-prompt-file",
        "prompt.txt",
        "--metric",
        "./metric.ts",
        "--task-model",
        "t",
        "--reflection-model",
        "r",
        "--max-metric-calls",
        "200",
        "--run-dir",
        "run"
      ], env)
      expect(code).toBe(1)
      const err = io.err()
      expect(err.split("\n").filter((l) => l !== "")).toHaveLength(1)
      expect(err).toMatch(/^gepa: Could not save ".*gepa_state\.json": .+ \(continue with "gepa resume .*run" once fixed\)\n$/)
      expect(fs.existsSync(path.join(runDir, "config.json"))).toBe(true)
      expect(fs.existsSync(path.join(runDir, "report.html"))).toBe(false)
    }))
})

describe("bin/gepa.js", () => {
  beforeAll(ensureBuilt, 180_000)

  it("runs the compiled CLI", async () => {
    expect(fs.existsSync(distMain())).toBe(true)
    const r = await gepa(root, ["--version"])
    expect(r.status).toBe(0)
    expect(r.stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version)
  })

  it("prints plain help within 100 columns, marking what a run needs and the environment it reads", async () => {
    const help: Record<string, string> = {}
    for (const args of [[], ["--help"], ["optimize", "--help"], ["resume", "-h"], ["report", "--help"], ["show", "--help"], ["anything", "--help"]]) {
      const r = await gepa(root, args)
      expect(r.status, args.join(" ")).toBe(0)
      expect(r.stderr).toBe("")
      expect(r.stdout).not.toMatch(/\u001b\[/)
      for (const line of r.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100)
      help[args[0] ?? ""] = r.stdout
    }
    expect(help[""]).toBe(help["--help"])
    const top = help["--help"]!
    for (const command of ["optimize", "resume", "report", "show", "OPENAI_API_KEY", "OPENAI_BASE_URL"]) expect(top).toContain(command)
    const optimize = help["optimize"]!
    expect(optimize).toMatch(/--train FILE +\(required\)/)
    expect(optimize).toMatch(/--task-model NAME +\(required\)/)
    expect(optimize).toMatch(/--max-metric-calls N +budget/)
    expect(optimize).toMatch(/--task-timeout DURATION +per request of the task model \(default 60s\)/)
    expect(optimize).toContain("OPENAI_API_KEY")
    expect(optimize).not.toContain("A user-defined piece of text")
    // one screen of a tall terminal; the several-components pointer took it from 79 to 81 lines
    expect(optimize.split("\n").length).toBeLessThan(85)
    const resume = help["resume"]!
    expect(resume).toContain("Settings that may change on resume: maxMetricCalls, maxIterations, timeout, scoreThreshold,")
    expect(resume).toContain("--task-base-url URL")
    // OptimizeAnything's command, with its own flags' descriptions
    expect(help["anything"]).toMatch(/--evaluator \w+ +module exporting evaluate/)
    expect(help["anything"]).not.toContain("A user-defined piece of text")
    // (a CLI process per case: over a minute when the suite's other worker is busy with children of its own)
  }, 180_000)

  it("decodes typed flags with the config file's rules: one line naming the flag, exit 2, nothing written", async () => {
    const dir = tmpDir()
    fs.writeFileSync(path.join(dir, "train.jsonl"), `{"input": "a", "expected": "A"}\n`)
    const base = ["optimize", "--train", "train.jsonl", "--seed-prompt", "Answer.", "--task-model", "t", "--reflection-model", "r", "--run-dir", "run"]
    const cases: ReadonlyArray<[ReadonlyArray<string>, string]> = [
      [["--max-metric-calls", "0"], `--max-metric-calls: expected a positive integer, got 0`],
      [["--max-metric-calls", "many"], `--max-metric-calls: expected an integer, got "many"`],
      [["--max-metric-calls", "10", "--minibatch-size", "2.5"], `--minibatch-size: expected an integer, got "2.5"`],
      [["--max-metric-calls", "10", "--score-threshold", "high"], `--score-threshold: expected a number, got "high"`],
      [["--timeout", "soon"], `--timeout: expected a duration such as "90s", "15m" or "2h", got "soon"`],
      [["--max-metric-calls", "10", "--task-timeout", "0s"], `--task-timeout: expected a duration such as "90s", "15m" or "2h", got "0s"`],
      [["--max-metric-calls", "10", "--pattern", "("], `--pattern: invalid regular expression: Invalid regular expression: /(/: Unterminated group`],
      [["--max-metric-calls", "10", "--merge", "--no-merge"], `--merge and --no-merge: give one of them, not both`],
      [["--max-metric-calls", "10", "--frobnicate"], `unknown flag --frobnicate for gepa optimize`],
      [["--max-metric-calls"], `--max-metric-calls: expected a value (N)`],
      [[], `no budget: set "maxMetricCalls" (--max-metric-calls), "maxIterations" (--max-iterations) or "timeout" (--timeout)`]
    ]
    // light (test/fixtures/repeats.ts): one case of each kind of value, the unknown flag and the missing budget
    const chosen = light ? [cases[0]!, cases[2]!, cases[4]!, cases[8]!, cases[10]!] : cases
    const results = await inBatches(chosen, ([extra]) => gepa(dir, [...base, ...extra], { OPENAI_API_KEY: "" }))
    for (const [i, [extra, message]] of chosen.entries()) {
      expect(results[i]!.stderr, extra.join(" ")).toBe(`gepa: ${message}\n`)
      expect(results[i]!.status).toBe(2)
    }
    const anything = await gepa(dir, ["anything", "--objective", "x", "--reflection-model", "r", "--max-metric-calls", "5"])
    expect(anything.stderr).toBe(`gepa: Invalid configuration "--evaluator": required: the module exporting evaluate(candidate, example)\n`)
    expect(anything.status).toBe(2)
    expect(fs.readdirSync(dir)).toEqual(["train.jsonl"])
    // (a CLI process per case: over a minute when the suite's other worker is busy with children of its own)
  }, 180_000)

  it("loads metric modules in .ts, .mts, .js, .mjs and .cjs whatever the package type", async () => {
    const root = tmpDir()
    const args = (metric: string) => [
      "optimize",
      "--train",
      "train.jsonl",
      "--seed-prompt",
      "x",
      "--task-model",
      "t",
      "--reflection-model",
      "r",
      "--max-metric-calls",
      "5",
      "--metric",
      metric,
      "--run-dir",
      "run"
    ]
    const kinds = {
      none: ["./metric.ts", "./metric.mts", "./metric.js", "./metric.mjs"],
      commonjs: ["./metric.ts", "./metric.js", "./metric.cjs"],
      module: ["./metric.ts"]
    }
    for (const [folder, pkg] of [["none", undefined], ["commonjs", { type: "commonjs" }], ["module", { type: "module" }]] as const) {
      const dir = path.join(root, folder)
      fs.mkdirSync(dir)
      if (pkg !== undefined) fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg))
      fs.writeFileSync(path.join(dir, "train.jsonl"), `{"input": "a", "expected": "A"}\n`)
      fs.writeFileSync(path.join(dir, "helper.ts"), `export const norm = (s: string): string => s.trim().toLowerCase()\n`)
      const ts = (helper: string) =>
        `import { norm } from "${helper}"\n` +
        `export const metric = (example: { expected: unknown }, output: string) => ({ score: norm(output) === norm(String(example.expected)) ? 1 : 0 })\n`
      fs.writeFileSync(path.join(dir, "metric.ts"), ts("./helper.js"))
      fs.writeFileSync(path.join(dir, "metric.mts"), ts("./helper.ts"))
      fs.writeFileSync(path.join(dir, "metric.mjs"), `export default (example, output) => (output === example.expected ? 1 : 0)\n`)
      fs.writeFileSync(path.join(dir, "metric.cjs"), `exports.metric = (example, output) => (output === example.expected ? 1 : 0)\n`)
      fs.writeFileSync(
        path.join(dir, "metric.js"),
        folder === "commonjs"
          ? `exports.metric = (example, output) => (output === example.expected ? 1 : 0)\n`
          : `export const metric = (example, output) => (output === example.expected ? 1 : 0)\n`
      )
      fs.writeFileSync(path.join(dir, "broken.ts"), `export const metric = (: number) => 1\n`)
      fs.writeFileSync(path.join(dir, "nothing.mjs"), `export const value = 1\n`)
      // the metric loads before the models: a loaded metric gets as far as the missing key
      const results = await inBatches(kinds[folder], (metric) => gepa(dir, args(metric), { OPENAI_API_KEY: "", OPENAI_BASE_URL: "" }))
      for (const [i, metric] of kinds[folder].entries()) {
        expect(results[i]!.stderr, `${folder}/${metric}`).toMatch(/^gepa: taskModel: OPENAI_API_KEY is not set/)
        expect(results[i]!.status).toBe(2)
      }
      expect(fs.existsSync(path.join(dir, "run"))).toBe(false)
    }
    const dir = path.join(root, "commonjs")
    const broken = await gepa(dir, args("./broken.ts"), { OPENAI_API_KEY: "" })
    expect(broken.stderr).toMatch(new RegExp(`^gepa: ${path.join(dir, "broken.ts").replace(/[.\\/]/g, "\\$&")}: cannot load the metric module: .+\\n$`))
    const nothing = await gepa(dir, args("./nothing.mjs"), { OPENAI_API_KEY: "" })
    expect(nothing.stderr).toContain(`nothing.mjs: the module must export a function named "metric"`)
    // (a CLI process per case: over a minute when the suite's other worker is busy with children of its own)
  }, 180_000)

  it("exits 2 with one message naming the missing file, and writes nothing", async () => {
    const dir = tmpDir()
    const r = await gepa(dir, [
      "optimize",
      "--train",
      "missing.jsonl",
      "--seed-prompt",
      "Answer.",
      "--task-model",
      "t",
      "--reflection-model",
      "r",
      "--max-metric-calls",
      "10",
      "--run-dir",
      "run"
    ], { OPENAI_API_KEY: "" })
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toBe(`gepa: ${path.join(fs.realpathSync(dir), "missing.jsonl")}: file not found`)
    expect(fs.readdirSync(dir)).toEqual([])
  })

  it("exits 2 on a bad line of the config's data file", async () => {
    const dir = tmpDir()
    fs.writeFileSync(path.join(dir, "train.jsonl"), `{"input": "a", "expected": "b"}\n{"input": "a" "expected": "b"}\n`)
    fs.writeFileSync(
      path.join(dir, "gepa.json"),
      JSON.stringify({
        train: "train.jsonl",
        seedPrompt: "Answer.",
        taskModel: "t",
        reflectionModel: "r",
        maxMetricCalls: 10
      })
    )
    const r = await gepa(dir, ["optimize", "--config", "gepa.json"])
    expect(r.status).toBe(2)
    expect(r.stderr).toContain(`train.jsonl:2: invalid JSON on line 2`)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(fs.readdirSync(dir).sort()).toEqual(["gepa.json", "train.jsonl"])
  })
})

// Spawns the CLI without blocking the event loop (the fake server runs in
// this process); `onOutput` sees stdout as it arrives.
const spawnCli = (cwd: string, args: ReadonlyArray<string>, onOutput?: (soFar: string, kill: () => void) => void) =>
  Effect.async<{ readonly code: number | null; readonly out: string; readonly err: string }>((resume) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, OPENAI_API_KEY: "test-key" } })
    let out = ""
    let err = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      onOutput?.(out, () => child.kill("SIGINT"))
    })
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString()
    })
    child.on("close", (code) => resume(Effect.succeed({ code, out, err })))
  })

describe("gepa optimize against an OpenAI-compatible server", () => {
  beforeAll(ensureBuilt, 180_000)

  it.scoped("runs over HTTP with a TypeScript metric in a CommonJS package, stops on Ctrl-C, resumes on another server", () =>
    Effect.gen(function*() {
      const respond = (request: FakeOpenAi.RecordedRequest) => {
        const body = request.body as { messages: ReadonlyArray<{ role: string; content: string }> }
        const system = body.messages.find((m) => m.role === "system")?.content
        const user = body.messages[body.messages.length - 1]!.content
        // the reflection prompt comes as one user message; task calls have a system prompt
        if (system === undefined) return FakeOpenAi.ok("```\nRepeat the text in uppercase.\n```", { delayMillis: 20 })
        return FakeOpenAi.ok(/uppercase/i.test(system) ? user.toUpperCase() : user, { delayMillis: 20 })
      }
      const server = yield* FakeOpenAi.make
      server.setFallback(respond)
      const dir = tmpDir()
      const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
      fs.writeFileSync(path.join(dir, "data.jsonl"), words.map((w) => JSON.stringify({ input: w, expected: w.toUpperCase() })).join("\n"))
      // validation examples of their own: what the resumed run learns about the training
      // examples is not known from validations (it would skip known-perfect minibatches for free)
      fs.writeFileSync(
        path.join(dir, "val.jsonl"),
        ["iota", "kappa", "lambda", "mu"].map((w) => JSON.stringify({ input: w, expected: w.toUpperCase() })).join("\n")
      )
      // docs/cli.md's metric.ts, in a folder whose package is CommonJS
      fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "commonjs" }))
      fs.writeFileSync(path.join(dir, "compare.ts"), `export const same = (a: string, b: string): boolean => a === b\n`)
      fs.writeFileSync(
        path.join(dir, "metric.ts"),
        `import { same } from "./compare"\n` +
          `export const metric = (example: { expected: unknown }, output: string) =>\n` +
          `  same(output, String(example.expected)) ? { score: 1 } : { score: 0, feedback: \`expected \${String(example.expected)}\` }\n`
      )
      const args = [
        "optimize",
        "--train",
        "data.jsonl",
        "--validation",
        "val.jsonl",
        "--seed-prompt",
        "Repeat the text.",
        "--metric",
        "./metric.ts",
        "--task-model",
        "fake-task",
        "--task-base-url",
        server.baseURL,
        "--reflection-model",
        "fake-reflection",
        "--reflection-base-url",
        server.baseURL,
        "--max-metric-calls",
        "60",
        "--minibatch-size",
        "2",
        "--max-concurrency",
        "2",
        "--run-dir",
        "run"
      ]
      let sent = false
      const first = yield* spawnCli(dir, args, (soFar, kill) => {
        if (!sent && soFar.includes("seed candidate")) {
          sent = true
          kill()
        }
      })
      expect(first.err).toContain("stopping after the current iteration")
      expect(first.code).toBe(0)
      expect(first.out).toContain("Stopped")
      expect(first.out).toContain("Resume with")
      const stopped = JSON.parse(fs.readFileSync(path.join(dir, "run", "result.json"), "utf8")) as { totalMetricCalls: number }
      expect(stopped.totalMetricCalls).toBeLessThan(60)

      // the models moved: resume takes the new server and request timeout without a conflict
      const moved = yield* FakeOpenAi.make
      moved.setFallback(respond)
      const before = server.requests.length
      const resumed = yield* spawnCli(dir, [
        "resume",
        "run",
        "--task-base-url",
        moved.baseURL,
        "--reflection-base-url",
        moved.baseURL,
        "--task-timeout",
        "30s",
        // the first run may have found the perfect prompt before it stopped: go on regardless
        "--no-stop-at-perfect"
      ])
      expect(resumed.err).toBe("")
      expect(resumed.code).toBe(0)
      expect(resumed.out).toContain("Resuming")
      expect(server.requests.length).toBe(before)
      expect(moved.requests.length).toBeGreaterThan(0)
      const saved = JSON.parse(fs.readFileSync(path.join(dir, "run", "config.json"), "utf8")) as {
        taskModel: { baseUrl: string; timeout: string }
        reflectionModel: { baseUrl: string; timeout?: string }
      }
      expect(saved.taskModel).toMatchObject({ baseUrl: moved.baseURL, timeout: "30s" })
      expect(saved.reflectionModel.baseUrl).toBe(moved.baseURL)
      expect(saved.reflectionModel.timeout).toBeUndefined()
      const result = JSON.parse(fs.readFileSync(path.join(dir, "run", "result.json"), "utf8")) as { bestScore: number; seedScore: number }
      expect(result.seedScore).toBe(0)
      expect(result.bestScore).toBe(1)
      const auth = [...server.requests, ...moved.requests].map((r) => r.headers["authorization"])
      expect(auth.every((a) => a === "Bearer test-key")).toBe(true)
      // the key reached the server, and nowhere else: not the output, not a file of the run directory
      for (const text of [first.out, first.err, resumed.out, resumed.err]) expect(text).not.toContain("test-key")
      for (const name of fs.readdirSync(path.join(dir, "run"))) {
        const file = path.join(dir, "run", name)
        if (fs.statSync(file).isFile()) expect(fs.readFileSync(file, "utf8"), name).not.toContain("test-key")
      }
    }))
})

describe("gepa with model strings, log levels and the runner command", () => {
  beforeAll(ensureBuilt, 180_000)

  it("the CLI's default component is the DefaultAdapter's", async () => {
    const { defaults } = await import("../src/cli/constants.js")
    const DefaultAdapter = await import("../src/DefaultAdapter.js")
    expect(defaults.component).toBe(DefaultAdapter.defaultComponent)
  })

  it.scoped("runs on openai-compatible:URL#model strings; --log-level debug shows each iteration, the default none", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      server.setFallback((request) => {
        const body = request.body as { messages: ReadonlyArray<{ role: string; content: string }> }
        const system = body.messages.find((m) => m.role === "system")?.content
        const user = body.messages[body.messages.length - 1]!.content
        if (system === undefined) return FakeOpenAi.ok("```\nRepeat the text in uppercase.\n```")
        return FakeOpenAi.ok(/uppercase/i.test(system) ? user.toUpperCase() : user)
      })
      const dir = tmpDir()
      const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
      fs.writeFileSync(path.join(dir, "data.jsonl"), words.map((w) => JSON.stringify({ input: w, expected: w.toUpperCase() })).join("\n"))
      // validation examples of their own: what the resumed run learns about the training
      // examples is not known from validations (it would skip known-perfect minibatches for free)
      fs.writeFileSync(
        path.join(dir, "val.jsonl"),
        ["iota", "kappa", "lambda", "mu"].map((w) => JSON.stringify({ input: w, expected: w.toUpperCase() })).join("\n")
      )
      const args = (runDir: string) => [
        "optimize",
        "--train",
        "data.jsonl",
        "--seed-prompt",
        "Repeat the text.",
        "--task-model",
        `openai-compatible:${server.baseURL}#served-task`,
        "--reflection-model",
        `openai-compatible:${server.baseURL}#served-reflection`,
        "--max-metric-calls",
        "30",
        "--minibatch-size",
        "2",
        "--max-concurrency",
        "2",
        "--run-dir",
        runDir
      ]
      const quiet = yield* spawnCli(dir, args("quiet"))
      expect(quiet.err).toBe("")
      expect(quiet.code).toBe(0)
      expect(quiet.out).toContain("Done")
      const models = new Set(server.requests.map((r) => (r.body as { model: string }).model))
      expect([...models].sort()).toEqual(["served-reflection", "served-task"])

      const debug = yield* spawnCli(dir, [...args("debug"), "--log-level", "debug"])
      expect(debug.code).toBe(0)
      const lines = debug.err.trim().split("\n")
      // every line is a log line; the summaries at info, the details at debug
      expect(lines.every((l) => /^gepa \[(debug|info|warning)\] /.test(l))).toBe(true)
      expect(lines).toContain("gepa [debug] iteration 1 started (6 metric calls so far)")
      expect(lines.some((l) => /^gepa \[info\] iteration 1: \d+ accepted, \d+ candidates, best score/.test(l))).toBe(true)
      expect(lines.some((l) => l.startsWith("gepa [info] optimization ended after"))).toBe(true)
      // the results stay on stdout, as without logs
      expect(debug.out).toContain("Done")

      const info = yield* spawnCli(dir, [...args("info"), "--log-level", "info"])
      expect(info.code).toBe(0)
      expect(info.err).toMatch(/^gepa \[info\] iteration 1: /m)
      expect(info.err).not.toContain("[debug]")
    }))

  it("an unknown provider, or a provider without its key, is one line and exit 2, nothing written", async () => {
    const dir = tmpDir()
    fs.writeFileSync(path.join(dir, "train.jsonl"), `{"input": "a", "expected": "A"}\n`)
    const run = (model: string, env: Readonly<Record<string, string>>) =>
      gepa(dir, [
        "optimize",
        "--train",
        "train.jsonl",
        "--seed-prompt",
        "Answer.",
        "--task-model",
        model,
        "--reflection-model",
        "openai:gpt-4.1-mini",
        "--max-metric-calls",
        "10",
        "--run-dir",
        "run"
      ], { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "", ANTHROPIC_API_KEY: "", ...env })
    const unknown = await run("mistral:large", {})
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toBe(
      `gepa: taskModel: unknown provider "mistral" in "mistral:large" (providers: openai, openai-compatible, anthropic, google); ` +
        `a model of a local server named with a colon needs its base URL\n`
    )
    const noKey = await run("anthropic:claude-sonnet-4-5", {})
    expect(noKey.status).toBe(2)
    expect(noKey.stderr).toBe(`gepa: taskModel: ANTHROPIC_API_KEY is not set: anthropic:claude-sonnet-4-5 needs an API key\n`)
    const loud = await gepa(dir, ["optimize", "--train", "train.jsonl", "--log-level", "loud"])
    expect(loud.status).toBe(2)
    expect(loud.stderr).toBe(`gepa: --log-level: expected one of all, trace, debug, info, warning, error, fatal, none, got "loud"\n`)
    expect(fs.readdirSync(dir)).toEqual(["train.jsonl"])
  })

  it("gepa runner: listed in the help, its own help, one line and exit 2 for a bad flag", async () => {
    const top = await gepa(root, ["--help"])
    expect(top.stdout).toMatch(/^ {2}runner +serve cluster evaluations/m)
    const help = await gepa(root, ["runner", "--help"])
    expect(help.status).toBe(0)
    expect(help.stderr).toBe("")
    expect(help.stdout).toMatch(/^Usage: gepa runner --module FILE/)
    expect(help.stdout).toMatch(/--module \w+ +\(required\) module exporting ClusterEvaluation.define/)
    expect(help.stdout).toMatch(/--storage FILE\|URL +SQLite file or postgres:\/\/ URL/)
    expect(help.stdout).not.toContain("A user-defined piece of text")
    for (const line of help.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100)

    const dir = tmpDir()
    const unknown = await gepa(dir, ["runner", "--module", "evaluation.ts", "--bogus"])
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toBe("gepa: unknown flag --bogus\n")
    const badPort = await gepa(dir, ["runner", "--module", "evaluation.ts", "--port", "many"])
    expect(badPort.status).toBe(2)
    expect(badPort.stderr.trim().split("\n")).toHaveLength(1)
    expect(badPort.stderr).toMatch(/^gepa: .*--port.*many/)
    expect(fs.readdirSync(dir)).toEqual([])
  })
})

describe("a run of several components", () => {
  // A small agent: the planner (with the tool's description) rewrites the
  // request, the responder answers from the plan. The simulated task model
  // follows its system prompt: "uppercase" upper-cases, "exclaim" ends the
  // text with "!"; the expected answer needs both.
  const taskModel = LanguageModel.fromFunction((prompt) => {
    const messages = LanguageModel.messages(prompt)
    const system = messages.find((m) => m.role === "system")?.content ?? ""
    let text = messages[messages.length - 1]!.content
    if (/uppercase/i.test(system)) text = text.toUpperCase()
    if (/exclaim/i.test(system) && !text.endsWith("!")) text = `${text}!`
    return text
  })
  // the reflection model rewrites whichever seed text it is shown
  const rewrites: ReadonlyArray<readonly [string, string]> = [
    ["Copy the request.", "Copy the request in uppercase."],
    ["Return the plan.", "Return the plan and exclaim."],
    ["A tool that copies text.", "A tool that copies text."]
  ]
  const reflectionModel = LanguageModel.fromFunction((prompt) => {
    const text = LanguageModel.promptText(prompt)
    const hit = rewrites.find(([from]) => text.includes(`${from}\n`) || text.includes(`${from}\``) || text.endsWith(from))
    return `\`\`\`\n${hit?.[1] ?? "Copy the request."}\n\`\`\``
  })
  const io = (cwd: string) => {
    const out: Array<string> = []
    const err: Array<string> = []
    const env: Cli.Environment = {
      cwd,
      stdout: (text) => out.push(text),
      stderr: (text) => err.push(text),
      makeModel: (role) => Effect.succeed(role === "task" ? taskModel : reflectionModel)
    }
    return { env, out: () => out.join(""), err: () => err.join("") }
  }
  const cli = (cwd: string, ...args: ReadonlyArray<string>) => {
    const { env, out, err } = io(cwd)
    return Effect.map(Cli.run(["node", "gepa", ...args], env), (code) => ({ code, out: out(), err: err() }))
  }
  const writeAgent = (dir: string) => {
    const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    const line = (w: string) => JSON.stringify({ input: w, expected: `${w.toUpperCase()}!` })
    fs.writeFileSync(path.join(dir, "train.jsonl"), words.map(line).join("\n"))
    fs.writeFileSync(path.join(dir, "val.jsonl"), ["eta", "theta", "iota", "kappa"].map(line).join("\n"))
    fs.writeFileSync(path.join(dir, "tool.txt"), "A tool that copies text.")
    fs.writeFileSync(
      path.join(dir, "agent.ts"),
      `import type { ComponentsMetric } from ${JSON.stringify(path.join(root, "src", "Cli.ts"))}\n` +
        `export const metric: ComponentsMetric = async (example, texts, { generate }) => {\n` +
        `  const names = Object.keys(texts).sort().join(",")\n` +
        `  if (names !== "planner,responder,tool_description") throw new Error("texts: " + names)\n` +
        `  const plan = await generate({ messages: [{ role: "system", content: texts.planner + "\\nTool: " + texts.tool_description }, { role: "user", content: example.input }] })\n` +
        `  const answer = await generate({ messages: [{ role: "system", content: texts.responder }, { role: "user", content: plan }] })\n` +
        `  const expected = String(example.expected)\n` +
        `  const upper = answer.replace(/!$/, "") === expected.replace(/!$/, "")\n` +
        `  const bang = answer.endsWith("!")\n` +
        `  const score = (upper ? 0.5 : 0) + (bang ? 0.5 : 0)\n` +
        `  const missing = [upper ? "" : "the planner must put the request in uppercase", bang ? "" : "the responder must end with an exclamation mark"]\n` +
        `  return { score, output: answer, feedback: score === 1 ? "correct" : missing.filter(Boolean).join("; ") }\n` +
        `}\n`
    )
    fs.writeFileSync(
      path.join(dir, "gepa.json"),
      JSON.stringify({
        train: "train.jsonl",
        validation: "val.jsonl",
        components: {
          planner: "Copy the request.",
          responder: "Return the plan.",
          tool_description: { file: "tool.txt" }
        },
        metric: "./agent.ts",
        taskModel: "simulated-task",
        reflectionModel: "simulated-reflection",
        maxMetricCalls: 14,
        runDir: "runs/agent"
      })
    )
  }

  it.effect("optimizes three components with a metric module that receives them all, resumes, and shows each", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      writeAgent(dir)
      const first = yield* cli(dir, "optimize", "--config", "gepa.json")
      expect(first.err).toBe("")
      expect(first.code).toBe(0)
      for (const name of ["planner", "responder", "tool_description"]) expect(first.out).toContain(`Best ${name}:`)
      const runDir = path.join(dir, "runs", "agent")
      const saved = JSON.parse(fs.readFileSync(path.join(runDir, "config.json"), "utf8")) as Cli.Settings
      expect(saved.components).toEqual({ planner: "Copy the request.", responder: "Return the plan.", tool_description: "A tool that copies text." })
      expect(saved.seedPrompt).toBeUndefined()
      const result1 = JSON.parse(fs.readFileSync(path.join(runDir, "result.json"), "utf8")) as {
        seedScore: number
        bestScore: number
        totalMetricCalls: number
        iterations: number
      }
      expect(result1.seedScore).toBe(0)
      expect(result1.totalMetricCalls).toBeLessThanOrEqual(14)
      expect(result1.bestScore).toBeLessThan(1)

      // a different seed text of one component is a different run
      const config = JSON.parse(fs.readFileSync(path.join(dir, "gepa.json"), "utf8")) as { components: Record<string, unknown> }
      fs.writeFileSync(
        path.join(dir, "other.json"),
        JSON.stringify({ ...config, components: { ...config.components, responder: "Answer." } })
      )
      const changed = yield* cli(dir, "optimize", "--config", "other.json", "--resume")
      expect(changed.code).toBe(2)
      expect(changed.err).toBe(
        `gepa: cannot resume ${runDir}: "components" differs from the saved run ` +
          `(saved: components planner, responder, tool_description; now: components planner, responder, tool_description, with other texts); use another --run-dir\n`
      )

      const resumed = yield* cli(dir, "resume", "runs/agent", "--max-metric-calls", "200")
      expect(resumed.err).toBe("")
      expect(resumed.code).toBe(0)
      expect(resumed.out).toContain("Resuming")
      const result2 = JSON.parse(fs.readFileSync(path.join(runDir, "result.json"), "utf8")) as {
        bestScore: number
        totalMetricCalls: number
        bestCandidate: Record<string, string>
      }
      expect(result2.totalMetricCalls).toBeGreaterThan(result1.totalMetricCalls)
      // the planner and the responder both had to change
      expect(result2.bestScore).toBe(1)
      expect(result2.bestCandidate).toMatchObject({
        planner: "Copy the request in uppercase.",
        responder: "Return the plan and exclaim.",
        tool_description: "A tool that copies text."
      })

      const shown = yield* cli(dir, "show", "runs/agent")
      expect(shown.code).toBe(0)
      for (const [name, text] of Object.entries(result2.bestCandidate)) expect(shown.out).toContain(`--- ${name} ---\n${text}`)
    }))

  it.effect("refuses a components config that also names one prompt, or scores with a built-in metric", () =>
    Effect.gen(function*() {
      const base = { train: "t.jsonl", components: { a: "x", b: "y" }, taskModel: { model: "m" }, reflectionModel: { model: "r" }, maxIterations: 1 }
      const settings = (file: Cli.Input, flags: Cli.Input = {}) => Cli.resolveSettings(file, flags, { cwd: "/tmp" })
      expect(yield* failureOf(settings({ ...base, metric: "./m.ts", seedPrompt: "z" }))).toBe(
        `"seedPrompt": a run of "components" takes each seed text from "components"; give one prompt or several components, not both`
      )
      expect(yield* failureOf(settings({ ...base, metric: "./m.ts" }, { component: "c" }))).toContain(`--component: a run of "components"`)
      expect(yield* failureOf(settings({ ...base, metric: "exact" }))).toContain(`"metric": "exact" is a built-in: a run of "components" needs a metric module`)
      expect(yield* failureOf(settings(base))).toContain(`missing setting "metric"`)
      expect(yield* failureOf(settings({ ...base, metric: "./m.ts", components: {} }))).toBe(`"components": name at least one component with its seed text`)
      const ok = yield* settings({ ...base, metric: "./m.ts", merge: true })
      expect(ok.components).toEqual({ a: "x", b: "y" })
      expect(ok.merge).toBe(true)
    }))
})
