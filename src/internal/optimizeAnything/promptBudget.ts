/**
 * Fitting the evidence of one reflection into the reflection prompt's
 * budget. Within the budget every evaluation is shown whole. Over it, what a
 * reader needs least goes first, always in whole pieces:
 *
 * 1. records of the side information's lists (a list reached from an
 *    evaluation's fields through records only; its items are shown with
 *    every field or not at all): passing records first, then the others
 *    from the end of the longest lists, from the best-scored evaluations
 *    first. Each list keeps at least its first record and ends with a line
 *    counting the records it does not show;
 * 2. whole evaluations, the best score first; the worst is always kept, and
 *    a line says how many are not shown and their scores;
 * 3. as a last resort (a single value larger than the budget), long strings
 *    and lists are cut with markers (`budget`).
 *
 * Summary lines (strings and numbers directly in the side information), the
 * input, the score and the logs are never dropped by steps 1 and 2.
 *
 * @internal
 */
import type { ReflectiveRecord } from "../../Adapter.js"
import { renderRecords } from "../../Reflection.js"
import { isRecord } from "../shared/fields.js"
import { budget, dropRepeats, inlineRecord, type Limits, setOwn } from "./sideInfo.js"

/**
 * The reflection prompt's budget when neither the options nor the model give
 * one: 100,000 characters, about 25,000-33,000 tokens of English, JSON or
 * code (3-4 characters a token), a quarter of a 128k-token context window,
 * which leaves room for the answer on every model we support.
 *
 * @internal
 */
export const defaultPromptBudget = 100_000

/**
 * Characters a token, counted low (JSON and code tokenize at 3-4), so that
 * a budget derived from a context window stays inside it.
 *
 * @internal
 */
export const charsPerToken = 3

/**
 * The share of the model's context window the prompt may take: the rest is
 * for the answer, which repeats the whole artifact.
 *
 * @internal
 */
export const promptShareOfContext = 0.5

/**
 * The prompt budget (characters) for a model with a context window of
 * `tokens`.
 *
 * @internal
 */
export const budgetFromContextWindow = (tokens: number): number => Math.floor(tokens * charsPerToken * promptShareOfContext)

/** @internal */
export type Status = "fail" | "unmarked" | "pass"

const PASS_FIELDS = ["ok", "pass", "passed", "success", "succeeded", "correct", "solved"]
const STATUS_FIELDS = ["status", "result", "outcome", "verdict"]
const PASSING = /^(ok|pass|passed|passing|success|successful|succeeded|correct|solved)$/i
const FAILING = /fail|error|wrong|incorrect|mismatch|unsolved|timeout|timed out|crash/i

/**
 * Whether a record of a side-information list reports a pass or a failure:
 * a boolean field `ok`, `pass`, `passed`, `success`, `succeeded`, `correct`
 * or `solved`, or a field `status`, `result`, `outcome` or `verdict` saying
 * so ("pass", "ok", "success"... or "fail", "error", "wrong"...). Anything
 * else is unmarked and kept like a failure.
 *
 * @internal
 */
export const statusOf = (item: unknown): Status => {
  if (!isRecord(item) || Array.isArray(item)) return "unmarked"
  for (const f of PASS_FIELDS) {
    const v = item[f]
    if (typeof v === "boolean") return v ? "pass" : "fail"
  }
  for (const f of STATUS_FIELDS) {
    const v = item[f]
    if (typeof v !== "string") continue
    if (PASSING.test(v.trim())) return "pass"
    if (FAILING.test(v)) return "fail"
  }
  return "unmarked"
}

const statusRank: Record<Status, number> = { fail: 0, unmarked: 1, pass: 2 }

const itemScore = (item: unknown): number => {
  const score = isRecord(item) ? item["score"] : undefined
  return typeof score === "number" && Number.isFinite(score) ? score : Infinity
}

/** Fields of a reflective record that are never trimmed as lists. */
const FIXED = new Set(["Input", "Score", "Scores (higher is better)", "Logs"])

interface List {
  readonly record: number
  readonly path: ReadonlyArray<string>
  readonly items: ReadonlyArray<unknown>
  readonly status: ReadonlyArray<Status>
  /** each item's place in the order of keeping: failures, lowest scores, first items first */
  readonly rank: ReadonlyArray<number>
}

const listsOf = (record: Readonly<Record<string, unknown>>, index: number): Array<List> => {
  const out: Array<List> = []
  const walk = (value: unknown, path: ReadonlyArray<string>): void => {
    if (Array.isArray(value)) {
      const items: ReadonlyArray<unknown> = value
      const status = items.map(statusOf)
      const order = items.map((_, i) => i).sort((a, b) => statusRank[status[a]!] - statusRank[status[b]!] || itemScore(items[a]) - itemScore(items[b]) || a - b)
      const rank = new Array<number>(items.length)
      order.forEach((i, r) => {
        rank[i] = r
      })
      out.push({ record: index, path, items, status, rank })
      return
    }
    if (isRecord(value)) { for (const [k, v] of Object.entries(value)) walk(v, [...path, k]) }
  }
  for (const [k, v] of Object.entries(record)) if (!FIXED.has(k)) walk(v, [k])
  return out
}

