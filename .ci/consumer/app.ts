// The consumer app of .ci/consumer.sh: what a user of the published package
// writes, compiled with moduleResolution nodenext and declaration: true. The
// exported values have inferred types that name the package's own types, so
// the declaration emit needs every module to be importable by subpath.
import { Effect, Layer } from "effect"
import { Adapter, Gepa, LanguageModel } from "effect-gepa"
import * as StopCondition from "effect-gepa/StopCondition"

interface Example {
  readonly text: string
  readonly expected: string
}

const data: ReadonlyArray<Example> = ["alpha", "beta", "gamma", "delta"].map((text) => ({
  text,
  expected: text.toUpperCase()
}))

export const adapter = Adapter.fromExample((example: Example, candidate) =>
  Effect.sync(() => {
    const output = /capital/i.test(candidate["instructions"] ?? "") ? example.text.toUpperCase() : example.text
    return output === example.expected
      ? { output, score: 1, feedback: "Correct." }
      : { output, score: 0, feedback: `Expected "${example.expected}" (capital letters), got "${output}".` }
  }))

export const reflection = LanguageModel.fromFunction(() => "```\nAnswer in capital letters.\n```")

// the adapter and the reflection model from layers, no type parameters
export const program = Gepa.optimize({
  seedCandidate: { instructions: "Repeat the text." },
  trainset: data,
  stop: [StopCondition.maxMetricCalls(40), StopCondition.scoreThreshold(1)]
}).pipe(Effect.provide(Layer.merge(Adapter.layer(adapter), LanguageModel.reflectionLayer(reflection))))

// inferred types naming classes of other modules of the package (ConfigError
// in Errors, DataLoaderError in DataLoader): without the "./*" subpath
// exports, declaration emit fails with TS2742
export const recovered = program.pipe(Effect.catchTag("ConfigError", (error) => Effect.succeed(error)))

const result = await Effect.runPromise(program)
console.log(JSON.stringify({
  seedScore: result.seedScore,
  bestScore: result.bestScore,
  instructions: result.bestCandidate["instructions"]
}))
