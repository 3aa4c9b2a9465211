/**
 * A self-contained HTML report of an optimization run: summary, score
 * charts, candidate lineage, the per-example Pareto front, the best
 * candidate's texts diffed against the seed, and a table of every candidate.
 *
 * The page carries its own CSS and inline SVG and needs neither scripts nor
 * network access, so it can be archived next to a run's state file and
 * opened anywhere. It uses the window's width; the lineage is a layered tree
 * at its natural size in a scrolling box (a CSS-only "fit to width" shows
 * it whole), which stays readable at hundreds of generations.
 *
 * @since 0.1.0
 */
import type { Candidate } from "./Candidate.js"
import * as Diff from "./internal/report/diff.js"
import * as Html from "./internal/report/html.js"
import * as Sections from "./internal/report/sections.js"
import type { GepaResult } from "./Result.js"
import type { TraceEntry } from "./State.js"

/**
 * What the report is built from. `seedCandidate` defaults to the first
 * candidate of the result; `progress`, when given, replaces the best-score
 * curve that is otherwise derived from the candidates' discovery budgets.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReportInput {
  readonly result: GepaResult
  readonly trace?: ReadonlyArray<TraceEntry> | undefined
  readonly seedCandidate?: Candidate | undefined
  readonly title?: string | undefined
  readonly generatedAt?: string | undefined
  readonly progress?: ReadonlyArray<{ readonly metricCalls: number; readonly bestScore: number }> | undefined
}
/**
 * One line of a line diff.
 *
 * @since 0.1.0
 * @category models
 */
export type DiffLine = Diff.DiffLine

/**
 * A point of the best-score curve: after `metricCalls` metric calls the best
 * validation score was `bestScore`, reached by `candidate` (absent when the
 * point comes from caller-supplied progress).
 *
 * @since 0.1.0
 * @category models
 */
export type CurvePoint = Html.CurvePoint

/**
 * A line diff of `a` into `b` from a longest common subsequence of lines.
 * Keeping the `same` and `del` lines gives back `a`; keeping the `same` and
 * `add` lines gives back `b` (joined with "\n"). Within a changed block,
 * removals come before additions.
 *
 * @since 0.1.0
 * @category utils
 */
export const diffLines: (a: string, b: string) => ReadonlyArray<DiffLine> = Diff.diffLines

/**
 * The running best validation score over metric calls: one point per
 * candidate that improved on every candidate discovered before it (in order
 * of discovery budget, then index).
 *
 * @since 0.1.0
 * @category utils
 */
export const bestScoreCurve: (result: Pick<GepaResult, "discoveryBudget" | "valAggregateScores">) => ReadonlyArray<CurvePoint> = Html.bestScoreCurve

/**
 * The HTML report of a run, as one self-contained document. Every text that
 * comes from the run (component texts and names, example ids, reasons, the
 * title) is escaped.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (input: ReportInput): string => {
  const { result } = input
  const seed = input.seedCandidate ?? result.candidates[0] ?? {}
  const title = input.title ?? "GEPA run report"
  const sub = [
    `${result.candidates.length} candidates`,
    `${Html.fmtInt(result.totalMetricCalls)} metric calls`,
    `stopped: ${Html.esc(result.stopReason)}`,
    ...(input.generatedAt === undefined ? [] : [`generated ${Html.esc(input.generatedAt)}`])
  ].join(" · ")
  return [
    "<!DOCTYPE html>",
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${Html.esc(title)}</title><style>${Sections.CSS}</style></head><body>`,
    `<header><h1>${Html.esc(title)}</h1><p class="sub">${sub}</p></header>`,
    Sections.summarySection(result, input.trace),
    Sections.chartsSection(result, input.progress),
    Sections.lineageSection(result, input.trace),
    Sections.paretoSection(result),
    Sections.bestSection(result, seed),
    Sections.candidatesSection(result),
    input.trace !== undefined && input.trace.length > 0 ? Sections.traceSection(input.trace) : "",
    "</body></html>",
    ""
  ].join("\n")
}
