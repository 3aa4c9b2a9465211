/**
 * The reflection prompt of `optimizeAnything`: its template, the options
 * that put the objective and background in it, and its budget in
 * characters, with the room that budget leaves for the evaluations.
 *
 * @internal
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the run reads the user's configuration untyped (every value as unknown); the public optimizeAnything keeps the types */
import type { LanguageModel } from "../../LanguageModel.js"
import { buildPrompt, type ReflectionConfig } from "../../Reflection.js"
import type * as OA from "./types.js"
import { budgetFromContextWindow, defaultPromptBudget } from "./promptBudget.js"
import type { Limits } from "./sideInfo.js"

/**
 * The reflection prompt of `optimizeAnything` (placeholders as in
 * `Reflection`); the objective and background arrive as additional
 * instructions.
 *
 * @internal
 */
export const template =
  `You are improving a text artifact called "{{component}}". It may be program code, a configuration, a prompt, a policy or any other text. An evaluator ran the current version and reported, for each evaluation below, a score (higher is better) and side information: errors, failing cases, measurements, logs.

# Current text of "{{component}}"

{{current_text}}

# Evaluations of the current text

{{examples}}

# How to improve it

1. Read the side information first: it says why each score is what it is, what failed, where, and by how much.
2. Trace every failure to its cause in the artifact and fix the cause, not the symptom. Keep every part that already works.
3. When several evaluations are shown, prefer one change that helps all of them over a patch for a single case.
4. Keep the artifact valid in its own format (syntax, structure, required fields) so that it can be evaluated as it is.
{{additional_instructions}}
# Answer format

Reply with the complete new text of "{{component}}" (not a list of changes) inside one fenced code block that starts with \`\`\` and ends with \`\`\`. If the text itself contains lines starting with \`\`\`, use a longer fence such as \`\`\`\` around it. Anything outside the block is ignored.`

/**
 * The reflection prompt's budget in characters: the one given, else sized
 * to the reflection model's context window when its layer knows it, else
 * the default.
 *
 * @internal
 */
export const promptBudgetOf = (limits: Limits, model: LanguageModel | undefined): number =>
  limits.promptBudget ??
    (model?.contextWindow !== undefined ? budgetFromContextWindow(model.contextWindow) : defaultPromptBudget)

/**
 * The room the prompt leaves for the evaluations: the budget less what the
 * prompt holds besides them (template, objective, background, instructions,
 * the current text), measured on the prompt as it will be built.
 *
 * @internal
 */
export const promptRoomOf = (budget: number, reflection: ReflectionConfig) => {
  const empty = "(no examples)"
  return (component: string, currentText: string): number =>
    budget - (buildPrompt({ component, currentText, records: [], config: reflection }).length - empty.length)
}

const steering = (objective: string | undefined, background: string | undefined, extra: string | undefined): string =>
  [
    objective === undefined || objective.trim() === "" ? "" : `Objective: ${objective.trim()}`,
    background === undefined || background.trim() === "" ? "" : `Background:\n\n${background.trim()}`,
    extra?.trim() ?? ""
  ].filter((s) => s !== "").join("\n\n")

/**
 * The reflection options: our template unless the user gave one, and the
 * objective and background ahead of the user's own additional instructions.
 *
 * @internal
 */
// reads only fields whose types do not depend on the type parameters
export const reflectionOf = (config: OA.Config<any, any, any, any>): ReflectionConfig => {
  const user = config.reflection ?? {}
  const extra = steering(config.objective, config.background, user.additionalInstructions)
  return {
    ...user,
    template: user.template ?? template,
    ...(extra === "" ? {} : { additionalInstructions: extra })
  }
}
