/**
 * The cluster's SQL storage from one address: a SQLite file for a cluster on
 * one machine, a Postgres URL for several machines. Both drivers are optional
 * peers and loaded only here, on first use.
 *
 * @internal
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Context, Effect, Layer, Redacted } from "effect"
import { ConfigError } from "../../Errors.js"

/** @internal */
export type StorageKind = { readonly _tag: "Sqlite"; readonly filename: string } | {
  readonly _tag: "Postgres"
  readonly url: Redacted.Redacted<string>
}

/** Parses a storage address; a password in a URL stays redacted. @internal */
export const parse = (address: string): StorageKind | ConfigError => {
  const trimmed = address.trim()
  if (trimmed === "") return new ConfigError({ field: "storage", detail: "empty storage address" })
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return { _tag: "Postgres", url: Redacted.make(trimmed) }
  const filename = trimmed.replace(/^sqlite:(\/\/)?/i, "")
  if (filename === "" || filename === ":memory:") {
    return new ConfigError({ field: "storage", detail: "a cluster needs a SQLite file shared by its processes, not an in-memory database" })
  }
  return { _tag: "Sqlite", filename }
}

/** A redacted description of a storage address, for logs. @internal */
export const describe = (kind: StorageKind): string =>
  kind._tag === "Sqlite" ? `sqlite:${kind.filename}` : "postgres (url redacted)"

interface PgModule {
  readonly layer: (options: { readonly url: Redacted.Redacted<string> }) => Layer.Layer<SqlClient, unknown>
}

// a variable specifier: @effect/sql-pg is an optional peer that need not be installed to type-check
const pgModule = "@effect/sql-pg/PgClient"

const missing = (pkg: string) => (cause: unknown) =>
  new ConfigError({
    field: "storage",
    detail: `needs the optional package ${pkg} (npm install ${pkg}): ${cause instanceof Error ? cause.message : String(cause)}`
  })

/** @internal */
export const layer = (kind: StorageKind): Layer.Layer<SqlClient, ConfigError> =>
  kind._tag === "Sqlite"
    ? Layer.unwrapEffect(
      Effect.tryPromise({ try: () => import("@effect/sql-sqlite-node/SqliteClient"), catch: missing("@effect/sql-sqlite-node") })
        .pipe(Effect.map((m) =>
          m.layer({ filename: kind.filename }).pipe(
            // WAL with synchronous=NORMAL: every commit survives the death of any process (the failure a
            // cluster on one machine must survive); only an OS crash can lose the last commits. With the
            // default FULL, each commit waits for an fsync while holding the database's one write lock,
            // which all processes share: that, not the evaluations, then sets the cluster's pace.
            Layer.tap((ctx) => Context.get(ctx, m.SqliteClient).unsafe("PRAGMA synchronous = NORMAL")),
            Layer.mapError((e) => new ConfigError({ field: "storage", detail: `sqlite:${kind.filename}: ${e.message}` }))
          )
        ))
    )
    : Layer.unwrapEffect(
      Effect.tryPromise({ try: () => import(pgModule) as Promise<PgModule>, catch: missing("@effect/sql-pg") }).pipe(
        Effect.map((m) =>
          m.layer({ url: kind.url }).pipe(
            Layer.mapError((e) =>
              new ConfigError({
                field: "storage",
                // the driver's message may quote the URL: scrub it
                detail: `postgres: ${String(e instanceof Error ? e.message : e).split(Redacted.value(kind.url)).join("<redacted>")}`
              })
            )
          )
        )
      )
    )
