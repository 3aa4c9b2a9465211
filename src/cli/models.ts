/**
 * The language models of a CLI run, named by model strings
 * (`anthropic:claude-sonnet-4-5`, `openai:gpt-4.1-mini`,
 * `openai-compatible:http://127.0.0.1:8000/v1#model`, see `ModelString`) or
 * by plain names for an OpenAI-compatible server (`gpt-4.1-mini`, with the
 * key from `OPENAI_API_KEY` and the server from `baseUrl` or
 * `OPENAI_BASE_URL`).
 *
 * @since 0.1.0
 */
import { ConfigProvider, Duration, Effect } from "effect"
import type { ConfigError } from "../Errors.js"
import type { LanguageModel } from "../LanguageModel.js"
import * as ModelString from "../ModelString.js"
import { CliInputError, inputError } from "./errors.js"
import { defaults } from "./constants.js"
import { type ModelSpec, parseDuration } from "./settings.js"

/**
 * Builds the language models of a run. The default reads API keys from the
 * environment; tests pass simulated models.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelFactory = (
  role: "task" | "reflection",
  spec: ModelSpec,
  options?: ModelFactoryOptions
) => Effect.Effect<LanguageModel, CliInputError>

/**
 * How a run uses its models: `maxConcurrency` bounds the requests the model
 * has in flight (the run's `--max-concurrency`, so that the flag bounds the
 * calls end to end, not the model layer's own default of 16).
 *
 * @since 0.2.0
 * @category models
 */
export interface ModelFactoryOptions {
  readonly maxConcurrency?: number | undefined
}

/**
 * The per-request timeout of a model: its `timeout`, else the CLI's default
 * for the role.
 *
 * @since 0.2.0
 * @category models
 */
export const requestTimeout = (role: "task" | "reflection", spec: ModelSpec) =>
  spec.timeout ?? parseDuration(role === "task" ? defaults.taskTimeout : defaults.reflectionTimeout) ?? Duration.minutes(1)

/**
 * The model of a spec, through `ModelString.forRole`: a model string picks
 * its provider (the `@effect/ai` ones are loaded only then); a plain name
 * runs on an OpenAI-compatible server (OpenAI's, or the one `baseUrl` or
 * `OPENAI_BASE_URL` names), with the key from `OPENAI_API_KEY` unless the
 * name ends with `#nokey`. Keys and base URLs are read through Effect
 * `Config` from the ambient `ConfigProvider` (the process's environment);
 * `env`, when given, is read instead. Every problem (unknown provider,
 * provider package not installed, missing key, invalid option) is one input
 * error naming the field.
 *
 * @since 0.1.0
 * @category models
 */
export const openAiModel = (env?: Readonly<Record<string, string | undefined>>): ModelFactory => (role, spec, options) =>
  ModelString.forRole(role, {
    model: spec.model,
    baseUrl: spec.baseUrl,
    temperature: spec.temperature,
    maxOutputTokens: spec.maxOutputTokens
  }, {
    timeout: requestTimeout(role, spec),
    ...(options?.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency })
  }).pipe(
    (effect) => env === undefined ? effect : Effect.withConfigProvider(effect, ConfigProvider.fromMap(mapOf(env))),
    Effect.mapError((e: ConfigError) => inputError(`${e.field}: ${e.detail}`))
  )

const mapOf = (env: Readonly<Record<string, string | undefined>>): Map<string, string> => {
  const map = new Map<string, string>()
  for (const [k, v] of Object.entries(env)) if (typeof v === "string") map.set(k, v)
  return map
}
