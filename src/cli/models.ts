/**
 * The language models of a CLI run: OpenAI-compatible servers, with the key
 * from `OPENAI_API_KEY` and the default server from `OPENAI_BASE_URL`.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Redacted } from "effect"
import type { ConfigError } from "../Errors.js"
import type { LanguageModel } from "../LanguageModel.js"
import * as OpenAiLanguageModel from "../OpenAiLanguageModel.js"
import { CliInputError, inputError } from "./errors.js"
import { defaults } from "./constants.js"
import { type ModelSpec, parseDuration } from "./settings.js"

/**
 * Builds the language models of a run. The default reads the API key from
 * `OPENAI_API_KEY`; tests pass simulated models.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelFactory = (role: "task" | "reflection", spec: ModelSpec) => Effect.Effect<LanguageModel, CliInputError>

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
 * The OpenAI-compatible model of a spec. A server other than OpenAI's may
 * run without a key; OpenAI's needs `OPENAI_API_KEY`.
 *
 * @since 0.1.0
 * @category models
 */
export const openAiModel = (env: NodeJS.ProcessEnv = process.env): ModelFactory => (role, spec) => {
  const baseURL = spec.baseUrl ?? (env["OPENAI_BASE_URL"]?.trim() || undefined)
  const key = env["OPENAI_API_KEY"]?.trim()
  const field = `${role}Model`
  if ((key === undefined || key === "") && baseURL === undefined) {
    return Effect.fail(inputError(
      `OPENAI_API_KEY is not set: ${field} "${spec.model}" runs on the OpenAI API, which needs a key ` +
        `(or set "baseUrl" for a local server)`
    ))
  }
  return OpenAiLanguageModel.make({
    model: spec.model,
    // local servers (vLLM, Ollama) accept any key
    apiKey: Redacted.make(key === undefined || key === "" ? "unused" : key),
    baseURL,
    temperature: spec.temperature,
    maxOutputTokens: spec.maxOutputTokens,
    timeout: requestTimeout(role, spec)
  }).pipe(Effect.mapError((e: ConfigError) => inputError(`${field}.${e.field}: ${e.detail}`)))
}
