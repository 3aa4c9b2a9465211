/**
 * Optimize anything, offline: a regular expression that should accept
 * semantic versions and reject everything else evolves against its failing
 * cases (`npx tsx examples/anything.ts`, or `npm run example:anything`). The
 * task, the evaluator and the simulated reflection model are in
 * `examples/anything/regex.ts`.
 *
 * @since 0.2.0
 */
import { Effect } from "effect"
import { optimizeRegex } from "./anything/regex.js"

const program = Effect.gen(function*() {
  const result = yield* optimizeRegex()
  const lines = [
    `mode: ${result.mode}`,
    `seed pattern:  ${result.seedCandidate}`,
    `best pattern:  ${result.bestCandidate}`,
    `validation:    seed ${result.seedScore?.toFixed(2)} -> best ${result.bestScore?.toFixed(2)} ` +
    `(candidate ${result.bestIndex} of ${result.candidates.length}, ${result.totalMetricCalls} metric calls)`,
    `test set:      seed ${result.test?.seed?.score.toFixed(2)} -> best ${result.test?.best.score.toFixed(2)} ` +
    `(${result.test?.metricCalls} extra evaluations, outside the budget)`
  ]
  yield* Effect.sync(() => console.log(lines.join("\n")))
})

Effect.runPromise(program).catch((e) => {
  console.error(e)
  process.exitCode = 1
})
