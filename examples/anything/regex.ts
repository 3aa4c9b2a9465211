/**
 * The task of the optimize-anything example (`examples/anything.ts`): a
 * regular expression that should accept semantic versions ("1.4.0",
 * "2.0.0-rc.1", "1.0.0+build.7") and reject everything else evolves against
 * its failing cases.
 *
 * The evaluator reports side information (which text was missed or wrongly
 * accepted, and what part of it matched) and logs a warning through
 * `Effect.logWarning` when the pattern is not anchored; both reach the
 * reflection model. The reflection model is simulated: it reads the
 * evaluations in the prompt and revises the pattern from what they say
 * (anchor it when the logs warn about partial matches, generalize each
 * missed text into a pattern of its shape). It knows nothing of semantic
 * versions: everything it adds comes from the side information.
 *
 * @since 0.2.0
 */
import { Effect } from "effect"
import * as LanguageModel from "effect-gepa/LanguageModel"
import * as OptimizeAnything from "effect-gepa/OptimizeAnything"

export interface Case {
  readonly text: string
  readonly valid: boolean
}

const cases = (valid: boolean, texts: ReadonlyArray<string>): ReadonlyArray<Case> => texts.map((text) => ({ text, valid }))

export const dataset: ReadonlyArray<Case> = [
  ...cases(true, ["1.4.0", "0.9.12", "2.0.0-rc.1", "1.0.0+build.7", "3.2.1-beta.4", "10.20.30"]),
  ...cases(false, ["1.2", "v1.2.3", "1.2.3.4", "release 1.2.3", "1.x.0", "1.2.3-"])
]
export const valset: ReadonlyArray<Case> = [
  ...cases(true, ["4.5.6", "0.0.1-alpha.3", "7.1.0+exp.2", "12.0.3"]),
  ...cases(false, ["4.5", "version 2.0.0", "2.0.0.1", "x.y.z"])
]
export const testset: ReadonlyArray<Case> = [
  ...cases(true, ["5.0.0", "1.2.3-rc.9", "0.1.0+sha.5", "99.99.99", "2.3.4-dev.1"]),
  ...cases(false, ["5.0", "5.0.0.0", "see 5.0.0", "five.0.0", "v5.0.0"])
]

// The evaluator: compiles the candidate and checks one case. A pattern that
// does not compile is a failed evaluation (its message reaches reflection).
export const evaluate = (pattern: string, example: Case) =>
  Effect.gen(function*() {
    const regex = yield* Effect.try({
      try: () => new RegExp(pattern),
      catch: (e) => new Error(`the pattern does not compile: ${(e as Error).message}`)
    })
    if (!pattern.startsWith("^") || !pattern.endsWith("$")) {
      yield* Effect.logWarning("the pattern is not anchored with ^ and $: it can accept a longer text through a part of it")
    }
    const match = regex.exec(example.text)
    const accepted = match !== null
    const verdict = accepted === example.valid ? "correct" : example.valid ? "missed" : "wrongly accepted"
    return {
      score: verdict === "correct" ? 1 : 0,
      sideInfo: {
        text: example.text,
        verdict,
        ...(match !== null && match[0] !== example.text ? { "matched part": match[0] } : {})
      }
    }
  })

// ---------------------------------------------------------------------------
// The simulated reflection model: reads the prompt as a model would.
// ---------------------------------------------------------------------------

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The shape of a text: digit runs become \d+, letter runs [A-Za-z]+, the rest literal. */
const shapeOf = (text: string): string =>
  text.split(/(\d+|[A-Za-z]+)/).filter((p) => p !== "").map((p) => /^\d+$/.test(p) ? "\\d+" : /^[A-Za-z]+$/.test(p) ? "[A-Za-z]+" : escape(p)).join("")

const alternativesOf = (pattern: string): Array<string> => {
  const body = pattern.replace(/^\^/, "").replace(/\$$/, "")
  const inner = /^\(\?:(.*)\)$/.exec(body)?.[1] ?? body
  return inner.split("|").filter((a) => a !== "")
}

export const reflect = (prompt: string): string => {
  const current = /# Current text of "candidate"\s+```+\n([\s\S]*?)\n```+/.exec(prompt)?.[1] ?? ""
  const evaluations = prompt.split(/^## Example \d+$/m).slice(1)
  const field = (section: string, name: string) => new RegExp(`^### ${name}\\n\\n(.*)$`, "m").exec(section)?.[1]
  const missed = evaluations.filter((e) => field(e, "verdict") === "missed").map((e) => field(e, "text")!)
  const logsWarnAnchor = /not anchored/.test(prompt)
  const wronglyAccepted = evaluations.filter((e) => field(e, "verdict") === "wrongly accepted").map((e) => field(e, "text")!)
  const alternatives = alternativesOf(current)
  for (const text of missed) {
    const shape = shapeOf(text)
    if (!alternatives.includes(shape)) alternatives.push(shape)
  }
  // a wrongly accepted text drops the alternatives that accept it as a whole
  const kept = alternatives.filter((a) => !wronglyAccepted.some((t) => new RegExp(`^(?:${a})$`).test(t)))
  const body = kept.length === 1 ? kept[0]! : `(?:${kept.join("|")})`
  const anchored = logsWarnAnchor || wronglyAccepted.length > 0 || /^\^/.test(current)
  const next = anchored ? `^${body}$` : body
  return "Revised pattern:\n```\n" + next + "\n```"
}

/**
 * Runs the optimization of the pattern, from a deliberately poor seed.
 *
 * @since 0.2.0
 */
export const optimizeRegex = (options?: { readonly maxMetricCalls?: number }) =>
  OptimizeAnything.optimizeAnything({
    seedCandidate: "\\d+\\.\\d+",
    objective: "A regular expression (JavaScript syntax) that accepts exactly the valid version strings.",
    background: "Candidates are compiled with new RegExp(candidate) and tested with exec on each text.",
    evaluator: evaluate,
    dataset,
    valset,
    testset,
    // the seed too, for the before/after line of the example
    testSeed: true,
    reflectionModel: LanguageModel.fromFunction((prompt) => reflect(LanguageModel.promptText(prompt))),
    maxMetricCalls: options?.maxMetricCalls ?? 150,
    seed: 1
  })
