/**
 * The data files of the CLI: JSON Lines or a JSON array of objects, with the
 * input, expected and id fields picked out of each record.
 *
 * @since 0.1.0
 */
import { Effect, Either } from "effect"
import { CliInputError, errorText, inputError, show } from "./errors.js"
import { readInputFile } from "./userFile.js"

const isRecord = (u: unknown): u is Record<string, unknown> => u !== null && typeof u === "object" && !Array.isArray(u)

/**
 * One example of a CLI data file: the user message, the expected value and
 * the whole record (what a custom metric module receives).
 *
 * @since 0.1.0
 * @category models
 */
export interface Example {
  readonly id: string
  readonly input: string
  readonly expected: unknown
  readonly record: Readonly<Record<string, unknown>>
}

/**
 * The records of a data file's text: JSON Lines (one object per non-blank
 * line) or, when the file name ends in `.json`, a JSON array of objects.
 * Each record comes with its line number (JSONL) or position (JSON).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseRecords = (
  text: string,
  file: string
): Either.Either<ReadonlyArray<{ readonly where: string; readonly id: string; readonly record: Record<string, unknown> }>, CliInputError> => {
  const out: Array<{ where: string; id: string; record: Record<string, unknown> }> = []
  if (/\.json$/i.test(file)) {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (e) {
      return Either.left(inputError(`${file}: invalid JSON: ${errorText(e)}`))
    }
    if (!Array.isArray(json)) return Either.left(inputError(`${file}: expected a JSON array of example objects`))
    for (const [i, item] of json.entries()) {
      if (!isRecord(item)) return Either.left(inputError(`${file}: item ${i}: expected a JSON object, got ${show(item)}`))
      out.push({ where: `${file}: item ${i}`, id: String(i), record: item })
    }
  } else {
    const lines = text.split(/\r?\n/)
    for (const [i, line] of lines.entries()) {
      if (line.trim() === "") continue
      const where = `${file}:${i + 1}`
      let item: unknown
      try {
        item = JSON.parse(line)
      } catch (e) {
        return Either.left(inputError(`${where}: invalid JSON on line ${i + 1}: ${errorText(e)}`))
      }
      if (!isRecord(item)) return Either.left(inputError(`${where}: line ${i + 1} must be a JSON object, got ${show(item)}`))
      out.push({ where, id: String(i + 1), record: item })
    }
  }
  if (out.length === 0) return Either.left(inputError(`${file}: no examples in the file`))
  return Either.right(out)
}

/**
 * The examples of a data file's text, with the input and expected fields
 * picked out. `expectedRequired` is false for metrics that do not need an
 * expected value (a fixed regex, a custom module).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseExamples = (
  text: string,
  file: string,
  options: {
    readonly inputField: string
    readonly expectedField: string
    readonly idField?: string | undefined
    readonly expectedRequired: boolean
  }
): Either.Either<ReadonlyArray<Example>, CliInputError> =>
  Either.flatMap(parseRecords(text, file), (records) => {
    const out: Array<Example> = []
    const seen = new Map<string, string>()
    for (const { id: position, record, where } of records) {
      const input = record[options.inputField]
      if (input === undefined || input === null) {
        return Either.left(inputError(`${where}: missing input field "${options.inputField}" (set the field name with --input-field)`))
      }
      const expected = record[options.expectedField]
      if (options.expectedRequired && expected === undefined) {
        return Either.left(
          inputError(`${where}: missing expected field "${options.expectedField}" (set the field name with --expected-field)`)
        )
      }
      let id = position
      if (options.idField !== undefined) {
        const given = record[options.idField]
        if (typeof given !== "string" && typeof given !== "number") {
          return Either.left(inputError(`${where}: missing id field "${options.idField}" (a string or a number)`))
        }
        id = String(given)
        const first = seen.get(id)
        if (first !== undefined) return Either.left(inputError(`${where}: duplicate id ${show(id)} (first at ${first})`))
        seen.set(id, where)
      }
      out.push({ id, input: typeof input === "string" ? input : JSON.stringify(input), expected, record })
    }
    return Either.right(out)
  })

/**
 * Reads and parses a data file (see `parseExamples`), through the context's
 * `FileSystem` (else `@effect/platform-node`'s).
 *
 * @since 0.1.0
 * @category parsing
 */
export const loadExamples = (
  file: string,
  options: Parameters<typeof parseExamples>[2]
): Effect.Effect<ReadonlyArray<Example>, CliInputError> => Effect.flatMap(readInputFile(file), (text) => parseExamples(text, file, options))
