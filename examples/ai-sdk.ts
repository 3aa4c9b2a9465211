/**
 * Optimizing an existing Vercel AI SDK app in place: a small order-status
 * agent (`generateText` with a system prompt and one tool) whose system
 * prompt and tool description GEPA improves, while the app stays as it is.
 *
 * - The app (`supportAgent`) is plain AI SDK code; it takes its two prompts
 *   as arguments, which is all the optimization needs of it.
 * - `FunctionAdapter.make` wraps it with a metric whose feedback says what
 *   went wrong; `AiSdkLanguageModel` makes an AI SDK model the reflection
 *   model.
 * - Offline (the default), both models are the AI SDK's own
 *   `MockLanguageModelV3`, simulated: the task model follows the prompts it
 *   is given, the reflection model applies the lessons of the feedback. It
 *   runs in a few seconds: `npm run example:ai-sdk`.
 * - With `OPENAI_API_KEY` set, the same run uses `@ai-sdk/openai`
 *   (`GEPA_TASK_MODEL`, default "gpt-4.1-mini"; `GEPA_REFLECTION_MODEL`,
 *   default "gpt-4.1").
 *
 * Needs the optional peers `ai` and `@ai-sdk/openai` (and `zod`).
 *
 * @since 0.3.0
 */
import { createOpenAI } from "@ai-sdk/openai"
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider"
import { generateText, stepCountIs, tool } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import { Effect } from "effect"
import { z } from "zod"
import * as AiSdkLanguageModel from "../src/AiSdkLanguageModel.js"
import type { Candidate } from "../src/Candidate.js"
import * as FunctionAdapter from "../src/FunctionAdapter.js"
import * as Gepa from "../src/Gepa.js"
import type { MetricResult } from "../src/Metric.js"
import * as StopCondition from "../src/StopCondition.js"

// ---------------------------------------------------------------------------
// The app: an order-status agent, as it would be written without GEPA
// ---------------------------------------------------------------------------

interface Order {
  readonly status: "processing" | "shipped" | "delivered"
  /** estimated (or actual) delivery date */
  readonly eta: string
}

const orders: Readonly<Record<string, Order>> = {
  "A-1001": { status: "shipped", eta: "2026-05-03" },
  "A-1002": { status: "processing", eta: "2026-05-09" },
  "A-1003": { status: "delivered", eta: "2026-04-28" },
  "A-1004": { status: "shipped", eta: "2026-05-05" },
  "A-1005": { status: "processing", eta: "2026-05-12" },
  "A-1006": { status: "delivered", eta: "2026-04-30" },
  "A-1007": { status: "shipped", eta: "2026-05-06" },
  "A-1008": { status: "processing", eta: "2026-05-14" }
}

/** The app's answer: its text and the order ids it looked up. */
export interface AgentAnswer {
  readonly text: string
  readonly lookups: ReadonlyArray<string>
}

/** The prompts the app runs with: what GEPA optimizes. */
export interface Prompts {
  readonly system: string
  readonly lookupOrderDescription: string
}

/**
 * The app's agent: one `generateText` call with a tool, up to three steps.
 *
 * @since 0.3.0
 */
export const supportAgent = (model: LanguageModelV3) => async (question: string, prompts: Prompts, abortSignal?: AbortSignal): Promise<AgentAnswer> => {
  const result = await generateText({
    model,
    system: prompts.system,
    prompt: question,
    tools: {
      lookup_order: tool({
        description: prompts.lookupOrderDescription,
        inputSchema: z.object({ orderId: z.string().describe("the order id") }),
        execute: async ({ orderId }) => orders[orderId] ?? { error: `no order with id ${orderId}` }
      })
    },
    stopWhen: stepCountIs(3),
    ...(abortSignal === undefined ? {} : { abortSignal })
  })
  const lookups = result.steps.flatMap((step) =>
    step.toolCalls.flatMap((call) => {
      const orderId: unknown = call.input !== null && typeof call.input === "object" ? Reflect.get(call.input, "orderId") : undefined
      return typeof orderId === "string" ? [orderId] : []
    })
  )
  return { text: result.text, lookups }
}

// ---------------------------------------------------------------------------
// The optimization: examples, a metric with feedback, the seed prompts
// ---------------------------------------------------------------------------

/** A customer question and the order it is about. */
export interface Question {
  readonly question: string
  readonly orderId: string
}

/** @since 0.3.0 */
export const trainset: ReadonlyArray<Question> = [
  { question: "Where is my order #1001?", orderId: "A-1001" },
  { question: "status of a-1002 please", orderId: "A-1002" },
  { question: "Has A1003 arrived yet?", orderId: "A-1003" },
  { question: "When does order 1004 come?", orderId: "A-1004" },
  { question: "Any news on A-1005?", orderId: "A-1005" },
  { question: "order no. 1006, where is it?", orderId: "A-1006" }
]

/** @since 0.3.0 */
export const valset: ReadonlyArray<Question> = [
  { question: "I ordered #1007 last week, is it on its way?", orderId: "A-1007" },
  { question: "what's happening with a1008", orderId: "A-1008" },
  { question: "Is A-1001 shipped?", orderId: "A-1001" },
  { question: "tracking for 1003?", orderId: "A-1003" }
]

