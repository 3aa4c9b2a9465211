/**
 * What the live dashboard knows about a run, built from the run's events
 * and its state, and turned into the JSON the page reads: a snapshot for a
 * client that connects, then deltas.
 *
 * The engine's side costs almost nothing: `event` appends to a list and
 * `state` keeps a reference. The work (candidates, Pareto members, the
 * events' lines) happens in `flush`, which the server runs on a timer of its
 * own, so the run never waits on the dashboard.
 *
 * Fed the same way by a live run (`GepaEvent`s) and by a run folder's event
 * log (`events.jsonl` lines, whose `IterationEnded` and `OptimizationEnded`
 * lack the state and result payloads): both carry `_tag` and the fields below.
 *
 * @internal
 */
import { Array as Arr } from "effect"
import * as CandidateSchema from "../../CandidateSchema.js"
import * as Typed from "../engine/typed.js"
import type { GepaEvent } from "../../Event.js"
import * as Pareto from "../../Pareto.js"
import * as State from "../../State.js"
import type { GepaState } from "../../State.js"
import { describeEvent } from "../telemetry/eventLog.js"

/** An event as delivered live or read back from `events.jsonl`. */
export type EventLike = { readonly _tag: string; readonly [key: string]: unknown }

/** One candidate as the page draws it (texts are fetched on demand). */
export interface CandidateRow {
  readonly i: number
  readonly parents: ReadonlyArray<number>
  /** mean validation score; null before any example was scored */
  score: number | null
  coverage: number
  /** metric calls spent when it was found */
  readonly calls: number
  /** milliseconds since the run started when it was found */
  readonly t: number
  readonly iteration: number
}

/** One line of the page's event list. */
export interface EventRow {
  readonly t: number
  readonly tag: string
  readonly text: string
}

export interface RunInfo {
  status: "starting" | "running" | "stopping" | "finished" | "stopped" | "failed"
  budget: number | null
  metricCalls: number
  iteration: number
  trainSize: number
  valSize: number
  /** epoch milliseconds of the run's (first) start */
  startedAt: number
  /** milliseconds since `startedAt` of the last update */
  now: number
  stopReason: string | null
  accepted: number
  rejected: number
  reflectionCost: number
  reflectionTokens: number
}

export interface ParetoView {
  readonly examples: ReadonlyArray<string>
  /** candidates that survive dominated-program removal (what selection draws from), best first */
  readonly members: ReadonlyArray<number>
  /** per member, its score on each example (null: not evaluated) */
  readonly scores: ReadonlyArray<ReadonlyArray<number | null>>
  /** per example, the best score any candidate reached */
  readonly best: ReadonlyArray<number | null>
}

/** What a proposal left behind: the page's candidate detail reads it. */
export interface ProposalDetail {
  readonly iteration: number
  readonly kind: string
  readonly parents: ReadonlyArray<number>
  readonly outcome: string
  readonly ids?: ReadonlyArray<string> | undefined
  readonly before?: ReadonlyArray<number> | undefined
  readonly after?: ReadonlyArray<number> | undefined
  readonly reason?: string | undefined
}

const EVENT_ROWS = 400
const SHOWN = new Set([
  "SeedGenerated",
  "OptimizationStarted",
  "OptimizationEnded",
  "ProposalStarted",
  "ProposalEnded",
  "CandidateAccepted",
  "CandidateRejected",
  "MergeAttempted",
  "MergeAccepted",
  "MergeRejected",
  "ValsetEvaluated",
  "LostWorkCharged",
  "Error",
  "StopRequested"
])

const num = (u: unknown, fallback = 0): number => (typeof u === "number" && Number.isFinite(u) ? u : fallback)

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null

// a live OptimizationEnded event carries the result; a logged line carries its scalar fields
const resultOf = (e: EventLike): Readonly<Record<string, unknown>> => {
  const result = e["result"]
  return isRecord(result) ? result : e
}

const lineOf = (e: EventLike): string => {
  if (e._tag === "OptimizationEnded") {
    const r = resultOf(e)
    const bestScore = r["bestScore"]
    const best = typeof bestScore === "number" ? bestScore.toFixed(4) : "n/a"
    return `optimization ended after ${num(r["iterations"])} iterations: best score ${best} (candidate ${num(r["bestIndex"])}), ` +
      `${num(r["totalMetricCalls"])} metric calls${typeof r["stopReason"] === "string" ? `, ${r["stopReason"]}` : ""}`
  }
  if (e._tag === "StopRequested") return `stop requested from the dashboard: the run stops at the next safe point`
  try {
    // a logged line has the event's fields but is not checked against its schema:
    // describeEvent may meet a field it does not expect, hence the catch
    return describeEvent(e as unknown as GepaEvent, undefined).message
  } catch {
    return e._tag
  }
}

