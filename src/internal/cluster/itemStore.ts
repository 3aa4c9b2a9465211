/**
 * Results of single items (adapter calls) of a request, kept by runners in
 * the cluster's SQL storage as soon as each finishes. The cluster stores a
 * request's reply only when the whole request is done; when a runner dies
 * mid-request, the survivor that gets the request again finds the items
 * that had finished here and runs only the others, so no finished
 * evaluation is paid twice.
 *
 * Writes are batched and never delay a reply: the items that finished in
 * the last `lingerMillis` go in one statement, and items whose request is
 * done by then are not written at all (`settle`): the request's reply, which
 * the cluster stores, covers them. A short evaluation (milliseconds) so
 * costs no write of its own; before, one INSERT per finished item was most
 * of a runner's CPU per example. A runner killed within `lingerMillis` of
 * finishing an item runs that item again elsewhere (as it did before within
 * the write's own latency). A write that fails only costs a re-evaluation
 * after a crash, so it is logged, not raised. Rows older than a day are
 * removed (requests are answered from the cluster's own storage after).
 *
 * @internal
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import { ConfigError } from "../../Errors.js"
import { withSchemaLock } from "./postgres.js"
import { ItemResult } from "./protocol.js"

/** @internal */
export interface ItemStore {
  /** the stored results among `keys` */
  readonly get: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, ItemResult>>
  /** stores a result (in the background, within `lingerMillis`) */
  readonly put: (key: string, result: ItemResult) => Effect.Effect<void>
  /** the request holding `keys` is done: those not written yet need not be (its reply covers them) */
  readonly settle: (keys: ReadonlyArray<string>) => Effect.Effect<void>
}

/** How long a finished item waits to be written with others (and to be covered by its request's reply). @internal */
export const lingerMillis = 25

/** @internal */
export const table = "gepa_cluster_items"

const retentionMs = 24 * 60 * 60 * 1000
const encode = Schema.encodeSync(Schema.parseJson(ItemResult))
const decode = Schema.decodeUnknownOption(Schema.parseJson(ItemResult))

/** Creates the table (run under the storage's schema lock). @internal */
export const migrate = (sql: SqlClient) =>
  sql.unsafe(
    `CREATE TABLE IF NOT EXISTS ${table} (item_key VARCHAR(80) PRIMARY KEY, reply TEXT NOT NULL, created_at BIGINT NOT NULL)`
  )

/** A store in process memory: for a runner without SQL storage (tests, `TestRunner`). @internal */
export const memory = (): ItemStore => {
  const rows = new Map<string, ItemResult>()
  return {
    get: (keys) =>
      Effect.sync(() =>
        new Map(keys.flatMap((k) => {
          const row = rows.get(k)
          return row === undefined ? [] : [[k, row] as const]
        }))
      ),
    put: (key, result) => Effect.sync(() => void rows.set(key, result)),
    settle: () => Effect.void
  }
}

/** The SQL store; its writer fiber lives in the current scope. @internal */
export const sql = (client: SqlClient) =>
  Effect.gen(function*() {
    yield* withSchemaLock(client, migrate(client)).pipe(
      Effect.mapError((e) => new ConfigError({ field: "storage", detail: `could not create ${table}: ${e.message}` }))
    )
    // finished items not written yet, by key; a request that is done takes its own out (settle)
    const pending = new Map<string, ItemResult>()
    const wake = yield* Effect.makeLatch(false)
    const write = (rows: ReadonlyArray<readonly [string, ItemResult]>) => {
      const now = Date.now()
      return client`INSERT INTO ${client(table)} ${
        client.insert(rows.map(([key, result]) => ({ item_key: key, reply: encode(result), created_at: now })))
      } ON CONFLICT (item_key) DO NOTHING`
    }
    // everything waiting, at most 256 rows a statement (SQLite's bound on variables is 32,766 since 3.32; 3 a row)
    const flush = Effect.suspend(() => {
      const rows = [...pending]
      pending.clear()
      return Effect.forEach(
        Array.from({ length: Math.ceil(rows.length / 256) }, (_, i) => rows.slice(i * 256, (i + 1) * 256)),
        write,
        { discard: true }
      )
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Could not store finished evaluations (only a crash would repeat them)", cause))
    )
    yield* Effect.gen(function*() {
      yield* wake.await
      yield* Effect.sleep(lingerMillis)
      wake.unsafeClose()
      yield* flush
    }).pipe(Effect.forever, Effect.forkScoped)
    // a runner that stops (SIGTERM) writes what finished before its requests move to another runner
    yield* Effect.addFinalizer(() => flush)
    yield* client`DELETE FROM ${client(table)} WHERE created_at < ${Date.now() - retentionMs}`.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Could not remove old stored evaluations", cause)),
      Effect.forkScoped
    )
    const store: ItemStore = {
      get: (keys) =>
        keys.length === 0 ? Effect.succeed(new Map()) : client<{ readonly item_key: string; readonly reply: string }>`
          SELECT item_key, reply FROM ${client(table)} WHERE item_key IN ${client.in(keys)}`.pipe(
          Effect.map((rows) => {
            const found = new Map<string, ItemResult>()
            for (const row of rows) {
              const result = decode(row.reply)
              if (result._tag === "Some") found.set(row.item_key, result.value)
            }
            return found
          }),
          // a failed read costs only a re-evaluation
          Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("Could not read stored evaluations (they run again)", cause), new Map()))
        ),
      put: (key, result) =>
        Effect.sync(() => {
          pending.set(key, result)
          wake.unsafeOpen()
        }),
      settle: (keys) =>
        Effect.sync(() => {
          for (const key of keys) pending.delete(key)
        })
    }
    return store
  })
