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
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as RunDir from "../../RunDir.js"
import { field, isRecord } from "../fields.js"
import { isAlive } from "../runDir.js"
import type { EventLike, Model } from "./model.js"

export interface Follower {
  /** reads what is new; cheap when nothing changed */
  readonly tick: Effect.Effect<void>
  /** true while a process holds the folder's lock */
  readonly running: () => boolean
}

const statOf = (file: string): fs.Stats | undefined => {
  try {
    return fs.statSync(file)
  } catch {
    return undefined
  }
}

const isEventLike = (u: unknown): u is EventLike => isRecord(u) && typeof u["_tag"] === "string"

const lockHolderAlive = (file: string): boolean => {
  try {
    const lock: unknown = JSON.parse(fs.readFileSync(file, "utf8"))
    const pid = field(lock, "pid")
    const hostname = field(lock, "hostname")
    if (typeof pid !== "number") return true
    // a lock from another host cannot be checked: taken as live
    return hostname !== undefined && hostname !== os.hostname() ? true : isAlive(pid)
  } catch {
    return fs.existsSync(file)
  }
}

export const follow = (dir: string, model: Model): Follower => {
  const root = path.resolve(dir)
  const file = (name: string) => path.join(root, name)
  let offset = 0
  let rest = ""
  let stateStamp = ""
  let resultSeen = false
  let running = false

  const readEvents = () => {
    const st = statOf(file(RunDir.FILES.events))
    if (st === undefined) return
    if (st.size < offset) {
      // replaced or cut below what was read: read it again from the start
      model.reset()
      offset = 0
      rest = ""
      stateStamp = ""
      resultSeen = false
    }
    if (st.size === offset) return
    const fd = fs.openSync(file(RunDir.FILES.events), "r")
    try {
      const length = st.size - offset
      const buffer = Buffer.alloc(length)
      const read = fs.readSync(fd, buffer, 0, length, offset)
      offset += read
      const text = rest + buffer.subarray(0, read).toString("utf8")
      const lines = text.split("\n")
      // a line still being written waits for its end
      rest = lines.pop() ?? ""
      for (const line of lines) {
        if (line.length === 0) continue
        let parsed: unknown
        try {
          parsed = JSON.parse(line)
        } catch {
          continue
        }
        if (!isEventLike(parsed)) continue
        const ts = Date.parse(String(parsed["ts"]))
        model.event(parsed, Number.isFinite(ts) ? ts : Date.now())
      }
    } finally {
      fs.closeSync(fd)
    }
  }

  const readState = Effect.gen(function*() {
    const st = statOf(file(RunDir.FILES.state))
    // a save appends to the journal; the snapshot beside it changes only now and then
    const journal = statOf(file(RunDir.FILES.journal))
    const stamp = st === undefined
      ? ""
      : `${st.mtimeMs}:${st.size}:${st.ino}` + (journal === undefined ? "" : `/${journal.mtimeMs}:${journal.size}:${journal.ino}`)
    if (stamp === stateStamp || st === undefined) return
    const state = yield* Effect.either(RunDir.readState(root))
    // a state file caught between two writes is read at the next tick
    if (state._tag === "Left" || Option.isNone(state.right)) return
    stateStamp = stamp
    model.state(state.right.value)
  })

  const tick = Effect.gen(function*() {
    yield* Effect.sync(readEvents)
    yield* readState
    running = lockHolderAlive(file(RunDir.FILES.lock))
    const finished = fs.existsSync(file(RunDir.FILES.result))
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

  return { tick, running: () => running }
}
