// The AI SDK 7 line (ai 7, @ai-sdk/provider 4, @ai-sdk/openai 4; Node 22+)
// against our structural spec types: type-checked, then run. ROOT is
// replaced by the repository's path when .ci/ai-sdk-7.sh copies this file
// into an app that has the AI SDK 7 packages.
import { createOpenAI } from "@ai-sdk/openai"
import { APICallError, type LanguageModelV4 } from "@ai-sdk/provider"
import { generateText } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect, Exit } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as AiSdkLanguageModel from "ROOT/src/AiSdkLanguageModel.js"
import * as FunctionAdapter from "ROOT/src/FunctionAdapter.js"

const check = (ok: boolean, what: string): void => {
  if (!ok) throw new Error(`ai-sdk-7: ${what}`)
}

// a v4 model object is a model of ours (a type error here fails the script)
export const typed = (m: LanguageModelV4) => AiSdkLanguageModel.make(m)

const usage = {
  inputTokens: { total: 7, noCache: 7, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 3, text: 3, reasoning: undefined }
}
const mock = new MockLanguageModelV4({
  doGenerate: { content: [{ type: "text", text: "hi v4" }], finishReason: { unified: "interrupted", raw: undefined }, usage, warnings: [] }
})

// a chat-completions server: a 429 with Retry-After, then the answer
let requests = 0
const server = Http.createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    requests++
    if (requests === 1) {
      res.writeHead(429, { "content-type": "application/json", "retry-after-ms": "50" })
      res.end(JSON.stringify({ error: { message: "slow down", type: "rate_limit" } }))
      return
    }
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "gpt-v4",
      choices: [{ index: 0, message: { role: "assistant", content: "from openai 4" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 }
    }))
  })
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const { port } = server.address() as AddressInfo
const openai = createOpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "sk-ai-sdk-7-check-0123456789" })

await Effect.runPromise(Effect.gen(function*() {
  const model = yield* AiSdkLanguageModel.make(mock, { price: { inputPerMillion: 1, outputPerMillion: 1 } })
  const a = yield* model.complete({ messages: [{ role: "system", content: "s" }, { role: "user", content: "u" }] })
  check(a.text === "hi v4" && a.finishReason === "other" && a.usage?.inputTokens === 7 && a.cost === 10 / 1_000_000, `mock: ${JSON.stringify(a)}`)
  check(JSON.stringify(mock.doGenerateCalls[0]?.prompt) === JSON.stringify([{ role: "system", content: "s" }, { role: "user", content: [{ type: "text", text: "u" }] }]), "prompt")

  const chat = yield* AiSdkLanguageModel.make(openai.chat("gpt-v4"), { retryBaseDelay: "1 millis" })
  const b = yield* chat.complete("q")
  check(b.text === "from openai 4" && b.usage?.outputTokens === 2 && requests === 2, `@ai-sdk/openai 4: ${JSON.stringify(b)}, ${requests} requests`)

  const adapter = yield* FunctionAdapter.make({
    run: async (q: string, texts, abortSignal) => (await generateText({ model: mock, system: texts["s"] ?? "", prompt: q, abortSignal })).text,
    metric: (_q, output) => ({ score: output === "hi v4" ? 1 : 0 })
  })
  const evaluation = yield* adapter.evaluate(["x"], { s: "sys" }, { captureTraces: false })
  check(evaluation.scores[0] === 1, "generateText in FunctionAdapter")

  const denied = new MockLanguageModelV4({
    doGenerate: () =>
      Promise.reject(
        new APICallError({ message: "bad key", url: "https://api.openai.com/v1/responses", requestBodyValues: { model: "gpt-x" }, statusCode: 401 })
      )
  })
  const failing = yield* FunctionAdapter.make({
    run: async (q: string) => (await generateText({ model: denied, prompt: q, maxRetries: 0 })).text,
    metric: () => ({ score: 0 })
  })
  const exit = yield* Effect.exit(failing.evaluate(["x"], {}, { captureTraces: false }))
  check(Exit.isFailure(exit) && String(exit.cause).includes(`the task model "gpt-x" at api.openai.com:443 rejected the API key (HTTP 401)`), "401 stops the run")
}))
server.close()
console.log(`ai-sdk-7: ok on Node ${process.version}`)