export interface Model {
  /** the engine's side: O(1) */
  readonly event: (e: EventLike, at: number) => void
  /** the engine's side: keeps a reference to the newest state */
  readonly state: (s: GepaState) => void
  /** folds what arrived since the last flush; returns the delta (undefined: nothing new) */
  readonly flush: () => Record<string, unknown> | undefined
  /** the whole view, for a client that connects or resyncs */
  readonly snapshot: () => Record<string, unknown>
  /** a candidate's texts, its parents' texts, and the proposal that made it */
  readonly detail: (i: number) => Record<string, unknown> | undefined
  readonly setStatus: (status: RunInfo["status"]) => void
  /** forgets everything (a run folder replaced under the watcher) */
  readonly reset: () => void
  readonly info: () => RunInfo
}

export const make = (now: () => number = Date.now): Model => {
  let pending: Array<readonly [EventLike, number]> = []
  let latest: GepaState | undefined
  let seenState: GepaState | undefined
  let run: RunInfo
  let candidates: Array<CandidateRow>
  let texts: Array<Readonly<Record<string, string>>>
  let events: Array<EventRow>
  let progress: Array<readonly [number, number]>
  let rejectedOf: Map<number, number>
  let proposals: Map<number, ProposalDetail>
  let feedback: Map<number, unknown>
  let usage: Map<number, unknown>
  let foundAt: Map<number, { t: number; iteration: number }>
  let pareto: ParetoView
  let paretoKey: string
  let traceSeen: number
  let lastClock = 0
  let lastStatus = ""
  const init = () => {
    run = {
      status: "starting",
      budget: null,
      metricCalls: 0,
      iteration: 0,
      trainSize: 0,
      valSize: 0,
      startedAt: now(),
      now: 0,
      stopReason: null,
      accepted: 0,
      rejected: 0,
      reflectionCost: 0,
      reflectionTokens: 0
    }
    candidates = []
    texts = []
    events = []
    progress = []
    rejectedOf = new Map()
    proposals = new Map()
    feedback = new Map()
    usage = new Map()
    foundAt = new Map()
    pareto = { examples: [], members: [], scores: [], best: [] }
    paretoKey = ""
    traceSeen = 0
    latest = undefined
    seenState = undefined
    pending = []
  }
  init()

  // delta being built by the current flush
  let delta: {
    candidates: Array<CandidateRow>
    scores: Array<readonly [number, number | null, number]>
    events: Array<EventRow>
    rejected: Array<readonly [number, number]>
    reset: boolean
  }
  const newDelta = () => ({ candidates: [], scores: [], events: [], rejected: [], reset: false })
  delta = newDelta()

  const rel = (at: number) => Math.max(0, at - run.startedAt)

  const applyEvent = (e: EventLike, at: number) => {
    const t = rel(at)
    if (t > run.now) run.now = t
    switch (e._tag) {
      case "OptimizationStarted":
        if (e["resumed"] !== true && (candidates.length > 0 || run.metricCalls > 0)) {
          // a new run in the same context: start over
          init()
          delta.reset = true
        }
        if (candidates.length === 0 && e["resumed"] !== true) run.startedAt = at
        run.status = "running"
        run.stopReason = null
        run.budget = typeof e["budget"] === "number" ? e["budget"] : null
        run.trainSize = num(e["trainSize"])
        run.valSize = num(e["valSize"])
        break
      case "BudgetUpdated":
      case "IterationStarted":
        run.metricCalls = Math.max(run.metricCalls, num(e["metricCalls"]))
        if (e._tag === "IterationStarted") run.iteration = Math.max(run.iteration, num(e["iteration"]))
        if (progress.at(-1)?.[1] !== run.metricCalls) progress.push([t, run.metricCalls])
        break
      case "ValsetEvaluated":
      case "CandidateAccepted": {
        const i = num(e["candidate"], -1)
        if (i >= 0 && !foundAt.has(i)) foundAt.set(i, { t, iteration: num(e["iteration"]) })
        break
      }
      case "CandidateRejected":
      case "MergeRejected": {
        const parents: unknown = e["parents"]
        for (const p of Array.isArray(parents) ? parents.filter((x): x is number => typeof x === "number") : []) {
          const n = (rejectedOf.get(p) ?? 0) + 1
          rejectedOf.set(p, n)
          delta.rejected.push([p, n])
        }
        break
      }
      case "ReflectiveDatasetBuilt":
        if (e["dataset"] !== undefined) feedback.set(num(e["iteration"]), e["dataset"])
        break
      case "ProposalEnded": {
        const it = num(e["iteration"])
        if (e["usage"] !== undefined) usage.set(it, e["usage"])
        // only accepted proposals are shown in detail: the rest is not kept
        if (e["outcome"] !== "accepted") {
          feedback.delete(it)
          usage.delete(it)
        }
        break
      }
      case "OptimizationEnded": {
        const r = resultOf(e)
        run.stopReason = typeof r["stopReason"] === "string" ? r["stopReason"] : null
        run.status = /stopped by request|stop requested|signal/.test(run.stopReason ?? "") ? "stopped" : "finished"
        run.metricCalls = Math.max(run.metricCalls, num(r["totalMetricCalls"]))
        break
      }
      case "StopRequested":
        if (run.status === "running" || run.status === "starting") run.status = "stopping"
        break
    }
    if (SHOWN.has(e._tag)) {
      const row = { t, tag: e._tag, text: lineOf(e) }
      events.push(row)
      if (events.length > EVENT_ROWS) events.splice(0, events.length - EVENT_ROWS)
      delta.events.push(row)
    }
  }

  const applyState = (s: GepaState) => {
    if (s === seenState) return
    seenState = s
    run.iteration = Math.max(run.iteration, s.iteration)
    run.metricCalls = Math.max(run.metricCalls, s.metricCalls)
    run.accepted = s.acceptedProposals
    run.rejected = s.rejectedProposals
    run.reflectionCost = s.reflectionUsage.cost
    run.reflectionTokens = s.reflectionUsage.inputTokens + s.reflectionUsage.outputTokens
    if (s.candidates.length < candidates.length) {
      // a resumed run dropped candidates the interrupted one never saved
      candidates.length = s.candidates.length
      texts.length = s.candidates.length
      delta.reset = true
    }
    s.candidates.forEach((candidate, i) => {
      const coverage = s.valCoverage[i] ?? 0
      // a candidate without any validation score yet has no mean
      const score = coverage > 0 ? s.valAverages[i] ?? null : null
      const row = candidates[i]
      if (row === undefined) {
        const at = foundAt.get(i)
        const added: CandidateRow = {
          i,
          parents: s.parents[i] ?? [],
          score,
          coverage,
          calls: s.discoveryBudget[i] ?? 0,
          t: at?.t ?? run.now,
          iteration: at?.iteration ?? 0
        }
        candidates.push(added)
        texts.push(candidate)
        delta.candidates.push(added)
      } else if (row.score !== score || row.coverage !== coverage) {
        row.score = score
        row.coverage = coverage
        delta.scores.push([i, score, row.coverage])
      }
    })
    if (s.trace.length < traceSeen) traceSeen = 0
    for (const entry of s.trace.slice(traceSeen)) {
      if (entry.outcome !== "accepted" || entry.candidate === undefined) continue
      proposals.set(entry.candidate, {
        iteration: entry.iteration,
        kind: entry.kind,
        parents: entry.parents,
        outcome: entry.outcome,
        ids: entry.subsampleIds,
        before: entry.scoresBefore,
        after: entry.scoresAfter,
        reason: entry.reason
      })
    }
    traceSeen = s.trace.length
    // the Pareto view: members of the state's own frontier type
    // a hybrid frontier is drawn by its examples
    const kind = s.frontierType === "hybrid" ? "instance" : s.frontierType
    const table = s.fronts[kind]
    const keys = Object.keys(table.programs).sort()
    // the members: the programs left after dominated-program removal, the
    // set parent selection draws from
    const members = Pareto.dominators(State.frontSets(s), State.scoreOf(s))
      .sort((a, b) => (Arr.unsafeGet(s.valAverages, b) - Arr.unsafeGet(s.valAverages, a)) || a - b)
    const key = `${members.join(",")}|${keys.length}|${keys.map((k) => table.best[k]).join(",")}`
    if (key !== paretoKey) {
      paretoKey = key
      const examples = keys
      // instance: the example's score; objective: the objective's aggregate;
      // cartesian: the pair's best, for the candidates that hold it
      const scoreOf = (p: number, k: string): number | null =>
        kind === "instance"
          ? s.valScores[p]?.[k] ?? null
          : kind === "objective"
          ? s.objectiveScores[p]?.[k] ?? null
          : table.programs[k]?.includes(p) === true
          ? table.best[k] ?? null
          : null
      pareto = {
        examples,
        members,
        scores: members.map((p) => examples.map((k) => scoreOf(p, k))),
        best: examples.map((k) => table.best[k] ?? null)
      }
    }
  }

  const flush = (): Record<string, unknown> | undefined => {
    const batch = pending
    pending = []
    for (const [e, at] of batch) {
      applyEvent(e, at)
      // a live event carries the state after it (IterationEnded)
      // (the engine's own GepaState object; logged lines carry no state)
      if (e._tag === "IterationEnded" && typeof e["state"] === "object" && e["state"] !== null) latest = e["state"] as GepaState
    }
    if (latest !== undefined) applyState(latest)
    if (run.status !== "finished" && run.status !== "stopped" && run.status !== "failed") run.now = rel(now())
    const d = delta
    delta = newDelta()
    if (d.reset) return { reset: true }
    const changedPareto = d.candidates.length > 0 || d.scores.length > 0 || batch.length > 0
    if (batch.length === 0 && d.candidates.length === 0 && d.scores.length === 0) {
      // nothing new: a change of status, or the clock of a live run once a second
      const clock = (run.status === "running" || run.status === "stopping") && run.now - lastClock >= 1000
      if (run.status === lastStatus && !clock) return undefined
    }
    lastClock = run.now
    lastStatus = run.status
    if (batch.length === 0 && d.candidates.length === 0 && d.scores.length === 0) return { run: { ...run } }
    return {
      run: { ...run },
      progress: progress.length === 0 ? [] : [progress[progress.length - 1]],
      ...(d.candidates.length === 0 ? {} : { candidates: d.candidates }),
      ...(d.scores.length === 0 ? {} : { scores: d.scores }),
      ...(d.events.length === 0 ? {} : { events: d.events }),
      ...(d.rejected.length === 0 ? {} : { rejected: d.rejected }),
      ...(changedPareto ? { pareto } : {})
    }
  }

  const snapshot = (): Record<string, unknown> => ({
    snapshot: true,
    run: { ...run },
    progress: progress.length > 600 ? thin(progress, 600) : progress,
    candidates,
    events,
    rejected: Array.from(rejectedOf),
    pareto
  })

  // a structured component (canonical JSON, see CandidateSchema) is shown
  // indented, so the page's line diff shows what changed rather than one long line
  // (the kinds a typed run recorded in its state decide; without them, the look)
  const readable = (components: Readonly<Record<string, string>>): Record<string, string> => {
    const kinds = Typed.structuredNames(seenState)
    const out: Record<string, string> = {}
    for (const [name, text] of Object.entries(components)) out[name] = Typed.readable(kinds, name, text)
    return out
  }
  // per structured component, its changes path by path against a parent
  const structuredChanges = (
    before: Readonly<Record<string, string>>,
    after: Readonly<Record<string, string>>
  ): Record<string, ReadonlyArray<string>> => {
    const kinds = Typed.structuredNames(seenState)
    const out: Record<string, ReadonlyArray<string>> = {}
    for (const [name, text] of Object.entries(after)) {
      const was = before[name]
      if (was === undefined || was === text || (kinds !== undefined && !kinds.has(name))) continue
      if (kinds === undefined && (CandidateSchema.format(was) === was || CandidateSchema.format(text) === text)) continue
      out[name] = CandidateSchema.diff(was, text)
    }
    return out
  }

  const detail = (i: number): Record<string, unknown> | undefined => {
    const row = candidates[i]
    if (row === undefined) return undefined
    const proposal = proposals.get(i)
    const it = proposal?.iteration
    return {
      i,
      score: row.score,
      coverage: row.coverage,
      calls: row.calls,
      parents: row.parents.map((p) => ({
        i: p,
        score: candidates[p]?.score ?? null,
        components: readable(texts[p] ?? {}),
        changes: structuredChanges(texts[p] ?? {}, texts[i] ?? {})
      })),
      components: readable(texts[i] ?? {}),
      proposal: proposal ?? null,
      feedback: it === undefined ? null : feedback.get(it) ?? null,
      usage: it === undefined ? null : usage.get(it) ?? null
    }
  }

  return {
    event: (e, at) => {
      pending.push([e, at])
    },
    state: (s) => {
      latest = s
    },
    flush,
    snapshot,
    detail,
    setStatus: (status) => {
      run.status = status
    },
    reset: () => {
      init()
      delta.reset = true
    },
    info: () => run
  }
}

/** At most `n` points, evenly spaced, keeping the last. */
const thin = <A>(xs: ReadonlyArray<A>, n: number): Array<A> => {
  const out: Array<A> = []
  const step = xs.length / n
  for (let k = 0; k < n - 1; k++) out.push(Arr.unsafeGet(xs, Math.floor(k * step)))
  const last = xs.at(-1)
  if (last !== undefined) out.push(last)
  return out
}