/** @since 0.3.0 */
export const seedCandidate = {
  system_prompt: "You are a friendly customer support assistant for an online shop.",
  lookup_order_tool: "Looks up an order."
}

const months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]

/** The date as written ISO or in words ("May 3"). */
const mentionsDate = (text: string, iso: string): boolean => {
  const [, month, day] = iso.split("-").map(Number)
  return text.includes(iso) || new RegExp(`${months[(month ?? 1) - 1]} ${day}\\b`).test(text)
}

/**
 * Scores an answer and says what a right one needs: the order looked up
 * under its id, its status, and its delivery date.
 *
 * @since 0.3.0
 */
export const metric = (example: Question, answer: AgentAnswer | undefined): MetricResult => {
  const order = orders[example.orderId]!
  if (answer === undefined || answer.lookups.length === 0) {
    return {
      score: 0,
      feedback: `The assistant answered without looking the order up. It must call the lookup_order tool with the order id ` +
        `(${example.orderId}) before answering; without it, it knows nothing about the order.`
    }
  }
  if (!answer.lookups.includes(example.orderId)) {
    return {
      score: 0.1,
      feedback: `lookup_order was called with orderId ${answer.lookups.map((l) => JSON.stringify(l)).join(", ")}, which matches no order. ` +
        `Order ids have the form A-<digits> (here ${example.orderId}); customers write them as "#1001", "a-1001", "A1001" or "1001".`
    }
  }
  if (!answer.text.toLowerCase().includes(order.status)) {
    return { score: 0.3, feedback: `The answer does not give the order's status, "${order.status}". Answer: ${JSON.stringify(answer.text)}` }
  }
  if (!mentionsDate(answer.text, order.eta)) {
    return {
      score: 0.6,
      feedback: `The answer gives the status but not the ${order.status === "delivered" ? "delivery" : "estimated delivery"} date ` +
        `${order.eta} from the lookup result; customers always want to know when. Answer: ${JSON.stringify(answer.text)}`
    }
  }
  return { score: 1, feedback: "Correct: the order was looked up and the answer gives its status and date." }
}

// ---------------------------------------------------------------------------
// Offline models: the AI SDK's MockLanguageModelV3, simulated
// ---------------------------------------------------------------------------

const usage = (input: number, output: number): LanguageModelV3GenerateResult["usage"] => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined }
})

const textOf = (options: LanguageModelV3CallOptions): string =>
  options.prompt.map((m) => typeof m.content === "string" ? m.content : m.content.map((p) => ("text" in p ? p.text : "")).join("")).join("\n")

/**
 * A simulated task model that follows its prompts: it calls the tool only
 * when the system prompt tells it to, writes the order id in the form the
 * tool description gives (else as the customer wrote it), and gives the
 * date only when the system prompt asks for it.
 *
 * @since 0.3.0
 */
export const simulatedTaskModel = (): MockLanguageModelV3 =>
  new MockLanguageModelV3({
    provider: "simulated",
    modelId: "simulated-agent",
    doGenerate: async (options) => {
      const system = options.prompt.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n")
      const question = options.prompt.flatMap((m) => m.role === "user" ? m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])) : []).join(" ")
      const lookup = options.tools?.find((t) => t.name === "lookup_order")
      const results = options.prompt.flatMap((m) => (m.role === "tool" ? m.content.flatMap((p) => (p.type === "tool-result" ? [p.output] : [])) : []))
      const tokens = usage(Math.ceil(textOf(options).length / 4), 20)
      if (results.length === 0) {
        if (lookup === undefined || !/lookup_order/.test(system)) {
          return {
            content: [{ type: "text", text: "I'm sorry, I can't see order details. Please check your confirmation email." }],
            finishReason: { unified: "stop", raw: "stop" },
            usage: tokens,
            warnings: []
          }
        }
        const written = /(?:#|\b)([aA]-?\d{3,}|\d{3,})\b/.exec(question)?.[1] ?? question
        const orderId = /A-<digits>/.test(lookup.type === "function" ? lookup.description ?? "" : "") ? `A-${written.replace(/\D/g, "")}` : written
        return {
          content: [{ type: "tool-call", toolCallId: "call-1", toolName: "lookup_order", input: JSON.stringify({ orderId }) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage: tokens,
          warnings: []
        }
      }
      const output = results[0]!
      const value: unknown = output.type === "json" ? output.value : undefined
      const status = typeof value === "object" && value !== null ? Reflect.get(value, "status") : undefined
      const eta = typeof value === "object" && value !== null ? Reflect.get(value, "eta") : undefined
      const text = typeof status !== "string"
        ? "I couldn't find that order."
        : `Your order is ${status}.${/delivery date/.test(system) && typeof eta === "string" ? ` Delivery date: ${eta}.` : ""}`
      return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage: tokens, warnings: [] }
    }
  })

