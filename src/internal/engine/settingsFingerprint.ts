/**
 * The fingerprint's settings: the settings that change what a run computes,
 * each as text, saved with the run and compared on resume.
 *
 * @internal
 */
import { type Config, defaults } from "../../Config.js"
import * as Fingerprint from "../../Fingerprint.js"
import type { Resolved } from "./resolved.js"

/** A setting as text: a name or plain options as they are, a function as "custom". */
const named = (setting: unknown, fallback: string): string =>
  setting === undefined
    ? fallback
    : typeof setting === "function"
    ? "custom"
    : typeof setting === "string"
    ? setting
    : Fingerprint.stableStringify(setting)

/**
 * The settings that change what a run computes: its random draws, what it
 * evaluates and when, what it accepts, and the order results are folded in.
 * Budget, stop conditions, models, timeouts, retries and concurrency may
 * change between a stop and a resume.
 *
 * @internal
 */
export const settingsOf = <D, T, O>(
  config: Config<D, T, O>,
  resolved: Pick<
    Resolved<D, T, O>,
    | "seed"
    | "frontierType"
    | "minibatchSize"
    | "parallelProposals"
    | "proposalsPerStep"
    | "stepWidth"
    | "proposalSampling"
    | "proposalSelection"
    | "rewritesPerMinibatch"
    | "earlyRejection"
    | "reuseMinibatch"
    | "buildOnChild"
    | "reuseChildMinibatch"
    | "foldOrder"
    | "skipPerfect"
    | "perfectScore"
    | "fallbackScore"
    | "merge"
  >
): Record<string, string> => ({
  // a component's schema, as `schema.NAME`, so a changed schema is refused on resume
  ...Object.fromEntries(Object.entries(config.componentSchemas ?? {}).map(([name, d]) => [`schema.${name}`, d])),
  seed: String(resolved.seed),
  minibatchSize: String(resolved.minibatchSize),
  frontierType: resolved.frontierType,
  acceptance: named(config.acceptance, defaults.acceptance),
  merge: resolved.merge === undefined ? "off" : Fingerprint.stableStringify(resolved.merge),
  evaluationPolicy: named(config.evaluationPolicy, defaults.evaluationPolicy),
  candidateSelector: named(config.candidateSelector, defaults.candidateSelector),
  componentSelector: named(config.componentSelector, defaults.componentSelector),
  parallelProposals: String(resolved.parallelProposals),
  proposalsPerStep: String(resolved.proposalsPerStep),
  stepWidth: resolved.stepWidth,
  proposalSampling: resolved.proposalSampling,
  proposalSelection: named(resolved.proposalSelection, "best"),
  rewritesPerMinibatch: String(resolved.rewritesPerMinibatch),
  earlyRejection: String(resolved.earlyRejection),
  reuseMinibatch: String(resolved.reuseMinibatch),
  buildOnChild: String(resolved.buildOnChild),
  reuseChildMinibatch: String(resolved.reuseChildMinibatch),
  foldOrder: resolved.foldOrder,
  skipPerfectScore: String(resolved.skipPerfect),
  perfectScore: String(resolved.perfectScore),
  fallbackScore: String(resolved.fallbackScore)
})
