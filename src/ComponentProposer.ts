/**
 * A proposer for one component: how a component that is not rewritten by
 * the reflection model gets its next value. The reflective path stays the
 * default for text components; a component with its own proposer (a code
 * branch, a JSON configuration) is changed by it instead, chosen per
 * component, and the component schedule (`ComponentSelector`) decides which
 * runs when.
 *
 * At this level values are the components' stored texts; `CandidateSchema`
 * builds these from typed proposers that return decoded values, and checks
 * each value against its component's schema.
 *
 * @since 0.3.0
 */
import { Schema } from "effect"
import type { Effect } from "effect"
import type { ReflectiveRecord } from "./Adapter.js"
import type { Candidate } from "./Candidate.js"

/**
 * The proposer could not produce a value (its agent failed, it gave up). The
 * proposal fails; the run goes on.
 *
 * @since 0.3.0
 * @category errors
 */
export class ComponentProposalFailed extends Schema.TaggedError<ComponentProposalFailed>()("ComponentProposalFailed", {
  component: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `proposer of component "${this.component}" failed: ${this.reason}`
  }
}

/**
 * The proposed value does not satisfy the component's schema. The proposal
 * is rejected (a `ComponentRejected` event says why); the value is never
 * adopted.
 *
 * @since 0.3.0
 * @category errors
 */
export class ComponentValueRejected extends Schema.TaggedError<ComponentValueRejected>()("ComponentValueRejected", {
  component: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `proposed value of component "${this.component}" rejected by its schema: ${this.reason}`
  }
}

/**
 * What a component proposer is given.
 *
 * @since 0.3.0
 * @category models
 */
export interface TextProposalInput {
  /** the parent candidate's stored texts */
  readonly parent: Candidate
  /** the component to change */
  readonly component: string
  /** the reflective dataset's records for that component */
  readonly records: ReadonlyArray<ReflectiveRecord>
  /** the iteration being run */
  readonly iteration: number
}

/**
 * A component proposer over stored texts: the new text of one component.
 *
 * @since 0.3.0
 * @category models
 */
export type TextProposer = (
  input: TextProposalInput
) => Effect.Effect<string, ComponentProposalFailed | ComponentValueRejected>
