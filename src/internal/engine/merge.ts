/**
 * The merge proposer: evaluates a planned merge of two lineages on its
 * validation subsample and judges it against both parents. The combination
 * itself was drawn when the merge was planned (`plan.ts`); this step only
 * spends and judges, and returns a `ProposalResult` of kind merge.
 *
 * @internal
 */
import { Effect } from "effect"
import { ProposalResult } from "../../Proposal.js"
import type * as State from "../../State.js"
import type { Proposed } from "./proposed.js"
import { noUsage } from "./proposed.js"
import type { Session } from "./session.js"

/** @internal */
export const merge = <D, T, O>(
  s: Session<D, T, O>,
  plan: Extract<State.PendingProposal, { readonly _tag: "Merge" }>
): Effect.Effect<Proposed, Effect.Effect.Error<ReturnType<Session<D, T, O>["evaluate"]>>> =>
  Effect.map(
    s.evaluate({
      iteration: plan.iteration,
      purpose: "merge-subsample",
      candidate: plan.candidate,
      ids: plan.ids,
      captureTraces: false,
      call: "evaluate(merged candidate, valset subsample)",
      visibleUpTo: plan.sees
    }),
    (ev): Proposed => {
      const after = ev.outcomes.map((o) => o.score)
      let total = 0
      for (const x of after) total += x
      const fields = {
        kind: "merge" as const,
        candidate: plan.candidate,
        parents: [plan.id1, plan.id2],
        components: [],
        subsampleIds: plan.ids,
        scoresBefore: plan.scoresBefore,
        scoresAfter: after
      }
      // a merge must do at least as well on the subsample as the better parent
      const result = total >= Math.max(plan.scoresBefore[0], plan.scoresBefore[1])
        ? ProposalResult.Accepted(fields)
        : ProposalResult.Rejected(fields)
      return { result, spent: ev.spent, failures: ev.failures, usage: noUsage }
    }
  ).pipe(s.span("gepa.merge", { attributes: { iteration: plan.iteration }, captureStackTrace: false }))
