import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Ref } from "effect"
import type { ReflectiveRecord } from "../src/Adapter.js"
import { ConfigError } from "../src/Errors.js"
import { type Completion, fromFunction, type LanguageModel, LlmAuthenticationError, LlmRateLimited, scripted } from "../src/LanguageModel.js"
import * as Reflection from "../src/Reflection.js"

const stop = (text: string): Completion => ({ text, finishReason: "stop" })

const records: ReadonlyArray<ReflectiveRecord> = [
  {
    "Inputs": { question: "What is 7 * 6?", context: ["multiplication", "integers"] },
    "Generated Outputs": "43",
    "Feedback": "Expected 42 but got 43."
  },
  {
    "Inputs": "Name the capital of France.",
    "Generated Outputs": "Paris\nwhich is in Europe",
    "Feedback": "Correct."
  }
]

describe("Reflection.buildPrompt", () => {
  it("contains the component, its current text, the records and the answer format", () => {
    const prompt = Reflection.buildPrompt({
      component: "system_prompt",
      currentText: "You solve arithmetic problems.",
      records,
      config: {}
    })
    expect(prompt).toContain("\"system_prompt\"")
    expect(prompt).toContain("```\nYou solve arithmetic problems.\n```")
    expect(prompt).toContain("## Example 1")
    expect(prompt).toContain("## Example 2")
    expect(prompt).toContain("Expected 42 but got 43.")
    expect(prompt).toContain("What is 7 * 6?")
    expect(prompt).toMatch(/complete new text/)
    expect(prompt).toMatch(/one fenced code block/)
    expect(prompt).not.toContain("{{")
    expect(prompt).not.toContain("Additional instructions")
  })

  it("fences the current text with a fence longer than any inside it", () => {
    const currentText = "Reply in JSON like:\n```json\n{\"a\": 1}\n```"
    const prompt = Reflection.buildPrompt({ component: "c", currentText, records: [], config: {} })
    expect(prompt).toContain(`\`\`\`\`\n${currentText}\n\`\`\`\``)
    expect(prompt).toContain("(no examples)")
  })

  it("adds additional instructions where the placeholder is, or at the end", () => {
    const withDefault = Reflection.buildPrompt({
      component: "c",
      currentText: "t",
      records,
      config: { additionalInstructions: "The system can call a calculator tool. Keep it under 200 words." }
    })
    expect(withDefault).toContain("# Additional instructions\n\nThe system can call a calculator tool.")
    // the default template places them before the answer format
    expect(withDefault.indexOf("calculator")).toBeLessThan(withDefault.indexOf("# Answer format"))

    const custom = Reflection.buildPrompt({
      component: "c",
      currentText: "t",
      records,
      config: { template: "TEXT {{current_text}} DATA {{examples}}", additionalInstructions: "Be terse." }
    })
    expect(custom.startsWith("TEXT ```\nt\n``` DATA ## Example 1")).toBe(true)
    expect(custom.trimEnd().endsWith("Be terse.")).toBe(true)
  })

  it("uses the per-component template over the global one, substituting once", () => {
    const config: Reflection.ReflectionConfig = {
      template: "GLOBAL {{ current_text }} {{examples}}",
      componentTemplates: { tool_doc: "TOOL[{{component}}] {{current_text}} {{examples}} {{additional_instructions}}!" }
    }
    const tool = Reflection.buildPrompt({
      component: "tool_doc",
      currentText: "mentions {{examples}} literally",
      records: [{ Feedback: "ok" }],
      config
    })
    expect(tool.startsWith("TOOL[tool_doc] ```\nmentions {{examples}} literally\n```")).toBe(true)
    // no additional instructions: the placeholder vanishes
    expect(tool.endsWith(" !")).toBe(true)
    const other = Reflection.buildPrompt({ component: "other", currentText: "x", records: [], config })
    expect(other.startsWith("GLOBAL ```\nx\n```")).toBe(true)
    expect(Reflection.templateFor("nope", {})).toBe(Reflection.defaultTemplate)
  })
})

describe("Reflection.renderRecords", () => {
  it("renders nested objects and lists as headings and bullets, keeping long strings", () => {
    const long = "word ".repeat(2_000).trim()
    const md = Reflection.renderRecords([
      {
        "Inputs": {
          question: "q?",
          documents: [{ title: "A", body: "first\nsecond" }, { title: "B", body: "b" }],
          tags: ["x", "y"],
          empty: [],
          none: {},
          nothing: null
        },
        "Generated Outputs": long,
        "Feedback": "fine",
        "Score": 0.5,
        "Deep": { a: { b: { c: { d: { e: "bottom" } } } } }
      }
    ])
    expect(md).toContain("## Example 1")
    expect(md).toContain("### Inputs\n\n#### question\n\nq?")
    expect(md).toContain("#### documents\n\n##### Item 1\n\n###### title\n\nA\n\n###### body\n\n```\nfirst\nsecond\n```")
    expect(md).toContain("##### Item 2")
    expect(md).toContain("#### tags\n\n- x\n- y")
    expect(md).toContain("#### empty\n\n(none)")
    expect(md).toContain("#### none\n\n(empty)")
    expect(md).toContain("#### nothing\n\nnull")
    expect(md).toContain(`### Generated Outputs\n\n${long}`)
    expect(md).toContain("### Score\n\n0.5")
    // past heading level 6 the rest is JSON
    expect(md).toContain("###### c\n\n```json\n{\n  \"d\": {\n    \"e\": \"bottom\"\n  }\n}\n```")
  })

  it("keeps multi-line strings with fences inside from breaking the document", () => {
    const md = Reflection.renderRecords([{ "Generated Outputs": "```python\nprint(1)\n```" }])
    expect(md).toContain("````\n```python\nprint(1)\n```\n````")
  })
})

