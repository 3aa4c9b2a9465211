/**
 * The README's optimize-anything quick start: a regular expression evolves
 * against examples, the evaluator saying why each verdict was wrong
 * (`OPENAI_API_KEY`). `npx tsx examples/quickstart-anything.ts`; offline, with
 * a simulated reflection model: `npm run example:anything`.
 *
 * @since 0.3.0
 */
import { Effect } from "effect"
import { Gepa, OpenAiLanguageModel } from "effect-gepa"

type Example = { readonly text: string; readonly valid: boolean }
const dataset: ReadonlyArray<Example> = [
  { text: "1.2.3", valid: true },
  { text: "10.20.30", valid: true },
  { text: "1.2.3-beta.1", valid: true },
  { text: "1.2", valid: false },
  { text: "v1.2.3", valid: false },
  { text: "1..3", valid: false }
]

const program = Effect.gen(function*() {
  const result = yield* Gepa.optimizeAnything({
    seedCandidate: "\\d+\\.\\d+",
    objective: "A regular expression that accepts exactly the semantic version strings.",
    background: "Candidates are compiled with new RegExp(candidate); a string is accepted when the pattern matches anywhere in it.",
    dataset,
    evaluator: (pattern, example: Example) =>
      Effect.gen(function*() {
        const accepted = (yield* Effect.try(() => new RegExp(pattern))).test(example.text) // a throw fails the evaluation
        const verdict = accepted === example.valid ? "correct" : example.valid ? "missed" : "wrongly accepted"
        return { score: verdict === "correct" ? 1 : 0, sideInfo: { text: example.text, verdict } }
      }),
    reflectionModel: yield* OpenAiLanguageModel.fromEnv({ model: "gpt-4.1" }),
    maxMetricCalls: 150
  })
  console.log(`best ${result.bestScore}: ${result.bestCandidate}`)
})

Effect.runPromise(program)
