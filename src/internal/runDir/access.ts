/**
 * A run directory's files from outside a run, without its lock: reading the
 * saved state and the result for inspection, writing and reading the files
 * the run itself does not write, and the questions asked before a run
 * (what is at the path, whether it holds a run) and during one (a stop
 * request). Each works on the directory's file system (`disk.ts`).
 *
 * @internal
 */
import { Effect, Option, Schema } from "effect"
import { PersistenceError } from "../../Errors.js"
import * as Result from "../../Result.js"
import type * as State from "../../State.js"
import { firstIssue } from "../shared/issue.js"
import * as Disk from "./disk.js"
import { FILES, type Migrations, parseCandidateLog, parseJournal, replayJournal } from "./format.js"
import { readStateFile } from "./open.js"

/** The name of a file of a run directory (`RunDir.FileName`). @internal */
export type FileName = (typeof FILES)[keyof typeof FILES]

/** The directory's file system (see `RunDir.make`) for the utilities below; `orDie` for those that cannot fail. */
const onDisk = <A, E>(dir: string, f: (disk: Disk.Disk, root: string) => Effect.Effect<A, E>): Effect.Effect<A, E | PersistenceError> =>
  Effect.flatMap(Disk.resolve(String(dir)), (disk) => f(disk, disk.path.resolve(dir)))

/** The saved state of a run directory, read without its lock (`RunDir.readState`). @internal */
export const readState = (
  dir: string,
  options?: { readonly migrations?: Migrations }
): Effect.Effect<Option.Option<State.GepaState>, PersistenceError> =>
  onDisk(dir, (disk, root) =>
    Effect.gen(function*() {
      const read = (name: string) => Disk.readText(disk, disk.path.join(root, name))
      const candidates = parseCandidateLog(Option.getOrElse(yield* read(FILES.candidates), () => ""))
      let corrupt: { readonly file: string; readonly detail: string } | undefined
      for (const name of [FILES.state, FILES.prev]) {
        const r = yield* readStateFile(disk, disk.path.join(root, name), options?.migrations ?? {}, candidates)
        if (r._tag === "ok") {
          const journals: Array<ReturnType<typeof parseJournal>["lines"]> = []
          for (const log of [FILES.prevJournal, FILES.journal]) journals.push(parseJournal(Option.getOrElse(yield* read(log), () => "")).lines)
          return Option.some(replayJournal(r, journals.flat(), candidates).state)
        }
        if (r._tag === "corrupt" && corrupt === undefined) corrupt = { file: disk.path.join(root, name), detail: r.detail }
      }
      if (corrupt !== undefined) {
        return yield* Effect.fail(new PersistenceError({ path: corrupt.file, operation: "read", detail: corrupt.detail }))
      }
      return Option.none()
    }))

/** Writes a file of a run directory atomically, creating the directory if needed (`RunDir.writeFile`). @internal */
export const writeFile = (dir: string, name: FileName, content: string): Effect.Effect<void, PersistenceError> =>
  onDisk(dir, (disk, root) =>
    Effect.zipRight(
      Effect.mapError(disk.fs.makeDirectory(root, { recursive: true }), Disk.failed(disk.path.join(root, name), "write")),
      Disk.writeAtomic(disk, root, name, content)
    ))

/** Reads a file of a run directory; `None` when it does not exist (`RunDir.readFile`). @internal */
export const readFile = (dir: string, name: FileName): Effect.Effect<Option.Option<string>, PersistenceError> =>
  onDisk(dir, (disk, root) => Disk.readText(disk, disk.path.join(root, name)))

/** What is at a run directory's path (`RunDir.pathKind`). @internal */
export const pathKind = (dir: string): Effect.Effect<"missing" | "directory" | "other", PersistenceError> => onDisk(dir, (disk, root) => Disk.kind(disk, root))

/** Removes a run directory and everything in it (`RunDir.remove`). @internal */
export const remove = (dir: string): Effect.Effect<void, PersistenceError> => onDisk(dir, (disk, root) => Disk.remove(disk, root, "remove", true))

/** Whether a run directory holds the file `name` (`RunDir.exists`). @internal */
export const exists = (dir: string, name: FileName): Effect.Effect<boolean> =>
  Effect.orDie(onDisk(dir, (disk, root) => Disk.exists(disk, disk.path.join(root, name))))

/** Whether a directory holds a saved state (`RunDir.holdsState`). @internal */
export const holdsState = (dir: string): Effect.Effect<boolean> => exists(dir, FILES.state)

/** Whether a directory already holds a run (`RunDir.holdsRun`). @internal */
export const holdsRun = (dir: string): Effect.Effect<boolean> =>
  Effect.map(
    Effect.forEach([FILES.state, FILES.prev, FILES.result, FILES.config], (name) => exists(dir, name)),
    (found) => found.some((x) => x)
  )

/** Requests a graceful stop of the run using a directory (`RunDir.requestStop`). @internal */
export const requestStop = (dir: string, note: string): Effect.Effect<void, PersistenceError> =>
  onDisk(dir, (disk, root) => {
    const file = disk.path.join(root, FILES.stop)
    return Effect.mapError(disk.fs.writeFileString(file, note), Disk.failed(file, "write"))
  })

const decodeResult = Schema.decodeUnknownEither(Result.GepaResult)

/** Reads `result.json`; `None` when the run has not finished (`RunDir.readResult`). @internal */
export const readResult = (dir: string): Effect.Effect<Option.Option<Result.GepaResult>, PersistenceError> =>
  Effect.gen(function*() {
    const text = yield* readFile(dir, FILES.result)
    if (Option.isNone(text)) return Option.none()
    const file = yield* onDisk(dir, (disk, root) => Effect.succeed(disk.path.join(root, FILES.result)))
    const fail = (detail: string) => Effect.fail(new PersistenceError({ path: file, operation: "read", detail }))
    let json: unknown
    try {
      json = JSON.parse(text.value)
    } catch (e) {
      return yield* fail(`not valid JSON (${e instanceof Error ? e.message : String(e)})`)
    }
    const decoded = decodeResult(json)
    if (decoded._tag === "Left") return yield* fail(`not a GEPA result: ${firstIssue(decoded.left)}`)
    return Option.some(decoded.right)
  })
