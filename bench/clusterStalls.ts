/**
 * Event-loop stalls of a bench process (a runner or the optimizer): a 10 ms
 * timer that fires late by more than `thresholdMs` reports the stall with
 * where its time went, from the kernel's per-thread counters of the main
 * thread (/proc/self/task/<pid>/schedstat): on a CPU (JavaScript, GC,
 * synchronous SQLite work), waiting for a CPU (the machine is busy), or
 * neither, i.e. asleep in a system call (SQLite's busy wait for another
 * process's lock, an fsync).
 */
import * as fs from "node:fs"

export interface Stall {
  /** epoch ms when the stall began */
  readonly at: number
  readonly ms: number
  readonly cpuMs: number
  readonly waitingForCpuMs: number
  readonly asleepMs: number
}

const schedstat = `/proc/self/task/${process.pid}/schedstat`
const sched = (): readonly [number, number] => {
  try {
    const [run, wait] = fs.readFileSync(schedstat, "utf8").split(" ")
    return [Number(run) / 1e6, Number(wait) / 1e6]
  } catch {
    return [0, 0]
  }
}

/**
 * Starts the monitor; `report` gets every stall longer than `thresholdMs`.
 * The counters are read every 50 ms (and after a stall), so that the
 * monitor itself costs next to nothing; a stall's split covers it and up
 * to 50 ms before it.
 */
export const monitor = (report: (stall: Stall) => void, thresholdMs = 100) => {
  let last = Date.now()
  let sampled = { at: last, counters: sched() }
  const timer = setInterval(() => {
    const now = Date.now()
    const ms = now - last
    if (ms - 10 > thresholdMs) {
      const [r, w] = sched()
      const [run, wait] = sampled.counters
      const span = now - sampled.at
      const cpuMs = r - run
      const waitingForCpuMs = w - wait
      report({
        at: last,
        ms,
        cpuMs: Math.round(cpuMs),
        waitingForCpuMs: Math.round(waitingForCpuMs),
        asleepMs: Math.round(Math.max(0, span - cpuMs - waitingForCpuMs))
      })
      sampled = { at: now, counters: [r, w] }
    } else if (now - sampled.at >= 50) {
      sampled = { at: now, counters: sched() }
    }
    last = now
  }, 10)
  timer.unref()
  return () => clearInterval(timer)
}

/** A stall as one line of a runner's output. */
export const line = (s: Stall) => `[stall] ${JSON.stringify(s)}`

/** The stalls in a process's output. */
export const parse = (output: string): ReadonlyArray<Stall> =>
  output.split("\n").flatMap((l) => (l.startsWith("[stall] ") ? [JSON.parse(l.slice(8)) as Stall] : []))
