/**
 * The persistent evaluation cache of a run directory (`cache.jsonl`): the
 * latest result per key in memory, every payment of a key (one per line, to
 * know which ones the loaded state still owes), and the trajectories per
 * paying iteration. Lines are appended before an entry becomes visible, so
 * a hit is always on disk too.
 *
 * @internal
 */
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import * as EvaluationCache from "../EvaluationCache.js"
import { type CacheLine, attempt, isCacheLine, sharedKey } from "./runDir.js"
import type { Owed, Payment } from "./runDirBudget.js"

/** What `cache.jsonl` holds, by key. */
export interface CacheIndex<O> {
  /** the latest result per key (without trajectory) */
  readonly entries: Map<string, EvaluationCache.CachedEvaluation<O>>
  readonly payments: Map<string, Array<Payment>>
  /**
   * trajectories per key, per iteration that paid for them: a traced result
   * is served to that iteration only (two proposals in flight may evaluate
   * the same parent on the same example)
   */
  readonly traces: Map<string, Map<number, unknown>>
  /**
   * results a later proposal paid for beside an earlier one that paid for the
   * same pair: the earlier one is the entry every later proposal sees, but a
   * proposal re-launched after a crash must find its own result again (it
   * cannot see the earlier one's), or it pays for the pair twice
   */
  readonly shadowed: Map<string, Map<number, EvaluationCache.CachedEvaluation<O>>>
}

/** Makes `entry` the key's entry when it replaces the current one; else keeps it as its payer's own. */
const keep = <O>(index: CacheIndex<O>, k: string, entry: EvaluationCache.CachedEvaluation<O>): void => {
  const existing = index.entries.get(k)
  if (EvaluationCache.replaces(existing, entry)) {
    index.entries.set(k, entry)
    // the entry it replaces stays its payer's own
    if (existing?.iteration !== undefined) keep(index, k, existing)
    return
  }
  if (entry.iteration === undefined || entry.iteration === existing?.iteration) return
  const own = index.shadowed.get(k)
  if (own === undefined) index.shadowed.set(k, new Map([[entry.iteration, entry]]))
  else if (!own.has(entry.iteration)) own.set(entry.iteration, entry)
}

const addPayment = <O>(index: CacheIndex<O>, k: string, p: Payment) => {
  const list = index.payments.get(k)
  if (list === undefined) index.payments.set(k, [p])
  else list.push(p)
}

const addTrace = <O>(index: CacheIndex<O>, k: string, i: number, t: unknown) => {
  const m = index.traces.get(k)
  if (m === undefined) index.traces.set(k, new Map([[i, t]]))
  else m.set(i, t)
}

/** An empty index (a run directory without a persistent cache). */
export const emptyIndex = <O>(): CacheIndex<O> => ({ entries: new Map(), payments: new Map(), traces: new Map(), shadowed: new Map() })

/** Reads `cache.jsonl`'s lines; unreadable lines (a crash mid-append) are skipped. */
export const parseCache = <O>(text: string): CacheIndex<O> => {
  const index = emptyIndex<O>()
  for (const line of text.split("\n")) {
    if (line.length === 0) continue
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      continue
    }
    if (!isCacheLine(parsed)) continue
    const k = sharedKey(parsed.k)
    const entry: EvaluationCache.CachedEvaluation<O> = {
      // outputs are the JSON values the run stored
      output: parsed.output as O,
      score: parsed.score,
      objectiveScores: parsed.objectiveScores,
      ...(parsed.i === undefined ? {} : { iteration: parsed.i })
    }
    keep(index, k, entry)
    addPayment(index, k, { i: parsed.i, g: parsed.g ?? 0, owed: false })
    if (parsed.t !== undefined && parsed.i !== undefined) addTrace(index, k, parsed.i, parsed.t)
  }
  return index
}

/** Every payment, in no particular order. */
export const allPayments = function*<O>(index: CacheIndex<O>): Generator<Payment> {
  for (const list of index.payments.values()) yield* list
}

/**
 * The cache service over an index, appending to `cache.jsonl` (`fd`).
 * `dirty` is set by every append (the next save flushes the file).
 */
export const makeCache = <O>(options: {
  readonly file: string
  readonly fd: number
  readonly index: CacheIndex<O>
  readonly owed: Owed
  /** the generation of the last save (lines carry it) */
  readonly generation: () => number
  readonly dirty: { value: boolean }
}): EvaluationCache.EvaluationCache<O> => {
  const { index, owed } = options
  return EvaluationCache.withPeek<O>({
    get: (key) =>
      Effect.sync(() => {
        const k = EvaluationCache.keyString(key)
        let hit = index.entries.get(k)
        if (hit === undefined) return Option.none()
        // a result of a proposal the asker runs beside is not served (and
        // an owed payment is not consumed by it)
        if (key.traced !== true && !EvaluationCache.isVisible(key, hit)) {
          const own = key.requestedBy === undefined ? undefined : index.shadowed.get(k)?.get(key.requestedBy)
          if (own === undefined) return Option.none()
          hit = own
        }
        if (key.traced === true) {
          // only the trajectory the asking iteration paid for
          const t = key.requestedBy === undefined ? undefined : index.traces.get(k)?.get(key.requestedBy)
          if (t === undefined) return Option.none()
          hit = { ...hit, iteration: key.requestedBy, trajectory: t }
        }
        // an owed payment is charged once, by the hit that uses it: the
        // asking iteration's own payment first
        const list = index.payments.get(k)
        if (owed.left() > 0 && list !== undefined) {
          const own = list.find((p) => p.owed && p.i === key.requestedBy) ?? list.find((p) => p.owed)
          if (own !== undefined) {
            owed.add(own, -1)
            return Option.some({ ...hit, owed: true })
          }
        }
        return Option.some(hit)
      }),
    set: (key, value) =>
      attempt(options.file, "append to", () => {
        const k = EvaluationCache.keyString(key)
        const g = options.generation()
        const line: CacheLine = {
          k,
          output: value.output,
          score: value.score,
          ...(value.objectiveScores === undefined ? {} : { objectiveScores: value.objectiveScores }),
          g,
          ...(value.iteration === undefined ? {} : { i: value.iteration }),
          ...(value.trajectory === undefined ? {} : { t: value.trajectory })
        }
        // written before the entry is visible, so a hit is always on disk too
        fs.writeSync(options.fd, JSON.stringify(line) + "\n")
        const { owed: _, trajectory, ...entry } = value
        keep(index, k, entry)
        // a new payment; an owed earlier one (a result evaluated again
        // because its trajectory could not be stored) stays owed, never free
        addPayment(index, k, { i: value.iteration, g, owed: false })
        if (trajectory !== undefined && value.iteration !== undefined) addTrace(index, k, value.iteration, trajectory)
        options.dirty.value = true
      }),
    size: Effect.sync(() => index.entries.size)
  }, (keys) =>
    keys.map((key) => {
      const hit = index.entries.get(EvaluationCache.keyString(key))
      return hit !== undefined && EvaluationCache.isVisible(key, hit) ? hit : undefined
    }))
}
