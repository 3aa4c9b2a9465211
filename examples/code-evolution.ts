/**
 * Code evolution in miniature, offline (`npx tsx examples/code-evolution.ts`).
 *
 * A candidate is typed: `code` is a structured value naming a branch of a
 * git repository the example creates in a temporary folder, `prompt` is a
 * text. Code changes come from a simulated coding agent that commits each
 * change on a new branch; prompt changes come from the (simulated)
 * reflection model. The schedule alternates the two kinds, a merge combines
 * the code lineage with the prompt lineage, and the run is stopped after its
 * first step and resumed from its run directory.
 *
 * @since 0.3.0
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { CandidateSchema, type Event } from "effect-gepa"
import * as Task from "./code-evolution/task.js"

const describe = (event: Event.GepaEvent): string | undefined => {
  switch (event._tag) {
    case "ProposalStarted":
      return `iteration ${event.iteration}: ${event.components.includes("code") ? "code  " : "prompt"} proposal from candidate ${event.parent}`
    case "CandidateAccepted":
      return `  candidate ${event.candidate} accepted (parents ${event.parents.join(" + ")}), validation score ${event.score.toFixed(3)}`
    case "MergeAttempted":
      return `iteration ${event.iteration}: merge of candidates ${event.parents.join(" and ")} over their ancestor ${event.ancestor}`
    case "ComponentRejected":
      return `  proposed ${event.component} rejected: ${event.reason}`
    default:
      return undefined
  }
}

const program = Effect.gen(function*() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-code-evolution-"))
  const repo = Task.createRepository(dir)
  const runDir = path.join(dir, "run")
  const onEvent = (event: Event.GepaEvent) => {
    const line = describe(event)
    if (line !== undefined) console.log(line)
  }
  console.log(`repository: ${repo} (branch main holds the seed code)\n`)

  // the first process stops after its first step: a code and a prompt proposal side by side
  console.log("first process (stops after 2 iterations):")
  const first = yield* Task.run(repo, { runDir, maxMetricCalls: 200, maxIterations: 2, onEvent })
  console.log(`  stopped: ${first.stopReason}; best so far ${first.bestScore?.toFixed(3)}\n`)

  console.log("resumed from the run directory:")
  const result = yield* Task.run(repo, { runDir, maxMetricCalls: 200, onEvent })

  console.log(`\nstopped: ${result.stopReason}`)
  console.log(`validation score: seed ${result.seedScore?.toFixed(3)} -> best ${result.bestScore?.toFixed(3)} (candidate ${result.bestIndex})`)
  const best = result.bestCandidate
  const versions = result.versions[result.bestIndex] ?? {}
  console.log(`best code:   branch ${best.code.branch} (version ${versions["code"]?.version}, from candidate ${versions["code"]?.origin})`)
  console.log(`             ${best.code.summary}`)
  console.log(`best prompt: ${JSON.stringify(best.prompt)} (version ${versions["prompt"]?.version}, from candidate ${versions["prompt"]?.origin})`)
  const seed = Task.Shape.encode(Task.seedCandidate)
  const now = Task.Shape.encode(best)
  if (seed._tag === "Right" && now._tag === "Right") {
    console.log("\nthe code component, seed -> best:")
    for (const line of CandidateSchema.diff(seed.right["code"] ?? "", now.right["code"] ?? "")) console.log(`  ${line}`)
  }
  console.log(`\nthe code at ${best.code.branch}:`)
  console.log(fs.readFileSync(path.join(dir, "checkouts", `${best.code.branch}-${best.code.entry}`), "utf8"))
  fs.rmSync(dir, { recursive: true, force: true })
  return result
})

Effect.runPromise(program).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
