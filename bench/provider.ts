/**
 * A simulated model provider for the latency-bound benchmarks: every task
 * call and every reflection call waits for the provider's rate limit (one
 * request every 60 / `rpm` seconds, both kinds counted, as one API key's
 * limit would), then takes a log-normal time around its median (a long
 * tail: a few calls take several times the median).
 *
 * Time is scaled down so a run stays short: one profile second lasts
 * `msPerSecond` real milliseconds. Walls are reported back in profile
 * seconds. The latencies are drawn from a seeded generator in the order the
 * calls arrive, so they differ between settings; the result of a run does
 * not depend on them (concurrency is an execution resource).
 *
 * The reflection rounds on the critical path are the times a reflection
 * started while no other was in flight: a run whose reflections overlap
 * waits for fewer of them one after another.
 */
import { Effect } from "effect"
import type { Adapter } from "../src/Adapter.js"
import type * as LanguageModel from "../src/LanguageModel.js"

export interface Profile {
  readonly label: string
  /** median of a task call, profile seconds */
  readonly taskSeconds: number
  /** median of a reflection call, profile seconds */
  readonly reflectionSeconds: number
  /** log-normal shape (sd of the log): 0.5 gives a p99 about 3.2x the median */
  readonly sigma: number
  /** the provider's limit on requests per minute, task and reflection calls together */
  readonly rpm: number
  /** real milliseconds per profile second */
  readonly msPerSecond: number
}

/** Task calls ~1 s, reflection ~10 s, long tail, 300 requests per minute (binding with 16 calls in flight). */
export const realistic: Profile = { label: "realistic", taskSeconds: 1, reflectionSeconds: 10, sigma: 0.5, rpm: 300, msPerSecond: 10 }

/** mulberry32: a small seeded generator for the latencies */
const generator = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface Provider {
  readonly adapter: <D, T, O>(inner: Adapter<D, T, O>) => Adapter<D, T, O>
  readonly model: (inner: LanguageModel.LanguageModel) => LanguageModel.LanguageModel
  /** reflections started while no other reflection was in flight */
  readonly criticalReflections: () => number
  /** real milliseconds to profile seconds */
  readonly seconds: (realMs: number) => number
}

export const make = (profile: Profile, seed: number): Provider => {
  const random = generator(seed * 7919 + 17)
  const normal = () => {
    // Box-Muller
    const u = Math.max(random(), 1e-12)
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random())
  }
  const lognormalMs = (medianSeconds: number) => medianSeconds * Math.exp(profile.sigma * normal()) * profile.msPerSecond
  const spacingMs = (60 / profile.rpm) * profile.msPerSecond
  let nextSlot = 0
  /** waits for the rate limit's next slot, then for the call's own latency */
  const request = (medianSeconds: number) =>
    Effect.suspend(() => {
      const now = performance.now()
      const slot = Math.max(now, nextSlot)
      nextSlot = slot + spacingMs
      return Effect.sleep(slot - now + lognormalMs(medianSeconds))
    })
  let reflecting = 0
  let critical = 0
  return {
    adapter: (inner) => ({
      ...inner,
      // one request per example: chunkSize 1, as the bench runs
      evaluate: (batch, candidate, options) =>
        Effect.zipRight(Effect.all(batch.map(() => request(profile.taskSeconds)), { concurrency: "unbounded" }), inner.evaluate(batch, candidate, options))
    }),
    model: (inner) => ({
      complete: (prompt) =>
        Effect.suspend(() => {
          if (reflecting === 0) critical++
          reflecting++
          return Effect.ensuring(
            Effect.zipRight(request(profile.reflectionSeconds), inner.complete(prompt)),
            Effect.sync(() => void reflecting--)
          )
        })
    }),
    criticalReflections: () => critical,
    seconds: (realMs) => realMs / profile.msPerSecond
  }
}
