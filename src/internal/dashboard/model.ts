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
 * The shapes it sends are in `types.ts`; the event list's lines in
 * `eventLines.ts`, the Pareto grid in `paretoView.ts`, the candidate
 * detail's texts in `componentTexts.ts`.
 *
 * @internal
 */
import { Array as Arr } from "effect"
import type { GepaState } from "../../State.js"
import { readable, structuredChanges } from "./componentTexts.js"
import { EVENT_ROWS, lineOf, num, resultOf, SHOWN } from "./eventLines.js"
import { paretoView } from "./paretoView.js"
import type { CandidateRow, EventLike, EventRow, ParetoView, ProposalDetail, RunInfo } from "./types.js"

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
    const next = paretoView(s, paretoKey)
    if (next !== undefined) {
      paretoKey = next.key
      pareto = next.view
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
        components: readable(seenState, texts[p] ?? {}),
        changes: structuredChanges(seenState, texts[p] ?? {}, texts[i] ?? {})
      })),
      components: readable(seenState, texts[i] ?? {}),
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
