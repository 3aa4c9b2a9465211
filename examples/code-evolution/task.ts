/**
 * Code evolution in miniature: a candidate holds a `code` component (a
 * structured value naming a branch of a local git repository) and a
 * `prompt` component (text). The system under optimization formats amounts
 * for an invoice: the code at the branch formats the number, the prompt
 * tells the (simulated) task model how to label it.
 *
 * Everything is offline and deterministic: the code proposer is a simulated
 * two-phase agent (it reads the feedback and writes a change request, then
 * executes it on a new branch), and the reflection model that rewrites the
 * prompt is simulated too.
 *
 * @since 0.3.0
 */
import { Effect, Schema } from "effect"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { CandidateSchema, ComponentProposer, type Event, Gepa, LanguageModel, StopCondition } from "effect-gepa"

/** The structured component: where the code lives and what last changed it. */
export const Code = Schema.Struct({
  /** the git branch holding this version of the code */
  branch: Schema.NonEmptyString,
  /** the module that is run, relative to the repository */
  entry: Schema.NonEmptyString,
  /** the change request that produced this branch */
  changeRequest: Schema.String,
  /** what the coding agent says it did */
  summary: Schema.String
})

/** The candidate: code plus the prompt the task model reads. */
export const Shape = CandidateSchema.make({ code: Code, prompt: Schema.String })
export type Candidate = CandidateSchema.Type<typeof Shape>

export interface Example {
  readonly id: string
  readonly amount: number
  readonly currency: string
  readonly expected: string
}

// Amounts without a currency test the code's number format; whole amounts
// with a currency test the label the prompt asks for.
export const examples: ReadonlyArray<Example> = [
  { id: "a1", amount: 1234.5, currency: "", expected: "1,234.50" },
  { id: "a2", amount: 98765, currency: "", expected: "98,765" },
  { id: "a3", amount: 5.25, currency: "", expected: "5.25" },
  { id: "b1", amount: 12, currency: "EUR", expected: "12 EUR" },
  { id: "b2", amount: 640, currency: "USD", expected: "640 USD" },
  { id: "b3", amount: 7, currency: "JPY", expected: "7 JPY" }
]

const SEED_CODE = `export function formatAmount(amount) {
  return String(amount)
}
`

const IMPROVED_CODE = `export function formatAmount(amount) {
  const fractional = !Number.isInteger(amount)
  const [whole, cents] = (fractional ? amount.toFixed(2) : String(amount)).split(".")
  const grouped = whole.replace(/\\B(?=(\\d{3})+(?!\\d))/g, ",")
  return cents === undefined ? grouped : grouped + "." + cents
}
`

const git = (repo: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", ["-c", "user.name=gepa", "-c", "user.email=gepa@example.invalid", "-C", repo, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"]
  }).trim()

/** Creates the repository with the seed code on `main`. */
export const createRepository = (dir: string): string => {
  const repo = path.join(dir, "repo")
  fs.mkdirSync(repo, { recursive: true })
  execFileSync("git", ["init", "-q", "-b", "main", repo])
  fs.writeFileSync(path.join(repo, "format.mjs"), SEED_CODE)
  git(repo, "add", "format.mjs")
  git(repo, "commit", "-q", "-m", "seed: print the amount as is")
  return repo
}

/** The seed candidate: the repository's main branch and a plain prompt. */
export const seedCandidate: Candidate = {
  code: { branch: "main", entry: "format.mjs", changeRequest: "", summary: "the code as written" },
  prompt: "Write the amount."
}

// The code at a branch, loaded once: branches are never rewritten.
const loaded = new Map<string, Promise<(amount: number) => string>>()
const codeAt = (repo: string, code: Candidate["code"]) =>
  Effect.tryPromise({
    try: () => {
      const key = `${repo}:${code.branch}:${code.entry}`
      let module = loaded.get(key)
      if (module === undefined) {
        const source = git(repo, "show", `${code.branch}:${code.entry}`)
        const file = path.join(repo, "..", "checkouts", `${code.branch}-${code.entry}`)
        fs.mkdirSync(path.dirname(file), { recursive: true })
        fs.writeFileSync(file, source)
        module = import(pathToFileURL(file).href).then((m: { readonly formatAmount: (amount: number) => string }) => m.formatAmount)
        loaded.set(key, module)
      }
      return module
    },
    catch: (e) => new Error(`cannot run ${code.entry} at branch ${code.branch}: ${e instanceof Error ? e.message : String(e)}`)
  })

