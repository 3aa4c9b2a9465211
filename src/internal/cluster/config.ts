/**
 * Cluster settings shared by runners and the optimizer, read through Effect
 * `Config` (environment variables by default), and their translation into
 * `@effect/cluster`'s sharding configuration.
 *
 * @internal
 */
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import { Config, Duration, Option } from "effect"

/** @internal */
export interface ClusterSettings {
  /** SQLite file or Postgres URL shared by every process of the cluster */
  readonly storage: string
  /** shards of the cluster; the same number in every process */
  readonly shards: number
  /** how long a dead runner's shards stay locked before a survivor takes them */
  readonly failover: Duration.Duration
}

/** @internal */
export const defaults = {
  shards: 300,
  // a dead runner's work restarts about 3.5-4.5 s after it died (the lock expiry, then up to one
  // assignment refresh and one storage poll). The price: a runner whose event loop stalls for longer
  // than this (a long synchronous evaluation, a swap storm) loses its shards while alive, and its
  // requests in flight run again elsewhere (results stay exact: requests and finished calls are
  // de-duplicated). Raise it for evaluations that block the event loop for seconds.
  failover: Duration.seconds(3),
  entities: 64,
  runnerHost: "localhost",
  runnerPort: 34431,
  concurrency: 4
} as const

/** @internal */
export const clusterSettings: Config.Config<ClusterSettings> = Config.all({
  storage: Config.string("GEPA_CLUSTER_STORAGE").pipe(
    Config.withDescription("SQLite file or postgres:// URL shared by every process of the cluster")
  ),
  shards: Config.integer("GEPA_CLUSTER_SHARDS").pipe(
    Config.withDefault(defaults.shards),
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 })
  ),
  failover: Config.duration("GEPA_CLUSTER_FAILOVER").pipe(
    Config.withDefault(defaults.failover),
    Config.validate({ message: "must be at least 3 seconds", validation: (d) => Duration.toMillis(d) >= 3000 })
  )
})

/**
 * The sharding configuration for `settings`: lock refresh at a third of the
 * failover time (a runner survives two missed refreshes), assignments re-read
 * at least every 3 s (every 0.5 s at the default failover), and a 0.5 s
 * storage poll so that a message whose runner died is picked up soon after
 * its shard moves.
 *
 * @internal
 */
export const sharding = (
  settings: Pick<ClusterSettings, "shards" | "failover">,
  runner?: { readonly host: string; readonly port: number; readonly listenHost?: string | undefined }
): Partial<ShardingConfig.ShardingConfig["Type"]> => {
  const failoverMs = Duration.toMillis(settings.failover)
  const address: Partial<ShardingConfig.ShardingConfig["Type"]> = runner === undefined
    ? {}
    : {
      runnerAddress: Option.some(RunnerAddress.make(runner.host, runner.port)),
      runnerListenAddress: runner.listenHost === undefined
        ? Option.none()
        : Option.some(RunnerAddress.make(runner.listenHost, runner.port))
    }
  return {
    ...address,
    shardsPerGroup: settings.shards,
    shardLockExpiration: Duration.millis(failoverMs),
    shardLockRefreshInterval: Duration.millis(Math.max(1000, Math.floor(failoverMs / 3))),
    refreshAssignmentsInterval: Duration.millis(Math.min(3000, Math.max(500, Math.floor(failoverMs / 6)))),
    runnerHealthCheckInterval: Duration.millis(Math.max(1000, Math.floor(failoverMs / 3))),
    entityMessagePollInterval: Duration.millis(500),
    entityReplyPollInterval: Duration.millis(200)
  }
}
