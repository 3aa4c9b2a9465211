/**
 * Models from `@effect/ai`: Anthropic as the reflection model, a local
 * OpenAI-compatible server (vLLM, Ollama) as the task model. Type-checked
 * with the project; running it needs `ANTHROPIC_API_KEY` and a server at
 * http://127.0.0.1:8000/v1 (`vllm serve Qwen/Qwen3-8B`):
 * `npx tsx examples/providers.ts`.
 *
 * Needs the optional peers `@effect/ai` and `@effect/ai-anthropic`.
 *
 * @since 0.2.0
 */
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { FetchHttpClient } from "@effect/platform"
import { Config, Effect, Layer } from "effect"
import * as AiLanguageModel from "../src/AiLanguageModel.js"
import * as DefaultAdapter from "../src/DefaultAdapter.js"
import * as Gepa from "../src/Gepa.js"
import * as Metric from "../src/Metric.js"
import * as ModelString from "../src/ModelString.js"

interface Ticket {
  readonly text: string
  readonly queue: string
}

const trainset: ReadonlyArray<Ticket> = [
  { text: "I was charged twice this month", queue: "billing" },
  { text: "The app crashes when I upload a photo", queue: "bugs" },
  { text: "How do I export my data?", queue: "how-to" },
  { text: "Refund for the annual plan, please", queue: "billing" },
  { text: "Login button does nothing on Safari", queue: "bugs" },
  { text: "Can I share a board with my team?", queue: "how-to" }
]

// the provider swap: any @effect/ai model as the reflection model ...
const Reflection = AiLanguageModel.layerReflection({ model: "claude-sonnet-4-5", maxConcurrency: 4 }).pipe(
  Layer.provide(AnthropicLanguageModel.model("claude-sonnet-4-5")),
  Layer.provide(AnthropicClient.layerConfig({ apiKey: Config.redacted("ANTHROPIC_API_KEY") })),
  Layer.provide(FetchHttpClient.layer)
)
// ... and a model string for the task model
const Task = ModelString.layerTask("openai-compatible:http://127.0.0.1:8000/v1#Qwen/Qwen3-8B", { temperature: 0 })

const Adapter = DefaultAdapter.layer<Ticket>({
  input: (ticket) => ticket.text,
  metric: Metric.exactMatch((ticket) => ticket.queue)
}).pipe(Layer.provide(Task))

const program = Gepa.optimize<Ticket, DefaultAdapter.Trajectory<Ticket>, string>({
  seedCandidate: { system_prompt: "Answer with the queue of the ticket: billing, bugs or how-to." },
  trainset,
  maxMetricCalls: 200
}).pipe(Effect.provide(Layer.merge(Reflection, Adapter)))

if (process.argv[1]?.endsWith("providers.ts") === true) {
  Effect.runPromise(program).then(
    (result) => console.log(result.bestScore, result.bestCandidate["system_prompt"]),
    (error) => {
      console.error(String(error))
      process.exitCode = 1
    }
  )
}
