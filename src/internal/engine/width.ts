/**
 * The width of the next step when `stepWidth` is `"adaptive"`: how many
 * reflective proposals it plans, from the run's own trace.
 *
 * A rejected or skipped proposal leaves the state as it found it (its
 * parent, the Pareto front, the candidates), so while few proposals are
 * accepted, proposals planned together from one state are nearly the ones
 * the loop would plan one after the other; only an acceptance makes the
 * others of its step stale. The step therefore widens as the share of
 * accepted proposals falls, which is what happens late in a run, when most
 * minibatches are already solved and most proposals are skipped or
 * rejected, and stays one proposal wide while proposals are being accepted.
 *
 * The width depends only on the saved trace: the same seed gives the same
 * steps at any `maxConcurrency`, and a resumed run plans as the
 * uninterrupted one would.
 *
 * Pure.
 *
 * @internal
 */
import type * as State from "../../State.js"

/** The proposals (judged or skipped) the share of acceptances is taken over. @internal */
export const adaptiveWindow = 20

/** From this share of acceptances up, a step is one proposal wide (2 of 20). @internal */
export const narrowFrom = 0.1

/** From this share (and below `narrowFrom`), a step is half the widest (1 of 20); below it, the widest. @internal */
export const halfFrom = 0.05

/**
 * The width of the next step, at most `widest`: 1 until the trace holds
 * `adaptiveWindow` reflective proposals that were judged or skipped, then by
 * the share of them accepted among the latest `adaptiveWindow`.
 *
 * @internal
 */
export const adaptiveWidth = (trace: ReadonlyArray<State.TraceEntry>, widest: number): number => {
  let seen = 0
  let accepted = 0
  for (let i = trace.length - 1; i >= 0 && seen < adaptiveWindow; i--) {
    const t = trace[i]!
    // merges and failed proposals say nothing of how often a reflection passes
    if (t.kind !== "reflective" || t.outcome === "failed") continue
    seen++
    if (t.outcome === "accepted") accepted++
  }
  if (seen < adaptiveWindow || widest <= 1) return 1
  const share = accepted / seen
  return share >= narrowFrom ? 1 : share >= halfFrom ? Math.max(1, Math.floor(widest / 2)) : widest
}