const setAt = (value: unknown, path: ReadonlyArray<string>, replacement: unknown): unknown => {
  if (path.length === 0) return replacement
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(isRecord(value) ? value : {})) {
    setOwn(out, k, k === path[0] ? setAt(v, path.slice(1), replacement) : v)
  }
  return out
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/** The line that ends a list with records not shown. */
export const notShownLine = (counts: Readonly<Record<Status, number>>): string => {
  const total = counts.fail + counts.unmarked + counts.pass
  const parts = [
    counts.fail > 0 ? `${counts.fail} failing` : "",
    counts.unmarked > 0 ? `${counts.unmarked} unmarked` : "",
    counts.pass > 0 ? `${counts.pass} passing` : ""
  ].filter((p) => p !== "")
  return `… ${plural(total, "more record")} not shown (${parts.join(", ")}): the reflection prompt's budget is full`
}

const scoreOf = (score: number | undefined): number => (score !== undefined && Number.isFinite(score) ? score : -Infinity)

/**
 * The records of one reflection (`rawRecord`s, in the prompt's order, with
 * their evaluations' scores) as shown within `room` characters of rendered
 * examples: whole when they fit, else trimmed as the module says. The
 * result is ready for the prompt (small records inlined, repeats referred
 * to).
 *
 * @internal
 */
export const fit = (
  records: ReadonlyArray<Readonly<Record<string, unknown>>>,
  scores: ReadonlyArray<number | undefined>,
  room: number,
  limits: Limits
): ReadonlyArray<ReflectiveRecord> => {
  const finish = (rs: ReadonlyArray<Readonly<Record<string, unknown>>>) => dropRepeats(rs.map(inlineRecord))
  const size = (rs: ReadonlyArray<Readonly<Record<string, unknown>>>) => renderRecords(finish(rs)).length
  let total = size(records)
  if (total <= room) return finish(records)

  const lists = records.flatMap(listsOf)
  const dropped = lists.map(() => new Set<number>())
  const hidden = new Set<number>()
  const apply = (): Array<Record<string, unknown>> => {
    const out: Array<unknown> = [...records]
    lists.forEach((list, li) => {
      const gone = dropped[li]!
      if (gone.size === 0) return
      const counts: Record<Status, number> = { fail: 0, unmarked: 0, pass: 0 }
      for (const i of gone) counts[list.status[i]!]++
      const kept = list.items.filter((_, i) => !gone.has(i))
      out[list.record] = setAt(out[list.record], list.path, [...kept, notShownLine(counts)])
    })
    const shown = out.flatMap((r, i) => (hidden.has(i) ? [] : [r as Record<string, unknown>]))
    if (hidden.size > 0) {
      const last = { ...shown[shown.length - 1]! }
      const gone = Array.from(hidden).sort((a, b) => a - b).map((i) => scores[i] ?? "none").join(", ")
      setOwn(
        last,
        "Not shown",
        `${plural(hidden.size, "more evaluation")} of this text (score${hidden.size === 1 ? "" : "s"} ${gone}): the reflection prompt's budget is full`
      )
      shown[shown.length - 1] = last
    }
    return shown
  }

  // 1. records of lists, never the first one kept of a list
  const candidates = lists.flatMap((list, li) =>
    list.items.flatMap((item, i) =>
      list.rank[i]! === 0 ? [] : [{
        li,
        i,
        pass: list.status[i] === "pass" ? 0 : 1,
        rank: list.rank[i]!,
        score: scoreOf(scores[list.record]),
        record: list.record,
        cost: (JSON.stringify(item)?.length ?? 4) + 16
      }]
    )
  ).sort((a, b) => a.pass - b.pass || b.rank - a.rank || b.score - a.score || b.record - a.record || b.li - a.li)
  let current: ReadonlyArray<Record<string, unknown>> = records
  let next = 0
  while (total > room && next < candidates.length) {
    // drop about what is over, in JSON characters (rendering adds headings)
    const ratio = Math.max(1, total / Math.max(1, JSON.stringify(current).length))
    let need = (total - room) / ratio
    while (need > 0 && next < candidates.length) {
      const c = candidates[next++]!
      dropped[c.li]!.add(c.i)
      need -= c.cost
    }
    current = apply()
    total = size(current)
  }

  // 2. whole evaluations, the best score first, never the last one
  const byScore = records.map((_, i) => i).sort((a, b) => scoreOf(scores[b]) - scoreOf(scores[a]) || b - a)
  for (const i of byScore) {
    if (total <= room || hidden.size >= records.length - 1) break
    hidden.add(i)
    current = apply()
    total = size(current)
  }
  if (total <= room) return finish(current)

  // 3. what is left is too large in itself: cut strings and lists with markers
  const perRecord = Math.max(400, Math.floor(room / Math.max(1, current.length)))
  return finish(current.map((r) => {
    const perField: Limits = { ...limits, maxRecordLength: Math.max(200, Math.floor(perRecord / Math.max(1, Object.keys(r).length))) }
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(r)) setOwn(out, k, k === "Score" ? v : budget(v, perField))
    return out
  }))
}
