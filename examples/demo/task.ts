/**
 * The offline demo task: routing customer-support tickets to queues.
 *
 * The correct queue follows a hidden routing policy. Most tickets that need
 * a special queue also contain words that point somewhere else (a chargeback
 * ticket that talks about logging in, a damaged parcel that asks for a
 * refund), so a keyword router gets them wrong. The policy is revealed only
 * through the metric's feedback ("the ticket mentions 'chargeback' ...").
 *
 * The candidate has two components that the task model reads together as
 * one set of instructions: `triage_rules` (the router's role, answer format
 * and the rules for billing, returns, privacy and sales tickets) and
 * `escalation_rules` (the rules for the specialist teams: security, API,
 * incidents, abuse). Each reflective proposal rewrites one of them (round
 * robin), so lineages improve different halves of the policy and a merge can
 * combine them.
 *
 * Both language models are simulated, deterministic and offline:
 * - the task model obeys the routing rules written in its instructions
 *   (first matching rule wins) and otherwise falls back to naive keywords,
 *   so better instructions really route better;
 * - the reflection model reads the feedback inside the reflection prompt,
 *   infers one or two rules from it and returns the revised text in a
 *   fenced block. It only writes rules that belong to the component it is
 *   asked to rewrite. Seeded noise makes it sometimes pick a plausible but
 *   wrong queue, and it only learns the trigger words it has seen, so
 *   different lineages learn different parts of the policy: material for
 *   the Pareto front and for merges.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as Adapter from "effect-gepa/Adapter"
import type { Candidate } from "effect-gepa/Candidate"
import * as LanguageModel from "effect-gepa/LanguageModel"
import { Rng } from "effect-gepa/Rng"

// ---------------------------------------------------------------------------
// Queues and the hidden routing policy
// ---------------------------------------------------------------------------

/**
 * Every queue a ticket can be routed to.
 *
 * @since 0.1.0
 * @category models
 */
export const queues = [
  "billing",
  "billing-disputes",
  "account",
  "account-security",
  "shipping",
  "returns",
  "technical",
  "developer-api",
  "incidents",
  "privacy",
  "abuse",
  "enterprise-sales",
  "general"
] as const

/**
 * @since 0.1.0
 * @category models
 */
export type Queue = typeof queues[number]

/**
 * A support ticket with its correct queue.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ticket {
  readonly id: string
  readonly text: string
  readonly queue: Queue
}

/**
 * One rule of the hidden policy: a ticket mentioning any of `triggers` goes
 * to `queue`, whatever else it mentions.
 *
 * @since 0.1.0
 * @category models
 */
export interface RoutingRule {
  readonly queue: Queue
  readonly triggers: ReadonlyArray<string>
}

/**
 * The hidden routing policy. No ticket mentions triggers of two rules, so
 * the order of the rules does not matter.
 *
 * @since 0.1.0
 * @category policy
 */
export const routingRules: ReadonlyArray<RoutingRule> = [
  { queue: "billing-disputes", triggers: ["chargeback", "disputed", "bank reversed"] },
  { queue: "account-security", triggers: ["hacked", "unrecognized login", "two-factor"] },
  { queue: "returns", triggers: ["damaged", "wrong item", "return label"] },
  { queue: "privacy", triggers: ["gdpr", "delete my data", "data export"] },
  { queue: "developer-api", triggers: ["api", "webhook", "sdk"] },
  { queue: "abuse", triggers: ["phishing", "scam", "threatening"] },
  { queue: "incidents", triggers: ["outage", "status page", "down for everyone"] },
  { queue: "enterprise-sales", triggers: ["seats", "volume discount", "procurement"] }
]

