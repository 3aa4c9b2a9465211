import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { ensureBuilt, gepa } from "../fixtures/bin.js"
import * as FakeOpenAi from "../fixtures/openaiServer.js"
import { tmpDir } from "../fixtures/tmp.js"

// a port nobody listens on: bound, then closed
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const uppercase = (request: FakeOpenAi.RecordedRequest, delayMillis: number) => {
  const body = request.body as { messages: ReadonlyArray<{ role: string; content: string }> }
  const system = body.messages.find((m) => m.role === "system")?.content
  const user = body.messages[body.messages.length - 1]!.content
  if (system === undefined) return FakeOpenAi.ok("```\nRepeat the text in uppercase.\n```", { delayMillis })
  return FakeOpenAi.ok(/uppercase/i.test(system) ? user.toUpperCase() : user, { delayMillis })
}

const writeData = (dir: string, n: number) =>
  fs.writeFileSync(
    path.join(dir, "data.jsonl"),
    Array.from({ length: n }, (_, i) => JSON.stringify({ input: `w${i}`, expected: `W${i}` })).join("\n")
  )

const args = (url: string, extra: ReadonlyArray<string> = []) => [
  "optimize",
  "--train",
  "data.jsonl",
  "--seed-prompt",
  "Repeat the text.",
  "--task-model",
  `openai-compatible:${url}#task`,
  "--reflection-model",
  `openai-compatible:${url}#reflection`,
  "--max-metric-calls",
  "300",
  "--run-dir",
  "run",
  ...extra
]

describe("connection failures", () => {
  beforeAll(ensureBuilt, 180_000)

  it.live(
    "a refused connection: a retry line naming the URL and cause within 1 s, one failure line within 5 s, nothing that blocks a re-run",
    () =>
      Effect.gen(function*() {
        const dir = tmpDir("gepa-net-")
        writeData(dir, 6)
        const port = yield* Effect.promise(closedPort)
        const url = `http://127.0.0.1:${port}/v1`
        let started: number | undefined
        let firstRetry: number | undefined
        const r = yield* Effect.promise(() =>
          gepa(dir, args(url), {
            env: { OPENAI_API_KEY: "unused" },
            onOutput: ({ millis, stderr, stdout }) => {
              if (started === undefined && stdout.includes("Starting")) started = millis
              if (firstRetry === undefined && stderr.includes("retrying model call")) firstRetry = millis
            }
          })
        )
        expect(r.status).toBe(1)
        const lines = r.stderr.trim().split("\n")
        const retries = lines.filter((l) => l.includes("retrying model call"))
        expect(retries.length).toBeGreaterThan(0)
        expect(retries[0]).toContain(url)
        expect(retries[0]).toContain("ECONNREFUSED")
        expect(started).toBeDefined()
        expect(firstRetry! - started!).toBeLessThan(1000)
        // one failure line, within 5 s of the run's start
        const failures = lines.filter((l) => !l.includes("retrying model call"))
        expect(failures).toEqual([
          `gepa: the task model "task" at 127.0.0.1:${port} is unreachable: connection refused ` +
          `(nothing was scored and nothing kept: run the same command again once fixed)`
        ])
        expect(r.millis - started!).toBeLessThan(5000)
        expect(fs.existsSync(path.join(dir, "run"))).toBe(false)

        // the same command on a live server runs
        const server = yield* FakeOpenAi.make
        server.setFallback((request) => uppercase(request, 5))
        const again = yield* Effect.promise(() => gepa(dir, args(server.baseURL), { env: { OPENAI_API_KEY: "unused" } }))
        expect(again.stderr).toBe("")
        expect(again.status).toBe(0)
        expect(again.stdout).toContain("Done: the validation score is perfect")
      }).pipe(Effect.scoped),
    60_000
  )
})

describe("--max-concurrency", () => {
  beforeAll(ensureBuilt, 180_000)

  for (const n of [4, 32]) {
    it.live(`bounds the requests in flight end to end, at ${n} (the model layer's own default is 16)`, () =>
      Effect.gen(function*() {
        const dir = tmpDir("gepa-conc-")
        writeData(dir, 64)
        const server = yield* FakeOpenAi.make
        server.setFallback((request) => uppercase(request, 60))
        const r = yield* Effect.promise(() =>
          gepa(dir, args(server.baseURL, ["--max-concurrency", String(n), "--quiet"]), { env: { OPENAI_API_KEY: "unused" } })
        )
        expect(r.stderr).toBe("")
        expect(r.status).toBe(0)
        // the seed's validation of 64 examples fills every slot, and never more
        expect(server.maxInFlight).toBe(n)
      }).pipe(Effect.scoped), 60_000)
  }
})
