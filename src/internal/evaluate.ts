/**
 * The evaluation pool: runs a candidate on examples with bounded concurrency,
 * a per-call timeout and optional retries, through the cache, and checks the
 * adapter's contract. A failing or timed-out call never fails the pool: its
 * examples score the fallback and carry the error, and are never cached (nor
 * are examples the adapter reports in `errors`). An unrecoverable model
 * failure (`ModelUnrecoverable`) is the exception: it is not retried and
 * fails the evaluation at once.
 *
 * @internal
 */
import { Chunk, Duration, Effect, Either, Option, Schedule } from "effect"
import type { Adapter } from "../Adapter.js"
import * as Candidate from "../Candidate.js"
import type { DataLoader, DataLoaderError } from "../DataLoader.js"
import {
  AdapterContractError,
  type AdapterError,
  EvaluationTimeout,
  ModelUnrecoverable,
  type PersistenceError
} from "../Errors.js"
import type { EvaluationBatch, ObjectiveScores } from "../EvaluationBatch.js"
import type { EvaluationCache, Split } from "../EvaluationCache.js"
import { unrecoverable } from "../LanguageModel.js"

/** @internal */
export interface Outcome<T, O> {
  readonly id: string
  readonly score: number
  readonly output: Option.Option<O>
  readonly trajectory: Option.Option<T>
  readonly objectiveScores: ObjectiveScores | undefined
  readonly error: string | undefined
  readonly cached: boolean
}

/** @internal */
export interface Pool<D, T, O> {
  readonly adapter: Adapter<D, T, O>
  readonly withPermit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly chunkSize: number
  readonly timeout: Duration.Duration | undefined
  readonly retry: Schedule.Schedule<unknown, AdapterError | EvaluationTimeout> | undefined
  readonly cache: EvaluationCache<O> | undefined
  readonly fallbackScore: number
  /**
   * the example's cache key: its content hash, so that a cached result can
   * never be attached to another example (the id when absent)
   */
  readonly exampleKey?: ((split: Split, id: string) => string) | undefined
  /** write-ahead budget: made durable before an evaluation's adapter calls start */
  readonly reserve?: ((iteration: number, calls: number) => Effect.Effect<void, PersistenceError>) | undefined
  /** the fewest calls one reservation covers (the calls that can start at once) */
  readonly reserveBlock?: number | undefined
}

/** @internal */
export interface Request {
  readonly loader: { readonly name: string } & Pick<DataLoader<unknown>, "fetch">
  readonly ids: ReadonlyArray<string>
  readonly split: Split
  readonly captureTraces: boolean
  /** a short description of the call, used in contract errors */
  readonly call: string
  /**
   * counts metric calls as they are paid: an adapter call's examples when the
   * call starts, owed cache hits when they are found. A proposal interrupted
   * midway is charged what its meter shows.
   */
  readonly meter?: Meter | undefined
  /** the iteration (proposal) paying for it, recorded with cached results */
  readonly iteration?: number | undefined
}

/**
 * A running count of metric calls paid, owned by one proposal.
 *
 * @internal
 */
export interface Meter {
  paid: number
}

/** @internal */
export interface Evaluation<T, O> {
  readonly outcomes: ReadonlyArray<Outcome<T, O>>
  /**
   * the metric calls spent: examples run by the adapter (cache misses), plus
   * hits on evaluations an interrupted run paid for but never counted
   */
  readonly spent: number
}

/** A trajectory in its stored form; none when the codec cannot encode it (it is then evaluated again when needed). */
const encodeTrace = <T>(codec: NonNullable<Adapter<unknown, T, unknown>["traceCodec"]>, t: T | undefined): { trajectory?: unknown } => {
  if (t === undefined) return {}
  try {
    return { trajectory: codec.encode(t) }
  } catch {
    return {}
  }
}

const describe = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e))

