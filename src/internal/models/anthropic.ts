/**
 * `anthropic:` models: `@effect/ai-anthropic` and `@effect/ai` are optional
 * peers, loaded with a dynamic import only when a model string names them;
 * a missing package is one `ConfigError` saying what to install.
 *
 * @internal
 */
import type * as AiLm from "@effect/ai/LanguageModel"
import { Effect, Layer, type Redacted } from "effect"
import type * as Ai from "../../AiLanguageModel.js"
import { ConfigError } from "../../Errors.js"
import { field as fieldOf } from "../shared/fields.js"
import * as modelConfig from "./config.js"

const isMissing = (error: unknown): boolean => {
  const code = fieldOf(error, "code")
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND"
}

const anthropicPackage = "@effect/ai-anthropic"

const load = (field: string, importer: (s: string) => Promise<unknown>) =>
  Effect.tryPromise({
    try: () => importer(anthropicPackage),
    catch: (error) =>
      new ConfigError({
        field,
        detail: isMissing(error)
          ? `install ${anthropicPackage} to use anthropic: models (npm install @effect/ai@^0.37 ${anthropicPackage})`
          : `could not load ${anthropicPackage} for anthropic: models: ${error instanceof Error ? error.message : String(error)}`
      })
  })

type AnyLayer = Layer.Layer<unknown, unknown, unknown>

interface ProviderModule {
  readonly client: (options: { readonly apiKey: Redacted.Redacted<string>; readonly apiUrl?: string }) => AnyLayer
  readonly model: (name: string, config: Record<string, unknown>) => AnyLayer
}

const providerModule = (field: string, mod: unknown): Effect.Effect<ProviderModule, ConfigError> => {
  const layer = fieldOf(fieldOf(mod, "AnthropicClient"), "layer")
  const model = fieldOf(fieldOf(mod, "AnthropicLanguageModel"), "model")
  if (typeof layer !== "function" || typeof model !== "function") {
    return Effect.fail(
      new ConfigError({
        field,
        detail: `${anthropicPackage} has no AnthropicClient.layer or AnthropicLanguageModel.model; install a version matching @effect/ai 0.37`
      })
    )
  }
  // an optional peer loaded at run time: its functions' signatures are those of
  // the version docs/models.md names, which the checks above can only approximate
  return Effect.succeed({ client: layer as ProviderModule["client"], model: model as ProviderModule["model"] })
}

/** An `anthropic:` model. @internal */
export const viaAnthropic = (
  field: string,
  model: string,
  options: {
    readonly importer: (specifier: string) => Promise<unknown>
    readonly maxOutputTokens?: number | undefined
    readonly temperature?: number | undefined
    readonly policy: Omit<Ai.Options, "model" | "secrets">
  }
) =>
  Effect.gen(function*() {
    const importer = options.importer
    const apiKey = yield* modelConfig.requiredKey(field, ["ANTHROPIC_API_KEY"], `anthropic:${model}`)
    const baseURL = yield* modelConfig.optionalUrl(field, "ANTHROPIC_BASE_URL")
    const provider = yield* providerModule(field, yield* load(field, importer))
    // loaded only now: the module imports @effect/ai, an optional peer
    const AiModule = yield* Effect.tryPromise({
      try: () => import("../../AiLanguageModel.js"),
      catch: (error) =>
        new ConfigError({
          field,
          detail: isMissing(error)
            ? `install @effect/ai to use anthropic: models (npm install @effect/ai@^0.37 ${anthropicPackage})`
            : `could not load effect-gepa/AiLanguageModel: ${error instanceof Error ? error.message : String(error)}`
        })
    })
    const Fetch = yield* Effect.promise(() => import("@effect/platform/FetchHttpClient"))
    const config: Record<string, unknown> = {
      ...(options.maxOutputTokens === undefined ? {} : { max_tokens: options.maxOutputTokens }),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature })
    }
    // the provider's layers are typed loosely (see providerModule); together they give a LanguageModel
    const modelLayer = provider.model(model, config).pipe(
      Layer.provide(provider.client({ apiKey, ...(baseURL === undefined ? {} : { apiUrl: baseURL }) })),
      Layer.provide(Fetch.layer)
    ) as Layer.Layer<AiLm.LanguageModel>
    // the provider layers hold no resources (no finalizers), so the model
    // stays usable after this local build
    return yield* AiModule.make({ ...options.policy, model, secrets: [apiKey] }).pipe(
      Effect.provide(modelLayer),
      Effect.mapError((e) => new ConfigError({ field: `${field}.${e.field}`, detail: e.detail }))
    )
  })
