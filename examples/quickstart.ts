/**
 * The README's library quick start: a support-ticket router whose system
 * prompt GEPA improves, with OpenAI models (`OPENAI_API_KEY`, and
 * `OPENAI_BASE_URL` for another server). `npx tsx examples/quickstart.ts`.
 *
 * @since 0.3.0
 */
import { Effect } from "effect"
import { DefaultAdapter, Gepa, Metric, OpenAiLanguageModel } from "effect-gepa"

const tickets = [
  { text: "I was charged twice for my subscription", queue: "billing" },
  { text: "The parcel arrived broken, I want my money back", queue: "returns" },
  { text: "Please delete all the data you hold about me", queue: "privacy" },
  { text: "Do you offer a discount for 50 seats?", queue: "sales" },
  { text: "My invoice shows the wrong VAT number", queue: "billing" },
  { text: "How do I send back shoes that do not fit?", queue: "returns" },
  { text: "Can I get a copy of my personal data?", queue: "privacy" },
  { text: "We want a quote for the enterprise plan", queue: "sales" }
]

const program = Effect.gen(function*() {
  // the task model answers each ticket under the candidate's system prompt; the metric says what was wrong
  const adapter = yield* DefaultAdapter.fromTaskModel({
    input: (ticket: (typeof tickets)[number]) => ticket.text,
    metric: Metric.exactMatch((ticket) => ticket.queue, { ignoreCase: true })
  })
  const result = yield* Gepa.optimize({
    seedCandidate: { system_prompt: "Route the support ticket." },
    trainset: tickets,
    adapter,
    maxMetricCalls: 200
  })
  console.log(`validation score: seed ${result.seedScore} -> best ${result.bestScore}`)
  console.log(result.bestCandidate["system_prompt"])
}).pipe(
  Effect.provide(OpenAiLanguageModel.layerTaskConfig({ model: "gpt-4.1-mini", temperature: 0 })),
  Effect.provide(OpenAiLanguageModel.layerReflectionConfig({ model: "gpt-4.1" }))
)

Effect.runPromise(program)