// What a keyword router does without instructions. It is also the policy
// for tickets that no special rule covers, so those are right from the start.
const defaultKeywords: ReadonlyArray<readonly [Queue, ReadonlyArray<string>]> = [
  ["billing", ["invoice", "charged", "charge", "payment", "refund", "bill", "billing", "subscription", "price", "receipt"]],
  ["account", ["login", "log in", "password", "account", "sign in", "username", "email address", "profile"]],
  ["shipping", ["package", "delivery", "shipping", "tracking", "courier", "parcel", "arrived", "order"]],
  ["technical", ["error", "crash", "bug", "app", "slow", "not working", "broken", "loading"]],
  ["abuse", ["spam", "harass"]]
]

const termPatterns = new Map<string, RegExp>()

/**
 * Whether `text` mentions `term` as whole words, ignoring case.
 *
 * @since 0.1.0
 * @category policy
 */
export const mentions = (text: string, term: string): boolean => {
  const key = term.toLowerCase()
  let pattern = termPatterns.get(key)
  if (pattern === undefined) {
    const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\s+/g, "\\s+")
    pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, "iu")
    termPatterns.set(key, pattern)
  }
  return pattern.test(text)
}

/**
 * The naive keyword routing (and the keyword that decided it).
 *
 * @since 0.1.0
 * @category policy
 */
export const defaultRoute = (text: string): { readonly queue: Queue; readonly keyword?: string } => {
  for (const [queue, keywords] of defaultKeywords) {
    const keyword = keywords.find((k) => mentions(text, k))
    if (keyword !== undefined) return { queue, keyword }
  }
  return { queue: "general" }
}

/**
 * The hidden rule that applies to a ticket text, with the trigger it
 * mentions.
 *
 * @since 0.1.0
 * @category policy
 */
export const hiddenRuleFor = (text: string): { readonly queue: Queue; readonly trigger: string } | undefined => {
  for (const rule of routingRules) {
    const trigger = rule.triggers.find((t) => mentions(text, t))
    if (trigger !== undefined) return { queue: rule.queue, trigger }
  }
  return undefined
}

/**
 * The correct queue of a ticket text under the hidden policy.
 *
 * @since 0.1.0
 * @category policy
 */
export const correctQueue = (text: string): Queue => hiddenRuleFor(text)?.queue ?? defaultRoute(text).queue

// ---------------------------------------------------------------------------
// Dataset
// ---------------------------------------------------------------------------

// Per hidden rule, two tickets per trigger, in the order of the triggers.
const ruleTickets: ReadonlyArray<ReadonlyArray<string>> = [
  [
    "I filed a chargeback with my bank for last month's charge, what happens now?",
    "You blocked my login after the chargeback went through. Please restore access.",
    "I disputed the payment on my credit card because the product never came.",
    "My card issuer says the transaction is disputed and now I cannot log in.",
    "The bank reversed the transaction for my annual plan, do I need to pay again?",
    "My bank reversed a payment to you by mistake, how do I fix the subscription?"
  ],
  [
    "I think my account was hacked, the password was changed without me.",
    "Someone hacked my profile and placed an order to a strange address.",
    "Got an email about an unrecognized login from another country on my account.",
    "There is an unrecognized login in my session history and the app acts weird.",
    "My two-factor codes stopped coming by SMS and I am locked out.",
    "How do I reset two-factor on a new phone? The app keeps asking for a code."
  ],
  [
    "The package arrived damaged and the glass is cracked.",
    "The item was damaged in the box, I want my money back through a refund.",
    "You sent the wrong item, I ordered a blue kettle and got a toaster.",
    "Received the wrong item in my delivery today, order 55812.",
    "Can you email me a return label for the shoes? The tracking says delivered.",
    "The return label link gives an error page."
  ],
  [
    "Under GDPR I am asking which personal information you keep on my account.",
    "This is a GDPR request about the data attached to my billing profile.",
    "Please close my account and delete my data permanently.",
    "I unsubscribed, now delete my data from your mailing lists.",
    "I asked for a data export two weeks ago and the download shows an error.",
    "Where can I find the data export of my account history?"
  ],
  [
    "Your API returns an error 500 when I create invoices programmatically.",
    "Which API key should I use for the sandbox account?",
    "The webhook for payment events stopped firing yesterday.",
    "Our webhook endpoint receives duplicate events, is this a bug?",
    "The Python SDK fails on import with version 3.2.",
    "Is there an SDK method to update the shipping address of an order?"
  ],
  [
    "I received a phishing email pretending to be your billing team.",
    "A phishing site copies your login page, please take it down.",
    "A seller on your marketplace runs a scam with fake tracking numbers.",
    "Is this text about a refund a scam? It asks for my password.",
    "Another user keeps sending me threatening messages after a late delivery.",
    "I keep getting threatening comments on my profile."
  ],
  [
    "Is there an outage? Nothing loads and I get an error on every page.",
    "Major outage in the EU region, our whole checkout is failing.",
    "Your status page says all green but the app will not open for any of us.",
    "Can you update the status page? Card payments fail for all our customers.",
    "Login is down for everyone in our office since 9am.",
    "The site is down for everyone on my team, not just me."
  ],
  [
    "We need 40 more seats on our subscription before Monday.",
    "How do I add seats for new hires to our team account?",
    "Do you offer a volume discount on the price for 500 licenses?",
    "Asking about a volume discount before we place a large order.",
    "Our procurement team needs a W-9 and an invoice in advance.",
    "Procurement needs your security questionnaire filled in before we sign."
  ]
]

