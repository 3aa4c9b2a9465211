import { assert, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { type Candidate, equals as candidateEquals } from "../src/Candidate.js"
import * as Merge from "../src/Merge.js"
import { Rng } from "../src/Rng.js"

// ---------------------------------------------------------------------------
// fixtures
// ---------------------------------------------------------------------------

const NAMES = ["c0", "c1", "c2"] as const

/** seed 0; 1 and 2 each change one component of 0; 3 is a child of 1 */
const fixture = (overrides: Partial<Merge.MergeInput> = {}): Merge.MergeInput => ({
  candidates: [
    { a: "a0", b: "b0" },
    { a: "a1", b: "b0" },
    { a: "a0", b: "b2" },
    { a: "a3", b: "b0" }
  ],
  componentNames: ["a", "b"],
  parents: [[], [0], [0], [1]],
  scores: [0.2, 0.5, 0.6, 0.7],
  merge: Merge.initial,
  ...overrides
})

/** A random lineage DAG (parents always earlier) with random texts and scores. */
const dagArb = fc
  .integer({ min: 3, max: 9 })
  .chain((n) =>
    fc.record({
      parents: fc.tuple(
        ...Array.from({ length: n }, (_, k) =>
          k === 0
            ? fc.constant<Array<number>>([])
            : fc.uniqueArray(fc.nat({ max: k - 1 }), { minLength: 1, maxLength: 2 }))
      ),
      texts: fc.array(fc.array(fc.constantFrom("x", "y", "z"), { minLength: NAMES.length, maxLength: NAMES.length }), {
        minLength: n,
        maxLength: n
      }),
      scores: fc.array(fc.integer({ min: 0, max: 4 }).map((x) => x / 4), { minLength: n, maxLength: n }),
      allZero: fc.boolean(),
      programs: fc.uniqueArray(fc.nat({ max: n - 1 }), { maxLength: n }),
      tried: fc.array(fc.tuple(fc.nat({ max: n - 1 }), fc.nat({ max: n - 1 }), fc.nat({ max: n - 1 })), { maxLength: 4 }),
      seed: fc.integer()
    })
  )
  .map(({ allZero, parents, programs, scores, seed, texts, tried }) => {
    const input: Merge.MergeInput = {
      candidates: texts.map((t) => Object.fromEntries(NAMES.map((name, c) => [name, t[c]!])) as Candidate),
      componentNames: NAMES,
      parents,
      scores: allZero ? scores.map(() => 0) : scores,
      merge: { ...Merge.initial, triedTriples: tried }
    }
    return { input, programs, seed }
  })

const closure = (parents: ReadonlyArray<ReadonlyArray<number>>, node: number): Set<number> => {
  // brute force: iterate to a fixed point
  const out = new Set<number>(parents[node] ?? [])
  let grew = true
  while (grew) {
    grew = false
    for (const p of [...out]) {
      for (const q of parents[p] ?? []) {
        if (!out.has(q)) {
          out.add(q)
          grew = true
        }
      }
    }
  }
  return out
}

/** The per-component rule, checked on a merged candidate. */
const checkMerged = (
  input: Merge.MergeInput,
  i: number,
  j: number,
  ancestor: number,
  merged: { readonly candidate: Candidate; readonly sources: ReadonlyArray<number> }
) => {
  input.componentNames.forEach((name, k) => {
    const a = input.candidates[ancestor]![name]
    const ci = input.candidates[i]![name]!
    const cj = input.candidates[j]![name]!
    const out = merged.candidate[name]
    const source = merged.sources[k]!
    assert.include([i, j], source)
    assert.strictEqual(out, input.candidates[source]![name])
    // never keep the ancestor's text when a side changed it
    if (ci !== a || cj !== a) assert.notStrictEqual(out, a, `component ${name} kept the unchanged text`)
    if (ci === a && cj !== a) assert.strictEqual(source, j)
    if (cj === a && ci !== a) assert.strictEqual(source, i)
    if (ci !== a && cj !== a && ci !== cj) {
      const si = input.scores[i]!
      const sj = input.scores[j]!
      if (si > sj) assert.strictEqual(source, i)
      if (sj > si) assert.strictEqual(source, j)
    }
  })
}

describe("Merge", () => {
  describe("scheduling", () => {
    type Command = { readonly _tag: "accepted" } | { readonly _tag: "rejected" } | { readonly _tag: "merge"; readonly accepted: boolean }
    const command: fc.Arbitrary<Command> = fc.oneof(
      fc.constant({ _tag: "accepted" } as const),
      fc.constant({ _tag: "rejected" } as const),
      fc.boolean().map((accepted) => ({ _tag: "merge", accepted }) as const)
    )

    it("never lets attempted exceed maxInvocations (random command sequences)", () => {
      fc.assert(
        fc.property(fc.nat({ max: 6 }), fc.array(command, { maxLength: 60 }), (max, commands) => {
          let s = Merge.initial
          for (const c of commands) {
            switch (c._tag) {
              case "accepted": {
                const before = s
                s = Merge.schedule(s, max)
                assert.isTrue(s.lastIterFoundNew)
                // a merge becomes due exactly when the cap leaves room for it
                assert.strictEqual(s.due, before.due + (before.attempted + before.due < max ? 1 : 0))
                break
              }
              case "rejected":
                s = { ...s, lastIterFoundNew: false }
                break
              case "merge":
                if (Merge.isDue(s, max)) s = Merge.recordAttempt(s, c.accepted)
                break
            }
            assert.isAtMost(s.attempted, max)
            assert.isAtMost(s.attempted + s.due, max)
            assert.isAtLeast(s.due, 0)
            assert.isAtMost(s.accepted, s.attempted)
            if (s.attempted >= max) assert.isFalse(Merge.isDue(s, max))
          }
        }),
        { numRuns: 300 }
      )
    })

    it("schedules no more merges than the cap even when many proposals are accepted in a row", () => {
      let s = Merge.initial
      for (let k = 0; k < 5; k++) s = Merge.schedule(s, 2)
      assert.strictEqual(s.due, 2)
      assert.isTrue(Merge.isDue(s, 2))
      s = Merge.recordAttempt(s, false)
      assert.deepStrictEqual([s.due, s.attempted, s.accepted, s.lastIterFoundNew], [1, 1, 0, false])
      assert.isFalse(Merge.isDue(s, 2))
      s = Merge.schedule(s, 2)
      assert.strictEqual(s.due, 1)
      s = Merge.recordAttempt(s, true)
      assert.deepStrictEqual([s.due, s.attempted, s.accepted], [0, 2, 1])
      s = Merge.schedule(s, 2)
      assert.strictEqual(s.due, 0)
      assert.isFalse(Merge.isDue(s, 2))
    })

    it("is never due with a cap of zero", () => {
      const s = Merge.schedule(Merge.schedule(Merge.initial, 0), 0)
      assert.strictEqual(s.due, 0)
      assert.isFalse(Merge.isDue(s, 0))
    })
  })

  describe("ancestors", () => {
    it("collects all ancestors, not the node itself", () => {
      const parents = [[], [0], [0], [1, 2], [3], []]
      assert.deepStrictEqual([...Merge.ancestors(parents, 4)].sort(), [0, 1, 2, 3])
      assert.deepStrictEqual([...Merge.ancestors(parents, 3)].sort(), [0, 1, 2])
      assert.deepStrictEqual([...Merge.ancestors(parents, 0)], [])
      assert.deepStrictEqual([...Merge.ancestors(parents, 5)], [])
      assert.deepStrictEqual([...Merge.ancestors(parents, 99)], [])
    })

    it("equals the transitive closure of the parent relation", () => {
      fc.assert(
        fc.property(dagArb, ({ input }) => {
          input.parents.forEach((_, node) => {
            assert.deepStrictEqual(
              [...Merge.ancestors(input.parents, node)].sort((a, b) => a - b),
              [...closure(input.parents, node)].sort((a, b) => a - b)
            )
          })
        }),
        { numRuns: 150 }
      )
    })
  })

  describe("hasDesirableComponents", () => {
    it("holds when some component changed on exactly one side", () => {
      const input = fixture()
      assert.isTrue(Merge.hasDesirableComponents(input.candidates, input.componentNames, 0, 1, 2))
      // 1 and 3 changed the same component differently, nothing else changed
      assert.isFalse(Merge.hasDesirableComponents(input.candidates, input.componentNames, 0, 3, 3))
      const same = [{ a: "x" }, { a: "y" }, { a: "z" }]
      assert.isFalse(Merge.hasDesirableComponents(same, ["a"], 0, 1, 2))
    })
  })

  describe("mergeComponents", () => {
    it("never picks an unchanged component over a changed one (random triples)", () => {
      const text = fc.constantFrom("x", "y", "z")
      const triple = fc.array(fc.tuple(text, text, text), { minLength: 1, maxLength: 5 })
      fc.assert(
        fc.property(triple, fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 }), fc.integer(), (cols, s1, s2, seed) => {
          const names = cols.map((_, k) => `p${k}`)
          const make = (which: 0 | 1 | 2) => Object.fromEntries(cols.map((col, k) => [names[k]!, col[which]]))
          const input: Merge.MergeInput = {
            candidates: [make(0), make(1), make(2)],
            componentNames: names,
            parents: [[], [0], [0]],
            scores: [0, s1, s2],
            merge: Merge.initial
          }
          const merged = Merge.mergeComponents(input, 1, 2, 0, Rng.seeded(seed))
          assert.deepStrictEqual(Object.keys(merged.candidate).sort(), names.slice().sort())
          assert.strictEqual(merged.sources.length, names.length)
          checkMerged(input, 1, 2, 0, merged)
        }),
        { numRuns: 300 }
      )
    })

    it("takes the changed side of each component", () => {
      const merged = Merge.mergeComponents(fixture(), 1, 2, 0, Rng.seeded(1))
      assert.deepStrictEqual(merged.candidate, { a: "a1", b: "b2" })
      assert.deepStrictEqual(merged.sources, [1, 2])
    })

    it("when both sides changed a component, takes the better-scoring parent", () => {
      const input = fixture({
        candidates: [{ a: "a0" }, { a: "from-1" }, { a: "from-2" }],
        componentNames: ["a"],
        parents: [[], [0], [0]],
        scores: [0, 0.4, 0.9]
      })
      for (let seed = 0; seed < 20; seed++) {
        assert.deepStrictEqual(Merge.mergeComponents(input, 1, 2, 0, Rng.seeded(seed)).candidate, { a: "from-2" })
        assert.deepStrictEqual(
          Merge.mergeComponents({ ...input, scores: [0, 0.9, 0.4] }, 1, 2, 0, Rng.seeded(seed)).candidate,
          { a: "from-1" }
        )
      }
      // ties: a fair coin, both sides happen
      const picked = new Set<string>()
      for (let seed = 0; seed < 40; seed++) {
        picked.add(Merge.mergeComponents({ ...input, scores: [0, 0.5, 0.5] }, 1, 2, 0, Rng.seeded(seed)).candidate.a!)
      }
      assert.deepStrictEqual([...picked].sort(), ["from-1", "from-2"])
    })
  })

  describe("findCommonAncestorPair", () => {
    it("returns a valid (i, j, ancestor) triple on random lineages", () => {
      fc.assert(
        fc.property(dagArb, ({ input, programs, seed }) => {
          const found = Merge.findCommonAncestorPair(input, programs, Rng.seeded(seed))
          if (programs.length < 2) assert.isUndefined(found)
          if (found === undefined) return
          const [i, j, a] = found
          assert.isBelow(i, j)
          assert.include(programs, i)
          assert.include(programs, j)
          const ai = closure(input.parents, i)
          const aj = closure(input.parents, j)
          assert.isFalse(ai.has(j), `${j} is an ancestor of ${i}`)
          assert.isFalse(aj.has(i), `${i} is an ancestor of ${j}`)
          assert.isTrue(ai.has(a) && aj.has(a), `${a} is not a common ancestor`)
          assert.isAtMost(input.scores[a]!, input.scores[i]!)
          assert.isAtMost(input.scores[a]!, input.scores[j]!)
          assert.isTrue(Merge.hasDesirableComponents(input.candidates, input.componentNames, a, i, j))
          assert.isFalse(input.merge.triedTriples.some(([x, y, z]) => x === i && y === j && z === a))
        }),
        { numRuns: 300 }
      )
    })

    it("never pairs a candidate with its own ancestor", () => {
      // 3 descends from 1: the only admissible pairs are (1, 2) and (2, 3)
      const input = fixture()
      for (let seed = 0; seed < 100; seed++) {
        const found = Merge.findCommonAncestorPair(input, [1, 2, 3], Rng.seeded(seed))
        if (found !== undefined) assert.notDeepEqual(found.slice(0, 2), [1, 3])
      }
      assert.isUndefined(Merge.findCommonAncestorPair(input, [1, 3], Rng.seeded(1)))
      assert.isUndefined(Merge.findCommonAncestorPair(input, [0, 1], Rng.seeded(1)))
    })

    it("works when every ancestor score is 0 (uniform fallback, no crash)", () => {
      const input = fixture({ scores: [0, 0, 0, 0] })
      for (let seed = 0; seed < 50; seed++) {
        const found = Merge.findCommonAncestorPair(input, [1, 2], Rng.seeded(seed))
        assert.deepStrictEqual(found, [1, 2, 0])
      }
      // several zero-score common ancestors: each is drawn
      const wide: Merge.MergeInput = {
        candidates: [{ a: "0", b: "0" }, { a: "0", b: "0" }, { a: "x", b: "0" }, { a: "0", b: "y" }],
        componentNames: ["a", "b"],
        parents: [[], [0], [1], [1]],
        scores: [0, 0, 0, 0],
        merge: Merge.initial
      }
      const ancestorsSeen = new Set<number>()
      for (let seed = 0; seed < 60; seed++) {
        const found = Merge.findCommonAncestorPair(wide, [2, 3], Rng.seeded(seed))
        assert.isDefined(found)
        ancestorsSeen.add(found![2])
      }
      assert.deepStrictEqual([...ancestorsSeen].sort(), [0, 1])
    })

    it("skips ancestors that outscore a parent, and tried triples", () => {
      assert.isUndefined(Merge.findCommonAncestorPair(fixture({ scores: [0.55, 0.5, 0.6, 0.7] }), [1, 2], Rng.seeded(1)))
      const tried = fixture({ merge: { ...Merge.initial, triedTriples: [[1, 2, 0]] } })
      assert.isUndefined(Merge.findCommonAncestorPair(tried, [1, 2], Rng.seeded(1)))
    })
  })

  describe("propose", () => {
    it("returns the merge and records it as tried, without touching the input", () => {
      const input = fixture()
      const attempt = Merge.propose(input, [1, 2], () => true, Rng.seeded(3))
      assert.isDefined(attempt)
      assert.deepStrictEqual(attempt!.candidate, { a: "a1", b: "b2" })
      assert.deepStrictEqual([attempt!.id1, attempt!.id2, attempt!.ancestor], [1, 2, 0])
      assert.deepStrictEqual(attempt!.merge.triedTriples, [[1, 2, 0]])
      assert.deepStrictEqual(attempt!.merge.triedDescriptions, [JSON.stringify([1, 2, [1, 2]])])
      assert.deepStrictEqual(input.merge, Merge.initial)
      // proposing again from the returned state finds nothing new
      assert.isUndefined(Merge.propose({ ...input, merge: attempt!.merge }, [1, 2], () => true, Rng.seeded(3)))
    })

    it("skips tried triples and already produced descriptions", () => {
      assert.isUndefined(
        Merge.propose(fixture({ merge: { ...Merge.initial, triedTriples: [[1, 2, 0]] } }), [1, 2], () => true, Rng.seeded(1))
      )
      const description = JSON.stringify([1, 2, [1, 2]])
      assert.isUndefined(
        Merge.propose(fixture({ merge: { ...Merge.initial, triedDescriptions: [description] } }), [1, 2], () => true, Rng.seeded(1))
      )
    })

    it("respects hasOverlap", () => {
      const calls: Array<[number, number]> = []
      const result = Merge.propose(fixture(), [1, 2], (i, j) => {
        calls.push([i, j])
        return false
      }, Rng.seeded(1))
      assert.isUndefined(result)
      assert.isAbove(calls.length, 0)
      for (const c of calls) assert.deepStrictEqual(c, [1, 2])
    })

    it("needs two merge candidates and at least three candidates", () => {
      assert.isUndefined(Merge.propose(fixture(), [1], () => true, Rng.seeded(1)))
      const small = fixture({ candidates: fixture().candidates.slice(0, 2), parents: [[], [0]], scores: [0, 1] })
      assert.isUndefined(Merge.propose(small, [0, 1], () => true, Rng.seeded(1)))
    })

    it("only returns fresh, overlapping, well-formed merges (random lineages)", () => {
      fc.assert(
        fc.property(dagArb, fc.boolean(), ({ input, programs, seed }, withDescriptions) => {
          const merge = withDescriptions
            ? { ...input.merge, triedDescriptions: [JSON.stringify([0, 1, [0, 1, 0]]), JSON.stringify([1, 2, [2, 2, 1]])] }
            : input.merge
          const withMerge = { ...input, merge }
          const overlap = (i: number, j: number) => (i + j) % 3 !== 0
          const attempt = Merge.propose(withMerge, programs, overlap, Rng.seeded(seed))
          if (attempt === undefined) return
          const { ancestor, id1, id2 } = attempt
          assert.isTrue(overlap(id1, id2))
          assert.isFalse(merge.triedTriples.some(([x, y, z]) => x === id1 && y === id2 && z === ancestor))
          assert.deepStrictEqual(attempt.merge.triedTriples, [...merge.triedTriples, [id1, id2, ancestor]])
          assert.strictEqual(attempt.merge.triedDescriptions.length, merge.triedDescriptions.length + 1)
          const description = attempt.merge.triedDescriptions.at(-1)!
          assert.notInclude(merge.triedDescriptions, description)
          const [d1, d2, sources] = JSON.parse(description) as [number, number, Array<number>]
          assert.deepStrictEqual([d1, d2], [id1, id2])
          checkMerged(withMerge, id1, id2, ancestor, { candidate: attempt.candidate, sources })
          // never a copy of a parent
          assert.isFalse(candidateEquals(attempt.candidate, withMerge.candidates[id1]!))
          assert.isFalse(candidateEquals(attempt.candidate, withMerge.candidates[id2]!))
        }),
        { numRuns: 300 }
      )
    })

    it("skips a combination identical to one of its parents", () => {
      // 1 changed both components since the ancestor and scores higher, 2
      // changed only b: every component comes from 1, a copy of it
      const input: Merge.MergeInput = {
        candidates: [{ a: "0", b: "0" }, { a: "a1", b: "b1" }, { a: "0", b: "b2" }],
        componentNames: ["a", "b"],
        parents: [[], [0], [0]],
        scores: [0, 0.9, 0.5],
        merge: Merge.initial
      }
      assert.isUndefined(Merge.propose(input, [1, 2], () => true, Rng.seeded(1)))
    })
  })

  describe("subsample", () => {
    const bucketed = (n: number) => {
      const s1: Record<string, number> = {}
      const s2: Record<string, number> = {}
      for (let k = 0; k < n; k++) {
        s1[`w${k}`] = 1
        s2[`w${k}`] = 0 // first parent better
        s1[`l${k}`] = 0
        s2[`l${k}`] = 1 // second parent better
        s1[`t${k}`] = 0.5
        s2[`t${k}`] = 0.5 // tie
      }
      return [s1, s2] as const
    }

    it("stratifies: a third from each bucket", () => {
      const [s1, s2] = bucketed(5)
      for (let seed = 0; seed < 20; seed++) {
        const three = Merge.subsample(s1, s2, 3, Rng.seeded(seed))
        assert.deepStrictEqual(three.map((id) => id[0]).sort(), ["l", "t", "w"])
        const five = Merge.subsample(s1, s2, 5, Rng.seeded(seed))
        assert.deepStrictEqual(five.map((id) => id[0]), ["w", "w", "l", "l", "t"])
      }
    })

    it("draws only common ids, respects the size, and repeats only when short of ids (random scores)", () => {
      const scores = fc.dictionary(
        fc.constantFrom(...Array.from({ length: 10 }, (_, k) => `v${k}`)),
        fc.integer({ min: 0, max: 2 })
      )
      fc.assert(
        fc.property(scores, scores, fc.integer({ min: 0, max: 8 }), fc.integer(), (s1, s2, size, seed) => {
          const out = Merge.subsample(s1, s2, size, Rng.seeded(seed))
          const common = Object.keys(s1).filter((id) => id in s2)
          for (const id of out) assert.include(common, id)
          assert.strictEqual(out.length, common.length === 0 ? 0 : size)
          if (common.length >= size) assert.strictEqual(new Set(out).size, out.length)
          // each bucket gets its share before any top-up
          const per = Math.max(1, Math.ceil(size / 3))
          const b1 = common.filter((id) => s1[id]! > s2[id]!)
          const b2 = common.filter((id) => s2[id]! > s1[id]!)
          const b3 = common.filter((id) => s1[id] === s2[id])
          let left = size
          for (const bucket of [b1, b2, b3]) {
            const want = Math.max(0, Math.min(bucket.length, per, left))
            const got = new Set(out.filter((id) => bucket.includes(id))).size
            assert.isAtLeast(got, want)
            left -= want
          }
        }),
        { numRuns: 300 }
      )
    })

    it("is empty when the parents share no ids", () => {
      assert.deepStrictEqual(Merge.subsample({ a: 1 }, { b: 1 }, 5, Rng.seeded(1)), [])
      expect(Merge.subsample({ a: 1, b: 0 }, { a: 0, b: 0 }, 5, Rng.seeded(1))).toHaveLength(5)
    })
  })
})
