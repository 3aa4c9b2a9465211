/**
 * The functions over the optimizer state (see `State.ts` for the public face,
 * its schemas and the documentation of each function): the initial state,
 * adding a candidate, the getters the engine reads on every step, and the
 * consistency check. All pure: an update returns a new state.
 *
 * The face imports this module, so this module never imports the face (the
 * import graph of `src/` has no circle, types included): it sees the state
 * through `Fields`, the fields it reads and writes, typed from the same
 * schemas `GepaState` is built of, and the face's signatures check that
 * `GepaState` has them.
 *
 * @internal
 */
import { Either } from "effect"
import * as BatchSampler from "../BatchSampler.js"
import type { Candidate } from "../Candidate.js"
import type { MissingObjectiveScores } from "../Errors.js"
import type { ObjectiveScores } from "../EvaluationBatch.js"
import type { RunFingerprint } from "../Fingerprint.js"
import * as Frontier from "../Frontier.js"
import * as Genealogy from "../Genealogy.js"
import * as Merge from "../Merge.js"
import { Rng } from "../Rng.js"

/** The version of the persisted state layout (`State.SCHEMA_VERSION`). @internal */
export const SCHEMA_VERSION = 1 as const

/**
 * The fields of `State.GepaState` the functions below read and write, typed
 * as its schema decodes them.
 *
 * @internal
 */
export interface Fields {
  readonly componentNames: ReadonlyArray<string>
  readonly frontierType: Frontier.FrontierType
  readonly candidates: ReadonlyArray<Candidate>
  readonly parents: ReadonlyArray<ReadonlyArray<number>>
  readonly valScores: ReadonlyArray<{ readonly [x: string]: number }>
  readonly objectiveScores: ReadonlyArray<ObjectiveScores>
  readonly valAverages: ReadonlyArray<number>
  readonly valCoverage: ReadonlyArray<number>
  readonly nextComponent: ReadonlyArray<number>
  readonly discoveryBudget: ReadonlyArray<number>
  readonly fronts: Frontier.Fronts
  readonly iteration: number
  readonly metricCalls: number
  readonly fullValEvals: number
  readonly lastImprovementIteration: number
  readonly versions?: ReadonlyArray<Genealogy.CandidateVersions> | undefined
}

/** Validation results of one candidate: the shape of `State.ValsetEvaluation`. @internal */
export interface ValsetEvaluation {
  readonly scores: Readonly<Record<string, number>>
  readonly objectiveScores?: Readonly<Record<string, ObjectiveScores>> | undefined
}

const average = (scores: Readonly<Record<string, number>>): readonly [number, number] => {
  let sum = 0
  let n = 0
  for (const value of Object.values(scores)) {
    sum += value
    n++
  }
  return [n === 0 ? 0 : sum / n, n]
}

/**
 * The state after evaluating the seed candidate on the validation set
 * (`State.initial`). Its type is the object built here: the face's
 * signature checks that it is a `GepaState`.
 *
 * @internal
 */
