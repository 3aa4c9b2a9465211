/**
 * Evaluation spread over processes and machines with `@effect/cluster`.
 *
 * An evaluation is defined once, in a module both sides import: the
 * adapter (as a layer), schemas for the values that cross the wire, and,
 * when runners hold the data themselves, how examples are named.
 *
 * - Runner processes (`ClusterRunner`) serve the `Evaluator` entity: each
 *   request runs the adapter's `evaluate` on a chunk of examples.
 * - The optimizer uses `ClusterAdapter.layer(definition)` in place of the
 *   adapter: `evaluate` sends each chunk to the entity, everything else
 *   (reflective datasets, custom proposals) runs locally. `Gepa.optimize` is
 *   unchanged.
 *
 * Delivery in the cluster is at-least-once: when a runner dies, the
 * requests it held run again on a survivor. Every adapter call carries a
 * request id that the cluster's storage de-duplicates (a resend is answered
 * from storage), and the optimizer uses the one reply of each call: a chunk
 * is charged to the budget once and its result used once.
 *
 * This module and its siblings load `@effect/cluster`, `@effect/sql` and a
 * SQL driver; they are not part of the package's main entry, import them by
 * their own paths (`effect-gepa/ClusterEvaluation`, ...).
 *
 * @since 0.2.0
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { type Config, Effect, Layer, type SchemaAST } from "effect"
import type { Adapter, AdapterService } from "./Adapter.js"
import * as Adapters from "./Adapter.js"
import type { DataLoader } from "./DataLoader.js"
import { ConfigError } from "./Errors.js"
import * as config from "./internal/cluster/config.js"
import { field } from "./internal/shared/fields.js"
import * as protocol from "./internal/cluster/protocol.js"
import * as storage from "./internal/cluster/storage.js"

/**
 * A schema for values that cross the wire: any `Schema.Schema<A, I>` with
 * no requirements, whatever its encoded form `I` (`Schema.String`, a
 * `Schema.Struct`, a `Schema.Class`, `Schema.DateFromString`...). Only the
 * decoded side is fixed, by the adapter's types; the encoded side is the
 * user's choice, and the value travels in it.
 *
 * @since 0.3.0
 * @category models
 */
export interface WireSchema<A> {
  readonly Type: A
  readonly Encoded: unknown
  readonly Context: never
  readonly ast: SchemaAST.AST
}

/**
 * What runners and the optimizer share about an evaluation.
 *
 * Values that cross the wire (examples when sent inline, outputs,
 * trajectories) travel in encoded form: give a schema for each, or keep them
 * JSON-safe (plain objects, arrays, strings, finite numbers, booleans, null),
 * in which case they travel as their JSON round trip.
 *
 * @since 0.2.0
 * @category models
 */
export interface Definition<D, T, O, E = never> {
  readonly _tag: "ClusterEvaluation"
  /** the user's adapter; runners use its `evaluate`, the optimizer the rest */
  readonly adapter: Layer.Layer<AdapterService<D, T, O>, E>
  /** schema of an example, when examples are sent inline (default: JSON-safe values) */
  readonly example?: WireSchema<D> | undefined
  /** schema of an output (default: JSON-safe values) */
  readonly output?: WireSchema<O> | undefined
  /** schema of a trajectory (default: JSON-safe values) */
  readonly trajectory?: WireSchema<T> | undefined
  /**
   * the id of an example: when set, the optimizer sends ids and each runner
   * resolves them in `data` (the examples never cross the wire)
   */
  readonly exampleId?: ((example: D) => string) | undefined
  /** the examples runners resolve ids in (needed with `exampleId`) */
  readonly data?: ReadonlyArray<D> | DataLoader<D> | undefined
}

