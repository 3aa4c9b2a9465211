/**
 * The cluster layer of a process (a runner, or a client that hosts no
 * entity): `@effect/cluster` over sockets and the SQL storage (both in its
 * output: runners keep finished evaluations in the storage too), built while
 * holding the storage's schema lock so that processes starting together
 * on an empty database create its tables one after the other.
 *
 * @internal
 */
import type { Sharding } from "@effect/cluster/Sharding"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { ConfigError } from "../../Errors.js"
import * as storage from "./storage.js"

const describe = (e: unknown): string => typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e)

/** @internal */
export const layer = (options: {
  readonly storage: string
  readonly clientOnly: boolean
  readonly shardingConfig: Partial<ShardingConfig.ShardingConfig["Type"]>
  /** names the process in errors */
  readonly name: string
}): Layer.Layer<Sharding | SqlClient, ConfigError> => {
  const kind = storage.parse(options.storage)
  if (kind instanceof ConfigError) return Layer.fail(kind)
  const socket = NodeClusterSocket.layer({
    clientOnly: options.clientOnly,
    storage: "sql",
    shardingConfig: options.shardingConfig
  })
  return Layer.scopedContext(Effect.gen(function*() {
    const sql = yield* SqlClient
    const scope = yield* Effect.scope
    return yield* storage.withSchemaLock(sql, Layer.buildWithScope(socket, scope))
  })).pipe(
    Layer.provideMerge(storage.layer(kind)),
    Layer.mapError((e) => e instanceof ConfigError ? e : new ConfigError({ field: options.name, detail: describe(e) }))
  )
}
