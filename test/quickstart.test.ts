/**
 * The README's three quick starts run as written: `examples/quickstart.ts`
 * and `examples/quickstart-anything.ts` (which test/readme.test.ts holds
 * equal to the README's blocks), and the `gepa` command's block, lines and
 * all, against a local OpenAI-compatible server standing in for both models
 * (`OPENAI_BASE_URL`). The task model routes a ticket only once its system
 * prompt names the queues; the reflection model writes such a prompt (or the
 * anchored pattern) when asked. The block's `gepa watch` line, which serves
 * until Ctrl-C, is left out. The offline examples the docs name run too,
 * and print the figures the docs quote.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { bin, ensureBuilt, root } from "./fixtures/bin.js"
import * as FakeOpenAi from "./fixtures/openaiServer.js"
import { tmpDir } from "./fixtures/tmp.js"

const queues: Readonly<Record<string, string>> = {
  "charged twice": "billing",
  "VAT number": "billing",
  "arrived broken": "returns",
  "send back shoes": "returns",
  "delete all the data": "privacy",
  "copy of my personal data": "privacy",
  "discount for 50 seats": "sales",
  "enterprise plan": "sales"
}
const routingPrompt = "Answer with one word, the ticket's queue: billing, returns, privacy or sales."
const versionPattern = "^\\d+\\.\\d+\\.\\d+(-[0-9A-Za-z.]+)?$"

interface Body {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
}

/** The two models: `gpt-4.1-mini` does the task, `gpt-4.1` reflects. */
const respond = (request: FakeOpenAi.RecordedRequest): FakeOpenAi.ScriptedResponse => {
  const body = request.body as Body
  const text = body.messages.map((m) => m.content).join("\n")
  if (body.model === "gpt-4.1") {
    return FakeOpenAi.ok(`\`\`\`\n${/semantic version/.test(text) ? versionPattern : routingPrompt}\n\`\`\``)
  }
  const system = body.messages.find((m) => m.role === "system")?.content ?? ""
  const ticket = body.messages.at(-1)?.content ?? ""
  const queue = Object.entries(queues).find(([words]) => ticket.includes(words))?.[1]
  return FakeOpenAi.ok(/billing, returns/.test(system) && queue !== undefined ? queue : "Thank you, we will look into it.")
}

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: Readonly<Record<string, string>>) =>
  Effect.async<Run>((resume) => {
    // stdin closed: a shell whose stdin is a socket (Node's pipes are socket pairs) may read
    // the system's bashrc, which fails under `set -u` where the environment has no SHLVL
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("close", (status) => resume(Effect.succeed({ status, stdout, stderr })))
    return Effect.sync(() => child.kill())
  })

/** The README's block of the `gepa` command, with `npx gepa` the bin of this checkout. */
const cliBlock = (): string => {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  const at = readme.indexOf("## Quick start: the `gepa` command")
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))![1]!
  return block.split("\n")
    .filter((line) => !line.startsWith("npx gepa watch") && !line.startsWith("export OPENAI_API_KEY="))
    .map((line) => line.replace(/^npx gepa /, `node ${JSON.stringify(bin)} `))
    .join("\n")
}

describe("the README's quick starts", () => {
  beforeAll(ensureBuilt, 180_000)

  it.scoped("the library and optimize-anything examples run and find the answer", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      server.setFallback(respond)
      const env = { OPENAI_API_KEY: "sk-quickstart-0123456789", OPENAI_BASE_URL: server.baseURL }
      const [library, anything] = yield* Effect.all([
        run(process.execPath, ["--import", "tsx", "examples/quickstart.ts"], root, env),
        run(process.execPath, ["--import", "tsx", "examples/quickstart-anything.ts"], root, env)
      ], { concurrency: 2 })
      expect(library.stderr).toBe("")
      expect(library.status).toBe(0)
      expect(library.stdout).toBe(`validation score: seed 0 -> best 1\n${routingPrompt}\n`)
      expect(anything.stderr).toBe("")
      expect(anything.status).toBe(0)
      expect(anything.stdout).toBe(`best 1: ${versionPattern}\n`)
      const models = new Set(server.requests.map((r) => (r.body as Body).model))
      expect([...models].sort()).toEqual(["gpt-4.1", "gpt-4.1-mini"])
    }), 180_000)

  it.scoped("the gepa command's block runs line by line, and gepa show reads the run", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      server.setFallback(respond)
      const script = cliBlock()
      expect(script.match(/^node /gm)).toHaveLength(2)
      const dir = tmpDir("gepa-quickstart-")
      const r = yield* run("bash", ["-euo", "pipefail", "-c", script], dir, {
        OPENAI_API_KEY: "sk-quickstart-0123456789",
        OPENAI_BASE_URL: server.baseURL
      })
      expect(r.stderr).toBe("")
      expect(r.status).toBe(0)
      expect(r.stdout).toContain("best 1.000")
      expect(r.stdout.split(routingPrompt).length).toBeGreaterThanOrEqual(3) // the run's best, and gepa show's
      expect(fs.existsSync(path.join(dir, ".gepa-runs", "tickets", "report.html"))).toBe(true)
    }), 180_000)

  it.effect(
    "the offline examples the docs name run, and examples/anything.ts prints the figures docs/optimize-anything.md quotes",
    () =>
      Effect.gen(function*() {
        const [library, tracing, anything] = yield* Effect.all(
          ["examples/library.ts", "examples/tracing.ts", "examples/anything.ts"].map((file) => run(process.execPath, ["--import", "tsx", file], root, {})),
          { concurrency: 2 }
        )
        for (const r of [library!, tracing!, anything!]) expect(r.status, r.stderr).toBe(0)
        expect(library!.stdout).toContain("seed 0 -> best 1: Repeat the user's text in capital letters.")
        expect(tracing!.stdout).toMatch(/^gepa\.metric_calls \{\} \d+$/m)
        expect(tracing!.stdout).toContain("best score 1:")
        const page = fs.readFileSync(path.join(root, "docs", "optimize-anything.md"), "utf8")
        const quoted = /goes from ([\d.]+) to ([\d.]+) on the validation set in (\d+) metric calls \(test set ([\d.]+) to ([\d.]+)/.exec(page)
        expect(quoted).not.toBeNull()
        const [, seed, best, calls, testSeed, testBest] = quoted!
        expect(anything!.stdout).toContain(`validation:    seed ${seed} -> best ${best} `)
        expect(anything!.stdout).toContain(`, ${calls} metric calls)`)
        expect(anything!.stdout).toContain(`test set:      seed ${testSeed} -> best ${testBest} `)
      }),
    180_000
  )
})
