/**
 * A generalization task for `optimizeAnything` (bench/anything.ts and
 * test/optimizeAnything.test.ts): one text lists the keywords it knows; an
 * example has a category and is solved when the text mentions the category's
 * keyword. The evaluator returns the score, objective scores (accuracy and
 * brevity) and side information the way a real evaluator does: a verdict, a
 * hint naming the missing keyword, and a long trace of the evaluation (the
 * kind of output that makes reflection prompts big).
 *
 * The reflection model is simulated: it reads the current text and the hints
 * in the prompt and learns one hinted keyword with a seeded probability
 * (`learnPermille`, hashed from the prompt), otherwise rewrites a nonce, so a
 * child always differs from its parent.
 */
import { Effect } from "effect"
import * as LanguageModel from "../src/LanguageModel.js"
import { fnv } from "./task.js"

export interface Example {
  readonly id: number
  readonly category: number
}

export interface AnythingTaskOptions {
  readonly categories: number
  readonly trainSize: number
  readonly valSize: number
  readonly testSize: number
  /** chance (per 1000 reflection calls) that a hinted keyword is learned */
  readonly learnPermille: number
  /** characters of the evaluator's trace in each evaluation's side info (default 1200) */
  readonly traceLength?: number
}

/** The task measured in bench/anything.ts (budget 150). */
export const defaultTaskOptions: AnythingTaskOptions = {
  categories: 12,
  trainSize: 36,
  valSize: 20,
  testSize: 200,
  learnPermille: 400
}

export const seedText = "know: | v0"

export const makeAnythingTask = (options: AnythingTaskOptions) => {
  const keywordOf = (category: number) => `kw${category}`
  const example = (id: number): Example => ({ id, category: (Math.imul(id + 7, 2654435761) >>> 0) % options.categories })
  const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => example(from + i))
  const dataset = range(0, options.trainSize)
  const valset = range(options.trainSize, options.valSize)
  const testset = range(options.trainSize + options.valSize, options.testSize)
  const traceLength = options.traceLength ?? 1200

  const known = (text: string): ReadonlyArray<string> => (/know: ([^|]*)\|/.exec(text)?.[1] ?? "").split(" ").filter((w) => w !== "")

  const solves = (text: string, ex: Example) => known(text).includes(keywordOf(ex.category))

  const trace = (text: string, ex: Example): string => {
    const lines: Array<string> = []
    for (let step = 0; lines.join("\n").length < traceLength; step++) {
      lines.push(
        `step ${step}: looked up category ${ex.category} among ${known(text).length} known keywords (checksum ${fnv(`${text}|${ex.id}|${step}`) % 9973})`
      )
    }
    return lines.join("\n").slice(0, traceLength)
  }

  const evaluate = (text: string, ex: Example) =>
    Effect.sync(() => {
      const ok = solves(text, ex)
      return {
        score: ok ? 1 : 0,
        scores: { accuracy: ok ? 1 : 0, brevity: Math.max(0, 1 - known(text).length / (2 * options.categories)) },
        sideInfo: {
          verdict: ok ? "solved" : "unsolved",
          hint: ok ? "none" : `the text must mention '${keywordOf(ex.category)}'`,
          trace: trace(text, ex)
        }
      }
    })

  const reflectionModel = LanguageModel.fromFunction((prompt) => {
    const text = LanguageModel.promptText(prompt)
    const current = /# Current text of "[^"]+"\s+```+\n([\s\S]*?)\n```+/.exec(text)?.[1] ?? seedText
    const have = known(current)
    const asked = Array.from(text.matchAll(/must mention '(kw\d+)'/g), (m) => m[1]!).filter((k) => !have.includes(k))
    const h = fnv(text)
    const learned = asked.length > 0 && h % 1000 < options.learnPermille ? [asked[0]!] : []
    return "```\n" + `know: ${[...have, ...learned].map((w) => `${w} `).join("")}| v${h % 100000}` + "\n```"
  })

  const testScore = (text: string) => testset.filter((ex) => solves(text, ex)).length / testset.length

  return { dataset, valset, testset, evaluate, reflectionModel, testScore, seedText }
}
