import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Candidate } from "../src/Candidate.js"
import * as Reflection from "../src/Reflection.js"
import * as Task from "../examples/demo/task.js"

const all = [...Task.train, ...Task.validation, ...Task.test]

const accuracy = (model: ReturnType<typeof Task.makeTaskModel>, candidate: Candidate, tickets: ReadonlyArray<Task.Ticket>) =>
  Effect.gen(function*() {
    const adapter = Task.makeAdapter(model)
    const batch = yield* adapter.evaluate(tickets, candidate, { captureTraces: false })
    return batch.scores.reduce((a, b) => a + b, 0) / tickets.length
  })

// The seed candidate with one component replaced.
const withComponent = (name: Task.ComponentName, text: string): Candidate => ({ ...Task.seedCandidate, [name]: text })

// The queues of the rules a text states.
const ruleQueues = (text: string) => Task.parseRules(text).map((r) => r.queue)

// The text inside the answer's (only) fenced block.
const fencedText = (answer: string): string => {
  const m = /^(`{3,})\n([\s\S]*?)\n\1\s*$/m.exec(answer)
  expect(m).not.toBeNull()
  return m![2]!
}

// A reflection prompt in the style of the GEPA paper, built here so the
// simulated reflector is not tied to one prompt layout.
const paperStylePrompt = (current: string, records: ReadonlyArray<Record<string, unknown>>) =>
  "I provided an assistant with the following instructions to perform a task for me:\n```\n" + current +
  "\n```\n\nThe following are examples of different task inputs provided to the assistant along with the assistant's " +
  "response for each of them, and some feedback on how the assistant's response could be better:\n```\n" +
  records.map((r, i) =>
    `# Example ${i + 1}\n## Inputs\n${String(r["Inputs"])}\n## Generated Outputs\n${String(r["Generated Outputs"])}\n## Feedback\n${String(r["Feedback"])}`
  ).join("\n\n") +
  "\n```\n\nYour task is to write a new instruction for the assistant. Provide the new instructions within ``` blocks."

const records = (candidate: Candidate, component: string, tickets: ReadonlyArray<Task.Ticket>) =>
  Effect.gen(function*() {
    const adapter = Task.makeAdapter(Task.makeTaskModel(0, { slipRate: 0 }))
    const evaluation = yield* adapter.evaluate(tickets, candidate, { captureTraces: true })
    const dataset = yield* adapter.makeReflectiveDataset(candidate, evaluation, [component])
    return dataset[component]!
  })

describe("demo task data", () => {
  it("has disjoint splits of a realistic size with unique ids", () => {
    expect(Task.train.length + Task.validation.length + Task.test.length).toBeGreaterThanOrEqual(60)
    expect(new Set(all.map((t) => t.id)).size).toBe(all.length)
    expect(new Set(all.map((t) => t.text)).size).toBe(all.length)
  })

  it("never mentions triggers of two rules in one ticket, and uses every trigger in training", () => {
    for (const t of all) {
      const rules = Task.routingRules.filter((r) => r.triggers.some((x) => Task.mentions(t.text, x)))
      expect(rules.length, t.text).toBeLessThanOrEqual(1)
    }
    for (const rule of Task.routingRules) {
      for (const trigger of rule.triggers) {
        expect(Task.train.some((t) => Task.mentions(t.text, trigger)), trigger).toBe(true)
      }
    }
  })

  it("needs the hidden rules: the naive router misroutes every rule ticket", () => {
    for (const t of all) {
      if (Task.hiddenRuleFor(t.text) !== undefined) expect(Task.defaultRoute(t.text).queue, t.text).not.toBe(t.queue)
    }
  })
})

describe("demo task models", () => {
  it("has two components, each owning the rules of half the special queues", () => {
    expect(Object.keys(Task.seedCandidate)).toEqual([...Task.componentNames])
    expect(Task.componentNames).toContain(Task.componentName)
    for (const name of Task.componentNames) {
      expect(Task.routingRules.filter((r) => Task.ownerOf[r.queue] === name)).toHaveLength(4)
    }
    for (const rule of Task.routingRules) expect(Task.componentNames, rule.queue).toContain(Task.ownerOf[rule.queue])
  })

  it.effect("the seed candidate scores low on validation", () =>
    Effect.gen(function*() {
      const score = yield* accuracy(Task.makeTaskModel(), Task.seedCandidate, Task.validation)
      expect(score).toBeLessThan(0.5)
    }))

  it.effect("the reference candidate and prompt, with all true rules, score about 1", () =>
    Effect.gen(function*() {
      const single: Candidate = { [Task.componentName]: Task.referencePrompt }
      for (const split of [Task.train, Task.validation, Task.test]) {
        for (const candidate of [Task.referenceCandidate, single]) {
          expect(yield* accuracy(Task.makeTaskModel(0, { slipRate: 0 }), candidate, split)).toBe(1)
          expect(yield* accuracy(Task.makeTaskModel(3), candidate, split)).toBeGreaterThanOrEqual(0.9)
        }
      }
    }))

  it.effect("the task model needs both components: each reference half alone misses the other half", () =>
    Effect.gen(function*() {
      const exact = Task.makeTaskModel(0, { slipRate: 0 })
      const full = yield* accuracy(exact, Task.referenceCandidate, Task.validation)
      for (const name of Task.componentNames) {
        const half = yield* accuracy(exact, withComponent(name, Task.referenceCandidate[name]!), Task.validation)
        expect(half).toBeGreaterThan(yield* accuracy(exact, Task.seedCandidate, Task.validation))
        expect(half).toBeLessThan(full)
      }
      expect(Task.instructionsOf(Task.referenceCandidate)).toContain(Task.referenceCandidate["escalation_rules"]!)
    }))

  it.effect("the task model reads system messages and is deterministic", () =>
    Effect.gen(function*() {
      const model = Task.makeTaskModel(5)
      const ask = (system: string, ticket: string) => model.complete({ messages: [{ role: "system", content: system }, { role: "user", content: ticket }] })
      const ticket = "I filed a chargeback but cannot log in"
      expect((yield* ask("Route tickets.", ticket)).text).toBe("account")
      expect((yield* ask("Route tickets.\n1. If the message contains \"chargeback\", send it to billing-disputes", ticket)).text)
        .toBe("billing-disputes")
      // a conjunction rule applies only when every part is mentioned
      expect((yield* ask("- If the ticket mentions 'chargeback' and 'refund', route it to x-queue.", ticket)).text).toBe("account")
      const a = yield* ask(Task.referencePrompt, ticket)
      const b = yield* ask(Task.referencePrompt, ticket)
      expect(a.text).toBe(b.text)
    }))

  it("parses queues out of chatty answers", () => {
    expect(Task.parseQueue("Queue: billing-disputes.")).toBe("billing-disputes")
    expect(Task.parseQueue("billing")).toBe("billing")
    expect(Task.parseQueue("I'd say account-security, not account")).toBe("account-security")
    expect(Task.parseQueue("  no idea ")).toBe("no idea")
  })

  it("gives feedback that reveals the rule", () => {
    const t = Task.train.find((x) => x.text.includes("chargeback"))!
    const wrong = Task.metric(t, "billing")
    expect(wrong.score).toBe(0)
    expect(wrong.feedback).toContain("Expected queue: billing-disputes; the ticket mentions 'chargeback'")
    expect(Task.metric(t, "billing-disputes")).toEqual({ score: 1, feedback: "Correct: this ticket belongs in billing-disputes." })
  })
})

describe("simulated reflection", () => {
  const failing = Task.train.filter((t) => Task.hiddenRuleFor(t.text) !== undefined)
  const ownedBy = (name: Task.ComponentName) => failing.filter((t) => Task.ownerOf[t.queue] === name)
  // two failing tickets per component and one the seed routes right
  const batch = [
    ownedBy("triage_rules")[0]!,
    ownedBy("escalation_rules")[0]!,
    ownedBy("triage_rules")[4]!,
    ownedBy("escalation_rules")[5]!,
    Task.train.find((t) => Task.hiddenRuleFor(t.text) === undefined)!
  ]
  const seedText = Task.seedCandidate[Task.componentName]!
  const exact = Task.makeTaskModel(0, { slipRate: 0 })

  it.effect("improves the prompt on the examples it got feedback for (paper-style prompt)", () =>
    Effect.gen(function*() {
      const recs = yield* records(Task.seedCandidate, Task.componentName, batch)
      const model = Task.makeReflectionModel(1)
      const answer = (yield* model.complete(paperStylePrompt(seedText, recs))).text
      const improved = fencedText(answer)
      expect(improved.startsWith(seedText.split("\n")[0]!)).toBe(true)
      const single = (text: string): Candidate => ({ [Task.componentName]: text })
      expect(yield* accuracy(exact, single(improved), batch)).toBeGreaterThan(yield* accuracy(exact, single(seedText), batch))
    }))

  it("names the component a reflection prompt asks about", () => {
    for (const name of Task.componentNames) {
      const prompt = Reflection.buildPrompt({ component: name, currentText: Task.seedCandidate[name]!, records: [], config: {} })
      expect(Task.componentOf(prompt)).toBe(name)
    }
    expect(Task.componentOf(paperStylePrompt(seedText, []))).toBeUndefined()
  })

  for (const name of Task.componentNames) {
    it.effect(`improves ${name} with the project's reflection prompt, with rules it owns only, for almost every seed`, () =>
      Effect.gen(function*() {
        const current = Task.seedCandidate[name]!
        const recs = yield* records(Task.seedCandidate, name, batch)
        const prompt = Reflection.buildPrompt({ component: name, currentText: current, records: recs, config: {} })
        const before = yield* accuracy(exact, Task.seedCandidate, batch)
        let better = 0
        for (let seed = 0; seed < 40; seed++) {
          const completion = yield* Task.makeReflectionModel(seed).complete(prompt)
          const text = Reflection.extractText(completion)
          expect(text._tag).toBe("Right")
          if (text._tag !== "Right") continue
          expect(text.right.startsWith(current.split("\n")[0]!)).toBe(true)
          // noise may name a plausible wrong queue, but the trigger it
          // learned is always one of this component's
          for (const rule of Task.parseRules(text.right)) {
            const triggers = rule.groups.flat()
            expect(triggers.every((t) => Task.ownerOf[Task.correctQueue(t)] === name), `${name}: ${triggers.join(", ")}`)
              .toBe(true)
          }
          const after = yield* accuracy(exact, withComponent(name, text.right), batch)
          expect(after).toBeGreaterThanOrEqual(before)
          if (after > before) better++
        }
        expect(better).toBeGreaterThanOrEqual(32)
      }))
  }

  it("learns every lesson when the prompt names no demo component (the CLI's system_prompt)", () => {
    const prompt = Reflection.buildPrompt({
      component: "system_prompt",
      currentText: seedText,
      records: [
        { "Inputs": "a", "Generated Outputs": "billing", "Feedback": "Expected queue: billing-disputes; the ticket mentions 'chargeback'." },
        { "Inputs": "b", "Generated Outputs": "account", "Feedback": "Expected queue: account-security; the ticket mentions 'hacked'." }
      ],
      config: {}
    })
    const text = fencedText(Task.reflect(prompt, 0, { noise: 0 }))
    expect(new Set(ruleQueues(text))).toEqual(new Set(["billing-disputes", "account-security"]))
  })

  it("finds the current text without fences and fixes a wrong rule", () => {
    const current = `${seedText}\nRouting rules (the first matching rule wins):\n- If the ticket mentions 'chargeback', route it to billing.`
    const prompt = `Current instructions are below.\n<current_text>\n${current}\n</current_text>\n` +
      "Feedback: Wrong queue 'billing'. Expected queue: billing-disputes; the ticket mentions 'chargeback'."
    expect(Task.currentTextOf(prompt)).toBe(current)
    const improved = fencedText(Task.reflect(prompt, 0, { noise: 0 }))
    expect(Task.routeWithPrompt(improved, "I filed a chargeback")).toBe("billing-disputes")
    expect(Task.parseRules(improved)).toHaveLength(1)

    // no markers and no fences: the rule lines are found anywhere
    const bare = `Rules so far:\n- If the ticket mentions 'hacked', route it to account-security.\n` +
      "Expected queue: returns; the ticket mentions 'damaged'."
    const rebuilt = fencedText(Task.reflect(bare, 0, { noise: 0 }))
    expect(Task.routeWithPrompt(rebuilt, "I was hacked")).toBe("account-security")
    expect(Task.routeWithPrompt(rebuilt, "It arrived damaged")).toBe("returns")
  })

  it("is deterministic for a seed and varies across seeds", () => {
    const prompt = paperStylePrompt(seedText, [
      { "Inputs": "a", "Generated Outputs": "billing", "Feedback": "Expected queue: billing-disputes; the ticket mentions 'chargeback'." },
      { "Inputs": "b", "Generated Outputs": "account", "Feedback": "Expected queue: account-security; the ticket mentions 'hacked'." },
      { "Inputs": "c", "Generated Outputs": "shipping", "Feedback": "Expected queue: returns; the ticket mentions 'damaged'." }
    ])
    expect(Task.reflect(prompt, 4)).toBe(Task.reflect(prompt, 4))
    const answers = new Set(Array.from({ length: 20 }, (_, s) => Task.reflect(prompt, s)))
    expect(answers.size).toBeGreaterThan(3)
  })

  it.effect("a greedy reflect-and-accept loop over both components learns most of the policy", () =>
    Effect.gen(function*() {
      const model = Task.makeTaskModel(0)
      const reflector = Task.makeReflectionModel(0)
      let candidate: Candidate = Task.seedCandidate
      for (let round = 0; round < 30; round++) {
        const minibatch = Array.from({ length: 4 }, (_, k) => Task.train[(round * 4 + k) % Task.train.length]!)
        // both components per minibatch: a fixed alternation would pair each
        // minibatch with the same component on every pass over the data
        for (const name of Task.componentNames) {
          const recs = yield* records(candidate, name, minibatch)
          const answer = yield* reflector.complete(
            Reflection.buildPrompt({ component: name, currentText: candidate[name]!, records: recs, config: {} })
          )
          const text = Reflection.extractText(answer)
          if (text._tag !== "Right") continue
          const next = { ...candidate, [name]: text.right }
          if ((yield* accuracy(model, next, minibatch)) > (yield* accuracy(model, candidate, minibatch))) candidate = next
        }
      }
      expect(yield* accuracy(model, candidate, Task.validation)).toBeGreaterThanOrEqual(0.8)
      // noise may have sent a trigger to a wrong queue, but never into the
      // other component
      for (const name of Task.componentNames) {
        for (const rule of Task.parseRules(candidate[name]!)) {
          expect(rule.groups.flat().every((t) => Task.ownerOf[Task.correctQueue(t)] === name)).toBe(true)
        }
      }
    }))
})
