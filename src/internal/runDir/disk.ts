/**
 * The run directory's file access, on `@effect/platform`'s `FileSystem` and
 * `Path`: which file system a run directory uses, atomic writes (temporary
 * file, sync, rename), append-only logs whose appends are awaited before
 * what they record is used, directory syncs and reads that tell a missing
 * file from a failure.
 *
 * `@effect/platform` is an optional peer of the package (the library's
 * root runs on Effect alone, and a library user compiles its declarations
 * without it), so this module names its types only (`import type`) and
 * loads its tags, and `@effect/platform-node`'s implementation, when a run
 * directory is first opened.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import { Effect, Layer, Option, type Scope } from "effect"
import { PersistenceError } from "../../Errors.js"

/** The file system and path services a run directory works through. */
export interface Disk {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
}

/** `@effect/platform`'s `PlatformError`, by shape (its class is not loaded here). */
interface PlatformErrorLike {
  readonly _tag: string
  readonly reason?: string
  readonly description?: string | undefined
  readonly message: string
}

const isNotFound = (e: PlatformErrorLike): boolean => e._tag === "SystemError" && e.reason === "NotFound"

/** The error's text, as the operating system put it (`ENOENT: no such file or directory, open '...'`). */
export const detailOf = (e: PlatformErrorLike): string => e.description ?? e.message

/** A platform failure as a `PersistenceError` naming the file and the operation. */
export const failed = (file: string, operation: string) => (e: PlatformErrorLike): PersistenceError =>
  new PersistenceError({ path: file, operation, detail: detailOf(e) })

const INSTALL = "npm install @effect/platform@^0.97.2 @effect/platform-node@^0.108.2"

const missingPlatform = (file: string, e: unknown) =>
  new PersistenceError({
    path: file,
    operation: "open",
    detail: `a run directory needs a FileSystem and a Path service in the context, or @effect/platform-node to provide them (${INSTALL}): ${
      e instanceof Error ? e.message.split("\n")[0] : String(e)
    }`
  })

type Tags = readonly [typeof FileSystem.FileSystem, typeof Path.Path]

/** Loads once per process; a failed load is tried again by the next call. */
const once = <A>(load: () => Promise<A>): () => Promise<A> => {
  let loaded: Promise<A> | undefined
  return () => {
    loaded ??= load().catch((e: unknown) => {
      loaded = undefined
      throw e
    })
    return loaded
  }
}

const loadTags = once(async (): Promise<Tags> => {
  const [f, p] = await Promise.all([import("@effect/platform/FileSystem"), import("@effect/platform/Path")])
  return [f.FileSystem, p.Path]
})

const loadNode = once(async (): Promise<Disk> => {
  const [[fsTag, pathTag], f, p] = await Promise.all([
    loadTags(),
    import("@effect/platform-node/NodeFileSystem"),
    import("@effect/platform-node/NodePath")
  ])
  return Effect.runPromise(Effect.provide(Effect.all({ fs: fsTag, path: pathTag }), Layer.merge(f.layer, p.layer)))
})

/** The context's `FileSystem` and `Path`, when it has both. */
export const fromContext: Effect.Effect<Option.Option<Disk>> = Effect.flatMap(
  Effect.option(Effect.tryPromise(loadTags)),
  Option.match({
    onNone: () => Effect.succeed(Option.none()),
    onSome: ([fsTag, pathTag]) => Effect.map(Effect.all([Effect.serviceOption(fsTag), Effect.serviceOption(pathTag)]), ([fs, path]) => Option.all({ fs, path }))
  })
)

/**
 * The file system a run directory uses: `given` (captured where a layer was
 * built), else the context's, else Node's (`@effect/platform-node`, loaded
 * here); one line naming what to install when none is there.
 */
export const resolve = (file: string, given: Option.Option<Disk> = Option.none()): Effect.Effect<Disk, PersistenceError> =>
  Option.isSome(given)
    ? Effect.succeed(given.value)
    : Effect.flatMap(fromContext, (found) =>
      Option.isSome(found)
        ? Effect.succeed(found.value)
        : Effect.tryPromise({ try: loadNode, catch: (e) => missingPlatform(file, e) }))

/** Reads a text file; `None` when it does not exist. */
export const readText = (disk: Disk, file: string): Effect.Effect<Option.Option<string>, PersistenceError> =>
  disk.fs.readFileString(file).pipe(
    Effect.map(Option.some),
    Effect.catchAll((e) => (isNotFound(e) ? Effect.succeed(Option.none()) : Effect.fail(failed(file, "read")(e))))
  )

/** Whether a path exists; a failure to tell is taken as "no". */
export const exists = (disk: Disk, file: string): Effect.Effect<boolean> => Effect.orElseSucceed(disk.fs.exists(file), () => false)

/** What is at a path: nothing, a directory or something else. */
export const kind = (disk: Disk, file: string): Effect.Effect<"missing" | "directory" | "other", PersistenceError> =>
  disk.fs.stat(file).pipe(
    Effect.map((info): "directory" | "other" => (info.type === "Directory" ? "directory" : "other")),
    Effect.catchAll((e) => (isNotFound(e) ? Effect.succeed("missing" as const) : Effect.fail(failed(file, "inspect")(e))))
  )

/** Removes a file (or, with `recursive`, a directory); nothing there is fine. */
export const remove = (disk: Disk, file: string, operation = "remove", recursive = false): Effect.Effect<void, PersistenceError> =>
  Effect.mapError(disk.fs.remove(file, { force: true, recursive }), failed(file, operation))

const encoder = new TextEncoder()

/** The byte length of a text in UTF-8. */
export const byteLength = (text: string): number => Buffer.byteLength(text)

