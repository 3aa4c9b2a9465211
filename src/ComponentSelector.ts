/**
 * Which components of the selected parent the reflection rewrites.
 *
 * @since 0.1.0
 */
import type { Candidate } from "./Candidate.js"
import { at } from "./internal/shared/invariant.js"
import type { Rng } from "./Rng.js"
import type { GepaState } from "./State.js"

/**
 * What a selector sees.
 *
 * @since 0.1.0
 * @category models
 */
export interface SelectionContext {
  readonly state: GepaState
  readonly candidateIdx: number
  readonly candidate: Candidate
  /** the iteration being run (1-based) */
  readonly iteration: number
  /**
   * the parent's minibatch scores, when known; the engine selects components
   * while planning a proposal (before evaluating) so that parallel proposals
   * advance the round-robin pointers in a reproducible order
   */
  readonly scores?: ReadonlyArray<number> | undefined
  readonly rng: Rng
}

/**
 * The chosen components and the parent's new round-robin pointer (when the
 * selector uses one).
 *
 * @since 0.1.0
 * @category models
 */
export interface Selection {
  readonly components: ReadonlyArray<string>
  readonly nextPointer?: number | undefined
}

/**
 * A component selector: a pure function of the selection context.
 *
 * @since 0.1.0
 * @category models
 */
export type ComponentSelector = (context: SelectionContext) => Selection

/**
 * One component per proposal, cycling through the components with a pointer
 * per candidate (a child starts from the largest of its parents' pointers).
 *
 * @since 0.1.0
 * @category selectors
 */
export const roundRobin: ComponentSelector = ({ candidateIdx, state }) => {
  const names = state.componentNames
  const pointer = (state.nextComponent[candidateIdx] ?? 0) % names.length
  return { components: [at(names, pointer)], nextPointer: (pointer + 1) % names.length }
}

/**
 * Every component on every proposal.
 *
 * @since 0.1.0
 * @category selectors
 */
export const all: ComponentSelector = ({ state }) => ({ components: state.componentNames })

/**
 * Options of the code/prompt schedule.
 *
 * @since 0.1.0
 * @category models
 */
export interface ScheduleOptions {
  /** which group a component belongs to */
  readonly isCode: (component: string) => boolean
  /** prompt changes per code change at the start; 0 means code only (default 1) */
  readonly initial?: number
  /** iterations between two growth steps (default 25) */
  readonly growEvery?: number
  /** factor applied at each growth step (default 2) */
  readonly factor?: number
  /** from this iteration on, only prompt components are changed */
  readonly codeCutoff?: number
}

/**
 * Alternates code and prompt components: one code change per N prompt
 * changes, N = initial * factor^floor(iteration / growEvery), so code changes
 * become rarer as the run goes on. Within a group components are taken round
 * robin with the candidate's pointer. Falls back to the other group when a
 * group is empty.
 *
 * @since 0.1.0
 * @category selectors
 */
export const codePromptSchedule = (options: ScheduleOptions): ComponentSelector => {
  const initial = options.initial ?? 1
  const growEvery = options.growEvery ?? 25
  const factor = options.factor ?? 2
  if (!(initial >= 0) || !(growEvery > 0) || !(factor >= 1)) {
    throw new RangeError("codePromptSchedule: initial >= 0, growEvery > 0 and factor >= 1 are required")
  }
  return ({ state, candidateIdx, iteration }) => {
    const code = state.componentNames.filter(options.isCode)
    const prompts = state.componentNames.filter((c) => !options.isCode(c))
    const step = Math.max(0, iteration - 1)
    const promptsPerCode = initial * Math.pow(factor, Math.floor(step / growEvery))
    const cutoff = options.codeCutoff !== undefined && iteration >= options.codeCutoff
    const wantCode = !cutoff && (promptsPerCode === 0 || step % (Math.round(promptsPerCode) + 1) === 0)
    const pointer = state.nextComponent[candidateIdx] ?? 0
    if (code.length === 0 || prompts.length === 0) {
      const group = code.length > 0 ? code : prompts
      const p = pointer % group.length
      return { components: [at(group, p)], nextPointer: (p + 1) % group.length }
    }
    // One round-robin position per group, packed into the candidate's single
    // pointer (code position + prompt position * number of code components).
    // A shared counter would skip components: with strict alternation the
    // code group would only ever see even counter values.
    const codePos = pointer % code.length
    const promptPos = Math.floor(pointer / code.length) % prompts.length
    return wantCode
      ? { components: [at(code, codePos)], nextPointer: promptPos * code.length + ((codePos + 1) % code.length) }
      : { components: [at(prompts, promptPos)], nextPointer: ((promptPos + 1) % prompts.length) * code.length + codePos }
  }
}
