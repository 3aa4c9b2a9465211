/**
 * The steps of opening a run directory (`RunDir.make`), on the directory's
 * `Disk`: the root and its lock, `candidates.jsonl`, the saved state with
 * its fallback, `best_candidate.json`, `best_outputs.json` and the side
 * logs.
 *
 * @internal
 */
import { Effect, Option, Scope } from "effect"
import * as os from "node:os"
import * as Candidate from "../../Candidate.js"
import { ConfigError, PersistenceError } from "../../Errors.js"
import type { LogName } from "../../RunStore.js"
import * as State from "../../State.js"
import { field } from "../shared/fields.js"
import {
  type CandidateLine,
  type CandidateLog,
  type Decoded,
  decodeSaved,
  FILES,
  isAlive,
  type Lock,
  type Migrations,
  parseCandidateLog,
  stampNow
} from "./format.js"
import type { CacheIndex } from "./cache.js"
import { type AppendLog, type Disk, exists, failed, kind, openAppend, readText, remove, syncDir, writeAtomic } from "./disk.js"

/** Reads and decodes one state file (see `decodeSaved`). */
export const readStateFile = (disk: Disk, file: string, migrations: Migrations, candidates: CandidateLog): Effect.Effect<Decoded, PersistenceError> =>
  Effect.flatMap(readText(disk, file), (text) => decodeSaved(file, text, migrations, candidates))

/** Takes the directory's lock (`gepa.lock`); a lock whose process is gone (same host) is taken over. */
const acquireLock = (disk: Disk, dir: string): Effect.Effect<Lock, PersistenceError> =>
  Effect.gen(function*() {
    const file = disk.path.join(dir, FILES.lock)
    const mine: Lock = { pid: process.pid, hostname: os.hostname(), startedAt: stampNow() }
    const create = Effect.scoped(Effect.flatMap(
      disk.fs.open(file, { flag: "wx" }),
      (f) => Effect.zipRight(f.writeAll(new TextEncoder().encode(JSON.stringify(mine))), f.sync)
    ))
    for (let tries = 0; tries < 3; tries++) {
      const created = yield* Effect.either(create)
      if (created._tag === "Right") return mine
      const e = created.left
      if (!(e._tag === "SystemError" && e.reason === "AlreadyExists")) return yield* Effect.fail(failed(file, "create the lock file")(e))
      let holder: unknown = {}
      try {
        holder = JSON.parse(Option.getOrElse(yield* Effect.orElseSucceed(readText(disk, file), () => Option.none<string>()), () => "{}"))
      } catch {
        // a lock file left half-written by a crash while taking it
      }
      const pid = field(holder, "pid")
      const hostname = field(holder, "hostname")
      const startedAt = field(holder, "startedAt")
      const sameHost = hostname === undefined || hostname === os.hostname()
      // a lock from another host cannot be checked, so it is respected
      const stale = typeof pid !== "number" ? startedAt === undefined : sameHost && !isAlive(pid)
      if (!stale) {
        return yield* Effect.fail(
          new PersistenceError({
            path: file,
            operation: "lock the run directory",
            detail: `it is in use by process ${typeof pid === "number" ? pid : "?"} on ${typeof hostname === "string" ? hostname : "an unknown host"} since ${
              typeof startedAt === "string" ? startedAt : "an unknown time"
            }; wait for that run to end, or delete the lock file if that process is gone`
          })
        )
      }
      yield* remove(disk, file, "remove the stale lock file")
    }
    return yield* Effect.fail(new PersistenceError({ path: file, operation: "create the lock file", detail: "another process keeps taking it" }))
  })

/** Removes the lock if it is still ours (a takeover by another run must not be undone). */
const releaseLock = (disk: Disk, dir: string, lock: Lock): Effect.Effect<void> => {
  const file = disk.path.join(dir, FILES.lock)
  return Effect.ignore(Effect.flatMap(readText(disk, file), (text) => {
    if (Option.isNone(text)) return Effect.void
    let holder: unknown
    try {
      holder = JSON.parse(text.value)
    } catch {
      return Effect.void
    }
    return field(holder, "pid") === lock.pid && field(holder, "startedAt") === lock.startedAt ? remove(disk, file) : Effect.void
  }))
}

/**
 * Checks, creates and locks the run directory for the scope; removes the
 * stop file of the run that was stopped with it (it would end the resumed
 * run at once) and the temporary files of a save cut short by a crash.
 */
