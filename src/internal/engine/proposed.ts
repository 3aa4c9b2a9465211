/**
 * What a proposer hands back to the loop: its result, the metric calls and
 * reflection usage it spent, and what it leaves for a next proposal.
 *
 * @internal
 */
import type { ProposalResult } from "../../Proposal.js"
import * as Secrets from "../../Secrets.js"
import type * as State from "../../State.js"
import type { Failures } from "./session.js"

/** Reflection-model usage of one proposal. @internal */
export interface Usage {
  readonly calls: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cost: number
}

/** @internal */
export const noUsage: Usage = { calls: 0, inputTokens: 0, outputTokens: 0, cost: 0 }

/** What a proposer hands back to the loop. @internal */
export interface Proposed {
  readonly result: ProposalResult
  /** metric calls spent on minibatches or the merge subsample */
  readonly spent: number
  readonly failures: Failures
  readonly usage: Usage
  /** why a child was rejected, when its scores alone do not say it */
  readonly reason?: string | undefined
  /**
   * for a rejected proposal that paid for its parent's evaluation: the
   * scores and the other components' records, for a next proposal that
   * reflects on the same minibatch (`reuseMinibatch`)
   */
  readonly reusable?: State.ReusedEvaluation | undefined
  /**
   * for an accepted child (`Config.reuseChildMinibatch`): its scores and
   * records on the minibatch it was judged on, for the step built on it to
   * reflect on
   */
  readonly childEvidence?: ChildEvidence | undefined
}

/** An accepted child's traced evaluation of its minibatch, as the next step on it reads it. @internal */
export interface ChildEvidence {
  readonly ids: ReadonlyArray<string>
  readonly scores: ReadonlyArray<number>
  readonly records: Readonly<Record<string, ReadonlyArray<Readonly<Record<string, unknown>>>>>
}

/** A proposal that ended before it asked for new texts. @internal */
export const ended = (result: ProposalResult, spent: number, failures: Failures): Proposed => ({ result, spent, failures, usage: noUsage })

/** A proposer's error in one line; it may quote a key, so it is scrubbed like every text of the run. @internal */
export const describeError = (e: unknown): string => Secrets.scrub(e instanceof Error ? e.message : String(e))
