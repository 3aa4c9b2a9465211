/**
 * Should the OpenAI layer stay on the `openai` SDK or become a thin layer
 * over `@effect/ai-openai`, and what does a Vercel AI SDK model
 * (`@ai-sdk/openai`'s chat model through `AiSdkLanguageModel`) cost per
 * call? `npx tsx bench/modelLayers.ts` measures, on this machine, against a
 * local server (no network):
 *
 * - which endpoints each speaks (a server with only chat completions, like
 *   most OpenAI-compatible servers, and one with the Responses API);
 * - cold import time of each stack (a fresh node process, median of 5);
 * - time per call, sequential and 16 at once (median of 5 alternating
 *   rounds of 400 calls), through our `LanguageModel`
 *   (the `@effect/ai` one wrapped by `AiLanguageModel`, so both have the
 *   same retry and error mapping);
 * - disk footprint of each stack's packages.
 *
 * Writes bench/results/model-layers.json and prints a markdown table.
 */
import { createOpenAI } from "@ai-sdk/openai"
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as AiOpenAiLanguageModel from "@effect/ai-openai/OpenAiLanguageModel"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Effect, Layer, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as AiLanguageModel from "../src/AiLanguageModel.js"
import * as AiSdkLanguageModel from "../src/AiSdkLanguageModel.js"
import type { LanguageModel } from "../src/LanguageModel.js"
import * as OpenAiLanguageModel from "../src/OpenAiLanguageModel.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const chatBody = (text: string) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 0,
  model: "gpt-4.1-mini",
  choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
  usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 }
})

const responsesBody = (text: string) => ({
  id: "resp_1",
  object: "response",
  created_at: 0,
  status: "completed",
  error: null,
  incomplete_details: null,
  instructions: null,
  metadata: null,
  model: "gpt-4.1-mini",
  output: [{
    type: "message",
    id: "msg_1",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }]
  }],
  parallel_tool_calls: true,
  temperature: null,
  top_p: null,
  tools: [],
  tool_choice: "auto",
  usage: {
    input_tokens: 20,
    output_tokens: 5,
    total_tokens: 25,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 }
  }
})

/** A server with chat completions, and the Responses API only when `responses` is set. */
const serve = (responses: boolean) =>
  new Promise<{ url: string; close: () => Promise<void>; paths: Array<string> }>((resolve) => {
    const paths: Array<string> = []
    const server = Http.createServer((req, res) => {
      let raw = ""
      req.on("data", (c) => (raw += c))
      req.on("end", () => {
        paths.push(req.url ?? "")
        const url = req.url ?? ""
        const body = url.startsWith("/v1/chat/completions")
          ? chatBody("ok")
          : url.startsWith("/v1/responses") && responses
          ? responsesBody("ok")
          : undefined
        res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" })
        res.end(JSON.stringify(body ?? { error: { message: `no route ${url}` } }))
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        paths,
        close: () =>
          new Promise((r) => {
            server.closeAllConnections()
            server.close(() => r())
          })
      })
    })
  })

const sdkModel = (baseURL: string) => OpenAiLanguageModel.make({ model: "gpt-4.1-mini", apiKey: Redacted.make("sk-bench"), baseURL, maxRetries: 0 })

const effectAiModel = (baseURL: string) =>
  AiLanguageModel.make({ model: "gpt-4.1-mini", maxRetries: 0 }).pipe(
    Effect.provide(
      AiOpenAiLanguageModel.model("gpt-4.1-mini").pipe(
        Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-bench"), apiUrl: baseURL })),
        Layer.provide(FetchHttpClient.layer)
      )
    )
  )

const aiSdkModel = (baseURL: string) => AiSdkLanguageModel.make(createOpenAI({ apiKey: "sk-bench", baseURL }).chat("gpt-4.1-mini"), { maxRetries: 0 })

const timeCalls = async (model: LanguageModel, calls: number, concurrency: number) => {
  const run = (n: number) => Effect.runPromise(Effect.forEach(Array.from({ length: n }), () => model.complete("ping"), { concurrency, discard: true }))
  await run(30) // warm up
  const start = performance.now()
  await run(calls)
  return (performance.now() - start) / calls
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const coldImport = (specifiers: ReadonlyArray<string>) => {
  const script = `const t = performance.now(); ${specifiers.map((s) => `await import(${JSON.stringify(s)});`).join(" ")} console.log(performance.now() - t)`
  const runs = Array.from(
    { length: 5 },
    () => Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" }).trim())
  )
  return median(runs)
}

const diskMb = (packages: ReadonlyArray<string>) => {
  let bytes = 0
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(p)
      else bytes += fs.statSync(p).size
    }
  }
  for (const p of packages) {
    const dir = path.join(root, "node_modules", p)
    if (fs.existsSync(dir)) walk(dir)
  }
  return bytes / 1024 / 1024
}

const outcome = async (make: (url: string) => Effect.Effect<LanguageModel, unknown>, url: string) => {
  const exit = await Effect.runPromise(Effect.either(Effect.flatMap(make(url), (m) => m.complete("ping"))))
  return exit._tag === "Right" ? "ok" : `fails: ${(exit.left as { message?: string }).message ?? String(exit.left)}`
}