export const openRoot = (disk: Disk, dir: string): Effect.Effect<string, PersistenceError | ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    if (typeof dir !== "string" || dir.length === 0) {
      return yield* Effect.fail(new ConfigError({ field: "runDir", detail: "expected a non-empty directory path" }))
    }
    const root = disk.path.resolve(dir)
    const create = failed(root, "create the run directory")
    yield* Effect.mapError(disk.fs.makeDirectory(root, { recursive: true }), create)
    if ((yield* kind(disk, root)) !== "directory") {
      return yield* Effect.fail(new PersistenceError({ path: root, operation: "create the run directory", detail: "exists and is not a directory" }))
    }
    yield* Effect.mapError(disk.fs.access(root, { readable: true, writable: true }), create)
    yield* Effect.acquireRelease(acquireLock(disk, root), (l) => releaseLock(disk, root, l))
    yield* remove(disk, disk.path.join(root, FILES.stop), "remove the old stop file")
    const names = yield* Effect.mapError(disk.fs.readDirectory(root), failed(root, "clean temporary files"))
    for (const name of names) {
      if (name.startsWith(".") && name.includes(".tmp-")) yield* remove(disk, disk.path.join(root, name), "clean temporary files")
    }
    return root
  })

/**
 * `candidates.jsonl`: one line per candidate, appended when a save first
 * includes it; `keep` cuts lines a lost generation left past the loaded
 * state's count. The lines read at open are kept until the state is
 * loaded (`release`): after that only their byte offsets are needed.
 */
export const openCandidates = (disk: Disk, file: string) =>
  Effect.gen(function*() {
    const opened = yield* openAppend(disk, file)
    let log = parseCandidateLog(opened.text)
    // the end of each line, and the number of lines that belong to the state in use (after load, or saved since)
    const ends = log.ends
    let written = 0
    const cut = (count: number) =>
      Effect.suspend(() => {
        // a state whose candidates are not in the log (saved whole, as 0.2
        // did) has its candidates appended by the next save
        const kept = Math.min(count, ends.length)
        return Effect.map(opened.truncate(ends[kept - 1] ?? 0), () => {
          ends.length = kept
          log = { lines: log.lines.slice(0, kept), ends }
          written = kept
        })
      })
    let released = false
    return {
      /** the lines: read again from the file after `release` (a second load of the same store) */
      log: Effect.suspend(() =>
        released
          ? Effect.map(readText(disk, file), (text) => parseCandidateLog(Option.getOrElse(text, () => "")))
          : Effect.succeed(log)
      ),
      keep: cut,
      /** forgets the lines read at open (the loaded state holds them) */
      release: () => {
        log = { lines: [], ends }
        released = true
      },
      sync: opened.sync,
      /** appends the candidates new since the last save; true when something was written (to flush) */
      append: (state: State.GepaState) =>
        Effect.gen(function*() {
          const count = state.candidates.length
          // not reached by the engine (candidates are only ever added); kept
          // so that the file always matches the state that was saved
          if (count < written) yield* cut(count)
          if (count === written) return false
          let offset = ends[written - 1] ?? 0
          let chunk = ""
          const added: Array<number> = []
          for (let i = written; i < count; i++) {
            const line: CandidateLine = { i, candidate: state.candidates[i], valScores: state.valScores[i], objectiveScores: state.objectiveScores[i] }
            const text = JSON.stringify(line) + "\n"
            offset += Buffer.byteLength(text)
            added.push(offset)
            chunk += text
          }
          yield* opened.append(chunk)
          for (const end of added) ends.push(end)
          written = count
          return true
        })
    }
  })

/**
 * Reads the saved state: the current snapshot with its journal, else the
 * previous snapshot with both journals (a corrupt current snapshot is moved
 * aside as `gepa_state.corrupt-<time>.json`), else nothing (`fresh`); fails
 * when state files are there and none is readable.
 */
