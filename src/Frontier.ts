/**
 * Pareto frontiers: for each key (a validation example, an objective, or an
 * (example, objective) pair) the best score seen so far and the set of
 * candidates that reach it. A higher score replaces the set; an equal score
 * joins it.
 *
 * @since 0.1.0
 */
import { Either, Schema } from "effect"
import { MissingObjectiveScores } from "./Errors.js"
import type { ObjectiveScores } from "./EvaluationBatch.js"
import { at } from "./internal/shared/invariant.js"

/**
 * Which frontier drives parent selection and merge pairing:
 * - `instance`: one front per validation example (the default),
 * - `objective`: one front per objective (aggregate over examples),
 * - `hybrid`: both of the above,
 * - `cartesian`: one front per (example, objective) pair.
 *
 * @since 0.1.0
 * @category models
 */
export const FrontierType = Schema.Literal("instance", "objective", "hybrid", "cartesian")

/**
 * One of the frontier kinds of `FrontierType`.
 *
 * @since 0.1.0
 * @category models
 */
export type FrontierType = typeof FrontierType.Type

/**
 * Best score and the candidates reaching it, per key. Program lists are kept
 * sorted ascending and free of duplicates.
 *
 * @since 0.1.0
 * @category models
 */
export const FrontTable = Schema.Struct({
  best: Schema.Record({ key: Schema.String, value: Schema.Number }),
  programs: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Number) })
})

/**
 * One frontier's table, as decoded from `FrontTable`.
 *
 * @since 0.1.0
 * @category models
 */
export type FrontTable = typeof FrontTable.Type

/**
 * All the fronts the optimizer tracks. `cartesian` stays empty unless the
 * frontier type is `cartesian`.
 *
 * @since 0.1.0
 * @category models
 */
export const Fronts = Schema.Struct({
  instance: FrontTable,
  objective: FrontTable,
  cartesian: FrontTable
})

/**
 * Every frontier of a run, as decoded from `Fronts`.
 *
 * @since 0.1.0
 * @category models
 */
export type Fronts = typeof Fronts.Type

/**
 * A frontier table with no program on it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyTable: FrontTable = { best: {}, programs: {} }

/**
 * Every frontier empty: the fronts before the seed is evaluated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Fronts = { instance: emptyTable, objective: emptyTable, cartesian: emptyTable }

/**
 * The key of an (example, objective) pair in the cartesian table. JSON keeps
 * it unambiguous whatever characters the ids contain.
 *
 * @since 0.1.0
 * @category utils
 */
export const cartesianKey = (valId: string, objective: string): string => JSON.stringify([valId, objective])

/**
 * How a program list grows by one program at its end: a copy by default. The
 * engine passes one that appends in place to lists no state it handed out
 * holds (see `State.addCandidate`'s `append`): fronts of many ties hold
 * thousands of programs, and copying every front a new candidate joins was
 * the largest allocation of a long run.
 *
 * @since 0.3.0
 * @category models
 */
export type Append = <A>(array: ReadonlyArray<A>, item: A) => ReadonlyArray<A>

const copyAppend: Append = (array, item) => [...array, item]

const noPrograms: ReadonlyArray<number> = []

const insertSorted = (programs: ReadonlyArray<number>, idx: number, append: Append): ReadonlyArray<number> => {
  const last = programs.length === 0 ? -1 : programs[programs.length - 1]!
  // the common case, a new program (the largest index so far): appended
  // without a search
  if (last < idx) return append(programs, idx)
  if (programs.includes(idx)) return programs
  const out = programs.slice()
  let i = out.length
  while (i > 0 && at(out, i - 1) > idx) i--
  out.splice(i, 0, idx)
  return out
}

/**
 * Records `program`'s scores in a table with the reference rule: a strictly
 * higher score replaces the key's program set, an equal score joins it.
 *
 * @since 0.1.0
 * @category updates
 */