// Tickets that no hidden rule covers: the keyword router gets them right.
const plainTickets: ReadonlyArray<string> = [
  "I was charged twice for my subscription this month.",
  "I forgot my password and the reset email never came.",
  "My package has been stuck in tracking for a week.",
  "The app freezes every time I open the camera.",
  "Someone keeps sending spam to my inbox through your contact form.",
  "Can I get a copy of the invoice for March?",
  "How do I change the username on my account?",
  "When will my parcel arrive? It has been 10 days.",
  "I get an error when uploading a photo.",
  "What are your opening hours on holidays?",
  "My payment failed but the money left my card.",
  "I cannot sign in after changing my email address.",
  "Can I change the delivery address for order 4411?",
  "Search is very slow since the last update.",
  "A user is trying to harass me in the comments.",
  "How do I move the billing cycle to annual?",
  "Please merge my old account into my new one.",
  "The courier left a note but I was home.",
  "The export button is broken in Firefox.",
  "Do you have a student program?",
  "Please send a receipt for my last purchase.",
  "Where do I update my profile photo?",
  "Do you offer express shipping to Canada?",
  "Found a bug: dark mode resets after a restart."
]

const ticket = (id: string, text: string): Ticket => ({ id, text, queue: correctQueue(text) })

// Training gets the first ticket of every trigger, so every rule can be
// learned; validation and test share the second tickets, with the test
// trigger rotating across rules so that no split lacks a whole trigger
// family.
const splits = (() => {
  const train: Array<Ticket> = []
  const validation: Array<Ticket> = []
  const test: Array<Ticket> = []
  ruleTickets.forEach((texts, r) => {
    texts.forEach((text, k) => {
      const t = ticket(`T${String(r + 1)}${String(k + 1)}`, text)
      const trigger = Math.floor(k / 2)
      if (k % 2 === 0) train.push(t)
      else if (trigger === r % 3) test.push(t)
      else validation.push(t)
    })
  })
  plainTickets.forEach((text, k) => {
    const t = ticket(`P${String(k + 1).padStart(2, "0")}`, text)
    ;[train, validation, test][k % 3]!.push(t)
  })
  return { train, validation, test }
})()

/**
 * Training tickets: reflection learns from these.
 *
 * @since 0.1.0
 * @category data
 */
export const train: ReadonlyArray<Ticket> = splits.train

/**
 * Validation tickets: the Pareto front and the best candidate are chosen on
 * these.
 *
 * @since 0.1.0
 * @category data
 */
export const validation: ReadonlyArray<Ticket> = splits.validation

/**
 * Held-out test tickets.
 *
 * @since 0.1.0
 * @category data
 */
export const test: ReadonlyArray<Ticket> = splits.test

