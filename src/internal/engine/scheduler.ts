/**
 * The scheduler the engine runs under.
 *
 * Effect's default scheduler runs queued tasks in microtasks and, after 2048
 * nested drains, yields with `setTimeout(0)`, which Node clamps to at least
 * 1 ms. A CPU-bound stretch of the engine (a fast in-process adapter, cache
 * hits, large validation sets) hits that limit constantly and spends about
 * half its wall time idle. This scheduler yields with `setImmediate` instead:
 * I/O and timers still get their turn, without the clamp.
 *
 * @internal
 */
import { FiberRef, Scheduler } from "effect"
import type { RuntimeFiber } from "effect/Fiber"

const MAX_MICROTASK_DEPTH = 2048

class EngineScheduler implements Scheduler.Scheduler {
  private tasks = new Scheduler.PriorityBuckets()
  private running = false

  shouldYield(fiber: RuntimeFiber<unknown, unknown>): number | false {
    return fiber.currentOpCount > fiber.getFiberRef(FiberRef.currentMaxOpsBeforeYield)
      ? fiber.getFiberRef(FiberRef.currentSchedulingPriority)
      : false
  }

  scheduleTask(task: Scheduler.Task, priority: number): void {
    this.tasks.scheduleTask(task, priority)
    if (!this.running) {
      this.running = true
      this.starve(0)
    }
  }

  private starve(depth: number): void {
    if (depth >= MAX_MICROTASK_DEPTH) setImmediate(() => this.drain(0))
    else Promise.resolve().then(() => this.drain(depth + 1))
  }

  private drain(depth: number): void {
    const buckets = this.tasks.buckets
    this.tasks.buckets = []
    for (const [, toRun] of buckets) for (const task of toRun) task()
    if (this.tasks.buckets.length === 0) this.running = false
    else this.starve(depth)
  }
}

/** @internal */
export const engineScheduler: Scheduler.Scheduler = new EngineScheduler()