export const loadState = (o: {
  readonly disk: Disk
  readonly root: string
  readonly migrations: Migrations
  readonly candidates: Effect.Effect<CandidateLog, PersistenceError>
  readonly resume: (
    snapshot: Extract<Decoded, { readonly _tag: "ok" }>,
    candidates: CandidateLog,
    fromCurrent: boolean
  ) => Effect.Effect<Option.Option<State.GepaState>, PersistenceError>
  readonly fresh: Effect.Effect<Option.Option<State.GepaState>, PersistenceError>
}): Effect.Effect<Option.Option<State.GepaState>, PersistenceError> =>
  Effect.gen(function*() {
    const file = (name: string) => o.disk.path.join(o.root, name)
    const candidates = yield* o.candidates
    const current = yield* readStateFile(o.disk, file(FILES.state), o.migrations, candidates)
    if (current._tag === "ok") return yield* o.resume(current, candidates, true)
    const previous = yield* readStateFile(o.disk, file(FILES.prev), o.migrations, candidates)
    if (previous._tag === "ok") {
      if (current._tag === "corrupt") {
        const aside = file(`gepa_state.corrupt-${stampNow().replace(/[:.]/g, "-")}.json`)
        yield* Effect.mapError(o.disk.fs.rename(file(FILES.state), aside), failed(file(FILES.state), "move the corrupt state file aside"))
      }
      return yield* o.resume(previous, candidates, false)
    }
    if (current._tag === "missing" && previous._tag === "missing") return yield* o.fresh
    const problems = [
      current._tag === "corrupt" ? `${FILES.state}: ${current.detail}` : `${FILES.state}: missing`,
      previous._tag === "corrupt" ? `${FILES.prev}: ${previous.detail}` : `${FILES.prev}: missing`
    ]
    return yield* Effect.fail(
      new PersistenceError({
        path: current._tag === "corrupt" ? file(FILES.state) : file(FILES.prev),
        operation: "load",
        detail: `no readable saved state (${problems.join("; ")}); move the run directory's state files away to start over`
      })
    )
  })

/** `best_candidate.json`: written when the best candidate (or its score) changes, and at the end. */
export const makeBestFile = (disk: Disk, root: string) => {
  let last: string | undefined
  const write = (state: State.GepaState) =>
    Effect.suspend(() => {
      const best = State.bestIndex(state)
      const content = { index: best, score: State.scoreOf(state)(best), iteration: state.iteration, candidate: state.candidates[best] }
      return writeAtomic(disk, root, FILES.best, JSON.stringify(content, null, 2) + "\n")
    })
  return {
    write,
    writeIfChanged: (state: State.GepaState) =>
      Effect.suspend(() => {
        const best = State.bestIndex(state)
        const key = `${best}:${State.scoreOf(state)(best)}`
        if (key === last) return Effect.void
        last = key
        return Effect.zipRight(write(state), syncDir(disk, root))
      })
  }
}

/** The best candidate's cached outputs on the validation set (`best_outputs.json`). */
export const bestOutputs = <O>(state: State.GepaState, index: CacheIndex<O>) => {
  const best = State.bestIndex(state)
  const candidate = state.candidates[best]
  const outputs: Record<string, { output: unknown; score: number }> = {}
  if (candidate === undefined) return { candidate: best, outputs }
  const hash = Candidate.hash(candidate)
  // cache keys hold the example's content hash (the id in runs from before 0.2)
  const print = state.fingerprint?.valset
  const contentOf = new Map<string, string | undefined>(print === undefined ? [] : print.ids.map((id, i) => [id, print.hashes[i]] as const))
  for (const id of Object.keys(state.valScores[best] ?? {})) {
    const hit = index.entries.get(hash, contentOf.get(id) ?? `val\u0000${id}`)
    if (hit !== undefined) outputs[id] = { output: hit.output, score: hit.score }
  }
  return { candidate: best, outputs }
}

/** Side logs (`RunStore.appendLog`), opened on their first entry: most runs never write one. */
export const openSideLogs = (disk: Disk, root: string) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const logs = new Map<LogName, AppendLog>()
    const names: Record<LogName, string> = { side_info: FILES.sideInfo }
    const append = (log: LogName, entry: unknown): Effect.Effect<void> =>
      Effect.ignore(Effect.gen(function*() {
        let opened = logs.get(log)
        if (opened === undefined) {
          opened = yield* openAppend(disk, disk.path.join(root, names[log])).pipe(Effect.provideService(Scope.Scope, scope))
          logs.set(log, opened)
        }
        // diagnostic, like the event log: a full disk must not fail the run here (save will report it)
        yield* opened.post(JSON.stringify({ ts: stampNow(), ...(entry as object) }) + "\n")
      }))
    /** writes the entries posted since the last save */
    const flush = Effect.suspend(() => Effect.forEach(logs.values(), (l) => l.flush, { discard: true }))
    return { append, flush }
  })

/** Whether the stop file is there. */
export const stopFile = (disk: Disk, root: string): Effect.Effect<boolean> => exists(disk, disk.path.join(root, FILES.stop))