/**
 * The components of the demo candidate, in the order the task model reads
 * them.
 *
 * @since 0.1.0
 * @category constants
 */
export const componentNames = ["triage_rules", "escalation_rules"] as const

/**
 * @since 0.1.0
 * @category models
 */
export type ComponentName = typeof componentNames[number]

/**
 * The component that opens the instructions. It names the router's role, the
 * answer format and the everyday queues, so on its own it is a complete
 * single-text prompt: single-component tools (the CLI's default adapter)
 * start from it.
 *
 * @since 0.1.0
 * @category constants
 */
export const componentName: ComponentName = "triage_rules"

/**
 * Which component owns the rule for each special queue. The reflection model
 * writes a rule only into the component that owns its queue, which is what
 * makes lineages that rewrote different components complementary.
 *
 * @since 0.1.0
 * @category constants
 */
export const ownerOf: Readonly<Record<string, ComponentName>> = {
  "billing-disputes": "triage_rules",
  "returns": "triage_rules",
  "privacy": "triage_rules",
  "enterprise-sales": "triage_rules",
  "account-security": "escalation_rules",
  "developer-api": "escalation_rules",
  "incidents": "escalation_rules",
  "abuse": "escalation_rules"
}

/**
 * The weak starting candidate: it names the obvious queues and no rules.
 *
 * @since 0.1.0
 * @category data
 */
export const seedCandidate: Candidate = {
  triage_rules: [
    "You are a customer-support ticket router.",
    "Read the ticket and reply with only the name of the queue that should handle it.",
    "Queues: billing, account, shipping, general."
  ].join("\n"),
  escalation_rules: [
    "Some tickets need a specialist team rather than an everyday queue.",
    "Queues: technical, abuse."
  ].join("\n")
}

const headings: Readonly<Record<ComponentName, string>> = {
  triage_rules: "Triage",
  escalation_rules: "Escalation"
}

/**
 * The instructions the task model receives for a candidate: its demo
 * components under headings, in order. Other components (a single-text
 * candidate from elsewhere) follow as they are, so any candidate routes.
 *
 * @since 0.1.0
 * @category adapter
 */
export const instructionsOf = (candidate: Candidate): string => {
  const known = new Set<string>(componentNames)
  const sections = componentNames.flatMap((name) => candidate[name] === undefined ? [] : [`## ${headings[name]}\n${candidate[name]}`])
  const others = Object.keys(candidate).filter((k) => !known.has(k)).map((k) => candidate[k]!)
  return [...sections, ...others].join("\n\n")
}

// ---------------------------------------------------------------------------
// Rules written in a prompt
// ---------------------------------------------------------------------------

/**
 * A routing rule as written in a prompt: the ticket must mention at least
 * one term of every group.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptRule {
  readonly groups: ReadonlyArray<ReadonlyArray<string>>
  readonly queue: string
}

const RULE_LINE =
  /^\s*(?:[-*•]|\d+[.)])?\s*if\s+(?:the\s+)?(?:ticket|message|request|customer)?\s*(?:mentions|contains|says|refers\s+to|talks\s+about)\s+(.+?),?\s+(?:then\s+)?(?:route|send|assign|forward|escalate)\s+(?:it\s+|them\s+)?to\s+(?:the\s+)?[`'"]?([a-z][a-z0-9-]*)/i
const QUOTED = /['"‘’“”`]([^'"‘’“”`\n]+)['"‘’“”`]/g

const termsOf = (phrase: string): ReadonlyArray<string> => {
  const quoted = Array.from(phrase.matchAll(QUOTED), (m) => m[1]!.trim().toLowerCase()).filter((t) => t !== "")
  if (quoted.length > 0) return quoted
  return phrase.split(/\s*(?:,|\bor\b)\s*/i).map((t) => t.trim().toLowerCase()).filter((t) => t !== "")
}

/**
 * The rule a prompt line states, if it states one ("- If the ticket mentions
 * 'x' or 'y', route it to q."; "and" between terms makes them all required).
 *
 * @since 0.1.0
 * @category prompt rules
 */
