/**
 * Loading an optional peer package, failing with a `ConfigError` that
 * names the package and how to install it.
 *
 * @internal
 */
import { Effect } from "effect"
import { ConfigError } from "../../Errors.js"

/** @internal */
export const importOptional = <A>(pkg: string, load: () => Promise<A>): Effect.Effect<A, ConfigError> =>
  Effect.tryPromise({
    try: load,
    catch: (cause) =>
      new ConfigError({
        field: "storage",
        detail: `needs the optional package ${pkg} (npm install ${pkg}): ${cause instanceof Error ? cause.message : String(cause)}`
      })
  })
