/**
 * `npx tsx bench/criticalPath.ts`: where the wall time of a run with slow
 * calls goes, and what exact speculation past rejected steps could buy, read
 * from the default's event timeline on a task of the concurrency bench
 * (`--task 1x32r`, default; `--budget 1000`; `--seeds 0-9`; `--json FILE`).
 * Calls take 20 ms and reflections 50 ms with 16 in flight, as in
 * `npm run bench -- concurrency`; the seeds run one after the other in one
 * process (warm, as there).
 *
 * Per seed:
 * - **idle**: time with no adapter or model call in flight (the start, and
 *   the engine's work between a step's last call and the next step's first);
 * - **call overshoot**: how much longer than its simulated latency a call
 *   took, median and 90th percentile (the timer's lateness, and the work
 *   done as the calls of a round complete, one after the other);
 * - **steps**: steps (proposals planned together), those that rejected
 *   every child, and those with an accepted child;
 * - **speculation bound**: for each step that rejected every child, the time
 *   from its first child evaluation to the next step's start, summed. A next
 *   step planned as if the children were rejected, and started while they
 *   are judged, saves at most this. It pays for nothing the speculative
 *   step's parent evaluation on every step with an accepted child (its
 *   minibatch's size in calls: the **speculation waste**);
 * - **rejected after a rejection**: of the steps after a step without an
 *   accepted child, how many rejected every child (how well "the last step
 *   was rejected" predicts the next).
 *
 * Writes nothing unless `--json FILE` is given. Timings, not results: the
 * runs are those of the concurrency bench's default.
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { GepaEvent } from "../src/Event.js"
import * as FaultInjection from "../src/FaultInjection.js"
import * as Gepa from "../src/Gepa.js"
import type * as LanguageModel from "../src/LanguageModel.js"
import { tasks } from "./concurrency.js"
import { option } from "./overhead.js"
import { makeTask, type TaskOptions } from "./task.js"

/** The simulated latencies of a task call and of a reflection, in ms. */
export interface Latency {
  readonly taskMs: number
  readonly modelMs: number
}

/** Those of `npm run bench -- concurrency`. */
export const slowCalls: Latency = { taskMs: 20, modelMs: 50 }

/** A call of the adapter or the model: when it started and ended, in ms from the run's start. */
export interface CallSpan {
  readonly kind: "task" | "model"
  readonly start: number
  readonly end: number
}

/** What one run's timeline says (see the module's comment). */
export interface CriticalPathRow {
  readonly seed: number
  readonly wallMs: number
  readonly idleMs: number
  readonly overshootMedianMs: number
  readonly overshootP90Ms: number
  readonly steps: number
  readonly rejectedSteps: number
  readonly acceptedSteps: number
  readonly speculationBoundMs: number
  readonly speculationWasteCalls: number
  readonly afterRejection: { readonly steps: number; readonly rejected: number }
}

const quantile = (xs: ReadonlyArray<number>, p: number): number => {
  if (xs.length === 0) return 0
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(p * (sorted.length - 1))]!
}

/** The time within `[0, wallMs]` covered by no call. */
export const idleOf = (calls: ReadonlyArray<CallSpan>, wallMs: number): number => {
  const sorted = [...calls].sort((a, b) => a.start - b.start)
  let idle = 0
  let covered = 0
  for (const c of sorted) {
    if (c.start > covered) idle += c.start - covered
    covered = Math.max(covered, c.end)
  }
  return idle + Math.max(0, wallMs - covered)
}

/**
 * Reads one run's timeline: its events (with their times) and its calls.
 * A step is the proposals whose `IterationStarted` events come together,
 * in consecutive iterations.
 */
export const analyse = (
  seed: number,
  wallMs: number,
  events: ReadonlyArray<{ readonly at: number; readonly event: GepaEvent }>,
  calls: ReadonlyArray<CallSpan>,
  latency: Latency = slowCalls
): CriticalPathRow => {
  const steps: Array<{ readonly at: number; readonly iterations: Array<number> }> = []
  for (const { at, event } of events) {
    if (event._tag !== "IterationStarted") continue
    const last = steps.at(-1)
    if (last !== undefined && at - last.at < 0.5 && event.iteration === last.iterations.at(-1)! + 1) last.iterations.push(event.iteration)
    else steps.push({ at, iterations: [event.iteration] })
  }
  const outcome = (iterations: ReadonlyArray<number>): "accepted" | "rejected" | "other" => {
    const ends = events.flatMap(({ event }) => event._tag === "ProposalEnded" && iterations.includes(event.iteration) ? [event.outcome] : [])
    return ends.includes("accepted") ? "accepted" : ends.length > 0 && ends.every((o) => o === "rejected") ? "rejected" : "other"
  }
  const outcomes = steps.map((s) => outcome(s.iterations))
  let bound = 0
  let waste = 0
  for (let k = 0; k + 1 < steps.length; k++) {
    const step = steps[k]!
    if (outcomes[k] === "accepted") {
      const sampled = events.find(({ event }) => event._tag === "MinibatchSampled" && event.iteration === steps[k + 1]!.iterations[0])
      waste += sampled?.event._tag === "MinibatchSampled" ? sampled.event.ids.length : 0
    }
    if (outcomes[k] !== "rejected") continue
    const judged = events.find(({ event }) =>
      event._tag === "EvaluationStarted" && event.purpose === "child-minibatch" && step.iterations.includes(event.iteration)
    )
    if (judged !== undefined) bound += Math.max(0, steps[k + 1]!.at - judged.at)
  }
  let after = 0
  let rejectedAfter = 0
  for (let k = 1; k < outcomes.length; k++) {
    if (outcomes[k - 1] === "accepted") continue
    after++
    if (outcomes[k] === "rejected") rejectedAfter++
  }
  const overshoot = calls.map((c) => c.end - c.start - (c.kind === "task" ? latency.taskMs : latency.modelMs))
  return {
    seed,
    wallMs,
    idleMs: idleOf(calls, wallMs),
    overshootMedianMs: quantile(overshoot, 0.5),
    overshootP90Ms: quantile(overshoot, 0.9),
    steps: steps.length,
    rejectedSteps: outcomes.filter((o) => o === "rejected").length,
    acceptedSteps: outcomes.filter((o) => o === "accepted").length,
    speculationBoundMs: bound,
    speculationWasteCalls: waste,
    afterRejection: { steps: after, rejected: rejectedAfter }
  }
}

