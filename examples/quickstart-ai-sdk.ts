/**
 * The README's AI SDK quick start: an app's own `generateText` call, its
 * system prompt optimized in place with `FunctionAdapter`, and an AI SDK model
 * as the reflection model (`OPENAI_API_KEY`). `npx tsx examples/quickstart-ai-sdk.ts`;
 * `npm run example:ai-sdk` is the complete example that runs offline.
 *
 * @since 0.3.0
 */
import { openai } from "@ai-sdk/openai"
import { generateText } from "ai"
import { Effect } from "effect"
import { AiSdkLanguageModel, FunctionAdapter, Gepa } from "effect-gepa"

interface Ticket {
  readonly text: string
  readonly queue: string
}
const trainset: ReadonlyArray<Ticket> = [{ text: "I was charged twice", queue: "billing" }]

const program = Effect.gen(function*() {
  // the app's own code; its prompt comes from the candidate's texts
  const adapter = yield* FunctionAdapter.make({
    run: async (ticket: Ticket, texts, abortSignal) =>
      (await generateText({ model: openai("gpt-4.1-mini"), system: texts["system_prompt"] ?? "", prompt: ticket.text, abortSignal })).text,
    metric: (ticket, output) =>
      output.trim() === ticket.queue ? { score: 1 } : { score: 0, feedback: `expected "${ticket.queue}", got ${JSON.stringify(output)}` }
  })
  const reflectionModel = yield* AiSdkLanguageModel.make(openai("gpt-4.1"))
  const result = yield* Gepa.optimize({ seedCandidate: { system_prompt: "Route the ticket." }, trainset, adapter, reflectionModel, maxMetricCalls: 200 })
  console.log(`validation score: seed ${result.seedScore} -> best ${result.bestScore}`)
})

Effect.runPromise(program)
