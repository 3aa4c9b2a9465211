/**
 * Which entity a request goes to. Shards (and so runners) are chosen by
 * entity id through a hash, which spreads a bounded set of ids unevenly over
 * runners; with a fixed number of evaluations at once per runner, the
 * runner with the most ids would set the pace. So the optimizer learns
 * which runner serves each id (every reply names it) and sends each new
 * request to an id of the runner with the fewest requests in flight. Ids
 * not used yet are tried first, and ownership is relearned from every reply,
 * so runners that join, leave or take over shards are followed.
 *
 * A request keeps its entity id for its whole life (resends included): the
 * cluster de-duplicates by entity id and request id together.
 *
 * @internal
 */
import { at, defined } from "../shared/invariant.js"

/** @internal */
export interface Router {
  /** the entity index for a new request; counts it in flight */
  readonly acquire: () => number
  /** `count` more calls in flight on `index` (a request that carries several) */
  readonly add: (index: number, count: number) => void
  /** `count` calls (default 1) on `index` ended; `runner` answered them (when it did) */
  readonly release: (index: number, runner: string | undefined, count?: number) => void
  /** the runner each index was last answered by (for tests) */
  readonly owners: () => ReadonlyMap<number, string>
}

/** @internal */
export const make = (entities: number): Router => {
  const owner = new Map<number, string>()
  const inFlight = new Array<number>(entities).fill(0)
  let unexplored = 0
  let turn = 0
  return {
    acquire: () => {
      let pick: number
      if (unexplored < entities) {
        pick = unexplored++
      } else {
        // load per runner; ids whose owner is unknown again count as their own runner
        const load = new Map<string, number>()
        inFlight.forEach((n, i) => {
          const r = owner.get(i) ?? `?${i}`
          load.set(r, (load.get(r) ?? 0) + n)
        })
        let best = -1
        let bestKey = ""
        // scan from a rotating start so ties spread over ids and runners
        for (let k = 0; k < entities; k++) {
          const i = (turn + k) % entities
          const r = owner.get(i) ?? `?${i}`
          // every runner key was loaded above
          const better = best < 0 ||
            defined(load.get(r), "a runner's load") < defined(load.get(bestKey), "a runner's load") ||
            (r === bestKey && at(inFlight, i) < at(inFlight, best))
          if (better) {
            best = i
            bestKey = r
          }
        }
        turn = (turn + 1) % entities
        pick = best
      }
      inFlight[pick] = at(inFlight, pick) + 1
      return pick
    },
    add: (index, count) => {
      inFlight[index] = at(inFlight, index) + count
    },
    release: (index, runner, count = 1) => {
      inFlight[index] = Math.max(0, at(inFlight, index) - count)
      if (runner !== undefined) owner.set(index, runner)
    },
    owners: () => owner
  }
}
