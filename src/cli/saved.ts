/**
 * Reading a run directory for `show`, `report` and `resume`. The files and
 * their layout belong to `RunDir`; this module asks it and words problems
 * for a person: one line naming the file and the first problem.
 *
 * @since 0.2.0
 */
import { Effect, Option } from "effect"
import * as path from "node:path"
import type { PersistenceError } from "../Errors.js"
import * as Report from "../Report.js"
import * as Result from "../Result.js"
import * as RunDir from "../RunDir.js"
import type * as State from "../State.js"
import * as Typed from "../internal/engine/typed.js"
import { CliInputError, fromEither, inputError } from "./errors.js"
import { parseSettingsJson, type Settings } from "./settings.js"

/** A run directory's file that could not be read, as one line. @internal */
export const unreadable = (e: PersistenceError): CliInputError => inputError(`${e.path}: ${e.detail.replace(/\s*\n\s*/g, " ")}`)

const checkDirectory = (runDir: string): Effect.Effect<void, CliInputError> =>
  Effect.flatMap(Effect.orElseSucceed(RunDir.pathKind(runDir), () => "other" as const), (kind) =>
    kind === "missing"
      ? Effect.fail(inputError(`${runDir}: run directory not found`))
      : kind === "other"
      ? Effect.fail(inputError(`${runDir}: not a directory`))
      : Effect.void)

/**
 * Reads the settings saved in a run directory (`config.json`). The
 * directory it sits in wins over the path saved in it.
 *
 * @since 0.1.0
 * @category run directories
 */
export const readSavedSettings = (runDir: string): Effect.Effect<Settings, CliInputError> =>
  Effect.gen(function*() {
    yield* checkDirectory(runDir)
    const file = path.join(runDir, RunDir.FILES.config)
    const text = yield* RunDir.readFile(runDir, RunDir.FILES.config).pipe(Effect.mapError(unreadable))
    if (Option.isNone(text)) {
      return yield* Effect.fail(inputError(`${file}: file not found (was ${runDir} created by "gepa optimize"?)`))
    }
    const settings = yield* fromEither(parseSettingsJson(text.value, file))
    return { ...settings, runDir: path.resolve(runDir) }
  })

/**
 * What a run directory holds: the result (from `result.json`, else derived
 * from the saved state) and the state when there is one.
 *
 * @since 0.1.0
 * @category run directories
 */
export interface SavedRun {
  readonly result: Result.GepaResult
  readonly state: State.GepaState | undefined
  readonly settings: Settings | undefined
  /** false while the run has not finished (no result file yet) */
  readonly finished: boolean
}

/**
 * Reads a run directory for `show` and `report`: the state saved by
 * `RunDir` (falling back to its previous generation) and `result.json`.
 * While a run is going on, or after a resumed run went further than the
 * last result, the result is derived from the state. A file that is there
 * but unreadable is an error naming it, never "no result".
 *
 * @since 0.1.0
 * @category run directories
 */
export const readRun = (runDir: string): Effect.Effect<SavedRun, CliInputError> =>
  Effect.gen(function*() {
    yield* checkDirectory(runDir)
    const state = Option.getOrUndefined(yield* RunDir.readState(runDir).pipe(Effect.mapError(unreadable)))
    const settings = yield* readSavedSettings(runDir).pipe(Effect.option, Effect.map(Option.getOrUndefined))
    const saved = yield* RunDir.readResult(runDir).pipe(Effect.mapError(unreadable))
    if (Option.isSome(saved)) {
      const result = saved.value
      if (state === undefined || state.metricCalls <= result.totalMetricCalls) {
        return { result, state, settings, finished: true }
      }
    }
    if (state !== undefined) {
      return { result: Result.fromState(state, "not finished"), state, settings, finished: false }
    }
    return yield* Effect.fail(
      inputError(`${runDir}: no ${RunDir.FILES.result} or ${RunDir.FILES.state} in it (not a GEPA run directory)`)
    )
  })

/**
 * The HTML report of a saved run.
 *
 * @since 0.1.0
 * @category run directories
 */
export const renderReport = (run: SavedRun, runDir: string): string =>
  Report.render({
    result: run.result,
    trace: run.state?.trace,
    title: `GEPA run ${path.basename(path.resolve(runDir))}`,
    generatedAt: new Date().toISOString()
  })

/** @internal */
export const fmt = Result.formatScore

/**
 * The text `gepa show` prints for a saved run.
 *
 * @since 0.1.0
 * @category run directories
 */
export const describeRun = (run: SavedRun, runDir: string): string => {
  const r = run.result
  const score = (i: number) => r.valAggregateScores[i] ?? null
  const lines: Array<string> = []
  lines.push(`Run ${runDir}${run.finished ? "" : " (not finished: resume it with gepa resume)"}`)
  lines.push(`  stopped because  ${r.stopReason}`)
  lines.push(`  seed score       ${fmt(r.seedScore)}`)
  lines.push(`  best score       ${fmt(r.bestScore)} (candidate ${r.bestIndex}, ${r.valCoverage[r.bestIndex] ?? 0} validation examples)`)
  lines.push(
    `  candidates       ${r.candidates.length} (${r.acceptedProposals} accepted, ${r.rejectedProposals} rejected proposals; ` +
      `${r.mergesAccepted}/${r.mergesAttempted} merges accepted)`
  )
  lines.push(`  iterations       ${r.iterations}`)
  lines.push(`  metric calls     ${r.totalMetricCalls}`)
  const chain = Result.lineage(r, r.bestIndex)
  lines.push(`  lineage of best  ${chain.map((c) => `${c} (${fmt(score(c))})`).join(" -> ")}`)
  const ranked = r.candidates.map((_, i) => i)
    .filter((i) => score(i) !== null)
    .sort((a, b) => ((score(b) ?? 0) - (score(a) ?? 0)) || a - b)
    .slice(0, 5)
  lines.push("")
  lines.push("Top candidates")
  for (const i of ranked) {
    const parents = r.parents[i] ?? []
    lines.push(
      `  #${String(i).padEnd(4)} score ${fmt(score(i))}  ` +
        `${parents.length === 0 ? "seed" : parents.length > 1 ? `merge of ${parents.join(" + ")}` : `from ${parents[0]}`}`
    )
  }
  lines.push("")
  lines.push(`Best candidate (#${r.bestIndex})`)
  // a typed run's structured components as indented JSON, one block each
  const structured = Typed.structuredNames(run.state) ?? new Set<string>()
  for (const [name, text] of Object.entries(r.bestCandidate)) {
    lines.push(`--- ${name}${structured.has(name) ? " (JSON)" : ""} ---`)
    lines.push(Typed.readable(structured, name, text))
  }
  return lines.join("\n")
}