export const initial = (options: {
  readonly seed: number
  readonly seedCandidate: Candidate
  readonly frontierType: Frontier.FrontierType
  readonly valset: ValsetEvaluation
  readonly metricCalls: number
  readonly fingerprint?: RunFingerprint | undefined
}) =>
  Either.map(
    Frontier.addProgram(Frontier.empty, options.frontierType, 0, {
      valScores: options.valset.scores,
      valObjectiveScores: options.valset.objectiveScores
    }, "evaluate (seed candidate on the validation set)"),
    (fronts) => {
      const [avg, n] = average(options.valset.scores)
      return {
        schemaVersion: SCHEMA_VERSION,
        componentNames: Object.keys(options.seedCandidate),
        frontierType: options.frontierType,
        candidates: [{ ...options.seedCandidate }],
        parents: [[]],
        valScores: [{ ...options.valset.scores }],
        objectiveScores: [Frontier.aggregateObjectives(Object.values(options.valset.objectiveScores ?? {}))],
        valAverages: [avg],
        valCoverage: [n],
        nextComponent: [0],
        discoveryBudget: [0],
        fronts,
        iteration: 0,
        metricCalls: options.metricCalls,
        fullValEvals: 1,
        reflectionCalls: 0,
        reflectionUsage: { inputTokens: 0, outputTokens: 0, cost: 0 },
        acceptedProposals: 0,
        rejectedProposals: 0,
        lastImprovementIteration: 0,
        consecutiveFailedIterations: 0,
        rng: Rng.seeded(options.seed).snapshot(),
        sampler: BatchSampler.initial,
        merge: Merge.initial,
        trace: [],
        pending: [],
        lostMetricCalls: 0,
        versions: [Genealogy.seed(Object.keys(options.seedCandidate))],
        ...(options.fingerprint === undefined ? {} : { fingerprint: options.fingerprint })
      }
    }
  )

const copyAppend = <A>(array: ReadonlyArray<A>, item: A): ReadonlyArray<A> => [...array, item]

const bestMemo = new WeakMap<ReadonlyArray<number>, { readonly coverage: ReadonlyArray<number>; readonly n: number; readonly best: number }>()

/**
 * Adds an accepted candidate with its validation results
 * (`State.addCandidate`, where the options are documented). The child's
 * round-robin pointer is the largest of its parents' pointers. Returns the
 * new state and the candidate's index.
 *
 * @internal
 */
export const addCandidate = <S extends Fields>(
  state: S,
  options: {
    readonly candidate: Candidate
    readonly parents: ReadonlyArray<number>
    readonly valset: ValsetEvaluation
    readonly discoveryBudget: number
    /** how the per-candidate arrays and the program lists of the fronts grow by one entry; default a copy */
    readonly append?: (<A>(array: ReadonlyArray<A>, item: A) => ReadonlyArray<A>) | undefined
    /** for a merge: per component, the parent it was taken from */
    readonly sources?: ReadonlyArray<number> | undefined
  }
): Either.Either<readonly [S, number], MissingObjectiveScores> => {
  const idx = state.candidates.length
  const append = options.append ?? copyAppend
  const versions = versionsOf(state)
  const childVersions = Genealogy.child({
    index: idx,
    componentNames: state.componentNames,
    candidate: options.candidate,
    parents: options.parents,
    candidates: state.candidates,
    versions,
    sources: options.sources
  })
  return Either.map(
    Frontier.addProgram(
      state.fronts,
      state.frontierType,
      idx,
      {
        valScores: options.valset.scores,
        valObjectiveScores: options.valset.objectiveScores
      },
      "evaluate (new candidate on the validation set)",
      append
    ),
    (fronts) => {
      const previousBest = bestIndex(state)
      const [avg, n] = average(options.valset.scores)
      const pointer = options.parents.reduce((m, p) => Math.max(m, state.nextComponent[p] ?? 0), 0)
      // the fields that grow, checked against `Fields` (in a spread over the
      // type parameter alone their types would not be)
      const grown = {
        candidates: append(state.candidates, { ...options.candidate }),
        parents: append(state.parents, [...options.parents]),
        valScores: append(state.valScores, { ...options.valset.scores }),
        objectiveScores: append(
          state.objectiveScores,
          Frontier.aggregateObjectives(Object.values(options.valset.objectiveScores ?? {}))
        ),
        valAverages: append(state.valAverages, avg),
        valCoverage: append(state.valCoverage, n),
        nextComponent: append(state.nextComponent, pointer),
        discoveryBudget: append(state.discoveryBudget, options.discoveryBudget),
        fronts,
        fullValEvals: state.fullValEvals + 1,
        versions: append(versions, childVersions)
      } satisfies Partial<Fields>
      const next: S = { ...state, ...grown }
      // compare with the best's effective score (-Infinity when it has no coverage), as bestIndex does
      const improved = n > 0 && avg > scoreOf(state)(previousBest)
      return [improved ? { ...next, lastImprovementIteration: state.iteration } : next, idx] as const
    }
  )
}

