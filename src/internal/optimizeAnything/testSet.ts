/**
 * The test-set pass of `optimizeAnything`: after the run, the best
 * candidate (and the seed, when asked) scored on every example of the test
 * set; a failed evaluation counts as the fallback score and is listed.
 *
 * @internal
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the run reads the user's configuration untyped (every value as unknown); the public optimizeAnything keeps the types */
import { Effect } from "effect"
import type { Candidate } from "../../Candidate.js"
import * as DataLoader from "../../DataLoader.js"
import type { ConfigError } from "../../Errors.js"
import { mean } from "../../EvaluationBatch.js"
import * as Ledger from "../engine/ledger.js"
import type * as OA from "./types.js"
import * as Adapter from "./adapter.js"
import { check } from "./configChecks.js"

/**
 * A candidate's scores on the test set's examples.
 *
 * @internal
 */
export const evaluateTestSet = (
  evaluator: Adapter.RawEvaluator,
  options: Adapter.Options,
  candidate: Candidate,
  index: number,
  ids: ReadonlyArray<string>,
  examples: ReadonlyArray<unknown>,
  concurrency: number,
  fallback: number,
  retry: OA.Config<any, any>["evaluationRetry"]
): Effect.Effect<OA.TestScore> =>
  Effect.forEach(examples, (example) => {
    const one = Adapter.evaluateOne(evaluator, candidate, example, options)
    return Effect.either(retry === undefined ? one : Effect.retry(one, retry))
  }, { concurrency }).pipe(Effect.map((results) => {
    const errors: Array<{ id: string; error: string }> = []
    const scores = results.map((r, i) => {
      if (r._tag === "Right") return r.right.score
      errors.push({ id: ids[i]!, error: r.left.detail })
      return fallback
    })
    return { candidate: index, score: mean(scores), scores, failures: errors.length, errors }
  }))

/**
 * The test-set pass: the best candidate, and the seed when asked (a
 * before/after comparison costs a whole test pass, which a user who only
 * wants the best candidate's score should not pay for).
 *
 * @internal
 */
export const testPass = (
  config: OA.Config<any, any, any, any>,
  testset: ReadonlyArray<unknown> | DataLoader.DataLoader<unknown>,
  result: Pick<OA.Result<unknown>, "bestIndex" | "candidates"> & { readonly bestCandidate: Candidate },
  score: (candidate: Candidate, index: number, ids: ReadonlyArray<string>, examples: ReadonlyArray<unknown>) => Effect.Effect<OA.TestScore>
): Effect.Effect<OA.TestResult, ConfigError | DataLoader.DataLoaderError> =>
  Effect.gen(function*() {
    const loader = DataLoader.ensure(testset, "testset")
    const ids = yield* loader.ids
    yield* check(ids.length > 0, "testset", "is empty")
    const examples = yield* loader.fetch(ids)
    const seedScore = config.testSeed === true && result.bestIndex !== 0
      ? yield* score(result.candidates[0]!, 0, ids, examples)
      : undefined
    const bestScore = yield* score(result.bestCandidate, result.bestIndex, ids, examples)
    return {
      size: ids.length,
      seed: result.bestIndex === 0 ? bestScore : seedScore,
      best: bestScore,
      // one call per example scored, in each pass over the test set
      metricCalls: Ledger.sum([bestScore.scores.length, seedScore?.scores.length ?? 0])
    }
  })