const main = async () => {
  const chatOnly = await serve(false)
  const both = await serve(true)
  try {
    // each stack's first request on the chat-only server names the endpoint it speaks
    const sdkOnChatOnlyServer = await outcome(sdkModel, chatOnly.url)
    const sdkPath = chatOnly.paths.at(-1)
    const effectAiOnChatOnlyServer = await outcome(effectAiModel, chatOnly.url)
    const effectAiPath = chatOnly.paths.at(-1)
    const aiSdkOnChatOnlyServer = await outcome(aiSdkModel, chatOnly.url)
    const aiSdkPath = chatOnly.paths.at(-1)
    const compatibility = { sdkOnChatOnlyServer, effectAiOnChatOnlyServer, aiSdkOnChatOnlyServer, sdkPath, effectAiPath, aiSdkPath }
    const sdk = await Effect.runPromise(sdkModel(both.url))
    const effectAi = await Effect.runPromise(effectAiModel(both.url))
    const aiSdk = await Effect.runPromise(aiSdkModel(both.url))
    const calls = 400
    // rounds alternate the two stacks, so a busy moment on the shared
    // machine hits both; the median round is reported
    const rounds = {
      sdkSeq: [] as Array<number>,
      aiSeq: [] as Array<number>,
      aiSdkSeq: [] as Array<number>,
      sdk16: [] as Array<number>,
      ai16: [] as Array<number>,
      aiSdk16: [] as Array<number>
    }
    for (let round = 0; round < 5; round++) {
      rounds.sdkSeq.push(await timeCalls(sdk, calls, 1))
      rounds.aiSeq.push(await timeCalls(effectAi, calls, 1))
      rounds.aiSdkSeq.push(await timeCalls(aiSdk, calls, 1))
      rounds.sdk16.push(await timeCalls(sdk, calls, 16))
      rounds.ai16.push(await timeCalls(effectAi, calls, 16))
      rounds.aiSdk16.push(await timeCalls(aiSdk, calls, 16))
    }
    const perCall = {
      sdkSequentialMs: median(rounds.sdkSeq),
      effectAiSequentialMs: median(rounds.aiSeq),
      aiSdkSequentialMs: median(rounds.aiSdkSeq),
      sdkConcurrent16Ms: median(rounds.sdk16),
      effectAiConcurrent16Ms: median(rounds.ai16),
      aiSdkConcurrent16Ms: median(rounds.aiSdk16)
    }
    const importMs = {
      sdk: coldImport(["openai"]),
      effectAi: coldImport(["@effect/ai-openai", "@effect/platform/FetchHttpClient"]),
      aiSdk: coldImport(["@ai-sdk/openai"])
    }
    const disk = {
      sdkMb: diskMb(["openai"]),
      effectAiMb: diskMb(["@effect/ai-openai", "@effect/ai", "gpt-tokenizer", "find-my-way-ts"]),
      // what @ai-sdk/openai installs (the model layer needs nothing of `ai` itself)
      aiSdkMb: diskMb(["@ai-sdk/openai", "@ai-sdk/provider", "@ai-sdk/provider-utils", "eventsource-parser", "zod"])
    }
    const report = { date: new Date().toISOString(), node: process.version, calls, compatibility, perCall, importMs, disk }
    fs.mkdirSync(path.join(root, "bench/results"), { recursive: true })
    fs.writeFileSync(path.join(root, "bench/results/model-layers.json"), JSON.stringify(report, null, 2) + "\n")
    const f = (n: number) => n.toFixed(2)
    console.log(`| measure | openai SDK (ours) | @effect/ai-openai 0.41 + AiLanguageModel | @ai-sdk/openai 3 (chat) + AiSdkLanguageModel |
| --- | --- | --- | --- |
| endpoint used | ${compatibility.sdkPath} | ${compatibility.effectAiPath} | ${compatibility.aiSdkPath} |
| server with chat completions only (vLLM, Ollama, LiteLLM) | ${compatibility.sdkOnChatOnlyServer} | ${compatibility.effectAiOnChatOnlyServer} | ${compatibility.aiSdkOnChatOnlyServer} |
| ms per call, sequential (${calls} calls, local server, median of 5 rounds) | ${f(perCall.sdkSequentialMs)} | ${f(perCall.effectAiSequentialMs)} | ${
      f(perCall.aiSdkSequentialMs)
    } |
| ms per call, 16 at once | ${f(perCall.sdkConcurrent16Ms)} | ${f(perCall.effectAiConcurrent16Ms)} | ${f(perCall.aiSdkConcurrent16Ms)} |
| cold import, ms (median of 5) | ${f(importMs.sdk)} | ${f(importMs.effectAi)} | ${f(importMs.aiSdk)} |
| disk, MB | ${f(disk.sdkMb)} | ${f(disk.effectAiMb)} | ${f(disk.aiSdkMb)} |`)
  } finally {
    await chatOnly.close()
    await both.close()
  }
}

void main()
