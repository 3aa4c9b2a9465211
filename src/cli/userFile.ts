/**
 * The files a user names on the command line or in a config file (data, a
 * seed text, the config file itself, a report's `--out`, a module's path),
 * read and written through the context's `FileSystem`, else Node's (see
 * `resolve` in `internal/runDir/disk.ts`). A failure says what went wrong
 * in a form each command turns into its own one-line message naming the
 * file.
 *
 * @since 0.3.0
 */
import { Effect } from "effect"
import { field } from "../internal/shared/fields.js"
import * as Disk from "../internal/runDir/disk.js"
import { type CliInputError, inputError } from "./errors.js"

/**
 * Why a user's file could not be read or written: it is not there, it is a
 * directory, or something else (`detail` as the operating system put it;
 * `error` the operating system's error itself when there is one).
 */
export interface Problem {
  readonly kind: "missing" | "directory" | "other"
  readonly detail: string
  readonly error: unknown
}

interface PlatformErrorLike {
  readonly _tag: string
  readonly reason?: string
  readonly description?: string | undefined
  readonly cause?: unknown
  readonly message: string
}

const problemOf = (e: PlatformErrorLike): Problem => {
  const detail = Disk.detailOf(e)
  // the Node error under the platform's, when there is one
  const error = e.cause instanceof Error ? e.cause : e
  if (e._tag === "SystemError" && e.reason === "NotFound") return { kind: "missing", detail, error }
  if (field(e.cause, "code") === "EISDIR") return { kind: "directory", detail, error }
  return { kind: "other", detail, error }
}

const disk = (file: string): Effect.Effect<Disk.Disk, Problem> =>
  Effect.mapError(Disk.resolve(file), (e): Problem => ({ kind: "other", detail: e.detail, error: e }))

// UTF-8 as `fs.readFileSync(file, "utf8")` reads it: a byte order mark stays
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true })

/** The text of a file (UTF-8). */
export const readText = (file: string): Effect.Effect<string, Problem> =>
  Effect.flatMap(disk(file), (d) =>
    d.fs.readFile(file).pipe(
      Effect.map((bytes) => utf8.decode(bytes)),
      Effect.mapError(problemOf)
    ))

/**
 * Reads a file the user named, through the context's `FileSystem` (else
 * Node's); a failure is one line naming the file.
 *
 * @internal
 */
export const readInputFile = (file: string): Effect.Effect<string, CliInputError> =>
  Effect.mapError(readText(file), (problem) =>
    inputError(
      problem.kind === "missing"
        ? `${file}: file not found`
        : problem.kind === "directory"
        ? `${file}: is a directory, expected a file`
        : `${file}: cannot read the file: ${problem.detail}`
    ))

/** Writes a file (created or replaced). */
export const writeText = (file: string, text: string): Effect.Effect<void, Problem> =>
  Effect.flatMap(disk(file), (d) => Effect.mapError(d.fs.writeFileString(file, text), problemOf))

/** Whether a path exists; a failure to tell is taken as "no". */
export const exists = (file: string): Effect.Effect<boolean, Problem> => Effect.flatMap(disk(file), (d) => Disk.exists(d, file))

/**
 * Why the directory `dir` cannot be created: the nearest existing path above
 * it (`at`) is a file, or a directory the process may not write in; nothing
 * when `dir` exists or can be created.
 */
export const uncreatable = (dir: string): Effect.Effect<{ readonly at: string; readonly why: "file" | "permission" } | undefined, Problem> =>
  Effect.flatMap(disk(dir), (d) =>
    Effect.gen(function*() {
      const target = d.path.resolve(dir)
      let at = target
      while (!(yield* Disk.exists(d, at))) {
        const parent = d.path.dirname(at)
        if (parent === at) return undefined
        at = parent
      }
      if (at === target) return undefined
      const info = yield* Effect.mapError(d.fs.stat(at), problemOf)
      if (info.type !== "Directory") return { at, why: "file" as const }
      const writable = yield* Effect.match(d.fs.access(at, { writable: true }), { onFailure: () => false, onSuccess: () => true })
      return writable ? undefined : { at, why: "permission" as const }
    }))
