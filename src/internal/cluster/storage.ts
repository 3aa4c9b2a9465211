/**
 * The cluster's SQL storage from one address: a SQLite file for a cluster on
 * one machine, a Postgres URL for several machines. Both drivers are optional
 * peers and loaded only here, on first use (see `sqlite.ts`, `postgres.ts`
 * for what each client adds to the driver's).
 *
 * @internal
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Layer, Redacted } from "effect"
import { ConfigError } from "../../Errors.js"
import * as postgres from "./postgres.js"
import * as sqlite from "./sqlite.js"

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
  kind._tag === "Sqlite" ? `sqlite:${kind.filename}` : `postgres ${postgres.target(Redacted.value(kind.url))}`

/** @internal */
export const layer = (kind: StorageKind): Layer.Layer<SqlClient, ConfigError> =>
  kind._tag === "Sqlite"
    ? sqlite.layer({ filename: kind.filename, busyTimeoutMs: sqlite.defaultBusyTimeoutMs }).pipe(
      Layer.mapError((e) => e instanceof ConfigError ? e : new ConfigError({ field: "storage", detail: `sqlite:${kind.filename}: ${sqliteCause(e)}` }))
    )
    : postgres.layer(kind.url)

const sqliteCause = (e: { readonly message: string; readonly cause?: unknown }): string =>
  e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message

/** @internal */
export const withSchemaLock = postgres.withSchemaLock
