/**
 * One candidate's cached results, packed: the evaluation caches (the
 * engine's in memory, a run directory's) keep a long run's results in these.
 *
 * Every entry takes three cells of one array, in the order of its example's
 * number (a binary search finds one): the example's number, the output and
 * the paying iteration; its score is in a second array, where a fractional
 * score is held unboxed. Both start with room for two entries and grow
 * exactly sized (see `grownCapacity`). Most candidates are children rejected
 * on a minibatch of a few examples, and they keep their handful of entries
 * for the whole run: the two arrays hold three of them in under 300 bytes,
 * where a column per field (typed arrays or arrays, each with a header and
 * spare room, or a map per candidate) took about 1 KB, which every
 * young-generation collection copied twice before it settled in the old
 * generation. A candidate validated on a large set costs about what it did
 * (33-41 bytes an entry from 40 entries up, against 30-41).
 *
 * @internal
 */

/** Cells per entry: the example's number, the output and the paying iteration. */
const stride = 3

/**
 * The room for entries after `capacity` is full: twice as much while small,
 * then a quarter more, so that a candidate validated on a large set wastes
 * little (about an eighth of its room on average, where doubling wastes a
 * quarter); each entry is still copied only a few times in all.
 */
const grownCapacity = (capacity: number): number => capacity < 16 ? capacity * 2 : capacity + (capacity >> 2)

/**
 * A candidate's entries. A position (what `find` and `add` return) holds
 * until the next `add`.
 *
 * @internal
 */
export class PackedResults<O> {
  private cells: Array<unknown> = new Array(stride * 2)
  private scores: Array<number> = new Array(2)
  private count = 0
  /** how many entries it holds */
  get size(): number {
    return this.count
  }
  /** the position of an example's entry, or -1 */
  find(example: number): number {
    const i = this.search(example)
    return i < this.count && this.cells[i * stride] === example ? i : -1
  }
  /** the position of a new entry for `example`, which must not have one */
  add(example: number): number {
    const at = this.search(example)
    const count = this.count
    let cells = this.cells
    let scores = this.scores
    // an array's length is its capacity: full ones are copied into longer ones
    if (count === scores.length) {
      const capacity = grownCapacity(count)
      const grown = new Array<unknown>(capacity * stride)
      const grownScores = new Array<number>(capacity)
      for (let c = 0; c < at * stride; c++) grown[c] = cells[c]
      for (let i = 0; i < at; i++) grownScores[i] = scores[i]!
      cells = grown
      scores = grownScores
    }
    for (let c = count * stride - 1; c >= at * stride; c--) cells[c + stride] = this.cells[c]
    for (let i = count - 1; i >= at; i--) scores[i + 1] = this.scores[i]!
    cells[at * stride] = example
    this.cells = cells
    this.scores = scores
    this.count++
    return at
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
  /** the first position whose example is not below `example` */
  private search(example: number): number {
    let lo = 0
    let hi = this.count
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.cells[mid * stride] as number) < example) lo = mid + 1
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
