/**
 * A synthetic run for the dashboard's bench, screenshots and tests: an
 * instant deterministic adapter and a proposer that adds one rule per
 * proposal, so that a run reaches 1,000 candidates and a lineage hundreds
 * of generations deep in seconds. Scores rise with the rules a candidate
 * holds, with per-example noise, so some children tie or lose (rejected
 * branches) and the Pareto front holds several candidates.
 */
import { Effect } from "effect"
import * as Adapter from "../src/Adapter.js"
import type { Candidate } from "../src/Candidate.js"
import * as StopCondition from "../src/StopCondition.js"

export interface Example {
  readonly id: string
  readonly k: number
}

const examples = (prefix: string, n: number): ReadonlyArray<Example> => Array.from({ length: n }, (_, k) => ({ id: `${prefix}${k}`, k }))

export const train = examples("t", 24)
export const validation = examples("v", 12)

const hash = (text: string): number => {
  let h = 2166136261
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619)
  return (h >>> 0) / 4294967296
}

const rules = (text: string) => text.split("\n").filter((l) => l.startsWith("- ")).length

/** One example's score: the rules count, bent by noise that depends on the text and the example. */
export const score = (candidate: Candidate, example: Example): number => {
  const text = `${candidate["instructions"] ?? ""}\n${candidate["style"] ?? ""}`
  const n = rules(text)
  const noise = hash(`${text}#${example.k}`)
  return Math.max(0, Math.min(1, 0.1 + n / 400 + (noise - 0.5) * 0.06 + (example.k % 3) * 0.05))
}

const words = ["billing", "refund", "login", "outage", "invoice", "delivery", "warranty", "upgrade", "privacy", "abuse"]

export const seedCandidate: Candidate = {
  instructions: "Route each ticket to one queue.\nRules:",
  style: "Answer with the queue name only."
}

/** Proposes the parent's text plus one rule; every third proposal's rule holds markup, which every page must show as text. */
export const makeConfig = (options: {
  readonly maxCandidates: number
  readonly runDir?: string | undefined
  readonly seed?: number | undefined
}) => {
  let proposals = 0
  const adapter = Adapter.fromExample(
    (example: Example, candidate: Candidate) =>
      Effect.sync(() => {
        const s = score(candidate, example)
        return { output: s >= 0.5 ? "right" : "wrong", score: s, feedback: `example ${example.id}: ${s >= 0.5 ? "right" : "wrong"} (score ${s.toFixed(2)})` }
      }),
    { describeInput: (e) => `ticket ${e.id}` }
  )
  const config = {
    seedCandidate,
    trainset: train,
    valset: validation,
    adapter,
    proposer: (parent: Candidate, _dataset: unknown, components: ReadonlyArray<string>) =>
      Effect.sync(() => {
        proposals++
        const out: Record<string, string> = {}
        for (const c of components) {
          const word = words[Math.floor(hash(`${parent[c]}|${proposals}`) * words.length)]
          out[c] = proposals % 3 === 0
            ? `${parent[c]}\n- <script>alert(1)</script> tickets go to ${word}`
            : c === "instructions"
            ? `${parent[c]}\n- tickets about ${word} #${proposals} go to ${word}`
            : `${parent[c]}\n- mention ${word} when the ticket is about it (#${proposals})`
        }
        return out
      }),
    merge: { maxInvocations: 20 },
    acceptance: "improvement_or_equal" as const,
    minibatchSize: 3,
    maxMetricCalls: 60_000,
    stop: [StopCondition.maxCandidates(options.maxCandidates)],
    seed: options.seed ?? 0,
    ...(options.runDir === undefined ? {} : { runDir: options.runDir })
  }
  return config
}

/** The depth of each candidate: 0 for the seed, else one more than its deepest parent. */
export const depths = (parents: ReadonlyArray<ReadonlyArray<number>>): Array<number> => {
  const d: Array<number> = []
  for (let i = 0; i < parents.length; i++) d.push(parents[i]!.length === 0 ? 0 : 1 + Math.max(...parents[i]!.map((p) => d[p]!)))
  return d
}
