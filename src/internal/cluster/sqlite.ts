/**
 * The cluster's SQLite client: `@effect/sql-sqlite-node`'s connection under
 * a `SqlClient` of our own whose transactions begin with `BEGIN IMMEDIATE`.
 *
 * Why: the cluster reads pending messages with SELECT then UPDATE in one
 * transaction. Begun with a deferred `BEGIN`, that transaction reads a
 * snapshot first; when another process commits before the UPDATE, SQLite
 * cannot upgrade the stale snapshot to a writer and fails at once with
 * SQLITE_BUSY_SNAPSHOT ("database is locked"), which no busy timeout can
 * wait out. `BEGIN IMMEDIATE` takes the write lock before the first read,
 * so a second writer waits (up to the busy timeout) instead of failing.
 * Transactions are a few statements long, so the waits are short.
 *
 * @internal
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, ExecutionStrategy, Exit, Layer, Schedule, Scope } from "effect"
import type { ConfigError } from "../../Errors.js"
import { importOptional } from "./optional.js"

/** @internal */
export interface SqliteOptions {
  readonly filename: string
  /**
   * how long a statement waits for another process's write lock. better-sqlite3
   * waits synchronously (the event loop stops meanwhile), so this stays well
   * under the shard lock expiration.
   */
  readonly busyTimeoutMs: number
}

/** @internal */
export const defaultBusyTimeoutMs = 2_000

/** @internal */
export const layer = (options: SqliteOptions): Layer.Layer<SqlClient, ConfigError | SqlError> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const [Sqlite, Client, Statement, Reactivity] = yield* importOptional("@effect/sql-sqlite-node", () =>
      Promise.all([
        import("@effect/sql-sqlite-node/SqliteClient"),
        import("@effect/sql/SqlClient"),
        import("@effect/sql/Statement"),
        import("@effect/experimental/Reactivity")
      ]))
    return Layer.scoped(
      Client.SqlClient,
      Effect.gen(function*() {
        // one connection per process (as SqliteClient has), guarded by its semaphore
        const inner = yield* openRetrying(Sqlite.make({ filename: options.filename }))
        // WAL comes from SqliteClient (journal_mode = WAL on open)
        yield* inner.unsafe(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`)
        // WAL with synchronous=NORMAL: every commit survives the death of any process (the failure a
        // cluster on one machine must survive); only an OS crash can lose the last commits. With the
        // default FULL, each commit waits for an fsync while holding the database's one write lock,
        // which all processes share: that, not the evaluations, then sets the cluster's pace.
        yield* inner.unsafe("PRAGMA synchronous = NORMAL")
        return yield* Client.make({
          // a statement outside a transaction waits for a transaction in progress, then runs
          acquirer: Effect.scoped(inner.reserve),
          transactionAcquirer: inner.reserve,
          compiler: Statement.makeCompilerSqlite(),
          beginTransaction: "BEGIN IMMEDIATE",
          spanAttributes: [["db.system.name", "sqlite"]]
        })
      })
    ).pipe(Layer.provide(Reactivity.layer))
  }))

// SQLite's "database is locked" (SQLITE_BUSY), as better-sqlite3 throws it
const isBusy = (u: unknown): boolean => typeof u === "object" && u !== null && "code" in u && typeof u.code === "string" && u.code.startsWith("SQLITE_BUSY")

/**
 * Opens the connection, again while the file is busy. SqliteClient switches
 * the file to WAL on open; processes that open a new file at the same
 * instant can get "database is locked" from that switch (thrown, so a
 * defect) whatever the busy timeout: seen with 4 runners started together
 * on a loaded machine. Each attempt has a scope of its own, so a failed
 * one closes its connection at once.
 */
const openRetrying = <A, R>(open: Effect.Effect<A, never, R | Scope.Scope>): Effect.Effect<A, never, R | Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const attempt = Effect.gen(function*() {
      const child = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      return yield* open.pipe(
        Scope.extend(child),
        Effect.catchAllDefect((defect) => (isBusy(defect) ? Effect.fail(defect) : Effect.die(defect))),
        Effect.onError((cause) => Scope.close(child, Exit.failCause(cause)))
      )
    })
    return yield* attempt.pipe(
      Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 100 }),
      Effect.catchAll((busy) => Effect.die(busy))
    )
  })
