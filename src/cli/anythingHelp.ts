/**
 * The help of `gepa anything`, from the flags of OptimizeAnything's command
 * (their descriptions are theirs), in the layout of the other commands'
 * help. Loaded only for `gepa anything --help`.
 *
 * @since 0.2.0
 */
import { HelpDoc, Options } from "@effect/cli"
// OptimizeAnything first: it initializes the internal modules in order
import "../OptimizeAnything.js"
import { flags } from "../internal/optimizeAnything/cliCommand.js"
import type { FlagDoc } from "./docs.js"
import { commands, environment, paragraph, section } from "./help.js"

// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;]*m/g

// @effect/cli's words around each description, which say nothing here
const boilerplate = /^(A user-defined piece of text\.|This setting is optional\.|A true or false value\.)/

const docOf = (option: Options.Options<unknown>): FlagDoc | undefined => {
  const lines = HelpDoc.toAnsiText(Options.getHelp(option)).replace(ansi, "").split("\n").map((l) => l.trim())
  const head = /^--([\w-]+)(?: (\w+))?/.exec(lines[0] ?? "")
  if (head === null) return undefined
  const text = lines.slice(1).filter((l) => l !== "" && !boilerplate.test(l)).join(" ")
  return head[2] === undefined ? { flag: head[1]!, text } : { flag: head[1]!, arg: head[2].toUpperCase(), text }
}

/**
 * The help text of `gepa anything`.
 *
 * @since 0.2.0
 * @category help
 */
export const anythingHelp = (): string => {
  const docs = Object.values(flags).map((o: Options.Options<unknown>) => docOf(o)).filter((d): d is FlagDoc => d !== undefined)
  return [
    `Usage: gepa anything --evaluator FILE --reflection-model NAME [flags]\n\n${paragraph(`${commands.anything[0]!.toUpperCase()}${commands.anything.slice(1)}.`)}`,
    paragraph("See the README (Optimize anything) for the evaluator module and the run directory."),
    section("Flags", docs),
    environment()
  ].join("\n\n") + "\n"
}