describe("Reflection.validateConfig", () => {
  it.effect("accepts the defaults and complete templates", () =>
    Effect.gen(function*() {
      yield* Reflection.validateConfig({})
      yield* Reflection.validateConfig({
        template: "{{current_text}} {{examples}}",
        componentTemplates: { a: "{{ examples }} and {{ current_text }} for {{component}}" },
        additionalInstructions: "x"
      })
    }))

  it.effect("a template missing a required placeholder is a ConfigError naming it", () =>
    Effect.gen(function*() {
      const global = yield* Effect.flip(Reflection.validateConfig({ template: "only {{current_text}}" }))
      expect(global).toBeInstanceOf(ConfigError)
      expect(global.field).toBe("reflection.template")
      expect(global.detail).toContain("{{examples}}")

      const perComponent = yield* Effect.flip(
        Reflection.validateConfig({ componentTemplates: { ok: "{{current_text}}{{examples}}", system_prompt: "nothing" } })
      )
      expect(perComponent.field).toBe("reflection.componentTemplates.system_prompt")
      expect(perComponent.detail).toContain("{{current_text}} and {{examples}}")
    }))
})

describe("Reflection.extractText", () => {
  const right = (text: string) => Either.right(text)
  const cases: ReadonlyArray<[string, string, Either.Either<string, string>]> = [
    ["a plain fenced block", "```\nNew prompt.\n```", right("New prompt.")],
    ["a language tag and text around", "Here you go:\n```markdown\nNew prompt.\nLine 2.\n```\nHope it helps!", right("New prompt.\nLine 2.")],
    ["a tilde fence", "~~~\nTilde text.\n~~~", right("Tilde text.")],
    ["a longer outer fence around inner code", "````\nUse JSON:\n```json\n{}\n```\nDone.\n````", right("Use JSON:\n```json\n{}\n```\nDone.")],
    [
      "a nested tagged block in a same-length fence",
      "```\nAnswer in:\n```json\n{\"a\":1}\n```\nThen stop.\n```",
      right("Answer in:\n```json\n{\"a\":1}\n```\nThen stop.")
    ],
    ["several blocks: the longest wins", "Old:\n```\nShort.\n```\nNew:\n```\nA much longer improved text.\n```", right("A much longer improved text.")]
  ]
  for (const [name, text, expected] of cases) {
    it(`adopts ${name}`, () => {
      expect(Reflection.extractText(stop(text))).toEqual(expected)
      // the lenient mode adopts every fenced answer the strict one does
      expect(Reflection.extractText(stop(text), { acceptUnfenced: true })).toEqual(expected)
    })
  }

  it("does not adopt an unfenced answer by default, however plausible", () => {
    const commentary = "I looked at the failures and the prompt needs more rules. Adding rule:banana should fix those questions."
    for (const text of [commentary, "You are a careful assistant. Always check the units."]) {
      const result = Reflection.extractText(stop(text))
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) expect(result.left).toContain("no fenced code block")
    }
  })

  it("adopts a reasonable unfenced answer with acceptUnfenced", () => {
    const text = "You are a careful assistant. Always check the units."
    expect(Reflection.extractText(stop(text), { acceptUnfenced: true })).toEqual(right(text))
  })

  const rejected: ReadonlyArray<[string, Completion, string]> = [
    ["a cut-off answer", { text: "```\nHalf a prom", finishReason: "length" }, "cut off"],
    ["a filtered answer", { text: "", finishReason: "content_filter" }, "content filter"],
    ["an empty answer", stop("   \n"), "empty"],
    ["an empty block", stop("```\n\n```"), "empty"],
    ["an unclosed fence", stop("Here:\n```\nNew prompt without end"), "never closed"],
    ["a refusal", stop("I'm sorry, but I can't help with rewriting this prompt."), "declined"],
    ["short chatter", stop("Done!"), "too short"],
    ["an unfenced answer with a preamble", stop("Sure! Here is the improved prompt: be precise and careful."), "conversation"]
  ]
  for (const [name, completion, reason] of rejected) {
    it(`does not adopt ${name}, even with acceptUnfenced`, () => {
      const result = Reflection.extractText(completion, { acceptUnfenced: true })
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) expect(result.left).toContain(reason)
    })
  }
})