const checkContract = <T, O>(
  call: string,
  size: number,
  captureTraces: boolean,
  batch: EvaluationBatch<T, O>
): Either.Either<EvaluationBatch<T, O>, AdapterContractError> => {
  const fail = (detail: string) => Either.left(new AdapterContractError({ call, detail }))
  if (batch === null || typeof batch !== "object") return fail("evaluate returned no batch")
  if (!Array.isArray(batch.scores)) return fail("scores is not an array")
  if (!Array.isArray(batch.outputs)) return fail("outputs is not an array")
  if (batch.scores.length !== size) return fail(`expected ${size} scores, got ${batch.scores.length}`)
  if (batch.outputs.length !== size) return fail(`expected ${size} outputs, got ${batch.outputs.length}`)
  const bad = batch.scores.findIndex((s) => typeof s !== "number" || !Number.isFinite(s))
  if (bad >= 0) return fail(`score at position ${bad} is ${String(batch.scores[bad])}, not a finite number`)
  if (captureTraces && (!Array.isArray(batch.trajectories) || batch.trajectories.length !== size)) {
    return fail(`captureTraces was requested: expected ${size} trajectories, got ${batch.trajectories?.length ?? "none"}`)
  }
  if (batch.errors !== undefined) {
    if (!Array.isArray(batch.errors) || batch.errors.length !== size) {
      return fail(`expected ${size} error entries, got ${Array.isArray(batch.errors) ? batch.errors.length : "no list"}`)
    }
    const badError = batch.errors.findIndex((e) => e !== undefined && typeof e !== "string")
    if (badError >= 0) return fail(`error at position ${badError} is neither a string nor undefined`)
  }
  if (batch.objectiveScores !== undefined) {
    if (!Array.isArray(batch.objectiveScores) || batch.objectiveScores.length !== size) {
      return fail(`expected ${size} objective score records, got ${batch.objectiveScores?.length}`)
    }
    for (const [i, rec] of batch.objectiveScores.entries()) {
      for (const [name, v] of Object.entries(rec ?? {})) {
        if (typeof v !== "number" || !Number.isFinite(v)) return fail(`objective "${name}" at position ${i} is ${String(v)}`)
      }
    }
  }
  return Either.right(batch)
}

/**
 * Evaluates `candidate` on `request.ids`; outcomes come back in id order.
 *
 * @internal
 */
export const evaluate = <D, T, O>(
  pool: Pool<D, T, O>,
  candidate: Candidate.Candidate,
  request: Request
): Effect.Effect<
  Evaluation<T, O>,
  AdapterContractError | DataLoaderError | PersistenceError | ModelUnrecoverable
