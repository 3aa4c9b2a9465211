import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Option } from "effect"
import fc from "fast-check"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Task from "../examples/demo/task.js"
import * as Cli from "../src/Cli.js"
import * as FakeOpenAi from "./fixtures/openaiServer.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"

const root = path.resolve(__dirname, "..")
const bin = path.join(root, "bin", "gepa.js")

const tmpDir = () => makeTmpDir("gepa-cli-")

const messageOf = <A>(either: Either.Either<A, Cli.CliInputError>): string => {
  if (Either.isRight(either)) throw new Error("expected an input error")
  return either.left.message
}

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
    makeModel: (role) =>
      Effect.succeed(role === "task" ? Task.makeTaskModel(0) : Task.makeReflectionModel(0))
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

  it("reports a missing file by name", () => {
    const file = path.join(tmpDir(), "nope.jsonl")
    expect(messageOf(Cli.loadExamples(file, { inputField: "input", expectedField: "expected", expectedRequired: true })))
      .toBe(`${file}: file not found`)
  })
})

describe("settings", () => {
  const base = { train: "/data/train.jsonl", seedPrompt: "Answer.", taskModel: { model: "m" }, reflectionModel: { model: "r" }, maxMetricCalls: 100 }

  it("rejects an unknown metric, naming the choices", () => {
    const message = messageOf(Cli.resolveSettings({ ...base, metric: "fuzzy" }, {}, { cwd: "/" }))
    expect(message).toContain(`unknown metric "fuzzy"`)
    expect(message).toContain("exact, contains, regex, json-field")
  })

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

  it("resolves paths against the config file, lets flags win, and needs a budget", () => {
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
    const flags: Cli.Input = { maxMetricCalls: 50, taskModel: { model: "m2" }, merge: true }
    const s = Either.getOrThrow(Cli.resolveSettings(file, flags, { cwd: "/cwd", now: new Date("2026-01-02T03:04:05Z") }))
    expect(s.train).toBe("/proj/data/train.jsonl")
    expect(s.metric).toBe("/proj/m.ts")
    expect(s.maxMetricCalls).toBe(50)
    expect(s.timeout).toEqual(Duration.minutes(15))
    // a model name from a flag keeps the file's other model fields
    expect(s.taskModel).toEqual({ model: "m2", baseUrl: "http://t/v1", temperature: 0.2 })
    expect(s.reflectionModel).toEqual({ model: "r", baseUrl: "http://x/v1" })
    expect(s.merge).toBe(true)
    expect(s.runDir).toBe("/cwd/.gepa-runs/run-2026-01-02T03-04-05Z")
    const { maxMetricCalls: _, ...noBudget } = base
    expect(messageOf(Cli.resolveSettings(noBudget, {}, { cwd: "/" }))).toMatch(/^no budget/)
    const { seedPrompt: _s, ...noSeed } = base
    expect(messageOf(Cli.resolveSettings(noSeed, {}, { cwd: "/" }))).toContain(`"seedPrompt"`)
    const { taskModel: _t, ...noTask } = base
    expect(messageOf(Cli.resolveSettings(noTask, {}, { cwd: "/" }))).toContain(`"taskModel"`)
    expect(messageOf(Cli.resolveSettings(noTask, { taskModel: { baseUrl: "http://t" } }, { cwd: "/" })))
      .toContain(`--task-model`)
  })

  it("saves settings as config.json and reads them back", () => {
    const s = Either.getOrThrow(Cli.resolveSettings(
      { ...base, timeout: Duration.seconds(90), taskModel: { model: "m", timeout: Duration.millis(1500) } },
      {},
      { cwd: "/cwd" }
    ))
    const text = Cli.settingsJson(s)
    expect(JSON.parse(text)).toMatchObject({ timeout: "90s", taskModel: { model: "m", timeout: "1500ms" } })
    expect(Either.getOrThrow(Cli.parseSettingsJson(text, "config.json"))).toEqual(s)
    expect(messageOf(Cli.parseSettingsJson(`{"train": "x"}`, "/r/config.json"))).toMatch(/^\/r\/config\.json: missing field "/)
  })

  it("reads durations back as they were written", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 ** 9 }), (millis) => {
      const d = Duration.millis(millis)
      expect(Duration.toMillis(Cli.parseDuration(Cli.formatDuration(d))!)).toBe(millis)
    }))
    expect(Cli.parseDuration("2h")).toEqual(Duration.hours(2))
    expect(Cli.parseDuration(0)).toBeUndefined()
    expect(Cli.parseDuration("soon")).toBeUndefined()
  })

  it("lets budget, concurrency and where the models run change on resume, and nothing else", () => {
    const saved = Either.getOrThrow(Cli.resolveSettings(base, {}, { cwd: "/cwd", now: new Date(0) }))
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
      [{ taskModel: { model: "m", temperature: 1 } }, `"taskModel.temperature" differs`]
    ]
    for (const [change, message] of refused) {
      expect(Option.getOrThrow(Cli.resumeConflict(saved, { ...saved, ...change }))).toContain(message)
    }
  })
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
      const badMetric = yield* runCli(dir, "optimize", "--train", "train.jsonl", ...common, "--max-metric-calls", "50", "--metric", "fuzzy", "--run-dir", "out2")
      expect(badMetric.code).toBe(2)
      expect(badMetric.err).toContain(`unknown metric "fuzzy"`)
      const badNumber = yield* runCli(dir, "optimize", "--train", "train.jsonl", ...common, "--max-metric-calls", "many", "--run-dir", "out3")
      expect(badNumber.code).toBe(2)
      expect(badNumber.err).toBe(`gepa: --max-metric-calls: expected an integer, got "many"\n`)
      // the engine's own check (the budget cannot score the seed on the validation set) comes before any write
      const smallBudget = yield* runCli(dir, "optimize", "--train", "train.jsonl", "--validation", "val.jsonl", ...common, "--max-metric-calls", "3", "--run-dir", "out4")
      expect(smallBudget.code).toBe(2)
      expect(smallBudget.err).toContain("maxMetricCalls")
      expect(smallBudget.err.trim().split("\n")).toHaveLength(1)
      for (const out of ["out1", "out2", "out3", "out4", ".gepa-runs"]) expect(fs.existsSync(path.join(dir, out))).toBe(false)
    }))

  it.effect("optimizes, then shows, reports and resumes the run", () =>
    Effect.gen(function*() {
      const dir = tmpDir()
      writeTickets(dir)
      fs.writeFileSync(path.join(dir, "gepa.json"), JSON.stringify({
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
        merge: true,
        runDir: "runs/one"
      }, null, 2))
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
      const result1 = JSON.parse(fs.readFileSync(path.join(runDir, "result.json"), "utf8")) as { bestScore: number; seedScore: number; totalMetricCalls: number }
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

describe("bin/gepa.js", () => {
  it("prints help and exits 0", () => {
    const r = spawnSync(process.execPath, [bin, "--help"], { cwd: root, encoding: "utf8" })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("optimize")
  })

  it("exits 2 with one message naming the missing file, and writes nothing", () => {
    const dir = tmpDir()
    const r = spawnSync(process.execPath, [
      bin, "optimize", "--train", "missing.jsonl", "--seed-prompt", "Answer.", "--task-model", "t",
      "--reflection-model", "r", "--max-metric-calls", "10", "--run-dir", "run"
    ], { cwd: dir, encoding: "utf8", env: { ...process.env, OPENAI_API_KEY: "" } })
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toBe(`gepa: ${path.join(fs.realpathSync(dir), "missing.jsonl")}: file not found`)
    expect(fs.readdirSync(dir)).toEqual([])
  })

  it("exits 2 on a bad line of the config's data file", () => {
    const dir = tmpDir()
    fs.writeFileSync(path.join(dir, "train.jsonl"), `{"input": "a", "expected": "b"}\n{"input": "a" "expected": "b"}\n`)
    fs.writeFileSync(path.join(dir, "gepa.json"), JSON.stringify({
      train: "train.jsonl", seedPrompt: "Answer.", taskModel: "t", reflectionModel: "r", maxMetricCalls: 10
    }))
    const r = spawnSync(process.execPath, [bin, "optimize", "--config", "gepa.json"], { cwd: dir, encoding: "utf8" })
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
  it.scoped("runs over HTTP, stops gracefully on Ctrl-C, and resumes", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      server.setFallback((request) => {
        const body = request.body as { messages: ReadonlyArray<{ role: string; content: string }> }
        const system = body.messages.find((m) => m.role === "system")?.content
        const user = body.messages[body.messages.length - 1]!.content
        // the reflection prompt comes as one user message; task calls have a system prompt
        if (system === undefined) return FakeOpenAi.ok("```\nRepeat the text in uppercase.\n```", { delayMillis: 20 })
        return FakeOpenAi.ok(/uppercase/i.test(system) ? user.toUpperCase() : user, { delayMillis: 20 })
      })
      const dir = tmpDir()
      const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
      fs.writeFileSync(path.join(dir, "data.jsonl"), words.map((w) => JSON.stringify({ input: w, expected: w.toUpperCase() })).join("\n"))
      const args = [
        "optimize", "--train", "data.jsonl", "--seed-prompt", "Repeat the text.",
        "--task-model", "fake-task", "--task-base-url", server.baseURL,
        "--reflection-model", "fake-reflection", "--reflection-base-url", server.baseURL,
        "--max-metric-calls", "60", "--minibatch-size", "2", "--max-concurrency", "2", "--run-dir", "run"
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

      const resumed = yield* spawnCli(dir, ["resume", "run"])
      expect(resumed.err).toBe("")
      expect(resumed.code).toBe(0)
      expect(resumed.out).toContain("Resuming")
      const result = JSON.parse(fs.readFileSync(path.join(dir, "run", "result.json"), "utf8")) as { bestScore: number; seedScore: number }
      expect(result.seedScore).toBe(0)
      expect(result.bestScore).toBe(1)
      const auth = server.requests.map((r) => r.headers["authorization"])
      expect(auth.every((a) => a === "Bearer test-key")).toBe(true)
      // the key reached the server, and nowhere else: not the output, not a file of the run directory
      for (const text of [first.out, first.err, resumed.out, resumed.err]) expect(text).not.toContain("test-key")
      for (const name of fs.readdirSync(path.join(dir, "run"))) {
        const file = path.join(dir, "run", name)
        if (fs.statSync(file).isFile()) expect(fs.readFileSync(file, "utf8"), name).not.toContain("test-key")
      }
    }))
})