describe("Reflection.proposeComponent / proposeAll", () => {
  it.effect("Proposed with the extracted text and the completion", () =>
    Effect.gen(function*() {
      const model = yield* scripted([stop("```\nBetter.\n```")])
      const proposal = yield* Reflection.proposeComponent(model, {
        component: "p",
        currentText: "Old.",
        records,
        config: {}
      })
      expect(proposal).toMatchObject({ _tag: "Proposed", component: "p", text: "Better." })
      expect(Reflection.$is("Proposed")(proposal)).toBe(true)
    }))

  it.effect("Skipped when the answer repeats the current text", () =>
    Effect.gen(function*() {
      const model = yield* scripted([stop("```\nSame.\n```")])
      const proposal = yield* Reflection.proposeComponent(model, {
        component: "p",
        currentText: "Same.\n",
        records,
        config: {}
      })
      expect(proposal._tag).toBe("Skipped")
    }))

  it.effect("an unfenced answer is Unusable by default and Proposed with acceptUnfenced", () =>
    Effect.gen(function*() {
      const answer = "Always reduce fractions to lowest terms before answering."
      const strict = yield* Reflection.proposeComponent(yield* scripted([stop(answer)]), {
        component: "p",
        currentText: "Old.",
        records,
        config: {}
      })
      expect(strict).toMatchObject({ _tag: "Unusable", component: "p" })
      if (strict._tag === "Unusable") expect(strict.reason).toContain("acceptUnfenced")
      const lenient = yield* Reflection.proposeComponent(yield* scripted([stop(answer)]), {
        component: "p",
        currentText: "Old.",
        records,
        config: { acceptUnfenced: true }
      })
      expect(lenient).toMatchObject({ _tag: "Proposed", text: answer })
    }))

  it.effect("acceptUnfenced must be a boolean", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Reflection.validateConfig({ acceptUnfenced: "yes" as unknown as boolean }))
      expect(error.field).toBe("reflection.acceptUnfenced")
    }))

  it.effect("a reflection failure no retry can fix is a ModelUnrecoverable naming the reflection model", () =>
    Effect.gen(function*() {
      const model = fromFunction(() => Effect.fail(new LlmAuthenticationError({ model: "gpt-4.1", status: 401, detail: "no", endpoint: "127.0.0.1:4010" })))
      const error = yield* Effect.flip(
        Reflection.proposeAll(model, { a: "A.", b: "B." }, { a: records, b: records }, ["a", "b"], {})
      )
      expect(error._tag).toBe("ModelUnrecoverable")
      expect(error.message).toBe(`the reflection model "gpt-4.1" at 127.0.0.1:4010 rejected the API key (HTTP 401)`)
    }))

  it.effect("model failures propagate", () =>
    Effect.gen(function*() {
      const model = fromFunction(() => Effect.fail(new LlmRateLimited({ model: "m", detail: "busy" })))
      const error = yield* Effect.flip(
        Reflection.proposeComponent(model, { component: "p", currentText: "x", records, config: {} })
      )
      expect(error._tag).toBe("LlmRateLimited")
    }))

  it.live("proposeAll proposes components concurrently, in order, skipping the impossible ones", () =>
    Effect.gen(function*() {
      const active = yield* Ref.make(0)
      const peak = yield* Ref.make(0)
      const model: LanguageModel = {
        complete: (prompt) =>
          Effect.gen(function*() {
            const now = yield* Ref.updateAndGet(active, (n) => n + 1)
            yield* Ref.update(peak, (p) => Math.max(p, now))
            yield* Effect.sleep("50 millis")
            yield* Ref.update(active, (n) => n - 1)
            const text = typeof prompt === "string" ? prompt : ""
            const name = /"(\w+)"/.exec(text)?.[1] ?? "?"
            return stop(`\`\`\`\nImproved ${name}.\n\`\`\``)
          })
      }
      const candidate = { a: "A.", b: "B.", c: "C.", d: "D." }
      const dataset = { a: records, b: records, c: records, d: [] }
      const proposals = yield* Reflection.proposeAll(model, candidate, dataset, ["a", "b", "c", "d", "zz"], {})
      expect(proposals.map((p) => p._tag)).toEqual(["Proposed", "Proposed", "Proposed", "Skipped", "Skipped"])
      expect(proposals.map((p) => p.component)).toEqual(["a", "b", "c", "d", "zz"])
      expect(proposals[1]).toMatchObject({ text: "Improved b." })
      expect(yield* Ref.get(peak)).toBe(3)
    }))

  it("per-component templates reach the model", () => {
    const prompt = Reflection.buildPrompt({
      component: "router",
      currentText: "route",
      records,
      config: { componentTemplates: { router: "ROUTER {{current_text}} {{examples}}" } }
    })
    expect(prompt.startsWith("ROUTER")).toBe(true)
  })
})