/**
 * Writes a file so that readers see either the old or the new content,
 * never a mix: a temporary file, synced, renamed over the target. With
 * `keepPrevious`, the current file becomes that file first (a hard link, so
 * that there is no moment without a current file).
 */
export const writeAtomic = (disk: Disk, dir: string, name: string, content: string, keepPrevious?: string): Effect.Effect<void, PersistenceError> => {
  const target = disk.path.join(dir, name)
  const tmp = disk.path.join(dir, `.${name}.tmp-${process.pid}`)
  const write = Effect.scoped(
    Effect.flatMap(disk.fs.open(tmp, { flag: "w" }), (file) => Effect.zipRight(file.writeAll(encoder.encode(content)), file.sync))
  )
  const previous = keepPrevious === undefined ? Effect.void : Effect.gen(function*() {
    if (!(yield* exists(disk, target))) return
    const prevTmp = disk.path.join(dir, `.${keepPrevious}.tmp-${process.pid}`)
    yield* disk.fs.remove(prevTmp, { force: true })
    yield* Effect.orElse(disk.fs.link(target, prevTmp), () => disk.fs.copyFile(target, prevTmp))
    yield* disk.fs.rename(prevTmp, disk.path.join(dir, keepPrevious))
  })
  return Effect.mapError(Effect.zipRight(Effect.zipRight(write, previous), disk.fs.rename(tmp, target)), failed(target, "write"))
}

/** Makes the renames in a directory durable; best effort (some platforms cannot open a directory). */
export const syncDir = (disk: Disk, dir: string): Effect.Effect<void> =>
  Effect.ignore(Effect.scoped(Effect.flatMap(disk.fs.open(dir, { flag: "r" }), (file) => file.sync)))

/**
 * Reads a log's complete lines and cuts a partial last line (left by a
 * crash mid-append), so that the next append starts on a line of its own.
 */
export const readLog = (disk: Disk, file: string): Effect.Effect<string, PersistenceError> =>
  Effect.flatMap(readText(disk, file), (text) => {
    if (Option.isNone(text)) return Effect.succeed("")
    const all = text.value
    if (all.length === 0 || all.endsWith("\n")) return Effect.succeed(all)
    const keep = all.slice(0, all.lastIndexOf("\n") + 1)
    return Effect.as(Effect.mapError(disk.fs.truncate(file, byteLength(keep)), failed(file, "open")), keep)
  })

/** An append-only log open for the scope. */
export interface AppendLog {
  /** the complete lines the file held when it was opened */
  readonly text: string
  /**
   * Appends `text` and waits until the write returned: from then on the
   * kernel has it, and a killed process does not lose it. Appends waiting
   * at once go out in one write, in order.
   */
  readonly append: (text: string) => Effect.Effect<void, PersistenceError>
  /**
   * Appends `text` later (diagnostic logs: a failure is dropped): posted
   * text is kept in memory and goes out with the next append, `flush`, when
   * it reaches 64 kB, or when the scope closes. A write costs tens of
   * microseconds of CPU through the platform's file system (a thread-pool
   * round trip), and the event log alone would take several per iteration.
   */
  readonly post: (text: string) => Effect.Effect<void>
  /** writes the posted text */
  readonly flush: Effect.Effect<void>
  /** flushes what was written to the disk (`File.sync`) */
  readonly sync: Effect.Effect<void, PersistenceError>
  /** cuts the file to `bytes` */
  readonly truncate: (bytes: number) => Effect.Effect<void, PersistenceError>
}

/**
 * Opens an append-only log for the scope: reads its complete lines (a cut
 * last line is removed), then appends one write at a time (a semaphore:
 * not every `FileSystem` orders the writes of a file itself), each carrying
 * every text appended by then. The scope's close writes what was posted.
 */
export const openAppend = (disk: Disk, file: string): Effect.Effect<AppendLog, PersistenceError, Scope.Scope> =>
  Effect.gen(function*() {
    const text = yield* readLog(disk, file)
    const handle = yield* Effect.mapError(disk.fs.open(file, { flag: "a" }), failed(file, "open"))
    const lock = yield* Effect.makeSemaphore(1)
    // group commit: an append adds its text to `buffered`; the one that gets
    // the lock writes everything buffered so far, and the appends whose text
    // it carried find it written when their turn comes
    let posted = ""
    let buffered = ""
    let added = 0
    let written = 0
    let failure: { readonly upTo: number; readonly error: PersistenceError } | undefined
    const write = (text: string) =>
      Effect.suspend(() => {
        buffered += text
        const mine = ++added
        // uninterruptible: a caller learns whether its write happened
        return Effect.uninterruptible(
          lock.withPermits(1)(Effect.suspend(() => {
            if (mine <= written) return Effect.void
            if (failure !== undefined && mine <= failure.upTo) return Effect.fail(failure.error)
            const chunk = posted + buffered
            const upTo = added
            posted = ""
            buffered = ""
            if (chunk.length === 0) {
              written = upTo
              return Effect.void
            }
            return handle.writeAll(encoder.encode(chunk)).pipe(
              Effect.mapError(failed(file, "append to")),
              Effect.tapBoth({
                onFailure: (error) => Effect.sync(() => (failure = { upTo, error })),
                onSuccess: () => Effect.sync(() => (written = upTo))
              })
            )
          }))
        )
      })
    const flush = Effect.ignore(write(""))
    yield* Effect.addFinalizer(() => flush)
    return {
      text,
      append: write,
      post: (t) =>
        Effect.suspend(() => {
          posted += t
          return posted.length >= 65536 ? flush : Effect.void
        }),
      flush,
      sync: Effect.mapError(handle.sync, failed(file, "fsync")),
      truncate: (bytes) => lock.withPermits(1)(Effect.mapError(handle.truncate(bytes), failed(file, "truncate")))
    }
  })
