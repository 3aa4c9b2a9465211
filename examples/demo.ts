/**
 * `npm start`: the offline demo. Optimizes the two instruction components
 * of a simulated ticket router with GEPA (reflection and merges), shows
 * progress, prints a summary and the best candidate, and writes an HTML
 * report into the run directory.
 *
 * With OPENAI_API_KEY set, the same run uses real models (see
 * `examples/demo/run.ts`). With `--ui` (`npm start -- --ui`) it also serves
 * the live dashboard and prints its address (see `examples/demo/ui.ts`).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as Dashboard from "effect-gepa/Dashboard"
import * as path from "node:path"
import type { GepaEvent } from "effect-gepa/Event"
import { defaultMaxMetricCalls, modelsFromEnv, runDemo, simulatedModels, summarize } from "./demo/run.js"
import * as Task from "./demo/task.js"
import { pacedModels, untilInterrupted, wantsUi } from "./demo/ui.js"

const out = process.stdout
const ui = wantsUi()
// with the dashboard the page shows progress: the terminal keeps plain lines
const tty = out.isTTY === true && !ui
const fmt = (score: number | null | undefined) => (score === null || score === undefined ? "n/a" : score.toFixed(3))

// What the progress display keeps between events.
const progress = {
  budget: undefined as number | undefined,
  metricCalls: 0,
  iteration: 0,
  best: undefined as number | undefined,
  seed: undefined as number | undefined,
  candidates: 1,
  lastDraw: 0
}

const bar = (done: number, total: number, width = 28): string => {
  const filled = Math.round((Math.min(done, total) / Math.max(1, total)) * width)
  return `[${"█".repeat(filled)}${"░".repeat(width - filled)}]`
}

const statusLine = (): string => {
  const budget = progress.budget === undefined ? "" : `/${progress.budget}`
  return `${progress.budget === undefined ? "" : `${bar(progress.metricCalls, progress.budget)} `}` +
    `${progress.metricCalls}${budget} metric calls · iteration ${progress.iteration} · ` +
    `best ${fmt(progress.best)} · ${progress.candidates} candidates`
}

const draw = (force = false) => {
  const now = Date.now()
  // redrawing on every event would cost more than the simulated run itself
  if (!force && now - progress.lastDraw < 50) return
  progress.lastDraw = now
  out.write(`\r\x1b[2K${statusLine()}`)
}

const plain = (line: string) => out.write(`${line}\n`)

const onEvent = (event: GepaEvent): void => {
  switch (event._tag) {
    case "OptimizationStarted":
      progress.budget = event.budget
      if (!tty) {
        plain(
          `${event.resumed ? "resumed" : "started"}: ${event.trainSize} training and ${event.valSize} validation tickets, ` +
            `budget ${event.budget ?? "unlimited"} metric calls`
        )
      }
      break
    case "BudgetUpdated":
      progress.metricCalls = event.metricCalls
      break
    case "IterationStarted":
      progress.iteration = event.iteration
      progress.metricCalls = event.metricCalls
      break
    case "ValsetEvaluated":
      if (progress.seed === undefined) progress.seed = event.score
      if (progress.best === undefined || event.score > progress.best) {
        progress.best = event.score
        if (!tty && event.candidate === 0) plain(`seed prompt scores ${fmt(event.score)} on validation`)
        else if (!tty) plain(`iteration ${event.iteration}: new best ${fmt(event.score)} (candidate ${event.candidate})`)
      }
      break
    case "CandidateAccepted":
      progress.candidates = event.candidate + 1
      break
    case "MergeAccepted":
      progress.candidates = event.candidate + 1
      if (!tty) plain(`iteration ${event.iteration}: merged candidates ${event.parents.join(" and ")} into ${event.candidate}`)
      break
    case "Error":
      if (tty) out.write("\r\x1b[2K")
      plain(`iteration ${event.iteration}: ${event.message}${event.willContinue ? " (continuing)" : ""}`)
      break
    case "IterationEnded":
      progress.metricCalls = event.state.metricCalls
      if (!tty && event.iteration % 10 === 0) plain(`progress: ${statusLine()}`)
      break
  }
  if (tty) draw(event._tag === "OptimizationEnded")
}

const program = Effect.gen(function*() {
  const real = yield* modelsFromEnv()
  const models = real ?? (ui ? pacedModels(simulatedModels(0)) : simulatedModels(0))
  plain(`GEPA demo: evolving the routing rules (${Task.componentNames.join(", ")}) of a support-ticket router`)
  plain(`models: ${models.description}`)
  const dashboard = yield* Effect.serviceOption(Dashboard.Dashboard)
  if (dashboard._tag === "Some") {
    const { url } = dashboard.value
    plain(`Live dashboard: ${url}`)
    plain(`  open it in a browser; its Stop button ends the run with the state saved`)
  }
  const demo = yield* runDemo({
    models,
    // real models cost money and time: a smaller budget still shows progress
    maxMetricCalls: real === undefined ? defaultMaxMetricCalls : 400,
    onEvent
  })
  if (tty) out.write("\n")
  const { result } = demo
  const summary = yield* summarize(demo)
  const rel = path.relative(process.cwd(), demo.runDir) || "."
  plain("")
  for (const line of summary) plain(line)
  plain("")
  plain("Best candidate")
  for (const name of Task.componentNames) {
    plain(`  [${name}]`)
    plain((result.bestCandidate[name] ?? "").split("\n").map((l) => `    ${l}`).join("\n"))
  }
  plain("")
  plain(`Run directory: ${rel}`)
  if (demo.reportPath !== undefined) plain(`HTML report:   ${path.relative(process.cwd(), demo.reportPath)}`)
  plain(`Inspect it:    node bin/gepa.js show ${rel}`)
  if (dashboard._tag === "Some") {
    const { url } = dashboard.value
    plain("")
    plain(`The dashboard stays up at ${url}`)
    plain(`Press Ctrl-C to exit (later: node bin/gepa.js watch ${rel}).`)
    yield* untilInterrupted
  }
})

// the page is served while the program runs, and its runs report to it
const withUi = ui ? program.pipe(Effect.provide(Dashboard.layer({ title: "GEPA demo: routing support tickets" }))) : program

Effect.runPromise(Effect.either(withUi)).then((outcome) => {
  if (outcome._tag === "Left") {
    if (tty) out.write("\n")
    process.stderr.write(`demo failed: ${outcome.left.message}\n`)
    process.exitCode = 1
  }
}, (defect: unknown) => {
  process.stderr.write(`demo failed: ${defect instanceof Error ? defect.stack ?? defect.message : String(defect)}\n`)
  process.exitCode = 1
})