export const parseRuleLine = (line: string): PromptRule | undefined => {
  const m = RULE_LINE.exec(line)
  if (m === null) return undefined
  const groups = m[1]!.split(/\s+and\s+(?:also\s+)?/i).map(termsOf).filter((g) => g.length > 0)
  return groups.length === 0 ? undefined : { groups, queue: m[2]!.toLowerCase() }
}

/**
 * The rules of a prompt, in order.
 *
 * @since 0.1.0
 * @category prompt rules
 */
export const parseRules = (prompt: string): ReadonlyArray<PromptRule> =>
  prompt.split(/\r?\n/).flatMap((line) => {
    const rule = parseRuleLine(line)
    return rule === undefined ? [] : [rule]
  })

const ruleMatches = (rule: PromptRule, text: string): boolean => rule.groups.every((group) => group.some((term) => mentions(text, term)))

/**
 * How a router following `prompt` routes `text`: the first matching rule,
 * else the naive keywords.
 *
 * @since 0.1.0
 * @category prompt rules
 */
export const routeWithPrompt = (prompt: string, text: string): string =>
  parseRules(prompt).find((rule) => ruleMatches(rule, text))?.queue ?? defaultRoute(text).queue

const ruleLine = (terms: ReadonlyArray<string>, queue: string): string =>
  `- If the ticket mentions ${terms.map((t) => `'${t}'`).join(" or ")}, route it to ${queue}.`

const RULES_HEADER = "Routing rules (the first matching rule wins):"

/**
 * A candidate that states the whole hidden policy, each rule in the
 * component that owns it: the ceiling of the task.
 *
 * @since 0.1.0
 * @category data
 */
export const referenceCandidate: Candidate = Object.fromEntries(componentNames.map((name) => {
  const owned = routingRules.filter((r) => ownerOf[r.queue] === name)
  const seed = seedCandidate[name]!
  return [
    name,
    [
      seed.replace(/^Queues:(.*?)\.?$/m, (_line, listed: string) => `Queues:${listed}, ${owned.map((r) => r.queue).join(", ")}.`),
      RULES_HEADER,
      ...owned.map((r) => ruleLine(r.triggers, r.queue))
    ].join("\n")
  ]
}))

/**
 * A single-text prompt that states the whole hidden policy, for
 * single-component use.
 *
 * @since 0.1.0
 * @category data
 */
export const referencePrompt: string = [
  seedCandidate[componentName]!.replace(/^Queues:.*$/m, `Queues: ${queues.join(", ")}.`),
  RULES_HEADER,
  ...routingRules.map((r) => ruleLine(r.triggers, r.queue))
].join("\n")

// ---------------------------------------------------------------------------
// Metric
// ---------------------------------------------------------------------------

/**
 * The queue named in a model answer: the earliest queue name in it (the
 * longest at the same position, so "billing-disputes" beats "billing"), or
 * the trimmed answer when it names none.
 *
 * @since 0.1.0
 * @category metric
 */
export const parseQueue = (answer: string): string => {
  const lower = answer.toLowerCase()
  let found: { readonly at: number; readonly queue: string } | undefined
  for (const queue of queues) {
    const m = new RegExp(`(?<![a-z0-9-])${queue}(?![a-z0-9-])`).exec(lower)
    if (m === null) continue
    if (found === undefined || m.index < found.at || (m.index === found.at && queue.length > found.queue.length)) {
      found = { at: m.index, queue }
    }
  }
  return found?.queue ?? answer.trim()
}

/**
 * Scores an answer (1 for the right queue, else 0) with feedback that
 * reveals the rule behind the right queue.
 *
 * @since 0.1.0
 * @category metric
 */
