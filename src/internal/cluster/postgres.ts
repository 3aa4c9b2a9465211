/**
 * The cluster's Postgres client: `@effect/sql-pg`'s pool under a
 * `SqlClient` of our own, for three reasons.
 *
 * - A connection failure names its cause (refused, authentication, unknown
 *   database, timeout) and the server, never the password; the driver's
 *   own error says only "Failed to connect".
 * - Statements on one reserved connection run one at a time: the cluster
 *   keeps its shard locks on a reserved connection and queries it from
 *   several fibers, which `pg` would queue itself with a deprecation warning
 *   per process.
 * - `withSchemaLock`: processes started at the same instant on an empty
 *   database race on the cluster's `CREATE TABLE IF NOT EXISTS` (Postgres
 *   can fail one with a duplicate key in its catalog); the cluster's
 *   storage is built under a transaction-free advisory lock.
 *
 * @internal
 */
import type * as Reactivity from "@effect/experimental/Reactivity"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Duration, Effect, Layer, Redacted, type Scope } from "effect"
import { ConfigError } from "../../Errors.js"
import { importOptional } from "./optional.js"

interface PgModule {
  readonly make: (options: {
    readonly url: Redacted.Redacted<string>
    readonly connectTimeout?: Duration.DurationInput
    readonly applicationName?: string
  }) => Effect.Effect<SqlClient, unknown, Scope.Scope | Reactivity.Reactivity>
  readonly makeCompiler: () => unknown
}

// a variable specifier: @effect/sql-pg is an optional peer that need not be installed to type-check users' code
const pgModule = "@effect/sql-pg/PgClient"

/** The server a URL points at, without credentials: `host:port/database as user`. @internal */
export const target = (url: string): string => {
  try {
    const u = new URL(url)
    const db = decodeURIComponent(u.pathname.replace(/^\//, "")) || "(default database)"
    const user = decodeURIComponent(u.username) || "(default user)"
    return `${u.hostname}:${u.port || "5432"}/${db} as ${user}`
  } catch {
    return "(unparsable URL)"
  }
}

/** Removes the URL and its password (raw and decoded) from `text`. @internal */
export const scrub = (text: string, url: string): string => {
  let out = text.split(url).join("postgres://<redacted>")
  try {
    const password = new URL(url).password
    for (const p of new Set([password, decodeURIComponent(password)])) {
      if (p.length > 0) out = out.split(p).join("<redacted>")
    }
  } catch {
    // not a URL: nothing more to remove
  }
  return out
}

const causes = (e: unknown): ReadonlyArray<{ readonly code?: string; readonly message: string }> => {
  if (e instanceof AggregateError && e.errors.length > 0) return e.errors.flatMap(causes)
  if (typeof e === "object" && e !== null) {
    const r = e as { code?: unknown; message?: unknown; cause?: unknown }
    // SqlError wraps the driver's error in `cause`
    if (r.cause !== undefined && r.cause !== null && (r as { _tag?: unknown })._tag === "SqlError") return causes(r.cause)
    const message = typeof r.message === "string" && r.message !== "" ? r.message : String(e)
    return [{ ...(typeof r.code === "string" ? { code: r.code } : {}), message }]
  }
  return [{ message: String(e) }]
}

const kinds: Record<string, string> = {
  ECONNREFUSED: "connection refused (is the server running and listening there?)",
  ENOTFOUND: "unknown host",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  "28P01": "authentication failed",
  "28000": "authentication rejected",
  "3D000": "unknown database",
  "53300": "too many connections"
}

/** One line naming why a connection failed, with the password scrubbed. @internal */
export const describeFailure = (e: unknown, url: string): string => {
  const seen = new Set<string>()
  const parts: Array<string> = []
  for (const c of causes(e)) {
    const line = c.code !== undefined && kinds[c.code] !== undefined ? `${kinds[c.code]}: ${c.message}` : c.message
    if (!seen.has(line)) {
      seen.add(line)
      parts.push(line)
    }
  }
  return scrub(`postgres ${target(url)}: could not connect: ${parts.join("; ")}`, url)
}

/** Statements on `conn` run one at a time, in order. */
const serialized = (conn: Connection): Effect.Effect<Connection> =>
  Effect.map(Effect.makeSemaphore(1), (one) => ({
    execute: (sql, params, transformRows) => one.withPermits(1)(conn.execute(sql, params, transformRows)),
    executeRaw: (sql, params) => one.withPermits(1)(conn.executeRaw(sql, params)),
    executeValues: (sql, params) => one.withPermits(1)(conn.executeValues(sql, params)),
    executeUnprepared: (sql, params, transformRows) => one.withPermits(1)(conn.executeUnprepared(sql, params, transformRows)),
    executeStream: (sql, params, transformRows) => conn.executeStream(sql, params, transformRows)
  }))

/** @internal */
export const layer = (url: Redacted.Redacted<string>): Layer.Layer<SqlClient, ConfigError> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const Pg = yield* importOptional("@effect/sql-pg", () => import(pgModule) as Promise<PgModule>)
    const [Client, Reactivity] = yield* importOptional("@effect/sql", () =>
      Promise.all([import("@effect/sql/SqlClient"), import("@effect/experimental/Reactivity")]))
    return Layer.scoped(
      Client.SqlClient,
      Effect.gen(function*() {
        const pool = yield* Pg.make({ url, connectTimeout: Duration.seconds(10), applicationName: "effect-gepa cluster" }).pipe(
          Effect.mapError((e) =>
            new ConfigError({ field: "storage", detail: describeFailure(e, Redacted.value(url)) })
          )
        )
        const reserve = Effect.flatMap(pool.reserve, serialized)
        return yield* Client.make({
          // one pooled connection per statement (held for the statement only), as the driver's pool.query does
          acquirer: reserve,
          transactionAcquirer: reserve,
          compiler: Pg.makeCompiler() as Parameters<typeof Client.make>[0]["compiler"],
          spanAttributes: [["db.system.name", "postgresql"]]
        })
      })
    ).pipe(Layer.provide(Reactivity.layer))
  }))

// any fixed 64-bit key: "gepa" "schema" in ASCII
const schemaLockKey = "7450121062375085"

/**
 * Runs `effect` while holding a session advisory lock on its own
 * connection, so that processes starting together create the cluster's
 * tables one after the other. Other dialects run `effect` as it is.
 *
 * @internal
 */
export const withSchemaLock = <A, E, R>(sql: SqlClient, effect: Effect.Effect<A, E, R>) =>
  sql.onDialectOrElse({
    pg: () =>
      Effect.scoped(Effect.gen(function*() {
        const conn = yield* sql.reserve
        yield* conn.executeRaw(`SELECT pg_advisory_lock(${schemaLockKey})`, [])
        return yield* effect.pipe(
          Effect.ensuring(Effect.ignore(conn.executeRaw(`SELECT pg_advisory_unlock(${schemaLockKey})`, [])))
        )
      })),
    orElse: () => effect
  })