/** Per candidate, each component's version and origin, recorded or rebuilt (`State.versionsOf`). @internal */
export const versionsOf = (state: Fields): ReadonlyArray<Genealogy.CandidateVersions> =>
  state.versions !== undefined && state.versions.length === state.candidates.length
    ? state.versions
    : Genealogy.derive(state.componentNames, state.candidates, state.parents)

/** A candidate's mean validation score; `-Infinity` when it has none (`State.scoreOf`). @internal */
export const scoreOf = (state: Fields) => (program: number): number =>
  (state.valCoverage[program] ?? 0) > 0 ? state.valAverages[program] ?? -Infinity : -Infinity

/**
 * The best candidate: highest mean validation score, then more coverage,
 * then the newest (`State.bestIndex`, where the choice among equals is
 * explained).
 *
 * @internal
 */
export const bestIndex = (state: Fields): number => {
  const score = scoreOf(state)
  const n = state.candidates.length
  // asked for on every iteration (stop conditions, acceptance): a run's
  // arrays only grow, in place while the run owns them, so for the same
  // arrays the scan goes on where the last one stopped
  const memo = bestMemo.get(state.valAverages)
  const resume = memo !== undefined && memo.coverage === state.valCoverage && memo.n <= n
  let best = resume ? memo.best : 0
  for (let i = resume ? memo.n : 1; i < n; i++) {
    const s = score(i)
    const b = score(best)
    const ci = state.valCoverage[i] ?? 0
    const cb = state.valCoverage[best] ?? 0
    // equals: the newer one, unless neither was scored at all (the seed stays)
    if (s > b || (s === b && (ci > cb || (ci === cb && ci > 0)))) best = i
  }
  bestMemo.set(state.valAverages, { coverage: state.valCoverage, n, best })
  return best
}

/** The program sets of the fronts selected by the state's frontier type (`State.frontSets`). @internal */
export const frontSets = (state: Fields): ReadonlyArray<ReadonlyArray<number>> => Frontier.programSets(state.fronts, state.frontierType)

/** The invariants every state must satisfy; the list of violations, empty when consistent (`State.checkConsistency`). @internal */
export const checkConsistency = (state: Fields): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const n = state.candidates.length
  const perCandidate = {
    parents: state.parents,
    valScores: state.valScores,
    objectiveScores: state.objectiveScores,
    valAverages: state.valAverages,
    valCoverage: state.valCoverage,
    nextComponent: state.nextComponent,
    discoveryBudget: state.discoveryBudget
  }
  for (const [name, arr] of Object.entries(perCandidate)) {
    if (arr.length !== n) problems.push(`${name} has ${arr.length} entries for ${n} candidates`)
  }
  state.parents.forEach((ps, i) => {
    for (const p of ps) if (!(p >= 0 && p < i)) problems.push(`candidate ${i} has parent ${p}, which is not an earlier candidate`)
  })
  state.candidates.forEach((c, i) => {
    const names = Object.keys(c)
    if (names.length !== state.componentNames.length || !state.componentNames.every((k) => k in c)) {
      problems.push(`candidate ${i} components [${names.join(", ")}] differ from [${state.componentNames.join(", ")}]`)
    }
  })
  for (const [key, programs] of Object.entries(state.fronts.instance.programs)) {
    if (programs.length === 0) problems.push(`front for example "${key}" is empty`)
    const best = state.fronts.instance.best[key]
    for (const p of programs) {
      if (state.valScores[p]?.[key] !== best) problems.push(`candidate ${p} is on the front of "${key}" without its best score`)
    }
  }
  if (state.metricCalls < 0 || !Number.isInteger(state.metricCalls)) problems.push(`metricCalls is ${state.metricCalls}`)
  return problems
}
