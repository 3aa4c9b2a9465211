/**
 * One candidate's cached results, packed: the evaluation caches (the
 * engine's in memory, a run directory's) keep a long run's results in these.
 *
 * Every entry takes three cells of one array, in the order the entries
 * arrived: the example's number, the output and the paying iteration; its
 * score is in a second array, where a fractional score is held unboxed.
 * Both start with room for two entries and grow exactly sized (see
 * `grownCapacity`); an entry never moves. Up to 16 entries an example is
 * found by a scan; past that, by a binary search of the entries' positions
 * kept in the order of their examples' numbers (one `Int32Array`, which a
 * new entry enters with a memory move however its example ranks: a
 * validation whose results arrive in any order stays linear).
 *
 * Most candidates are children rejected on a minibatch of a few examples,
 * and they keep their handful of entries for the whole run: the two arrays
 * hold three of them in under 300 bytes, where a column per field (typed
 * arrays or arrays, each with a header and spare room, or a map per
 * candidate) took about 1 KB, which every young-generation collection copied
 * twice before it settled in the old generation.
 *
 * @internal
 */

/** Cells per entry: the example's number, the output and the paying iteration. */
const stride = 3

/** Entries found by a scan; past this many, through the sorted positions. */
const scanned = 16

/**
 * The room for entries after `capacity` is full: twice as much while small,
 * then a quarter more, so that a candidate validated on a large set wastes
 * little (about an eighth of its room on average, where doubling wastes a
 * quarter); each entry is still copied only a few times in all.
 */
const grownCapacity = (capacity: number): number => capacity < 16 ? capacity * 2 : capacity + (capacity >> 2)

/**
 * A candidate's entries, each at a position (what `find` and `add` return)
 * that it keeps.
 *
 * @internal
 */
export class PackedResults<O> {
  private cells: Array<unknown> = new Array(stride * 2)
  private scores: Array<number> = new Array(2)
  private count = 0
  /** past `scanned` entries: their positions, in the order of their examples' numbers, in `order[0 .. count)` */
  private order: Int32Array | undefined
  /** how many entries it holds */
  get size(): number {
    return this.count
  }
  /** the position of an example's entry, or -1 */
  find(example: number): number {
    const order = this.order
    if (order === undefined) {
      for (let slot = 0; slot < this.count; slot++) if (this.cells[slot * stride] === example) return slot
      return -1
    }
    const i = this.rank(order, example)
    const slot = i < this.count ? order[i]! : -1
    return slot >= 0 && this.cells[slot * stride] === example ? slot : -1
  }
  /** the position of a new entry for `example`, which must not have one */
  add(example: number): number {
    const slot = this.count
    // an array's length is its capacity: full ones are copied into longer ones
    if (slot === this.scores.length) {
      const capacity = grownCapacity(slot)
      const cells = new Array<unknown>(capacity * stride)
      const scores = new Array<number>(capacity)
      for (let c = 0; c < slot * stride; c++) cells[c] = this.cells[c]
      for (let i = 0; i < slot; i++) scores[i] = this.scores[i]!
      this.cells = cells
      this.scores = scores
    }
    this.cells[slot * stride] = example
    const order = this.order
    if (order !== undefined) {
      const at = this.rank(order, example)
      const into = slot === order.length ? new Int32Array(order.length * 2) : order
      if (into === order) {
        into.copyWithin(at + 1, at, slot)
      } else {
        into.set(order.subarray(0, at))
        into.set(order.subarray(at, slot), at + 1)
      }
      into[at] = slot
      this.order = into
    } else if (slot === scanned) {
      const sorted = new Int32Array(scanned * 2)
      for (let i = 0; i <= slot; i++) sorted[i] = i
      sorted.subarray(0, slot + 1).sort((x, y) => this.example(x) - this.example(y))
      this.order = sorted
    }
    this.count++
    return slot
  }
  /** writes the entry at `slot` */
  set(slot: number, output: O, score: number, iteration: number | undefined): void {
    const at = slot * stride
    this.cells[at + 1] = output
    this.cells[at + 2] = iteration
    this.scores[slot] = score
  }
  example(slot: number): number {
    return this.cells[slot * stride] as number
  }
  output(slot: number): O {
    return this.cells[slot * stride + 1] as O
  }
  score(slot: number): number {
    return this.scores[slot]!
  }
  iteration(slot: number): number | undefined {
    return this.cells[slot * stride + 2] as number | undefined
  }
  /** the first place in `order` whose example is not below `example` */
  private rank(order: Int32Array, example: number): number {
    let lo = 0
    let hi = this.count
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.cells[order[mid]! * stride] as number) < example) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/**
 * Numbers example keys in order of first sight: a bucket finds an example by
 * its number, and a key string is held once however many candidates have it.
 *
 * @internal
 */
export class ExampleNumbers {
  private readonly numbers = new Map<string, number>()
  /** the key's number, or undefined when never seen */
  get(key: string): number | undefined {
    return this.numbers.get(key)
  }
  /** the key's number, given one when first seen */
  of(key: string): number {
    let n = this.numbers.get(key)
    if (n === undefined) {
      n = this.numbers.size
      this.numbers.set(key, n)
    }
    return n
  }
}
