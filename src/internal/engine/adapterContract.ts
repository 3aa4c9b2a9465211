/**
 * The adapter's contract, checked on every answer: one output and one finite
 * score per example, trajectories when they were asked for, and well-formed
 * `errors` and objective scores. A breach is an `AdapterContractError`
 * naming the call (see `evaluate.ts`).
 *
 * @internal
 */
import type { EvaluationBatch } from "../../EvaluationBatch.js"

/**
 * What is wrong with the adapter's answer, or `undefined` when it keeps the
 * contract (checked on every call: no allocation when it does).
 *
 * @internal
 */
export const contractBreach = <T, O>(size: number, captureTraces: boolean, batch: EvaluationBatch<T, O>): string | undefined => {
  if (batch === null || typeof batch !== "object") return "evaluate returned no batch"
  if (!Array.isArray(batch.scores)) return "scores is not an array"
  if (!Array.isArray(batch.outputs)) return "outputs is not an array"
  if (batch.scores.length !== size) return `expected ${size} scores, got ${batch.scores.length}`
  if (batch.outputs.length !== size) return `expected ${size} outputs, got ${batch.outputs.length}`
  for (let i = 0; i < size; i++) {
    const s: unknown = batch.scores[i]
    if (typeof s !== "number" || !Number.isFinite(s)) return `score at position ${i} is ${String(s)}, not a finite number`
  }
  if (captureTraces && (!Array.isArray(batch.trajectories) || batch.trajectories.length !== size)) {
    return `captureTraces was requested: expected ${size} trajectories, got ${batch.trajectories?.length ?? "none"}`
  }
  if (batch.errors !== undefined) {
    if (!Array.isArray(batch.errors) || batch.errors.length !== size) {
      return `expected ${size} error entries, got ${Array.isArray(batch.errors) ? batch.errors.length : "no list"}`
    }
    const badError = batch.errors.findIndex((e) => e !== undefined && typeof e !== "string")
    if (badError >= 0) return `error at position ${badError} is neither a string nor undefined`
  }
  if (batch.objectiveScores !== undefined) {
    if (!Array.isArray(batch.objectiveScores) || batch.objectiveScores.length !== size) {
      return `expected ${size} objective score records, got ${batch.objectiveScores?.length}`
    }
    for (const [i, rec] of batch.objectiveScores.entries()) {
      for (const [name, v] of Object.entries(rec ?? {})) {
        if (typeof v !== "number" || !Number.isFinite(v)) return `objective "${name}" at position ${i} is ${String(v)}`
      }
    }
  }
  return undefined
}
