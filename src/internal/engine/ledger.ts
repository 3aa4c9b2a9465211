/**
 * The ledger of metric calls: the one place that adds, subtracts or compares
 * counts of metric calls (see `Ledger.ts` for the public face and the
 * reasoning). Everything else carries counts from here to there.
 *
 * The strict budget is kept by reservation: a proposal is planned only when
 * its worst-case cost (parent and child minibatches, and the validation of
 * its child) fits in what is neither spent nor reserved by proposals still
 * in flight. A proposal's reservation is released when it is folded, and
 * replaced by what it really spent. Because reservations, not in-flight
 * spending, decide what may start, the decision is the same whatever the
 * timing, and the budget holds even if every in-flight proposal spends its
 * worst case.
 *
 * @internal
 */

/** The part of the run's state the ledger keeps (`GepaState` has these fields). @internal */
export interface Book {
  /** metric calls spent by folded work */
  readonly metricCalls: number
  /** metric calls paid by an interrupted process whose results were lost, or owed results never used */
  readonly lostMetricCalls: number
  /** proposals planned and not folded yet, each with its worst-case reservation */
  readonly pending: ReadonlyArray<{ readonly iteration: number; readonly reserved: number }>
}

/** What the budget decision sees. @internal */
export interface Balance {
  /** the strict budget; undefined when the run has none */
  readonly budget: number | undefined
  /** metric calls spent: folded work, lost work, and owed results outside any reservation */
  readonly spent: number
  /** worst-case calls reserved by proposals in flight */
  readonly reserved: number
}

/** Owed results per iteration that paid for them (-1: unknown), see `RunStore.unaccounted`. @internal */
export type Owed = ReadonlyMap<number, number>

/** A sum of counts of metric calls. @internal */
export const sum = (counts: Iterable<number>): number => {
  let n = 0
  for (const c of counts) n += c
  return n
}

/** The worst-case calls reserved by these plans. @internal */
export const reservedBy = (plans: ReadonlyArray<{ readonly reserved: number }>): number => {
  let n = 0
  for (const p of plans) n += p.reserved
  return n
}

/** A reservation of `reserved` calls once `by` of them are given back. @internal */
export const lessReserved = (reserved: number, by: number): number => reserved - by

/** The part of a step's worst case its earlier proposals have not reserved yet. @internal */
export const unreservedOf = (worst: number, earlier: ReadonlyArray<{ readonly reserved: number }>): number => worst - reservedBy(earlier)

/** @internal */
export const balance = (budget: number | undefined, book: Book, owed?: Owed | undefined): Balance => {
  // Lost work (paid by a crashed process) and owed results (paid, not counted
  // yet) are real spending: the budget holds for what the adapter really ran.
  // Owed results of a proposal in flight are within its reservation (its
  // replay uses them in place of new calls); the others are counted here.
  let unreserved = 0
  if (owed !== undefined && owed.size > 0) {
    const inFlight = new Set(book.pending.map((p) => p.iteration))
    for (const [iteration, n] of owed) if (!inFlight.has(iteration)) unreserved += n
  }
  return { budget, spent: book.metricCalls + book.lostMetricCalls + unreserved, reserved: reservedBy(book.pending) }
}

/** Calls still free to reserve. @internal */
export const available = (b: Balance): number => b.budget === undefined ? Number.POSITIVE_INFINITY : b.budget - b.spent - b.reserved

/** What a folded piece of work spent, added to the book. @internal */
export const spend = <S extends Pick<Book, "metricCalls">>(book: S, calls: number): S => ({
  ...book,
  metricCalls: book.metricCalls + calls
})

/** What a folded piece of work spent, added to a fold's draft of the state (see internal/engine/draft.ts): no copy. @internal */
export const spendOn = (draft: { metricCalls: number }, calls: number): void => {
  draft.metricCalls += calls
}

/** Lost work charged to the book (calls paid by a crashed process, or owed results never used). @internal */
export const chargeLost = <S extends Pick<Book, "lostMetricCalls">>(book: S, calls: number): S =>
  calls === 0 ? book : { ...book, lostMetricCalls: book.lostMetricCalls + calls }

/**
 * The owed results of a run folder: stored results of calls paid by an
 * earlier process that its saved state does not count, per iteration that
 * paid for them (-1: unknown). Each is charged once, by the hit that uses it
 * (`add(i, -1)`).
 *
 * @internal
 */
export interface OwedBook {
  /** owed results per iteration that paid for them, kept up to date */
  readonly byIteration: Owed
  /** owed results in all */
  readonly total: () => number
  readonly add: (iteration: number | undefined, delta: number) => void
}

/** @internal */
export const owedBook = (): OwedBook => {
  const byIteration = new Map<number, number>()
  let total = 0
  return {
    byIteration,
    total: () => total,
    add: (iteration, delta) => {
      const i = iteration ?? -1
      const n = (byIteration.get(i) ?? 0) + delta
      if (n === 0) byIteration.delete(i)
      else byIteration.set(i, n)
      total += delta
    }
  }
}