export const metric = (example: Ticket, output: string): { readonly score: number; readonly feedback: string } => {
  const predicted = parseQueue(output)
  if (predicted === example.queue) {
    return { score: 1, feedback: `Correct: this ticket belongs in ${example.queue}.` }
  }
  const shown = predicted === "" ? "(nothing)" : predicted
  const rule = hiddenRuleFor(example.text)
  if (rule !== undefined) {
    return {
      score: 0,
      feedback: `Wrong queue '${shown}'. Expected queue: ${example.queue}; the ticket mentions '${rule.trigger}', ` +
        `and tickets that mention '${rule.trigger}' always go to ${example.queue}, whatever else they mention.`
    }
  }
  const { keyword } = defaultRoute(example.text)
  return {
    score: 0,
    feedback: `Wrong queue '${shown}'. Expected queue: ${example.queue}. No special routing rule covers this ticket, ` +
      `so it goes by its main topic${keyword === undefined ? " (a general enquiry)" : ` (keyword: ${keyword})`}.`
  }
}

// ---------------------------------------------------------------------------
// Simulated models
// ---------------------------------------------------------------------------

// FNV-1a: a stable 32-bit hash, so every simulated answer depends only on
// the seed and the prompt, not on the order in which concurrent calls run.
const hash32 = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

const rngFor = (seed: number, ...parts: ReadonlyArray<string>): Rng => Rng.seeded(hash32(`${seed}\u0000${parts.join("\u0000")}`))

/**
 * The simulated task model. It takes the system message(s) as its
 * instructions and the last user message as the ticket (a plain-text prompt
 * is both), follows the first matching routing rule of the instructions and
 * otherwise routes by naive keywords. With probability `slipRate` (default
 * 0.02, decided per prompt and ticket) it overlooks the rules, as real
 * models sometimes do.
 *
 * @since 0.1.0
 * @category models
 */
export const makeTaskModel = (
  seed = 0,
  options?: { readonly slipRate?: number }
): LanguageModel.LanguageModel => {
  const slipRate = options?.slipRate ?? 0.02
  return LanguageModel.fromFunction((prompt) => {
    const messages = LanguageModel.messages(prompt)
    const system = messages.filter((m) => m.role === "system").map((m) => m.content).join("\n")
    const users = messages.filter((m) => m.role === "user")
    const ticketText = users[users.length - 1]?.content ?? ""
    const instructions = system === "" ? LanguageModel.promptText(prompt) : system
    const slipped = slipRate > 0 && rngFor(seed, instructions, ticketText).nextFloat() < slipRate
    return slipped ? defaultRoute(ticketText).queue : routeWithPrompt(instructions, ticketText)
  })
}

interface Lesson {
  readonly term: string
  readonly queue: string
}

const FEEDBACK = /Expected queue:\s*[`'"]?([a-z][a-z0-9-]*)[`'"]?[^\n]*?\bmention(?:s|ed|ing)?\s+['"‘“`]([^'"’”`\n]+)['"’”`]/gi

/**
 * The lessons in a reflection prompt: every "Expected queue: q; the ticket
 * mentions 't'" it contains, first occurrence of each term first.
 *
 * @since 0.1.0
 * @category reflection
 */
export const feedbackLessons = (text: string): ReadonlyArray<Lesson> => {
  const seen = new Set<string>()
  const out: Array<Lesson> = []
  for (const m of text.matchAll(FEEDBACK)) {
    const term = m[2]!.trim().toLowerCase()
    if (term === "" || seen.has(term)) continue
    seen.add(term)
    out.push({ term, queue: m[1]!.toLowerCase() })
  }
  return out
}

interface Fence {
  readonly start: number
  readonly content: string
}

const fences = (text: string): ReadonlyArray<Fence> => {
  const lines = text.split(/\r?\n/)
  const out: Array<Fence> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s{0,3}(`{3,}|~{3,})/.exec(lines[i]!)
    if (open === null) continue
    const fence = open[1]!
    const body: Array<string> = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = /^\s{0,3}(`{3,}|~{3,})\s*$/.exec(lines[j]!)
      if (close !== null && close[1]![0] === fence[0] && close[1]!.length >= fence.length) break
      body.push(lines[j]!)
    }
    if (j >= lines.length) break
    out.push({ start: i, content: body.join("\n") })
    i = j
  }
  return out
}

