import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { Candidate } from "../src/Candidate.js"
import * as Genealogy from "../src/Genealogy.js"
import * as Merge from "../src/Merge.js"
import { Rng } from "../src/Rng.js"

const NAMES = ["a", "b", "c"] as const

type Step =
  | { readonly _tag: "reflect"; readonly parent: number; readonly changes: ReadonlyArray<string | undefined> }
  | { readonly _tag: "merge"; readonly p1: number; readonly p2: number; readonly pick: ReadonlyArray<boolean> }

interface Lineage {
  readonly candidates: ReadonlyArray<Candidate>
  readonly parents: ReadonlyArray<ReadonlyArray<number>>
  readonly versions: ReadonlyArray<Genealogy.CandidateVersions>
  readonly scores: ReadonlyArray<number>
}

/**
 * A random run: reflective children (some components rewritten) and merges
 * (each component from one of two parents). `alphabet` undefined gives every
 * rewrite a fresh text; otherwise rewrites draw from it, so lineages can
 * reach the same text independently.
 */
const lineageArb = (fresh: boolean) =>
  fc.integer({ min: 3, max: 10 }).chain((n) =>
    fc.record({
      steps: fc.tuple(...Array.from({ length: n - 1 }, (_, k) => {
        const m = k + 1 // candidates before this one
        return fc.oneof(
          fc.record({
            _tag: fc.constant("reflect" as const),
            parent: fc.nat({ max: m - 1 }),
            changes: fc.array(fc.option(fc.constantFrom("x", "y", "z"), { nil: undefined }), { minLength: 3, maxLength: 3 })
          }),
          fc.record({
            _tag: fc.constant("merge" as const),
            p1: fc.nat({ max: m - 1 }),
            p2: fc.nat({ max: m - 1 }),
            pick: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 })
          })
        ) as fc.Arbitrary<Step>
      })),
      scores: fc.array(fc.integer({ min: 0, max: 4 }).map((x) => x / 4), { minLength: n, maxLength: n })
    }).map(({ scores, steps }) => build(steps, scores, fresh))
  )

const build = (steps: ReadonlyArray<Step>, scores: ReadonlyArray<number>, fresh: boolean): Lineage => {
  const candidates: Array<Candidate> = [{ a: "a0", b: "b0", c: "c0" }]
  const parents: Array<ReadonlyArray<number>> = [[]]
  const versions: Array<Genealogy.CandidateVersions> = [Genealogy.seed(NAMES)]
  steps.forEach((step, k) => {
    const index = k + 1
    let candidate: Record<string, string>
    let ps: ReadonlyArray<number>
    let sources: ReadonlyArray<number> | undefined
    if (step._tag === "reflect" || step.p1 === step.p2) {
      const parent = step._tag === "reflect" ? step.parent : step.p1
      const changes = step._tag === "reflect" ? step.changes : [undefined, undefined, undefined]
      candidate = { ...candidates[parent] }
      NAMES.forEach((name, c) => {
        const change = changes[c]
        if (change !== undefined) candidate[name] = fresh ? `${name}${index}` : change
      })
      ps = [parent]
    } else {
      const src = step.pick.map((first) => (first ? step.p1 : step.p2))
      candidate = {}
      NAMES.forEach((name, c) => {
        candidate[name] = candidates[src[c]!]![name]!
      })
      ps = [step.p1, step.p2]
      sources = src
    }
    versions.push(Genealogy.child({ index, componentNames: NAMES, candidate, parents: ps, candidates, versions, sources }))
    candidates.push(candidate)
    parents.push(ps)
  })
  return { candidates, parents, versions, scores }
}

const input = (l: Lineage, versions: boolean): Merge.MergeInput => ({
  candidates: l.candidates,
  componentNames: NAMES,
  parents: l.parents,
  scores: l.scores,
  merge: Merge.initial,
  ...(versions ? { versions: l.versions } : {})
})

/** the texts replaced by their genealogical identity (origin): what "changed" truly means */
const byIdentity = (l: Lineage): Lineage => ({
  ...l,
  candidates: l.candidates.map((c, i) => Object.fromEntries(NAMES.map((name) => [name, `${name}@${l.versions[i]![name]!.origin}`])))
})

const triples = (n: number) => {
  const out: Array<readonly [number, number, number]> = []
  for (let a = 0; a < n; a++) for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) out.push([i, j, a])
  return out
}

