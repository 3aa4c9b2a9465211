/**
 * The proposal a fiber works for, told to an adapter that asks for it:
 * optimize-anything's adapter records it with the reflection evidence it
 * keeps in the run folder. The adapter contract does not carry it, and an
 * adapter that does not ask pays nothing for it: setting it for every
 * proposal (it used to be read from the `gepa.propose` span, which was
 * therefore opened under every tracer) cost a fifth of the engine's Effect
 * operations per metric call on the bench tasks.
 *
 * @internal
 */
import { FiberRef } from "effect"
import { globalValue } from "effect/GlobalValue"

/** @internal */
export interface CurrentProposal {
  readonly iteration: number
  readonly parent: number
}

/** @internal */
export const currentProposal: FiberRef.FiberRef<CurrentProposal | undefined> = globalValue(
  Symbol.for("effect-gepa/CurrentProposal"),
  () => FiberRef.unsafeMake<CurrentProposal | undefined>(undefined)
)

/**
 * The mark of an adapter that reads `currentProposal`.
 *
 * @internal
 */
export const ReadsProposal: unique symbol = Symbol.for("effect-gepa/ReadsProposal")

/** Whether `adapter` reads `currentProposal`. @internal */
export const readsProposal = (adapter: object): boolean => (adapter as { readonly [ReadsProposal]?: unknown })[ReadsProposal] === true