// The simulated task model: it labels the number as its instructions say.
const taskModel = (prompt: string, number: string, currency: string): string =>
  /currency code/i.test(prompt) && currency !== "" ? `${number} ${currency}` : number

/** The adapter: it receives the decoded candidate, runs its code and prompt, and scores the output. */
export const adapter = (repo: string) =>
  CandidateSchema.fromExample(Shape, (example: Example, candidate) =>
    Effect.map(codeAt(repo, candidate.code), (formatAmount) => {
      const output = taskModel(candidate.prompt, formatAmount(example.amount), example.currency)
      const ok = output === example.expected
      const why = example.currency === ""
        ? "the amount needs a thousands separator and two decimals when it has cents"
        : "the currency code is missing after the amount"
      return { output, score: ok ? 1 : 0, feedback: ok ? "Correct." : `Expected "${example.expected}" but got "${output}": ${why}.` }
    }))

const feedbackOf = (records: ReadonlyArray<Readonly<Record<string, unknown>>>): string => records.map((r) => String(r["Feedback"] ?? "")).join("\n")

/**
 * The simulated two-phase code agent. Phase 1 (reflection) reads the
 * feedback and writes a change request; phase 2 (execution) checks out the
 * parent's branch, makes the change on a new branch and commits it. The
 * branch name is a hash of the parent branch and the request, so a
 * re-proposed change (after a resume) lands on the same branch.
 */
export const codeProposer = (repo: string): CandidateSchema.Proposer<Candidate, "code"> => ({ parent, records }) =>
  Effect.gen(function*() {
    const feedback = feedbackOf(records)
    if (!/thousands separator/.test(feedback)) {
      return yield* Effect.fail(new ComponentProposer.ComponentProposalFailed({ component: "code", reason: "the feedback asks for no code change" }))
    }
    const changeRequest = "Group thousands with commas and print two decimals when the amount has cents."
    const branch = `evolve-${createHash("sha256").update(`${parent.code.branch}\n${changeRequest}`).digest("hex").slice(0, 8)}`
    yield* Effect.try({
      try: () => {
        const exists = git(repo, "branch", "--list", branch) !== ""
        if (exists) return
        git(repo, "branch", branch, parent.code.branch)
        const work = path.join(repo, "..", "work", branch)
        git(repo, "worktree", "add", "-q", work, branch)
        fs.writeFileSync(path.join(work, parent.code.entry), IMPROVED_CODE)
        git(work, "commit", "-q", "-am", changeRequest)
        git(repo, "worktree", "remove", "--force", work)
      },
      catch: (e) => new ComponentProposer.ComponentProposalFailed({ component: "code", reason: e instanceof Error ? e.message : String(e) })
    })
    return { branch, entry: parent.code.entry, changeRequest, summary: "formatAmount groups thousands and keeps two decimals for cents" }
  })

/** The simulated reflection model: it reads the feedback in the reflection prompt and rewrites the instruction. */
export const reflectionModel = LanguageModel.fromFunction((prompt) =>
  /currency code is missing/.test(LanguageModel.promptText(prompt))
    ? "```\nWrite the amount, then a space and the currency code (for example: 12 EUR) when the ticket names a currency.\n```"
    : "```\nWrite the amount.\n```"
)

export interface RunOptions {
  readonly runDir?: string
  readonly maxMetricCalls: number
  /** stop after this many iterations (to show a resume) */
  readonly maxIterations?: number
  readonly onEvent?: (event: Event.GepaEvent) => void
}

/** The run's configuration: code and prompt proposals alternate; merges combine lineages. */
export const config = (repo: string, options: RunOptions) => ({
  candidateSchema: Shape,
  seedCandidate,
  trainset: examples,
  adapter: adapter(repo),
  reflectionModel,
  componentProposers: { code: codeProposer(repo) },
  // structured components (the code) and text components (the prompt) take turns
  componentSelector: CandidateSchema.kindSchedule(Shape),
  // a step plans a code and a prompt proposal from the same parent, side by side
  proposalsPerStep: 2,
  proposalSelection: "all" as const,
  minibatchSize: 6,
  merge: true,
  maxMetricCalls: options.maxMetricCalls,
  stop: options.maxIterations === undefined
    ? StopCondition.scoreThreshold(1)
    : [StopCondition.scoreThreshold(1), StopCondition.maxIterations(options.maxIterations)],
  telemetry: false,
  ...(options.runDir === undefined ? {} : { runDir: options.runDir }),
  ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent })
})

/** Runs the optimization. */
export const run = (repo: string, options: RunOptions) => Gepa.optimize(config(repo, options))
