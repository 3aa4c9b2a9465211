/**
 * What an adapter returns for one evaluated batch.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * Per-example scores of several named objectives (multi-objective runs).
 *
 * @since 0.1.0
 * @category models
 */
export const ObjectiveScores = Schema.Record({ key: Schema.String, value: Schema.Number })

/**
 * Per-objective scores of one example: objective name to score (higher is
 * better).
 *
 * @since 0.1.0
 * @category models
 */
export type ObjectiveScores = typeof ObjectiveScores.Type

/**
 * The result of running a candidate on a batch: one output and one score per
 * example (higher is better), optionally one trajectory per example (when
 * traces were asked for) and per-example objective scores.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvaluationBatch<Trajectory, Output> {
  readonly outputs: ReadonlyArray<Output>
  readonly scores: ReadonlyArray<number>
  readonly trajectories?: ReadonlyArray<Trajectory> | undefined
  readonly objectiveScores?: ReadonlyArray<ObjectiveScores> | undefined
  /**
   * per example, why it could not be evaluated (a failed model call, a
   * failing metric), `undefined` where it was. A failed example is an
   * evaluation failure, never a result: the engine scores it the run's
   * `fallbackScore`, records the error and never caches it; its score and
   * output here are placeholders. Since 0.2.0.
   */
  readonly errors?: ReadonlyArray<string | undefined> | undefined
}

/**
 * The JSON schema of an evaluation batch, given schemas for the user's
 * trajectory and output types.
 *
 * @since 0.1.0
 * @category schemas
 */
export const schema = <TA, TI, OA, OI>(
  trajectory: Schema.Schema<TA, TI>,
  output: Schema.Schema<OA, OI>
) =>
  Schema.Struct({
    outputs: Schema.Array(output),
    scores: Schema.Array(Schema.Number),
    trajectories: Schema.optional(Schema.Union(Schema.Array(trajectory), Schema.Undefined)),
    objectiveScores: Schema.optional(Schema.Union(Schema.Array(ObjectiveScores), Schema.Undefined)),
    errors: Schema.optional(Schema.Union(Schema.Array(Schema.Union(Schema.String, Schema.Undefined)), Schema.Undefined))
  })

/**
 * Mean of the scores, 0 for an empty batch.
 *
 * @since 0.1.0
 * @category utils
 */
export const mean = (scores: ReadonlyArray<number>): number => scores.length === 0 ? 0 : sum(scores) / scores.length

/**
 * Sum of the scores.
 *
 * @since 0.1.0
 * @category utils
 */
export const sum = (scores: ReadonlyArray<number>): number => {
  let s = 0
  for (const x of scores) s += x
  return s
}
