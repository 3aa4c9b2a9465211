/**
 * The persistent evaluation cache of a run directory (`cache.jsonl`): the
 * latest result per key in memory, the payments a loaded state still owes,
 * and the results and trajectories of proposals that may still ask for
 * their own. A line is appended, and its write awaited, before its entry
 * becomes visible, so a hit is always in the file too.
 *
 * What it keeps grows with the distinct pairs evaluated, not with the lines
 * written: entries are held per candidate, packed (four array cells each,
 * the example keys numbered once), a payment is kept only
 * while it is owed, and a proposal's own results and trajectories are
 * dropped once a save shows it folded.
 *
 * @internal
 */
import { Effect, Option } from "effect"
import type { ObjectiveScores } from "../../EvaluationBatch.js"
import type { PersistenceError } from "../../Errors.js"
import * as EvaluationCache from "../../EvaluationCache.js"
import type { GepaState } from "../../State.js"
import { type CacheLine, isCacheLine, sharedKey } from "./format.js"
import type { Owed, Payment } from "./budget.js"
import type { AppendLog } from "./disk.js"
import { parseJsonLine } from "./jsonLine.js"
import { ExampleNumbers, PackedResults } from "../shared/packedResults.js"

/** One candidate's entries, packed (see `PackedResults`), with the rare objective scores beside them by example number. */
class Bucket<O> extends PackedResults<O> {
  objectives: Map<number, ObjectiveScores> | undefined
}

/** The latest result per (candidate, example): what every later proposal sees. */
export class Entries<O> {
  private readonly buckets = new Map<string, Bucket<O>>()
  private readonly examples = new ExampleNumbers()
  size = 0
  get(candidate: string, example: string): EvaluationCache.CachedEvaluation<O> | undefined {
    const bucket = this.buckets.get(candidate)
    const n = this.examples.get(example)
    if (bucket === undefined || n === undefined) return undefined
    const slot = bucket.find(n)
    if (slot < 0) return undefined
    const iteration = bucket.iteration(slot)
    const objectiveScores = bucket.objectives?.get(n)
    return {
      // an adapter may return an undefined output: it is still a result
      output: bucket.output(slot),
      score: bucket.score(slot),
      ...(objectiveScores === undefined ? {} : { objectiveScores }),
      ...(iteration === undefined ? {} : { iteration })
    }
  }
  set(candidate: string, example: string, entry: EvaluationCache.CachedEvaluation<O>): void {
    let bucket = this.buckets.get(candidate)
    if (bucket === undefined) {
      bucket = new Bucket()
      this.buckets.set(candidate, bucket)
    }
    const n = this.examples.of(example)
    let slot = bucket.find(n)
    if (slot < 0) {
      slot = bucket.add(n)
      this.size++
    }
    bucket.set(slot, entry.output, entry.score, entry.iteration)
    if (entry.objectiveScores !== undefined) (bucket.objectives ??= new Map()).set(n, entry.objectiveScores)
    else bucket.objectives?.delete(n)
  }
}

