/**
 * Keys and base URLs of model layers and model strings, read through Effect
 * `Config` from the ambient `ConfigProvider` (the environment unless the
 * application provides another: a secrets manager, `ConfigProvider.fromMap`
 * in tests, a nested prefix). Every key read is registered with `Secrets`.
 *
 * @internal
 */
import { Config, ConfigError as EffectConfigError, Effect, Option, Redacted } from "effect"
import { ConfigError } from "../../Errors.js"
import * as Secrets from "../../Secrets.js"

const describe = (error: EffectConfigError.ConfigError): string =>
  // the provider's message names the path, never the value
  Secrets.scrub(error.message).replace(/\s+/g, " ").trim()

/**
 * The first of `names` that is set (and not blank), as a redacted value,
 * registered with `Secrets`; `None` when none is set.
 */
export const optionalKey = (
  field: string,
  names: ReadonlyArray<string>
): Effect.Effect<Option.Option<Redacted.Redacted<string>>, ConfigError> =>
  Effect.gen(function*() {
    for (const name of names) {
      const found = yield* Config.option(Config.redacted(name)).pipe(
        Effect.mapError((e) => new ConfigError({ field, detail: `could not read ${name}: ${describe(e)}` }))
      )
      if (Option.isSome(found)) {
        const value = Redacted.value(found.value).trim()
        if (value === "") continue
        const key = Redacted.make(value)
        yield* Secrets.register(key)
        return Option.some(key)
      }
    }
    return Option.none()
  })

/** The key (see `optionalKey`), or one `ConfigError` naming the variables and what needs them. */
export const requiredKey = (
  field: string,
  names: ReadonlyArray<string>,
  what: string,
  hint?: string
): Effect.Effect<Redacted.Redacted<string>, ConfigError> =>
  Effect.flatMap(optionalKey(field, names), (found) =>
    Option.isSome(found)
      ? Effect.succeed(found.value)
      : Effect.fail(
        new ConfigError({
          field,
          detail: `${names.join(" or ")} is not set: ${what} needs an API key${hint === undefined ? "" : ` (${hint})`}`
        })
      ))

/** A base URL variable when set (and not blank). */
export const optionalUrl = (field: string, name: string): Effect.Effect<string | undefined, ConfigError> =>
  Config.option(Config.string(name)).pipe(
    Effect.mapError((e) => new ConfigError({ field, detail: `could not read ${name}: ${describe(e)}` })),
    Effect.map((found) => (Option.isSome(found) && found.value.trim() !== "" ? found.value.trim() : undefined))
  )
