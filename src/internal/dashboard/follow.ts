/**
 * Following a run folder: new lines of `events.jsonl` become events, each
 * new save of `gepa_state.json` or its journal the state, `result.json` the end, and the
 * lock says whether a process is still writing. Survives the writer
 * restarting on resume (it appends to the same log, after cutting a partial
 * last line) and a folder that is replaced (the log shrinks: start over).
 *
 * @internal
 */
import { Effect, Option } from "effect"
import * as os from "node:os"
import type { PersistenceError } from "../../Errors.js"
import * as RunDir from "../../RunDir.js"
import { field, isRecord } from "../shared/fields.js"
import { isAlive } from "../runDir/format.js"
import { type Disk, exists, readText, resolve } from "../runDir/disk.js"
import type { Model } from "./model.js"
import type { EventLike } from "./types.js"
import { parseJsonLine } from "../runDir/jsonLine.js"

export interface Follower {
  /** reads what is new; cheap when nothing changed */
  readonly tick: Effect.Effect<void>
  /** true while a process holds the folder's lock */
  readonly running: () => boolean
  /** the folder, resolved, and its name */
  readonly root: string
  readonly name: string
}

const isEventLike = (u: unknown): u is EventLike => isRecord(u) && typeof u["_tag"] === "string"

/**
 * Follows the run folder `dir` through its `FileSystem` (the context's, else
 * Node's: see `RunDir.make`).
 */
export const follow = (dir: string, model: Model): Effect.Effect<Follower, PersistenceError> =>
  Effect.map(resolve(dir), (disk) => followOn(disk, disk.path.resolve(dir), model))

const followOn = (disk: Disk, root: string, model: Model): Follower => {
  const file = (name: string) => disk.path.join(root, name)
  let offset = 0
  let rest = ""
  let stateStamp = ""
  let resultSeen = false
  let running = false
  let decoder = new TextDecoder()

  const statOf = (name: string) => Effect.option(disk.fs.stat(file(name)))
  const stampOf = (info: { readonly mtime: Option.Option<Date>; readonly size: bigint; readonly ino: Option.Option<number> }) =>
    `${Option.match(info.mtime, { onNone: () => "", onSome: (d) => d.getTime() })}:${info.size}:${Option.getOrElse(info.ino, () => "")}`

  const lockHolderAlive = Effect.map(readText(disk, file(RunDir.FILES.lock)), (text) => {
    if (Option.isNone(text)) return false
    try {
      const lock: unknown = JSON.parse(text.value)
      const pid = field(lock, "pid")
      const hostname = field(lock, "hostname")
      if (typeof pid !== "number") return true
      // a lock from another host cannot be checked: taken as live
      return hostname !== undefined && hostname !== os.hostname() ? true : isAlive(pid)
    } catch {
      // being written
      return true
    }
  })

  const readLines = (text: string) => {
    const lines = (rest + text).split("\n")
    // a line still being written waits for its end
    rest = lines.pop() ?? ""
    for (const line of lines) {
      const parsed = parseJsonLine(line)
      if (!isEventLike(parsed)) continue
      const ts = Date.parse(String(parsed["ts"]))
      model.event(parsed, Number.isFinite(ts) ? ts : Date.now())
    }
  }

  const readEvents = Effect.gen(function*() {
    const st = yield* statOf(RunDir.FILES.events)
    if (Option.isNone(st)) return
    const size = Number(st.value.size)
    if (size < offset) {
      // replaced or cut below what was read: read it again from the start
      model.reset()
      decoder = new TextDecoder()
      offset = 0
      rest = ""
      stateStamp = ""
      resultSeen = false
    }
    if (size === offset) return
    const chunk = yield* Effect.scoped(Effect.gen(function*() {
      const f = yield* disk.fs.open(file(RunDir.FILES.events), { flag: "r" })
      yield* f.seek(offset, "start")
      return yield* f.readAlloc(size - offset)
    }))
    if (Option.isNone(chunk)) return
    // bytes, not characters: a character cut at the end is completed by the next read
    offset += chunk.value.length
    readLines(decoder.decode(chunk.value, { stream: true }))
  })

  const readState = Effect.gen(function*() {
    const st = yield* statOf(RunDir.FILES.state)
    // a save appends to the journal; the snapshot beside it changes only now and then
    const journal = yield* statOf(RunDir.FILES.journal)
    if (Option.isNone(st)) return
    const stamp = stampOf(st.value) + Option.match(journal, { onNone: () => "", onSome: (j) => `/${stampOf(j)}` })
    if (stamp === stateStamp) return
    const state = yield* Effect.either(RunDir.readState(root))
    // a state file caught between two writes is read at the next tick
    if (state._tag === "Left" || Option.isNone(state.right)) return
    stateStamp = stamp
    model.state(state.right.value)
  })

  const tick = Effect.gen(function*() {
    // a file caught mid-change is read again at the next tick
    yield* Effect.ignore(readEvents)
    yield* readState
    running = yield* lockHolderAlive.pipe(Effect.orElseSucceed(() => true))
    const finished = yield* exists(disk, file(RunDir.FILES.result))
    if (finished && !resultSeen && !running) resultSeen = true
    const info = model.info()
    if (!running && info.status !== "finished" && info.status !== "stopped") {
      // no writer: the log ends without OptimizationEnded after a crash
      model.setStatus(finished ? "finished" : info.status === "starting" && offset === 0 ? "starting" : "stopped")
    } else if (running && (info.status === "finished" || info.status === "stopped")) {
      // a resumed run: its OptimizationStarted line follows shortly
      model.setStatus("running")
    }
  })

  return { tick, running: () => running, root, name: disk.path.basename(root) }
}
