/**
 * The progress of a CLI run (`gepa optimize` and `gepa resume`): on a
 * terminal a bar (cli-progress) with the metric calls spent of the budget,
 * the iteration, the best score and the ETA, with the new bests printed
 * above it; when the output is not a terminal (a log file, CI) plain lines:
 * one per new best and one every `intervalMillis` with the same figures;
 * nothing with `--quiet`.
 *
 * @since 0.2.0
 */
import type { MultiBar, SingleBar } from "cli-progress"
import { createRequire } from "node:module"
import type { GepaEvent } from "../Event.js"
import { formatScore as fmt } from "../Result.js"

// cli-progress is loaded when a bar is drawn, not when the module is
const loadBars = (): typeof import("cli-progress") => createRequire(import.meta.url)("cli-progress")

/**
 * Where progress goes and what bounds the run.
 *
 * @since 0.2.0
 * @category models
 */
export interface ProgressOptions {
  /** plain lines (the CLI's stdout) */
  readonly write: (text: string) => void
  /** the terminal, when stdout is one: progress is then a bar drawn on it */
  readonly terminal?: (NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number }) | undefined
  readonly quiet?: boolean | undefined
  /** the run's budgets: the bar counts metric calls, else iterations */
  readonly maxMetricCalls?: number | undefined
  readonly maxIterations?: number | undefined
  /** how often a plain line is printed while the run goes on (default 15 s) */
  readonly intervalMillis?: number | undefined
  readonly now?: (() => number) | undefined
}

/**
 * A progress display: feed it the run's events, stop it before printing
 * the summary.
 *
 * @since 0.2.0
 * @category models
 */
export interface Progress {
  readonly onEvent: (event: GepaEvent) => void
  readonly stop: () => void
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim()

/**
 * "2 min 10 s" for a number of seconds.
 *
 * @since 0.2.0
 * @category formatting
 */
export const formatEta = (seconds: number): string => {
  if (!Number.isFinite(seconds) || seconds < 0) return "unknown"
  const s = Math.round(seconds)
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`
}

/**
 * A progress display for a run (see the module's description).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: ProgressOptions): Progress => {
  if (options.quiet === true) return { onEvent: () => {}, stop: () => {} }
  const now = options.now ?? Date.now
  const interval = options.intervalMillis ?? 15_000
  const figures: {
    started: number
    resumed: boolean
    metricCalls: number
    startCalls: number | undefined
    budget: number | undefined
    iteration: number
    startIteration: number
    best: number | undefined
    candidates: number
    lastLine: number
  } = {
    started: now(),
    resumed: false,
    metricCalls: 0,
    startCalls: undefined,
    budget: options.maxMetricCalls,
    iteration: 0,
    startIteration: 0,
    best: undefined,
    candidates: 1,
    lastLine: now()
  }
  const byCalls = () => figures.budget !== undefined
  const total = () => figures.budget ?? options.maxIterations
  const done = () => (byCalls() ? figures.metricCalls : figures.iteration)
  // the pace of this process (a resumed run's earlier calls are not its pace)
  const eta = (): string => {
    const t = total()
    if (t === undefined) return "unknown"
    const start = byCalls() ? figures.startCalls ?? 0 : figures.startIteration
    const progressed = done() - start
    if (progressed <= 0) return "unknown"
    const elapsed = (now() - figures.started) / 1000
    return formatEta((elapsed / progressed) * Math.max(0, t - done()))
  }
  const status = () =>
    `iteration ${figures.iteration}: ${figures.metricCalls}${figures.budget === undefined ? "" : `/${figures.budget}`} metric calls, ` +
    `best ${fmt(figures.best)}, ${figures.candidates} candidates${total() === undefined ? "" : `, ETA ${eta()}`}`

  const terminal = options.terminal?.isTTY === true ? options.terminal : undefined
  let multi: MultiBar | undefined
  let bar: SingleBar | undefined
  // ("eta" is a token of cli-progress's own, from its clock: ours is "left")
  const payload = () => ({ iteration: figures.iteration, best: fmt(figures.best), candidates: figures.candidates, left: eta() })
  const startBar = () => {
    const t = total()
    if (terminal === undefined || t === undefined) return
    multi = new (loadBars().MultiBar)({
      stream: terminal,
      // within 80 columns for budgets up to 5 digits
      format: `{bar} {value}/{total} ${byCalls() ? "calls" : "iterations"} | iteration {iteration} | best {best} | ETA {left}`,
      barsize: 20,
      barCompleteChar: "\u2588",
      barIncompleteChar: "\u2591",
      hideCursor: false,
      clearOnComplete: false,
      // the run's own events redraw it; no timer keeps the process alive
      noTTYOutput: false,
      fps: 5
    })
    bar = multi.create(t, done(), payload())
  }
  const line = (text: string) => {
    if (multi !== undefined) {
      // cli-progress prints logged lines at its next redraw, and not at all
      // when it stops first: redraw now
      multi.log(`${text}\n`)
      multi.update()
    } else options.write(`${text}\n`)
  }
  // the bar follows every event; a plain line is due at the end of an iteration
  const update = (endOfIteration = false) => {
    if (bar !== undefined) bar.update(done(), payload())
    else if (endOfIteration && now() - figures.lastLine >= interval) {
      figures.lastLine = now()
      options.write(`${status()}\n`)
    }
  }

  const onEvent = (event: GepaEvent): void => {
    switch (event._tag) {
      case "OptimizationStarted":
        if (event.budget !== undefined) figures.budget = event.budget
        figures.resumed = event.resumed
        options.write(
          `${event.resumed ? "Resuming" : "Starting"}: ${event.trainSize} training and ${event.valSize} validation examples, ` +
            `budget ${event.budget ?? "none"} metric calls${event.strategy === undefined ? "" : `, ${event.strategy}`}\n`
        )
        startBar()
        break
      case "BudgetUpdated":
        // a resumed run's earlier calls are not this process's pace
        if (figures.startCalls === undefined) figures.startCalls = figures.resumed ? event.metricCalls : 0
        figures.metricCalls = event.metricCalls
        update()
        break
      case "IterationStarted":
        if (figures.iteration === 0) figures.startIteration = event.iteration - 1
        break
      case "SeedGenerated":
        line(`seed written by the reflection model (${event.attempts} call${event.attempts === 1 ? "" : "s"})`)
        break
      case "ValsetEvaluated":
        figures.candidates = Math.max(figures.candidates, event.candidate + 1)
        if (figures.best === undefined || event.score > figures.best) {
          figures.best = event.score
          line(
            event.candidate === 0 && event.iteration === 0
              ? `seed candidate: ${fmt(event.score)}`
              : `iteration ${event.iteration}: new best ${fmt(event.score)} (candidate ${event.candidate})`
          )
        }
        update()
        break
      case "IterationEnded":
        figures.iteration = event.iteration
        figures.metricCalls = event.state.metricCalls
        figures.candidates = event.state.candidates.length
        update(true)
        break
      case "Error":
        line(`iteration ${event.iteration}: ${oneLine(event.message)}${event.willContinue ? " (continuing)" : ""}`)
        break
    }
  }
  return {
    onEvent,
    stop: () => {
      if (multi !== undefined) {
        bar?.update(done(), payload())
        multi.stop()
        multi = undefined
        bar = undefined
      }
    }
  }
}
