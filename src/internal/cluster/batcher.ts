/**
 * The optimizer's side of batched remote evaluation. The engine makes one
 * adapter call per chunk (by default one example); calls of the same
 * candidate made together (a minibatch, a stretch of the validation set)
 * are sent as one request, so the cluster's per-request cost (storage
 * writes, socket round trips, reply polling) is paid once per batch.
 *
 * A request holds as many examples as the runner it goes to runs at once
 * (its `capacity`, learned from its replies; `maxBatch` overrides), so a
 * batch starts at once on its runner and the others stay busy with the
 * next ones. Each call keeps its own id and its own result or failure: the
 * engine's accounting (the budget, retries, failures) sees exactly the
 * calls it made.
 *
 * @internal
 */
import { Deferred, Effect, type Scope } from "effect"
import { at } from "../shared/invariant.js"
import type { ItemResult } from "./protocol.js"
import type { Router } from "./router.js"

/** One adapter call waiting to be sent. @internal */
export interface Call {
  /** what the calls of a group share: the candidate and whether traces are wanted */
  readonly candidate: Readonly<Record<string, string>>
  readonly captureTraces: boolean
  /** the call's own id */
  readonly key: string
  readonly ids?: ReadonlyArray<string> | undefined
  readonly examples?: ReadonlyArray<unknown> | undefined
  /** its examples */
  readonly size: number
}

/** What a call gets back: its result and the runner that made it. @internal */
export interface Answer {
  readonly result: ItemResult
  readonly runner: string
}

/** The reply to one request, as the batcher needs it. @internal */
export interface Reply {
  readonly items: ReadonlyArray<ItemResult>
  readonly runner: string
  readonly capacity: number
}

/** @internal */
export interface Batcher<E> {
  /** queues `call` with the other calls of its group (same candidate and traces flag); resolves with its own answer */
  readonly submit: (group: string, call: Call) => Effect.Effect<Answer, E>
}

/** @internal */
export const make = <E>(options: {
  readonly router: Router
  /** sends the calls of one request to entity `entity` (retries included) */
  readonly send: (entity: number, calls: ReadonlyArray<Call>) => Effect.Effect<Reply, E>
  /** examples per request; default: the capacity of the runner serving the entity */
  readonly maxBatch?: number | undefined
  /** the capacity assumed for a runner that has not answered yet */
  readonly defaultCapacity: number
  /** how long the first call of a group waits for others */
  readonly lingerMillis: number
}): Effect.Effect<Batcher<E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    interface Waiting {
      readonly call: Call
      readonly done: Deferred.Deferred<Answer, E>
    }
    const groups = new Map<string, Array<Waiting>>()
    const capacity = new Map<string, number>()

    const dispatch = (waiting: ReadonlyArray<Waiting>) =>
      Effect.gen(function*() {
        let rest = waiting
        for (;;) {
          const [oldest, ...others] = rest
          if (oldest === undefined) break
          const entity = options.router.acquire()
          const owner = options.router.owners().get(entity)
          const limit = Math.max(
            1,
            options.maxBatch ?? (owner === undefined ? options.defaultCapacity : capacity.get(owner) ?? options.defaultCapacity)
          )
          // the oldest call first (at least one per request, however large), then every other call that fits
          const chunk: Array<Waiting> = [oldest]
          const left: Array<Waiting> = []
          let size = oldest.call.size
          for (const w of others) {
            if (size + w.call.size <= limit) {
              size += w.call.size
              chunk.push(w)
            } else {
              left.push(w)
            }
          }
          rest = left
          options.router.add(entity, chunk.length - 1)
          let runner: string | undefined
          yield* options.send(entity, chunk.map((w) => w.call)).pipe(
            Effect.matchEffect({
              onFailure: (e) => Effect.forEach(chunk, (w) => Deferred.fail(w.done, e), { discard: true }),
              onSuccess: (reply) => {
                runner = reply.runner
                capacity.set(reply.runner, reply.capacity)
                return Effect.forEach(
                  chunk,
                  (w, i) => Deferred.succeed(w.done, { result: at(reply.items, i), runner: reply.runner }),
                  { discard: true }
                )
              }
            }),
            Effect.ensuring(Effect.sync(() => options.router.release(entity, runner, chunk.length))),
            Effect.forkIn(scope)
          )
        }
      })

    const flush = (group: string) =>
      Effect.suspend(() => {
        const waiting = groups.get(group) ?? []
        groups.delete(group)
        return dispatch(waiting)
      })

    // registering a call and scheduling its group's flush happen together or not at all
    const register = (group: string, call: Call, done: Deferred.Deferred<Answer, E>) =>
      Effect.uninterruptible(Effect.suspend(() => {
        const waiting = groups.get(group)
        if (waiting !== undefined) {
          waiting.push({ call, done })
          return Effect.void
        }
        groups.set(group, [{ call, done }])
        // the first call of a group waits a moment for the calls made with it, then sends them all
        const later = options.lingerMillis > 0 ? Effect.sleep(options.lingerMillis) : Effect.yieldNow()
        return Effect.asVoid(Effect.forkIn(Effect.zipRight(later, flush(group)), scope))
      }))

    const submit = (group: string, call: Call) =>
      Effect.flatMap(Deferred.make<Answer, E>(), (done) => Effect.zipRight(register(group, call, done), Deferred.await(done)))

    return { submit }
  })