export const updateTable = (
  table: FrontTable,
  scores: Iterable<readonly [string, number]>,
  program: number,
  append: Append = copyAppend
): FrontTable => {
  let best: Record<string, number> | undefined
  let programs: Record<string, ReadonlyArray<number>> | undefined
  for (const [key, score] of scores) {
    const prev = table.best[key]
    if (prev === undefined || score > prev) {
      best ??= { ...table.best }
      programs ??= { ...table.programs }
      best[key] = score
      // through `append`: a list the engine can then grow in place
      programs[key] = append(noPrograms, program)
    } else if (score === prev) {
      programs ??= { ...table.programs }
      programs[key] = insertSorted(programs[key] ?? [], program, append)
    }
  }
  return best === undefined && programs === undefined
    ? table
    : { best: best ?? table.best, programs: programs ?? table.programs }
}

/**
 * Mean of each objective over the examples that report it.
 *
 * @since 0.1.0
 * @category utils
 */
export const aggregateObjectives = (perExample: Iterable<ObjectiveScores>): ObjectiveScores => {
  const sums = new Map<string, { total: number; count: number }>()
  for (const scores of perExample) {
    for (const [name, value] of Object.entries(scores)) {
      const sum = sums.get(name)
      if (sum === undefined) sums.set(name, { total: value, count: 1 })
      else {
        sum.total += value
        sum.count++
      }
    }
  }
  const out: Record<string, number> = {}
  for (const [name, { count, total }] of sums) out[name] = total / count
  return out
}

/**
 * What a newly added program contributes to the fronts.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProgramScores {
  readonly valScores: Readonly<Record<string, number>>
  /** Per-example objective scores, when the adapter reports them. */
  readonly valObjectiveScores?: Readonly<Record<string, ObjectiveScores>> | undefined
}

/**
 * Adds a program's validation results to every tracked front. Frontier types
 * other than `instance` need objective scores and fail clearly without them.
 * `append` grows a front the program joins (default a copy, see `Append`).
 *
 * @since 0.1.0
 * @category updates
 */
export const addProgram = (
  fronts: Fronts,
  frontierType: FrontierType,
  program: number,
  scores: ProgramScores,
  call = "evaluate",
  append: Append = copyAppend
): Either.Either<Fronts, MissingObjectiveScores> => {
  const perExample = scores.valObjectiveScores
  const hasObjectives = perExample !== undefined && Object.keys(perExample).length > 0
  if (frontierType !== "instance" && !hasObjectives) {
    return Either.left(new MissingObjectiveScores({ frontierType, call }))
  }
  const instance = updateTable(fronts.instance, Object.entries(scores.valScores), program, append)
  const objective = hasObjectives
    ? updateTable(fronts.objective, Object.entries(aggregateObjectives(Object.values(perExample))), program, append)
    : fronts.objective
  let cartesian = fronts.cartesian
  // (a cartesian front has objective scores: checked above)
  if (frontierType === "cartesian" && perExample !== undefined) {
    const pairs: Array<readonly [string, number]> = []
    for (const [valId, objectives] of Object.entries(perExample)) {
      for (const [name, value] of Object.entries(objectives)) pairs.push([cartesianKey(valId, name), value])
    }
    cartesian = updateTable(cartesian, pairs, program, append)
  }
  return Either.right({ instance, objective, cartesian })
}

/**
 * The program sets of the fronts that the frontier type selects from.
 *
 * @since 0.1.0
 * @category getters
 */
export const programSets = (fronts: Fronts, frontierType: FrontierType): ReadonlyArray<ReadonlyArray<number>> => {
  switch (frontierType) {
    case "instance":
      return Object.values(fronts.instance.programs)
    case "objective":
      return Object.values(fronts.objective.programs)
    case "hybrid":
      return [...Object.values(fronts.instance.programs), ...Object.values(fronts.objective.programs)]
    case "cartesian":
      return Object.values(fronts.cartesian.programs)
  }
}
