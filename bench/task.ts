/**
 * The synthetic task the engine benchmarks run on: a keyword task like
 * test/fixtures/toy.ts, scaled up. Each example has a category; each
 * category's keyword is owned by one component; the system answers correctly
 * only when the owning component's text lists the keyword.
 *
 * The reflection model learns a missing keyword of its own component only
 * with a seeded probability (`learnPermille`), and otherwise rewrites a nonce,
 * so the child still differs from its parent and gets evaluated. That keeps
 * acceptances (and therefore validation evaluations) occasional over a long
 * run instead of front-loaded. With `forgetPermille` a rewrite may also drop
 * a keyword the text had, so that children can regress.
 *
 * Both the adapter and the model are synchronous and record the time spent in
 * their own bodies, so the harness can subtract it from wall time.
 */
import { Effect } from "effect"
import type { Adapter } from "../src/Adapter.js"
import type { Candidate } from "../src/Candidate.js"
import * as LanguageModel from "../src/LanguageModel.js"

export interface Example {
  readonly id: number
  readonly category: number
}

export interface Trace {
  readonly example: Example
  readonly output: string
  readonly score: number
  readonly feedback: string
}

export interface TaskOptions {
  readonly components: number
  readonly keywordsPerComponent: number
  readonly trainSize: number
  readonly valSize: number
  /** held-out examples no run ever sees (default 0) */
  readonly testSize?: number
  /** chance (per 1000 reflection calls) that a missing keyword is learned */
  readonly learnPermille: number
  /**
   * chance (per 1000 reflection calls) that the rewrite drops a keyword the
   * text already had (default 0: knowledge only grows). With it a child can
   * lose examples its parent solved, as a real model's rewrite can.
   */
  readonly forgetPermille?: number
}

/** FNV-1a: cheap and deterministic, so the "model" is reproducible. */
export const fnv = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

export interface Timers {
  adapterMs: number
  adapterCalls: number
  modelMs: number
  modelCalls: number
}

export interface Task {
  readonly seedCandidate: Candidate
  readonly trainset: ReadonlyArray<Example>
  readonly valset: ReadonlyArray<Example>
  readonly adapter: Adapter<Example, Trace, string>
  readonly reflectionModel: LanguageModel.LanguageModel
  readonly timers: Timers
  /** the mean score of `candidate` on the validation set, without any fault */
  readonly trueScore: (candidate: Candidate) => number
  /** the mean score of `candidate` on the held-out test set */
  readonly testScore: (candidate: Candidate) => number
}

export const makeTask = (options: TaskOptions): Task => {
  const { components, keywordsPerComponent } = options
  const categories = components * keywordsPerComponent
  const componentOf = (category: number) => category % components
  const keywordOf = (category: number) => `c${componentOf(category)}k${Math.floor(category / components)}`
  // a fixed scatter of categories so train and validation overlap without being identical
  const example = (id: number): Example => ({ id, category: (Math.imul(id, 2654435761) >>> 0) % categories })
  const trainset = Array.from({ length: options.trainSize }, (_, i) => example(i))
  const valset = Array.from({ length: options.valSize }, (_, i) => example(options.trainSize + i))
  const testset = Array.from({ length: options.testSize ?? 0 }, (_, i) => example(options.trainSize + options.valSize + i))
  const seedCandidate: Candidate = Object.fromEntries(
    Array.from({ length: components }, (_, c) => [`component_${c}`, `[c${c}] know: | v0`])
  )
  const timers: Timers = { adapterMs: 0, adapterCalls: 0, modelMs: 0, modelCalls: 0 }

  const solve = (ex: Example, candidate: Candidate): Trace => {
    const keyword = keywordOf(ex.category)
    const text = candidate[`component_${componentOf(ex.category)}`] ?? ""
    const ok = text.includes(` ${keyword} `)
    return {
      example: ex,
      output: ok ? "correct" : "wrong",
      score: ok ? 1 : 0,
      feedback: ok ? "Correct." : `Wrong: the instructions must mention '${keyword}'.`
    }
  }

  const adapter: Adapter<Example, Trace, string> = {
    evaluate: (batch, candidate, { captureTraces }) =>
      Effect.sync(() => {
        const t0 = performance.now()
        const traces = batch.map((ex) => solve(ex, candidate))
        const result = {
          outputs: traces.map((t) => t.output),
          scores: traces.map((t) => t.score),
          trajectories: captureTraces ? traces : undefined
        }
        timers.adapterMs += performance.now() - t0
        timers.adapterCalls++
        return result
      }),
    makeReflectiveDataset: (_candidate, evaluation, names) =>
      Effect.sync(() => {
        const records = (evaluation.trajectories ?? []).map((t) => ({
          "Inputs": `a question of category ${t.example.category}`,
          "Generated Outputs": t.output,
          "Feedback": t.feedback
        }))
        return Object.fromEntries(names.map((c) => [c, records]))
      })
  }

  const reflectionModel = LanguageModel.fromFunction((prompt) => {
    const t0 = performance.now()
    const text = LanguageModel.promptText(prompt)
    const current = /\[c(\d+)\] know: ([^|]*)\|/.exec(text)
    let out = "I cannot tell which component this is."
    if (current !== null) {
      const component = current[1]!
      const known = current[2]!.split(" ").filter((w) => w !== "")
      const prefix = `c${component}k`
      const asked = new Set<string>()
      for (const m of text.matchAll(/must mention '(c\d+k\d+)'/g)) {
        if (m[1]!.startsWith(prefix) && !known.includes(m[1]!)) asked.add(m[1]!)
      }
      const h = fnv(text)
      const first = asked.values().next()
      const learned = first.done !== true && h % 1000 < options.learnPermille ? [first.value] : []
      // other bits of the same hash: whether a known keyword is dropped, and which
      const forgotten = known.length > 0 && Math.floor(h / 1000) % 1000 < (options.forgetPermille ?? 0)
        ? known[(h >>> 20) % known.length]
        : undefined
      const words = [...known.filter((w) => w !== forgotten), ...learned]
      out = "Here is the improved text:\n```\n" + `[c${component}] know: ${words.map((w) => `${w} `).join("")}| v${h % 100000}` + "\n```\n"
    }
    timers.modelMs += performance.now() - t0
    timers.modelCalls++
    return out
  })

  const meanOn = (examples: ReadonlyArray<Example>) => (candidate: Candidate) => {
    let sum = 0
    for (const ex of examples) sum += solve(ex, candidate).score
    return examples.length === 0 ? 0 : sum / examples.length
  }

  return { seedCandidate, trainset, valset, adapter, reflectionModel, timers, trueScore: meanOn(valset), testScore: meanOn(testset) }
}
