/**
 * Using effect-gepa as a library: an adapter built with
 * `Adapter.fromExample`, provided as a layer, and a simulated reflection
 * model, so the example runs offline (`npx tsx examples/library.ts`).
 *
 * The "system" under optimization is a toy: it shouts its input back when
 * its instructions mention capital letters, and repeats it unchanged
 * otherwise. The reflection model reads the feedback and writes the missing
 * instruction.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { Adapter, Gepa, LanguageModel } from "effect-gepa"

interface Example {
  readonly text: string
  readonly expected: string
}

const data: ReadonlyArray<Example> = ["hello", "good morning", "ship it", "all tests pass", "effect", "pareto front"]
  .map((text) => ({ text, expected: text.toUpperCase() }))

// The user's system: what it does depends on the candidate's instructions.
const runSystem = (instructions: string, input: string): string => /capital|upper ?case/i.test(instructions) ? input.toUpperCase() : input

// The adapter as a service: tests can provide a different layer.
const AdapterLive = Adapter.layer(
  Adapter.fromExample((example: Example, candidate) =>
    Effect.sync(() => {
      const output = runSystem(candidate["instructions"] ?? "", example.text)
      const score = output === example.expected ? 1 : 0
      return {
        output,
        score,
        feedback: score === 1 ? "Correct." : `Expected "${example.expected}" (all capital letters) but got "${output}".`
      }
    })
  )
)

// A stand-in for a real reflection model (see OpenAiLanguageModel for one):
// it answers in the fenced block the reflection prompt asks for.
const reflectionModel = LanguageModel.fromFunction((prompt) =>
  /capital letters/.test(LanguageModel.promptText(prompt))
    ? "```\nRepeat the user's text in capital letters.\n```"
    : "```\nRepeat the user's text.\n```"
)

const program = Effect.gen(function*() {
  const result = yield* Gepa.optimize({
    seedCandidate: { instructions: "Repeat the user's text." },
    trainset: data.slice(0, 4),
    valset: data.slice(4),
    reflectionModel,
    maxMetricCalls: 60,
    onEvent: (event) => {
      if (event._tag === "CandidateAccepted") console.log(`accepted candidate ${event.candidate} (score ${event.score})`)
    }
  })
  console.log(`seed ${result.seedScore} -> best ${result.bestScore}: ${result.bestCandidate["instructions"]}`)
  return result
})

// the adapter comes from the context; swapping the layer swaps the system
Effect.runPromise(program.pipe(Effect.provide(AdapterLive))).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