/**
 * Defines a cluster evaluation. `adapter` is an adapter or a layer that
 * builds one (with its resources: clients, sandboxes).
 *
 * @example
 * ```ts
 * // evaluation.ts, imported by runners and by the optimizer
 * import { Effect, Schema } from "effect"
 * import { Adapter } from "effect-gepa"
 * import * as ClusterEvaluation from "effect-gepa/ClusterEvaluation"
 *
 * const Example = Schema.Struct({ question: Schema.String, answer: Schema.String })
 *
 * export default ClusterEvaluation.define({
 *   adapter: Adapter.fromExample((example: typeof Example.Type, candidate) =>
 *     Effect.sync(() => {
 *       const output = `${candidate["system_prompt"] ?? ""} ${example.question}`
 *       return { output, score: output.includes(example.answer) ? 1 : 0 }
 *     })
 *   ),
 *   example: Example,
 *   output: Schema.String
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const define = <D, T, O, E = never>(options: {
  readonly adapter: Adapter<D, T, O> | Layer.Layer<AdapterService<D, T, O>, E>
  readonly example?: WireSchema<D> | undefined
  readonly output?: WireSchema<O> | undefined
  readonly trajectory?: WireSchema<T> | undefined
  readonly exampleId?: ((example: D) => string) | undefined
  readonly data?: ReadonlyArray<D> | DataLoader<D> | undefined
}): Definition<D, T, O, E> => ({
  ...options,
  _tag: "ClusterEvaluation",
  adapter: Layer.isLayer(options.adapter)
    ? options.adapter as Layer.Layer<AdapterService<D, T, O>, E>
    : Adapters.layer(options.adapter as Adapter<D, T, O>)
})

/**
 * Whether a value (e.g. a module's export) is a definition.
 *
 * @since 0.2.0
 * @category guards
 */
export const isDefinition = (u: unknown): u is Definition<unknown, unknown, unknown, unknown> => field(u, "_tag") === "ClusterEvaluation"

/**
 * The evaluator entity. Its one RPC, `Evaluate`, is persisted and keyed by
 * the request id.
 *
 * @since 0.2.0
 * @category entities
 */
export const Evaluator = protocol.Evaluator

/**
 * An evaluation failed on a runner (the adapter failed, or its result could
 * not be encoded); the optimizer sees it as an `AdapterError`.
 *
 * @since 0.2.0
 * @category errors
 */
export const RemoteEvaluationError = protocol.RemoteEvaluationError

/**
 * The type of a `RemoteEvaluationError`.
 *
 * @since 0.2.0
 * @category errors
 */
export type RemoteEvaluationError = protocol.RemoteEvaluationError

/**
 * Settings every process of a cluster shares.
 *
 * @since 0.2.0
 * @category models
 */
export type Settings = config.ClusterSettings

/**
 * The shared settings from `Config`: `GEPA_CLUSTER_STORAGE` (a SQLite file
 * or a `postgres://` URL), `GEPA_CLUSTER_SHARDS` (default 300, the same in
 * every process) and `GEPA_CLUSTER_FAILOVER` (default 3 seconds: how long a
 * dead runner's shards stay locked before survivors take them over).
 *
 * @since 0.2.0
 * @category config
 */
export const settings: Config.Config<Settings> = config.clusterSettings

/**
 * The SQL client of the cluster's storage: a SQLite file (`./cluster.db`,
 * `sqlite:./cluster.db`; WAL mode, one machine) or a Postgres URL
 * (`postgres://user:pass@host/db`, several machines; needs
 * `@effect/sql-pg`). Any other `SqlClient` layer works as well.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerStorage = (address: string): Layer.Layer<SqlClient, ConfigError> => {
  const kind = storage.parse(address)
  return kind instanceof ConfigError ? Layer.fail(kind) : storage.layer(kind)
}

/**
 * The settings read from `Config`, or the given ones.
 *
 * @internal
 */
export const resolveSettings = (given?: Partial<Settings>): Effect.Effect<Settings, ConfigError> =>
  given?.storage !== undefined
    ? Effect.succeed({
      storage: given.storage,
      shards: given.shards ?? config.defaults.shards,
      failover: given.failover ?? config.defaults.failover
    })
    : Effect.mapError(
      Effect.map(config.clusterSettings, (s) => ({
        storage: s.storage,
        shards: given?.shards ?? s.shards,
        failover: given?.failover ?? s.failover
      })),
      (e) => new ConfigError({ field: "cluster settings", detail: String(e) })
    )
