/**
 * The run's calls in flight (`maxConcurrency`), as permits with two queues:
 * a permit that comes free goes to a waiting minibatch evaluation before a
 * waiting validation. A step's minibatch evaluations are on the run's
 * critical path (the next reflection waits for them), a validation rarely is:
 * when the next step starts while a child is validated (`Config.buildOnChild`),
 * its parent's evaluation would otherwise queue behind every chunk of the
 * validation. Only the order in which waiters are served changes; never how
 * many calls are in flight, nor any result.
 *
 * @internal
 */
import { Effect } from "effect"

/** @internal */
export interface Permits {
  /** runs `effect` under one permit, served after every waiting `first` */
  readonly withPermit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** runs `effect` under one permit, served before every waiting `withPermit` */
  readonly withFirstPermit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** A waiter: resumed once it holds a permit. */
interface Waiter {
  readonly resume: () => void
  granted: boolean
}

/**
 * `n` permits. A waiter is resumed with the permit already its own, so a
 * permit handed over is never taken by a fiber that did not wait; an
 * interrupted waiter leaves its queue, or gives back a permit it was handed.
 *
 * @internal
 */
export const make = (n: number): Permits => {
  let free = n
  const first: Array<Waiter> = []
  const rest: Array<Waiter> = []
  const release = (): void => {
    const next = first.shift() ?? rest.shift()
    if (next === undefined) {
      free++
      return
    }
    next.granted = true
    next.resume()
  }
  const released = Effect.sync(release)
  const take = (queue: Array<Waiter>): Effect.Effect<void> =>
    Effect.async<void>((resume) => {
      const waiter: Waiter = { resume: () => resume(Effect.void), granted: false }
      queue.push(waiter)
      return Effect.sync(() => {
        if (waiter.granted) release()
        else queue.splice(queue.indexOf(waiter), 1)
      })
    })
  const under = (isFirst: boolean) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        // a free permit is taken at once (while one is free nobody waits:
        // `release` hands a permit to a waiter before it frees one)
        if (free > 0) {
          free--
          return Effect.ensuring(restore(effect), released)
        }
        return Effect.zipRight(restore(take(isFirst ? first : rest)), Effect.ensuring(restore(effect), released))
      })
    )
  return { withPermit: under(false), withFirstPermit: under(true) }
}