> =>
  Effect.gen(function*() {
    const codec = pool.adapter.traceCodec
    // a traced evaluation is served from the cache only to the iteration that
    // paid for it (a proposal re-launched after a crash), and only with its
    // stored trajectory: anything else is evaluated as the uninterrupted run would
    const useCache = pool.cache !== undefined && (!request.captureTraces || (codec !== undefined && request.iteration !== undefined))
    const hash = useCache ? Candidate.hash(candidate) : ""
    const keyOf = pool.exampleKey === undefined
      ? (id: string) => ({ candidateHash: hash, split: request.split, id })
      : (id: string) => ({ candidateHash: hash, split: request.split, id, contentHash: pool.exampleKey!(request.split, id) })
    const results = new Map<number, Outcome<T, O>>()
    const missing: Array<number> = []
    let owedHits = 0
    if (useCache) {
      const hits = yield* Effect.forEach(
        request.ids,
        (id) => pool.cache!.get({ ...keyOf(id), requestedBy: request.iteration, traced: request.captureTraces })
      )
      hits.forEach((hit, i) => {
        let trajectory = Option.none<T>()
        if (Option.isSome(hit) && request.captureTraces) {
          if (hit.value.iteration !== request.iteration || hit.value.trajectory === undefined) hit = Option.none()
          else {
            try {
              trajectory = Option.some(codec!.decode(hit.value.trajectory))
            } catch {
              hit = Option.none()
            }
          }
        }
        if (Option.isSome(hit)) {
          if (hit.value.owed === true) {
            owedHits++
            if (request.meter !== undefined) request.meter.paid++
          }
          results.set(i, {
            id: request.ids[i]!,
            score: hit.value.score,
            output: Option.some(hit.value.output),
            trajectory,
            objectiveScores: hit.value.objectiveScores,
            error: undefined,
            cached: true
          })
        } else missing.push(i)
      })
    } else {
      request.ids.forEach((_, i) => missing.push(i))
    }
    // duplicate ids (merge subsamples may repeat) are evaluated once
    const uniqueMissing: Array<number> = []
    const firstOf = new Map<string, number>()
    for (const i of missing) {
      const id = request.ids[i]!
      if (!firstOf.has(id)) {
        firstOf.set(id, i)
        uniqueMissing.push(i)
      }
    }
    const examples = uniqueMissing.length === 0
      ? []
      : yield* (request.loader.fetch(uniqueMissing.map((i) => request.ids[i]!)) as Effect.Effect<ReadonlyArray<D>, DataLoaderError>)
    const chunks = Chunk.toReadonlyArray(
      Chunk.chunksOf(Chunk.fromIterable(uniqueMissing.map((pos, k) => [pos, examples[k]!] as const)), pool.chunkSize)
    ).map(Chunk.toReadonlyArray)

    // The write-ahead budget: a call is on record before it starts. Calls are
    // reserved in blocks (taken by the chunk that needs one, while it holds
    // its permit, at least half the evaluation): one or two durable appends
    // per evaluation, and a crash is charged at most the block's calls that
    // had not started. An evaluation that ends
    // early (a pause, an unrecoverable failure) gives back what it reserved
    // and never started.
    let started = 0
    // calls let through to start (a chunk is admitted before its call starts)
    let admitted = 0
    let reservedCalls = 0
    const reserve = pool.reserve !== undefined && uniqueMissing.length > 0 ? pool.reserve : undefined
    const block = Math.max(pool.reserveBlock ?? 1, Math.ceil(uniqueMissing.length / 2))
    const reserveFor = (calls: number): Effect.Effect<void, PersistenceError> =>
      Effect.suspend(() => {
        admitted += calls
        if (reserve === undefined || admitted <= reservedCalls) return Effect.void
        const more = Math.min(uniqueMissing.length - reservedCalls, Math.max(block, admitted - reservedCalls))
        // counted before the append, so that chunks starting meanwhile see it
        reservedCalls += more
        return reserve(request.iteration ?? 0, more)
      })

    let fatal: ModelUnrecoverable | undefined = undefined
    const runChunk = (chunk: ReadonlyArray<readonly [number, D]>) => {
      // an unrecoverable model failure leaves the error channel before the
      // timeout and the retries: no retry can fix it, and it fails the
      // whole evaluation (and so the run) instead of scoring the fallback.
      // It is a `ModelUnrecoverable`, or an `AdapterError` whose cause is a
      // task-model error no retry can fix (a custom adapter that wrapped an
      // `LlmAuthenticationError`, say).
      let call: Effect.Effect<Either.Either<EvaluationBatch<T, O>, ModelUnrecoverable>, AdapterError | EvaluationTimeout> =
        Effect.suspend(() =>
          pool.adapter.evaluate(chunk.map(([, d]) => d), candidate, { captureTraces: request.captureTraces })
        ).pipe(
          Effect.map(Either.right),
          Effect.catchAll((e) => {
            if (e instanceof ModelUnrecoverable) return Effect.succeed(Either.left(e))
            return Option.match(unrecoverable(e.cause, "task"), {
              onSome: (u) => Effect.succeed(Either.left(u)),
              onNone: () => Effect.fail(e)
            })
          })
        )
      if (pool.timeout !== undefined) {
        const millis = Duration.toMillis(pool.timeout)
        call = Effect.timeoutFail(call, {
          duration: pool.timeout,
          onTimeout: () => new EvaluationTimeout({ call: request.call, millis })
        })
      }
      if (pool.retry !== undefined) call = Effect.retry(call, pool.retry)
      const meter = request.meter
      // paid once the call starts (retries of the same examples are not new metric calls)
      call = Effect.zipRight(
        Effect.sync(() => {
          started += chunk.length
          if (meter !== undefined) meter.paid += chunk.length
        }),
        call
      )
      // the permit is taken before the timeout starts: queueing time must not
      // count against the call
      // once a call failed unrecoverably, chunks still waiting for a permit
      // do not start: the evaluation is over
      // (noted while the permit is held, before the next chunk can take it)
      const guarded = Effect.suspend(() =>
        fatal === undefined
          ? Effect.zipRight(
            reserveFor(chunk.length),
            Effect.tap(Effect.either(call), (result) => {
              if (Either.isRight(result) && Either.isLeft(result.right)) fatal ??= result.right.left
            })
          )
          : Effect.succeed(Either.right(Either.left(fatal)))
      )
      return pool.withPermit(guarded).pipe(
        Effect.flatMap((result): Effect.Effect<
          Either.Either<EvaluationBatch<T, O>, string>,
          AdapterContractError | PersistenceError | ModelUnrecoverable
        > => {
          if (Either.isLeft(result)) return Effect.succeed(Either.left(describe(result.left)))
          if (Either.isLeft(result.right)) return Effect.fail(result.right.left)
          return Effect.flatMap(checkContract(request.call, chunk.length, request.captureTraces, result.right.right), (batch) =>
            // cached as soon as the chunk is done: a crash loses only calls still in flight
            Effect.as(storeChunk(chunk, batch), Either.right(batch)))
        })
      )
    }

    const cacheHash = pool.cache === undefined ? "" : hash || Candidate.hash(candidate)
    // only results are cached: a failed example (a failed call, or one the
    // adapter reports in `errors`) is evaluated again next time
    const storeChunk = (chunk: ReadonlyArray<readonly [number, D]>, batch: EvaluationBatch<T, O>) =>
      pool.cache === undefined
        ? Effect.void
        : Effect.forEach(chunk, ([pos], k) =>
          batch.errors?.[k] !== undefined
            ? Effect.void
            : pool.cache!.set({ ...keyOf(request.ids[pos]!), candidateHash: cacheHash }, {
              output: batch.outputs[k]!,
              score: batch.scores[k]!,
              objectiveScores: batch.objectiveScores?.[k],
              iteration: request.iteration,
              ...(request.captureTraces && codec !== undefined ? encodeTrace(codec, batch.trajectories?.[k]) : {})
            }), { discard: true })

    const runAll = Effect.forEach(chunks, runChunk, { concurrency: "unbounded" })
    const chunkResults = yield* (reserve === undefined ? runAll : Effect.onExit(runAll, () =>
      started < reservedCalls
        ? Effect.ignore(reserve(request.iteration ?? 0, started - reservedCalls))
        : Effect.void))
    for (const [c, chunk] of chunks.entries()) {
      const result = chunkResults[c]!
      for (const [k, [pos]] of chunk.entries()) {
        const id = request.ids[pos]!
        const error = Either.isLeft(result) ? result.left : result.right.errors?.[k]
        if (error !== undefined) {
          results.set(pos, {
            id,
            score: pool.fallbackScore,
            output: Option.none(),
            trajectory: Option.none(),
            objectiveScores: undefined,
            error,
            cached: false
          })
        } else if (Either.isRight(result)) {
          const batch = result.right
          const outcome: Outcome<T, O> = {
            id,
            score: batch.scores[k]!,
            output: Option.some(batch.outputs[k]!),
            trajectory: batch.trajectories ? Option.some(batch.trajectories[k]!) : Option.none(),
            objectiveScores: batch.objectiveScores?.[k],
            error: undefined,
            cached: false
          }
          results.set(pos, outcome)
        }
      }
    }
    const outcomes = request.ids.map((id, i) => {
      const own = results.get(i)
      if (own !== undefined) return own
      // a repeated id: same outcome as its first occurrence
      return results.get(firstOf.get(id)!)!
    })
    return { outcomes, spent: uniqueMissing.length + owedHits }
  })