/**
 * The demo component a reflection prompt asks to rewrite: the one named
 * first in it (the project's template names it in its first sentence), or
 * `undefined` when the prompt names none.
 *
 * @since 0.1.0
 * @category reflection
 */
export const componentOf = (prompt: string): ComponentName | undefined => {
  let found: { readonly at: number; readonly name: ComponentName } | undefined
  for (const name of componentNames) {
    const at = prompt.indexOf(name)
    if (at >= 0 && (found === undefined || at < found.at)) found = { at, name }
  }
  return found?.name
}

const MARKED = /<(current[_ -]?(?:text|instructions?|prompt|component)|curr_instructions|instructions)>\s*\n?([\s\S]*?)\n?\s*<\/\1>/i

/**
 * The current component text inside a reflection prompt. Tries, in order:
 * a text between `<current_text>`-style tags; the first fenced block after
 * a line that speaks of the current text, instructions or prompt; the first
 * fenced block that holds no feedback. Failing all, it rebuilds a text from
 * the seed text of the component (see `componentOf`) and any rule lines
 * found in the prompt.
 *
 * @since 0.1.0
 * @category reflection
 */
export const currentTextOf = (prompt: string): string => {
  const marked = MARKED.exec(prompt)
  if (marked !== null && !/Expected queue:/i.test(marked[2]!)) return marked[2]!.trim()
  const blocks = fences(prompt)
  const lines = prompt.split(/\r?\n/)
  const labelled = lines.findIndex((l) => /\bcurrent\b.*\b(text|instructions?|prompt)\b|\binstructions\b.*:\s*$/i.test(l))
  const looksLikeFeedback = (b: Fence) => /Expected queue:|^#+\s*(Example|Feedback)\b/im.test(b.content)
  const pick = (labelled >= 0 ? blocks.find((b) => b.start > labelled && !looksLikeFeedback(b)) : undefined) ??
    blocks.find((b) => !looksLikeFeedback(b))
  if (pick !== undefined) return pick.content.replace(/^\n+|\n+$/g, "")
  const ruleLines = lines.filter((l) => parseRuleLine(l) !== undefined).map((l) => l.trim())
  return [seedCandidate[componentOf(prompt) ?? componentName]!, ...(ruleLines.length > 0 ? [RULES_HEADER, ...new Set(ruleLines)] : [])].join("\n")
}

// A plausible wrong answer for each special queue: the broad queue a hasty
// reader would pick.
const confusedWith: Readonly<Record<string, string>> = {
  "billing-disputes": "billing",
  "account-security": "account",
  "returns": "shipping",
  "privacy": "account",
  "developer-api": "technical",
  "abuse": "account",
  "incidents": "technical",
  "enterprise-sales": "billing"
}

// Rewrites the prompt so that `term` routes to `queue`: the term leaves any
// rule that sends it elsewhere and joins the rule for `queue` (or a new one).
const applyLesson = (text: string, lesson: Lesson): string => {
  const lines = text.split("\n")
  const out: Array<string> = []
  for (const line of lines) {
    const rule = parseRuleLine(line)
    const simple = rule !== undefined && rule.groups.length === 1
    if (simple && rule.queue !== lesson.queue && rule.groups[0]!.includes(lesson.term)) {
      const rest = rule.groups[0]!.filter((t) => t !== lesson.term)
      if (rest.length > 0) out.push(ruleLine(rest, rule.queue))
      continue
    }
    out.push(line)
  }
  const target = out.findIndex((line) => {
    const rule = parseRuleLine(line)
    return rule !== undefined && rule.groups.length === 1 && rule.queue === lesson.queue
  })
  if (target >= 0) {
    const rule = parseRuleLine(out[target]!)!
    if (!rule.groups[0]!.includes(lesson.term)) out[target] = ruleLine([...rule.groups[0]!, lesson.term], lesson.queue)
  } else {
    let last = -1
    out.forEach((line, i) => {
      if (parseRuleLine(line) !== undefined) last = i
    })
    if (last >= 0) out.splice(last + 1, 0, ruleLine([lesson.term], lesson.queue))
    else {
      while (out.length > 0 && out[out.length - 1]!.trim() === "") out.pop()
      out.push(RULES_HEADER, ruleLine([lesson.term], lesson.queue))
    }
  }
  // A "Queues:" list that omits the queue would contradict the new rule.
  return out.map((line) => {
    const m = /^(\s*Queues:\s*)(.*?)(\.?)\s*$/i.exec(line)
    if (m === null) return line
    const listed = m[2]!.split(/\s*,\s*/).filter((q) => q !== "")
    return listed.includes(lesson.queue) ? line : `${m[1]}${[...listed, lesson.queue].join(", ")}${m[3]}`
  }).join("\n")
}

