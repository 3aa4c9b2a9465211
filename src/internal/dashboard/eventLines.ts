/**
 * The page's event list: which events it shows, and each one's line of
 * text. A logged line (from `events.jsonl`) lacks the payloads a live event
 * carries, so every field is read defensively.
 *
 * @internal
 */
import type { GepaEvent } from "../../Event.js"
import { describeEvent } from "../telemetry/eventLog.js"
import type { EventLike } from "./types.js"

/**
 * The rows the event list keeps.
 *
 * @internal
 */
export const EVENT_ROWS = 400

/**
 * The events the list shows.
 *
 * @internal
 */
export const SHOWN = new Set([
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

/**
 * A finite number, else `fallback`.
 *
 * @internal
 */
export const num = (u: unknown, fallback = 0): number => (typeof u === "number" && Number.isFinite(u) ? u : fallback)

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null

/**
 * The result fields of an `OptimizationEnded` event.
 *
 * @internal
 */
// a live OptimizationEnded event carries the result; a logged line carries its scalar fields
export const resultOf = (e: EventLike): Readonly<Record<string, unknown>> => {
  const result = e["result"]
  return isRecord(result) ? result : e
}

/**
 * An event's line in the list.
 *
 * @internal
 */
export const lineOf = (e: EventLike): string => {
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