describe("Genealogy", () => {
  it("a component's version increases by one exactly when a reflective child changes its value, and a merge copies versions", () => {
    fc.assert(
      fc.property(lineageArb(false), (l) => {
        l.candidates.forEach((candidate, i) => {
          const ps = l.parents[i]!
          for (const name of NAMES) {
            const meta = l.versions[i]![name]!
            if (ps.length === 0) {
              expect(meta).toEqual({ version: 0, origin: 0 })
            } else if (ps.length === 1) {
              const before = l.versions[ps[0]!]![name]!
              const changed = l.candidates[ps[0]!]![name] !== candidate[name]
              expect(meta.version).toBe(changed ? before.version + 1 : before.version)
              expect(meta.origin).toBe(changed ? i : before.origin)
            } else {
              // a merge changes nothing: the metadata of the parent it took the value from
              expect(ps.some((p) => l.versions[p]![name]!.origin === meta.origin && l.candidates[p]![name] === candidate[name]))
                .toBe(true)
            }
          }
        })
        // the rebuild from texts and parents agrees wherever merges were unambiguous
        const rebuilt = Genealogy.derive(NAMES, l.candidates, l.parents)
        l.candidates.forEach((_, i) => {
          if (l.parents[i]!.length <= 1 && l.parents.slice(0, i + 1).every((p) => p.length <= 1)) {
            expect(rebuilt[i]).toEqual(l.versions[i])
          }
        })
      }),
      { numRuns: 300 }
    )
  })

  it("merge by versions decides like the reference's text rule wherever texts never coincide by accident", () => {
    fc.assert(
      fc.property(lineageArb(true), fc.integer(), (l, seed) => {
        for (const [i, j, a] of triples(l.candidates.length)) {
          expect(Merge.hasDesirableComponents(l.candidates, NAMES, a, i, j, l.versions))
            .toBe(Merge.hasDesirableComponents(l.candidates, NAMES, a, i, j))
          const byVersions = Merge.mergeComponents(input(l, true), i, j, a, Rng.seeded(seed))
          const byText = Merge.mergeComponents(input(l, false), i, j, a, Rng.seeded(seed))
          expect(byVersions).toEqual(byText)
        }
      }),
      { numRuns: 200 }
    )
  })

  it("where lineages reach the same text independently, merge by versions decides as the text rule would on identities", () => {
    fc.assert(
      fc.property(lineageArb(false), fc.integer(), (l, seed) => {
        const truth = byIdentity(l)
        for (const [i, j, a] of triples(l.candidates.length)) {
          expect(Merge.hasDesirableComponents(l.candidates, NAMES, a, i, j, l.versions))
            .toBe(Merge.hasDesirableComponents(truth.candidates, NAMES, a, i, j))
          const byVersions = Merge.mergeComponents(input(l, true), i, j, a, Rng.seeded(seed))
          const onIdentities = Merge.mergeComponents(input(truth, false), i, j, a, Rng.seeded(seed))
          expect(byVersions.sources).toEqual(onIdentities.sources)
        }
      }),
      { numRuns: 200 }
    )
  })

  it("takes the component each lineage changed even when one lineage changed it back to the ancestor's text", () => {
    // seed a=A; 1 rewrites a to B; 2 (child of 1) rewrites a back to A and
    // rewrites b; 3 (child of 0) rewrites c. By text, 2 looks as if it never
    // touched a; by genealogy it did, so nothing of 2's lineage is lost.
    const candidates: Array<Candidate> = [
      { a: "A", b: "b0", c: "c0" },
      { a: "B", b: "b0", c: "c0" },
      { a: "A", b: "b2", c: "c0" },
      { a: "A", b: "b0", c: "c3" }
    ]
    const parents = [[], [0], [1], [0]]
    const versions = Genealogy.derive(NAMES, candidates, parents)
    expect(versions[2]!["a"]).toEqual({ version: 2, origin: 2 })
    const l: Lineage = { candidates, parents, versions, scores: [0, 0.5, 0.6, 0.7] }
    const merged = Merge.mergeComponents(input(l, true), 2, 3, 0, Rng.seeded(0))
    expect(merged.candidate).toEqual({ a: "A", b: "b2", c: "c3" })
    expect(merged.sources).toEqual([2, 2, 3])
  })
})
