/**
 * Reading a config file (`gepa optimize --config gepa.json`, decoded with
 * the `ConfigFile` Schema): unknown fields with the closest known one,
 * `baseURL` read as `baseUrl`, relative paths resolved against the file's
 * directory. It gives one layer of settings, an `Input`, which
 * `resolveSettings` merges with the flags'.
 *
 * @since 0.3.0
 */
import { Either, Schema } from "effect"
import * as path from "node:path"
import { firstIssue } from "../internal/shared/issue.js"
import { type CliInputError, errorText, inputError } from "./errors.js"
import { ConfigFile, type Input, ModelSpec } from "./settings.js"
import { didYouMean } from "./suggest.js"

const knownFields = Object.keys(ConfigFile.fields).filter((k) => k !== "$schema")

/** Whether a metric setting names a module rather than a built-in. @internal */
export const looksLikePath = (metric: string): boolean => /[\\/]/.test(metric) || /\.(?:[cm]?[jt]s)$/i.test(metric)

/**
 * Resolves the relative paths of a layer (data, seed prompt file, run
 * directory, metric module) against `base`.
 *
 * @since 0.2.0
 * @category parsing
 */
export const resolvePaths = (input: Input, base: string): Input => {
  const abs = (p: string | undefined) => (p === undefined ? {} : { value: path.resolve(base, p) })
  const out: { -readonly [K in keyof Input]: Input[K] } = { ...input }
  for (const key of ["train", "validation", "seedPromptFile", "runDir"] as const) {
    const resolved = abs(input[key])
    if ("value" in resolved) out[key] = resolved.value
  }
  if (input.metric !== undefined && looksLikePath(input.metric)) out.metric = path.resolve(base, input.metric)
  if (input.components !== undefined) {
    out.components = Object.fromEntries(
      Object.entries(input.components).map(([name, seed]) => [name, typeof seed === "string" ? seed : { file: path.resolve(base, seed.file) }])
    )
  }
  return out
}

const decodeConfigFile = Schema.decodeUnknownEither(ConfigFile, { onExcessProperty: "error", errors: "all" })

// The other spelling of a model's base URL (the OpenAI SDK's `baseURL`) is
// read as `baseUrl`, with a warning; both at once is an error.
const respell = (json: Record<string, unknown>, file: string): Either.Either<ReadonlyArray<string>, CliInputError> => {
  const warnings: Array<string> = []
  for (const role of ["taskModel", "reflectionModel"]) {
    const spec = json[role]
    if (spec === null || typeof spec !== "object" || Array.isArray(spec) || !("baseURL" in spec)) continue
    const { baseURL, ...rest } = spec
    if ("baseUrl" in rest) return Either.left(inputError(`${file}: "${role}" has both "baseUrl" and "baseURL"; keep "baseUrl"`))
    json[role] = { ...rest, baseUrl: baseURL }
    warnings.push(`${file}: "${role}.baseURL" is spelled "${role}.baseUrl" in a config file; read as such`)
  }
  return Either.right(warnings)
}

/**
 * Parses the text of a config file (JSON), with the warnings it gives (a
 * base URL spelled `baseURL`). `file` names it in messages. Unknown fields
 * (with the closest known one, when it looks like a typo) and values of the
 * wrong kind are errors; relative paths are resolved against the file's
 * directory.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parseConfig = (
  text: string,
  file: string
): Either.Either<{ readonly input: Input; readonly warnings: ReadonlyArray<string> }, CliInputError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(inputError(`${file}: invalid JSON: ${errorText(e)}`))
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return Either.left(inputError(`${file}: expected a JSON object with the run's settings`))
  }
  const respelled: Record<string, unknown> = { ...json }
  const warnings = respell(respelled, file)
  if (Either.isLeft(warnings)) return Either.left(warnings.left)
  const decoded = decodeConfigFile(respelled)
  if (Either.isLeft(decoded)) {
    const problem = firstIssue(decoded.left)
    const unknown = /^unknown field "([^"]*)"/.exec(problem)
    let hint = ""
    if (unknown !== null) {
      const name = unknown[1] ?? ""
      // "taskModel.baseUrll": the field of a model spec
      const [head, tail] = name.split(".", 2)
      const [parent, field] = tail === undefined ? [undefined, name] : [head, tail]
      const known = parent === undefined ? knownFields : Object.keys(ModelSpec.fields)
      const guess = didYouMean(field, known, (k) => `"${parent === undefined ? k : `${parent}.${k}`}"`)
      hint = guess !== "" ? guess : ` (known: ${known.join(", ")})`
    }
    return Either.left(inputError(`${file}: ${problem.startsWith("\"") ? `field ${problem}` : problem}${hint}`))
  }
  const { $schema: _, ...input } = decoded.right
  return Either.right({ input: resolvePaths(input, path.dirname(path.resolve(file))), warnings: warnings.right })
}

/**
 * Parses the text of a config file (JSON); see `parseConfig`, which also
 * gives the warnings.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseConfigFile = (text: string, file: string): Either.Either<Input, CliInputError> =>
  Either.map(parseConfig(text, file), (parsed) => parsed.input)
