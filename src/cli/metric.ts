/**
 * The metric of a CLI run: a built-in by name, or a module of the user's.
 *
 * A module may be `.ts`, `.mts`, `.cts`, `.js`, `.mjs` or `.cjs`, whatever
 * the `type` of the package it sits in. JavaScript is loaded with a plain
 * `import()`; TypeScript through tsx's ESM API (`tsImport`), which is
 * loaded only when a TypeScript module is given, so a run with a built-in or
 * JavaScript metric never pays for it and tsx need not be installed.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as UserFile from "./userFile.js"
import { importUserModule } from "../internal/shared/userModule.js"
import * as Metric from "../Metric.js"
import type { Example } from "./data.js"
import { CliInputError, errorText, inputError, show } from "./errors.js"
import type { Settings } from "./settings.js"

// a missing module is told apart from one that fails to load (a file
// system that cannot tell leaves it to the import)
const moduleExists = (file: string): Effect.Effect<boolean> => Effect.orElseSucceed(UserFile.exists(file), () => true)

const expectedText = (e: Example): string | ReadonlyArray<string> => {
  const expected = e.expected
  if (typeof expected === "string") return expected
  if (Array.isArray(expected)) {
    const texts = expected.filter((x): x is string => typeof x === "string")
    if (texts.length === expected.length) return texts
  }
  return JSON.stringify(expected)
}

/**
 * Imports a metric module (see the module docs for the file kinds).
 *
 * @since 0.2.0
 * @category metrics
 */
export const importModule = (file: string): Effect.Effect<unknown, CliInputError> =>
  Effect.tryPromise({
    try: () => importUserModule(file, { sameGraphFirst: true, orIsolated: true }),
    catch: (e) => inputError(`${file}: cannot load the metric module: ${errorText(e).split("\n")[0]}`)
  })

const isRecord = (u: unknown): u is Record<string, unknown> => u !== null && typeof u === "object"

/**
 * The function a user module exports as `metric`, or as its default export.
 * A CommonJS module compiled by tsx or Node comes as `{ default: module.exports }`.
 *
 * @internal
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- any function a user module exports; called through Reflect.apply
export const exportedFunction = (mod: unknown): Function | undefined => {
  if (!isRecord(mod)) return undefined
  const named = mod["metric"]
  if (typeof named === "function") return named
  const fallback = mod["default"]
  if (typeof fallback === "function") return fallback
  return isRecord(fallback) ? exportedFunction(fallback) : undefined
}

const asResult = (value: unknown): Effect.Effect<Metric.MetricResult, Error> => {
  if (typeof value === "number") return Effect.succeed({ score: value })
  if (isRecord(value) && typeof value["score"] === "number") {
    const feedback = value["feedback"]
    return Effect.succeed({ score: value["score"], feedback: typeof feedback === "string" ? feedback : undefined })
  }
  return Effect.fail(new Error(`the metric returned ${show(value)}, expected a number or { score, feedback }`))
}

/**
 * The metric a settings object names: a built-in, or a module's `metric` or
 * default export (a function `(example, output) => { score, feedback }`,
 * possibly returning a Promise or an Effect). The module receives the CLI
 * `Example` (with `input`, `expected` and the whole `record`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const loadMetric = (
  settings: Pick<Settings, "metric" | "ignoreCase" | "pattern" | "jsonPath">
): Effect.Effect<Metric.Metric<Example, string, unknown>, CliInputError> => {
  const text = { ignoreCase: settings.ignoreCase }
  switch (settings.metric) {
    case "exact":
      return Effect.succeed(Metric.exactMatch(expectedText, text))
    case "contains":
      return Effect.succeed(Metric.contains(expectedText, text))
    case "regex": {
      const flags = settings.ignoreCase ? "i" : ""
      const fixed = settings.pattern
      return Effect.succeed(Metric.regex<Example>((e) => {
        try {
          return new RegExp(fixed ?? String(e.expected), flags)
        } catch {
          // an unusable per-example pattern can only match itself literally
          return new RegExp(String(e.expected).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), flags)
        }
      }))
    }
    case "json-field":
      return Effect.succeed(Metric.jsonField<Example>(settings.jsonPath ?? "", (e) => e.expected, text))
  }
  const file = settings.metric
  return Effect.gen(function*() {
    if (!(yield* moduleExists(file))) return yield* Effect.fail(inputError(`${file}: metric module not found`))
    const user = exportedFunction(yield* importModule(file))
    if (user === undefined) {
      return yield* Effect.fail(
        inputError(`${file}: the module must export a function named "metric" (or a default export) taking (example, output)`)
      )
    }
    return (example: Example, output: string) =>
      Effect.suspend((): Effect.Effect<unknown, unknown> => {
        const out: unknown = Reflect.apply(user, undefined, [example, output])
        // an Effect from a metric module cannot require services: the CLI provides none
        if (Effect.isEffect(out)) return out as Effect.Effect<unknown, unknown>
        if (out instanceof Promise) return Effect.tryPromise({ try: (): Promise<unknown> => out, catch: (e) => e })
        return Effect.succeed(out)
      }).pipe(Effect.flatMap(asResult))
  })
}
