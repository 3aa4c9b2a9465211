/**
 * The shapes the live dashboard deals in: an event as it arrives (live or
 * read back from `events.jsonl`), and the rows and views the model keeps and
 * sends the page as JSON.
 *
 * @internal
 */

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