/** Owed results in all: calls paid and not counted yet. @internal */
export const owedTotal = (owed: Owed): number => sum(owed.values())

/**
 * The end of a run: owed results never used were paid for nothing, so they
 * are lost work in the result (the saved state keeps them owed, so that a
 * resume charges them once).
 *
 * @internal
 */
export const settle = <S extends Pick<Book, "lostMetricCalls">>(book: S, owed: Owed): S => chargeLost(book, owedTotal(owed))

/** Every call the book accounts for: spent and lost, plus owed results not counted yet. @internal */
export const accounted = (book: Pick<Book, "metricCalls" | "lostMetricCalls">, owed: number): number => book.metricCalls + book.lostMetricCalls + owed

/**
 * Calls on the write-ahead record that nothing accounts for: paid by a process
 * that died before their results were stored. Charged once, as lost work.
 *
 * @internal
 */
export const lostOnRecord = (onRecord: number, accountedFor: number): number => Math.max(0, onRecord - accountedFor)

/**
 * The write-ahead record, line by line: a `base` line restarts the count
 * (a run folder from before the record, or one started over), an `n` line
 * adds reserved calls (negative: reserved and never started).
 *
 * @internal
 */
export const onRecordAfter = (onRecord: number, line: { readonly n?: unknown; readonly base?: unknown }): number =>
  typeof line.base === "number" ? line.base : typeof line.n === "number" ? onRecord + line.n : onRecord

/**
 * An evaluation's charge: the examples the adapter ran (cache misses), plus
 * hits on results an interrupted process paid for and never counted.
 *
 * @internal
 */
export const charge = (ran: number, owedHits: number): number => ran + owedHits

/**
 * One evaluation's write-ahead reservations: calls are put on record in
 * blocks before they start (at least `block`, never more than the `total`
 * the evaluation may run), and what was reserved and never started is given
 * back when it ends.
 *
 * @internal
 */
export interface WriteAhead {
  /** calls admitted to start; returns the calls to put on record first (0: covered) */
  readonly admit: (calls: number) => number
  /** calls that started (paid) */
  readonly start: (calls: number) => void
  /** reserved and never started: the (positive) number to give back */
  readonly unused: () => number
}

/** @internal */
export const writeAhead = (total: number, block: number): WriteAhead => {
  let started = 0
  let admitted = 0
  let reserved = 0
  return {
    admit: (calls) => {
      admitted += calls
      if (admitted <= reserved) return 0
      const more = Math.min(total - reserved, Math.max(block, admitted - reserved))
      // counted before the append, so that chunks starting meanwhile see it
      reserved += more
      return more
    },
    start: (calls) => {
      started += calls
    },
    unused: () => Math.max(0, reserved - started)
  }
}

/**
 * Follows a run's running total of metric calls (from its events) and says
 * how much each new total adds. A resumed run's first total is what the
 * saved state already spent: not this process's, so it adds nothing.
 *
 * @internal
 */
export interface Follower {
  readonly start: (resumed: boolean) => void
  /** the calls added since the last total (0 when the total did not grow) */
  readonly to: (total: number) => number
}

/** @internal */
export const follower = (): Follower => {
  let counted: number | undefined = 0
  return {
    start: (resumed) => {
      counted = resumed ? undefined : 0
    },
    to: (total) => {
      if (counted === undefined) {
        counted = total
        return 0
      }
      const delta = total - counted
      counted = Math.max(counted, total)
      return Math.max(0, delta)
    }
  }
}

/**
 * The worst case of a step of proposals: the minibatch calls of all of them,
 * plus the `keep` largest validations (only the selected children are
 * validated): those of the proposals planned so far, and `next`, the
 * validation of the one being planned.
 *
 * @internal
 */
export const stepCost = (minibatches: number, validations: ReadonlyArray<number>, next: number, keep: number): number => {
  // (asked a few times per planned proposal: the usual rules, every child or
  // the best one, need no sorted copy)
  if (keep > validations.length) {
    let all = minibatches + next
    for (let i = 0; i < validations.length; i++) all += validations[i]!
    return all
  }
  if (keep === 1) {
    let most = next
    for (let i = 0; i < validations.length; i++) most = Math.max(most, validations[i]!)
    return minibatches + most
  }
  return minibatches + sum([...validations, next].sort((a, b) => b - a).slice(0, keep))
}

/**
 * Distinct ids: an evaluation runs each id once. Id lists are never
 * modified, and planning asks about the same validation list at every step:
 * counted once per list.
 *
 * @internal
 */
export const distinct = (ids: ReadonlyArray<string>): number => {
  let n = counted.get(ids)
  if (n === undefined) {
    n = new Set(ids).size
    counted.set(ids, n)
  }
  return n
}
const counted = new WeakMap<ReadonlyArray<string>, number>()

/** The worst-case cost of a merge proposal (its subsample evaluates each distinct id once). @internal */
export const mergeCost = (subsample: ReadonlyArray<string>, validation: number): number => distinct(subsample) + validation