const alreadyRouted = (text: string, lesson: Lesson): boolean => parseRules(text).find((rule) => ruleMatches(rule, lesson.term))?.queue === lesson.queue

/**
 * What the simulated reflection model answers to a reflection prompt: the
 * current text with one or two rules learned from the feedback, in a fenced
 * block. When the prompt names a demo component, only lessons whose queue
 * that component owns are learned (a prompt naming no demo component, such
 * as the CLI's `system_prompt`, learns from every lesson). With probability
 * `noise` (default 0.15) a learned rule names a plausible but wrong queue.
 *
 * @since 0.1.0
 * @category reflection
 */
export const reflect = (prompt: string, seed = 0, options?: { readonly noise?: number }): string => {
  const noise = options?.noise ?? 0.15
  const current = currentTextOf(prompt)
  const rng = rngFor(seed, prompt)
  const component = componentOf(prompt)
  const open = feedbackLessons(prompt).filter((l) => (component === undefined || ownerOf[l.queue] === component) && !alreadyRouted(current, l))
  const count = open.length >= 2 && rng.nextFloat() < 0.7 ? 2 : 1
  let next = current
  for (const lesson of rng.shuffle(open).slice(0, count)) {
    const wrong = confusedWith[lesson.queue]
    next = applyLesson(next, wrong !== undefined && rng.nextFloat() < noise ? { ...lesson, queue: wrong } : lesson)
  }
  const fence = "`".repeat(Math.max(3, ...Array.from(next.matchAll(/^\s*(`+)/gm), (m) => m[1]!.length + 1)))
  return `Here is the revised text.\n\n${fence}\n${next}\n${fence}\n`
}

/**
 * The simulated reflection model (see `reflect`). Answers depend only on
 * the seed and the prompt.
 *
 * @since 0.1.0
 * @category models
 */
export const makeReflectionModel = (
  seed = 0,
  options?: { readonly noise?: number }
): LanguageModel.LanguageModel => LanguageModel.fromFunction((prompt) => reflect(LanguageModel.promptText(prompt), seed, options))

// ---------------------------------------------------------------------------
// Adapter
// ---------------------------------------------------------------------------

/**
 * The demo adapter: the candidate's components, read together (see
 * `instructionsOf`), are the system message, the ticket the user message.
 * The reflective records hold the ticket text (`Inputs`), the predicted
 * queue (`Generated Outputs`) and the metric's feedback (`Feedback`).
 *
 * @since 0.1.0
 * @category adapter
 */
export const makeAdapter = (
  taskModel: LanguageModel.LanguageModel
): Adapter.Adapter<Ticket, Adapter.ExampleTrace<Ticket, never, string>, string> =>
  Adapter.fromExample(
    (example: Ticket, candidate: Candidate) =>
      taskModel.complete({
        messages: [
          { role: "system", content: instructionsOf(candidate) },
          { role: "user", content: example.text }
        ]
      }).pipe(
        Effect.map((completion): Adapter.ExampleResult<never, string> => {
          const { feedback, score } = metric(example, completion.text)
          return { output: parseQueue(completion.text), score, feedback }
        })
      ),
    { describeInput: (example) => example.text }
  )