/** The lessons the simulated reflection model can learn, by component. */
const lessons: ReadonlyArray<{ readonly component: string; readonly sign: RegExp; readonly rule: string }> = [
  {
    component: "system_prompt",
    sign: /must call the lookup_order tool/,
    rule: "Before answering any question about an order, call the lookup_order tool with the order id; never answer from memory."
  },
  {
    component: "system_prompt",
    sign: /delivery date/,
    rule: "Always tell the customer the order's status and its delivery date as given by the lookup result."
  },
  {
    component: "lookup_order_tool",
    sign: /Order ids have the form A-<digits>/,
    rule: "The orderId must have the form A-<digits>, e.g. A-1001: customers write \"#1001\", \"a-1001\" or \"1001\"; normalize it first."
  }
]

/**
 * A simulated reflection model: for the component in the reflection prompt,
 * it adds the first rule the feedback calls for that the text lacks.
 *
 * @since 0.3.0
 */
export const simulatedReflectionModel = (): MockLanguageModelV3 =>
  new MockLanguageModelV3({
    provider: "simulated",
    modelId: "simulated-reflector",
    doGenerate: async (options) => {
      const prompt = textOf(options)
      // the current text comes fenced, after its heading
      const component = /# Current text of "([^"]+)"\s*\n+(`{3,})\n([\s\S]*?)\n\2\n/.exec(prompt)
      const name = component?.[1] ?? ""
      let next = component?.[3]?.trim() ?? ""
      const lesson = lessons.find((l) => l.component === name && l.sign.test(prompt) && !next.includes(l.rule))
      if (lesson !== undefined) next = `${next}\n${lesson.rule}`
      return {
        content: [{ type: "text", text: `Here is the revised text.\n\n\`\`\`\n${next}\n\`\`\`\n` }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(Math.ceil(prompt.length / 4), Math.ceil(next.length / 4)),
        warnings: []
      }
    }
  })

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

/** The models of a run. */
export interface Models {
  readonly kind: "simulated" | "openai"
  readonly task: LanguageModelV3
  readonly reflection: LanguageModelV3
}

/** @since 0.3.0 */
export const simulatedModels = (): Models => ({ kind: "simulated", task: simulatedTaskModel(), reflection: simulatedReflectionModel() })

/** Real models when `OPENAI_API_KEY` is set. */
const openAiModels = (env: NodeJS.ProcessEnv): Models | undefined => {
  const key = env["OPENAI_API_KEY"]?.trim()
  if (key === undefined || key === "") return undefined
  const openai = createOpenAI({ apiKey: key, ...(env["OPENAI_BASE_URL"] ? { baseURL: env["OPENAI_BASE_URL"] } : {}) })
  return {
    kind: "openai",
    task: openai(env["GEPA_TASK_MODEL"]?.trim() || "gpt-4.1-mini"),
    reflection: openai(env["GEPA_REFLECTION_MODEL"]?.trim() || "gpt-4.1")
  }
}

/**
 * Optimizes the agent's system prompt and tool description.
 *
 * @since 0.3.0
 */
export const optimizeAgent = (options: { readonly models?: Models; readonly maxMetricCalls?: number; readonly runDir?: string; readonly seed?: number } = {}) =>
  Effect.gen(function*() {
    const models = options.models ?? simulatedModels()
    const agent = supportAgent(models.task)
    // the app, unchanged: the candidate's texts are its prompts
    const adapter = yield* FunctionAdapter.make({
      run: (example: Question, texts: Candidate, signal) =>
        agent(example.question, { system: texts["system_prompt"] ?? "", lookupOrderDescription: texts["lookup_order_tool"] ?? "" }, signal),
      metric,
      components: ["system_prompt", "lookup_order_tool"],
      describeInput: (example) => example.question
    })
    const reflectionModel = yield* AiSdkLanguageModel.make(
      models.reflection,
      models.kind === "openai" ? { price: { inputPerMillion: 2, outputPerMillion: 8 } } : {}
    )
    return yield* Gepa.optimize({
      seedCandidate,
      trainset,
      valset,
      adapter,
      reflectionModel,
      maxMetricCalls: options.maxMetricCalls ?? 200,
      minibatchSize: 3,
      stop: [StopCondition.scoreThreshold(1)],
      seed: options.seed ?? 0,
      ...(options.runDir === undefined ? {} : { runDir: options.runDir })
    })
  })

if (process.argv[1]?.endsWith("ai-sdk.ts") === true) {
  const models = openAiModels(process.env) ?? simulatedModels()
  const started = Date.now()
  Effect.runPromise(optimizeAgent({ models })).then(
    (result) => {
      console.log(`models: ${models.kind === "openai" ? "OpenAI through @ai-sdk/openai" : "simulated (the AI SDK's MockLanguageModelV3)"}`)
      console.log(
        `validation score: ${result.bestScore?.toFixed(2) ?? "?"} (seed: ${result.valAggregateScores[0]?.toFixed(2) ?? "?"}), ` +
          `${result.totalMetricCalls} metric calls, ${((Date.now() - started) / 1000).toFixed(1)} s`
      )
      for (const [name, text] of Object.entries(result.bestCandidate)) console.log(`\n${name}:\n${text}`)
    },
    (error) => {
      console.error(String(error))
      process.exitCode = 1
    }
  )
}
