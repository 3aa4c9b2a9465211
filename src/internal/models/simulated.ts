/**
 * Models without a server (`LanguageModel.fromFunction`,
 * `LanguageModel.scripted`): a function of the prompt, or a script of
 * answers. For simulated runs and tests.
 *
 * `LanguageModel.ts` owns the types and imports this module, so this module
 * cannot import them back (imports only go down: test/imports.test.ts): the
 * prompt, the failure and the scripted answers are type parameters, and the
 * compiler checks the result against `LanguageModel` there.
 *
 * @internal
 */
import { Effect, Ref } from "effect"

/** An answer that ran to its end (a `LanguageModel.Completion`). */
interface Stopped {
  readonly text: string
  readonly finishReason: "stop"
}

/** @internal */
export const fromFunction = <P, E>(
  f: (prompt: P) => string | Effect.Effect<string, E>
): { readonly complete: (prompt: P) => Effect.Effect<Stopped, E> } => ({
  complete: (prompt) =>
    Effect.suspend(() => {
      const out = f(prompt)
      return typeof out === "string" ? Effect.succeed(out) : out
    }).pipe(Effect.map((text): Stopped => ({ text, finishReason: "stop" })))
})

/** @internal */
export const scripted = <C>(
  answers: ReadonlyArray<string | C>
): Effect.Effect<{ readonly complete: () => Effect.Effect<C | Stopped> }> =>
  Effect.map(Ref.make(0), (counter) => ({
    complete: () =>
      Ref.getAndUpdate(counter, (n) => n + 1).pipe(
        Effect.map((n): C | Stopped => {
          const answer = answers[Math.min(n, answers.length - 1)]
          if (answer === undefined) return { text: "", finishReason: "stop" }
          return typeof answer === "string" ? { text: answer, finishReason: "stop" } : answer
        })
      )
  }))