/** Runs the default on `task` with slow calls, and reads its timeline. */
export const measure = async (task: TaskOptions, budget: number, seed: number, latency: Latency = slowCalls): Promise<CriticalPathRow> => {
  const t = makeTask(task)
  const calls: Array<CallSpan> = []
  const events: Array<{ at: number; event: GepaEvent }> = []
  const t0 = performance.now()
  const now = () => performance.now() - t0
  const slow = FaultInjection.adapter(t.adapter, { latency: `${latency.taskMs} millis`, seed: seed + 1 }).adapter
  const adapter: typeof slow = {
    ...slow,
    evaluate: (batch, candidate, options) =>
      Effect.suspend(() => {
        const start = now()
        return Effect.tap(slow.evaluate(batch, candidate, options), () => Effect.sync(() => void calls.push({ kind: "task", start, end: now() })))
      })
  }
  const model = FaultInjection.languageModel(t.reflectionModel, { latency: `${latency.modelMs} millis`, seed: seed + 2 }).model
  const reflectionModel: LanguageModel.LanguageModel = {
    ...model,
    complete: (request) =>
      Effect.suspend(() => {
        const start = now()
        return Effect.tap(model.complete(request), () => Effect.sync(() => void calls.push({ kind: "model", start, end: now() })))
      })
  }
  await Effect.runPromise(Gepa.optimize({
    seedCandidate: t.seedCandidate,
    trainset: t.trainset,
    valset: t.valset,
    adapter,
    reflectionModel,
    maxMetricCalls: budget,
    maxConcurrency: 16,
    merge: true,
    seed,
    onEvent: (event) => void events.push({ at: now(), event })
  }))
  return analyse(seed, now(), events, calls, latency)
}

const main = async (argv: ReadonlyArray<string>) => {
  const taskName = option(argv, "--task") ?? "1x32r"
  const task = tasks[taskName]
  if (task === undefined) throw new Error(`--task: expected one of ${Object.keys(tasks).join(", ")}, got ${taskName}`)
  const budget = Number(option(argv, "--budget") ?? "1000")
  const range = /^(\d+)-(\d+)$/.exec(option(argv, "--seeds") ?? "0-9")
  if (range === null) throw new Error(`--seeds: expected FIRST-LAST (e.g. 0-9), got ${option(argv, "--seeds")}`)
  const rows: Array<CriticalPathRow> = []
  for (let seed = Number(range[1]); seed <= Number(range[2]); seed++) rows.push(await measure(task, budget, seed))
  const sum = (f: (r: CriticalPathRow) => number) => rows.reduce((n, r) => n + f(r), 0)
  const lines = [
    `# Critical path of the default, ${taskName} at ${budget} calls, slow calls (${slowCalls.taskMs} ms task, ${slowCalls.modelMs} ms reflection, 16 in flight)`,
    "",
    "| seed | wall ms | idle ms | call overshoot ms, median / p90 | steps | rejected whole / with an accepted child | speculation bound ms | speculation waste, calls |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map((r) =>
      `| ${r.seed} | ${r.wallMs.toFixed(0)} | ${r.idleMs.toFixed(0)} | ${r.overshootMedianMs.toFixed(2)} / ${r.overshootP90Ms.toFixed(2)} | ${r.steps} | ` +
      `${r.rejectedSteps} / ${r.acceptedSteps} | ${r.speculationBoundMs.toFixed(0)} | ${r.speculationWasteCalls} |`
    ),
    "",
    `All seeds: idle ${(100 * sum((r) => r.idleMs) / sum((r) => r.wallMs)).toFixed(1)} % of the wall; speculation bound ` +
    `${(100 * sum((r) => r.speculationBoundMs) / sum((r) => r.wallMs)).toFixed(1)} % of the wall for ` +
    `${(100 * sum((r) => r.speculationWasteCalls) / (budget * rows.length)).toFixed(1)} % of the budget paid for nothing; ` +
    `after a step without an accepted child, ${sum((r) => r.afterRejection.rejected)} of ${sum((r) => r.afterRejection.steps)} steps rejected every child.`
  ]
  console.log(lines.join("\n"))
  const json = option(argv, "--json")
  if (json !== undefined) await fs.writeFile(json, JSON.stringify({ date: new Date().toISOString(), task: taskName, budget, rows }, null, 2) + "\n")
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main(process.argv.slice(2))