/** What `cache.jsonl` holds, by key. */
export interface CacheIndex<O> {
  readonly entries: Entries<O>
  /** payments by key string: every line's after a load's parse; afterwards only the ones still owed (`settle`) */
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

/** A key string split into its candidate hash and its example part (`Entries` numbers the example parts once). */
const splitKey = (k: string): readonly [string, string] => {
  const cut = k.indexOf("\u0000")
  return [k.slice(0, cut), k.slice(cut + 1)]
}

const exampleOf = (key: EvaluationCache.CacheKey): string => key.contentHash ?? `${key.split}\u0000${key.id}`

/** Makes `entry` the key's entry when it replaces the current one; else keeps it as its payer's own. */
const keep = <O>(index: CacheIndex<O>, k: string, candidate: string, example: string, entry: EvaluationCache.CachedEvaluation<O>): void => {
  const existing = index.entries.get(candidate, example)
  if (EvaluationCache.replaces(existing, entry)) {
    index.entries.set(candidate, example, entry)
    // the entry it replaces stays its payer's own
    if (existing?.iteration !== undefined) keep(index, k, candidate, example, existing)
    return
  }
  if (entry.iteration === undefined || entry.iteration === existing?.iteration) return
  const own = index.shadowed.get(k)
  if (own === undefined) index.shadowed.set(k, new Map([[entry.iteration, entry]]))
  else if (!own.has(entry.iteration)) own.set(entry.iteration, entry)
}

const addTrace = <O>(index: CacheIndex<O>, k: string, i: number, t: unknown) => {
  const m = index.traces.get(k)
  if (m === undefined) index.traces.set(k, new Map([[i, t]]))
  else m.set(i, t)
}

/** An empty index (a run directory without a persistent cache). */
export const emptyIndex = <O>(): CacheIndex<O> => ({ entries: new Entries(), payments: new Map(), traces: new Map(), shadowed: new Map() })

/** Reads `cache.jsonl`'s lines; unreadable lines (a crash mid-append) are skipped. */
export const parseCache = <O>(text: string): CacheIndex<O> => {
  const index = emptyIndex<O>()
  for (const line of text.split("\n")) {
    const parsed = parseJsonLine(line)
    if (!isCacheLine(parsed)) continue
    const k = sharedKey(parsed.k)
    const [candidate, example] = splitKey(k)
    const entry: EvaluationCache.CachedEvaluation<O> = {
      // outputs are the JSON values the run stored
      output: parsed.output as O,
      score: parsed.score,
      ...(parsed.objectiveScores === undefined ? {} : { objectiveScores: parsed.objectiveScores }),
      ...(parsed.i === undefined ? {} : { iteration: parsed.i })
    }
    keep(index, k, candidate, example, entry)
    const payment: Payment = { i: parsed.i, g: parsed.g ?? 0, owed: false }
    const list = index.payments.get(k)
    if (list === undefined) index.payments.set(k, [payment])
    else list.push(payment)
    if (parsed.t !== undefined && parsed.i !== undefined) addTrace(index, k, parsed.i, parsed.t)
  }
  return index
}

/** Every payment, in no particular order. */
export const allPayments = function*<O>(index: CacheIndex<O>): Generator<Payment> {
  for (const list of index.payments.values()) yield* list
}

/** After a load marked the owed payments: the others are never read again. */
export const settle = <O>(index: CacheIndex<O>): void => {
  for (const [k, list] of index.payments) {
    const owed = list.filter((p) => p.owed)
    if (owed.length === 0) index.payments.delete(k)
    else index.payments.set(k, owed)
  }
}

/**
 * After a save of `state`: the own results and trajectories of proposals it
 * shows folded are never asked for again (in this process, or by a resume
 * from this save or a later one), so they are dropped.
 */
export const forgetFolded = <O>(index: CacheIndex<O>, state: GepaState): void => {
  if (index.shadowed.size === 0 && index.traces.size === 0) return
  const pending = new Set(state.pending.map((p) => p.iteration))
  const live = (i: number) => pending.has(i) || i > state.iteration
  for (const map of [index.shadowed, index.traces]) {
    for (const [k, own] of map) {
      for (const i of own.keys()) if (!live(i)) own.delete(i)
      if (own.size === 0) map.delete(k)
    }
  }
}

/**
 * The cache service over an index, appending to `cache.jsonl`. `dirty` is
 * set by every append (the next save flushes the file).
 */
export const makeCache = <O>(options: {
  readonly log: AppendLog
  readonly index: CacheIndex<O>
  readonly owed: Owed
  /** the generation of the last save (lines carry it) */
  readonly generation: () => number
  readonly dirty: { value: boolean }
}): EvaluationCache.EvaluationCache<O> => {
  const { index, owed } = options
  const lookup = (key: EvaluationCache.CacheKey): Option.Option<EvaluationCache.CachedEvaluation<O>> => {
    const k = EvaluationCache.keyString(key)
    let hit = index.entries.get(key.candidateHash, exampleOf(key))
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
    const list = owed.left() > 0 ? index.payments.get(k) : undefined
    if (list !== undefined) {
      const own = list.find((p) => p.owed && p.i === key.requestedBy) ?? list.find((p) => p.owed)
      if (own !== undefined) {
        owed.add(own, -1)
        return Option.some({ ...hit, owed: true })
      }
    }
    return Option.some(hit)
  }
  const lineOf = (key: EvaluationCache.CacheKey, value: EvaluationCache.CachedEvaluation<O>, g: number): string => {
    const line: CacheLine = {
      k: EvaluationCache.keyString(key),
      output: value.output,
      score: value.score,
      ...(value.objectiveScores === undefined ? {} : { objectiveScores: value.objectiveScores }),
      g,
      ...(value.iteration === undefined ? {} : { i: value.iteration }),
      ...(value.trajectory === undefined ? {} : { t: value.trajectory })
    }
    return JSON.stringify(line) + "\n"
  }
  const show = (key: EvaluationCache.CacheKey, value: EvaluationCache.CachedEvaluation<O>): void => {
    const { owed: _, trajectory, ...entry } = value
    const k = EvaluationCache.keyString(key)
    keep(index, k, key.candidateHash, exampleOf(key), entry)
    // an owed earlier payment (a result evaluated again because its
    // trajectory could not be stored) stays owed, never free
    if (trajectory !== undefined && value.iteration !== undefined) addTrace(index, k, value.iteration, trajectory)
  }
  /** the lines are written (the write awaited) before their entries are visible, so a hit is always in the file too */
  const setMany = (list: ReadonlyArray<readonly [EvaluationCache.CacheKey, EvaluationCache.CachedEvaluation<O>]>): Effect.Effect<void, PersistenceError> =>
    Effect.suspend(() => {
      if (list.length === 0) return Effect.void
      const g = options.generation()
      let chunk = ""
      for (const [key, value] of list) chunk += lineOf(key, value, g)
      // uninterruptible: written means shown
      return Effect.uninterruptible(Effect.map(options.log.append(chunk), () => {
        for (const [key, value] of list) show(key, value)
        options.dirty.value = true
      }))
    })
  const get: EvaluationCache.EvaluationCache<O>["get"] = (key) => Effect.sync(() => lookup(key))
  const set: EvaluationCache.EvaluationCache<O>["set"] = (key, value) => setMany([[key, value]])
  return {
    get,
    set,
    size: Effect.sync(() => index.entries.size),
    batch: {
      get,
      set,
      // key by key, in order: each get may charge an owed payment
      getMany: (keys) => Effect.sync(() => keys.map((key) => Option.getOrUndefined(lookup(key)))),
      setMany,
      peek: (keys) =>
        keys.map((key) => {
          const hit = index.entries.get(key.candidateHash, exampleOf(key))
          return hit !== undefined && EvaluationCache.isVisible(key, hit) ? hit : undefined
        })
    }
  }
}
