/**
 * The rows of a command's help from @effect/cli options defined elsewhere
 * (`gepa anything`, `gepa runner`): their descriptions, in the layout of
 * the other commands' help. Loaded only for those commands' `--help`.
 *
 * @since 0.2.0
 */
import { HelpDoc, Options } from "@effect/cli"
import type { FlagDoc } from "./docs.js"
import { at } from "../internal/shared/invariant.js"

// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;]*m/g

// @effect/cli's words around each description, which say nothing here
const boilerplate = /^(A user-defined piece of text\.|This setting is optional\.|A true or false value\.)/

/**
 * The help row of an option, or `undefined` for one without a flag.
 *
 * @since 0.2.0
 * @category help
 */
export const docOf = (option: Options.Options<unknown>): FlagDoc | undefined => {
  const lines = HelpDoc.toAnsiText(Options.getHelp(option)).replace(ansi, "").split("\n").map((l) => l.trim())
  const head = /^--([\w-]+)(?: (\w+))?/.exec(lines[0] ?? "")
  if (head === null) return undefined
  const text = lines.slice(1).filter((l) => l !== "" && !boilerplate.test(l)).join(" ")
  const flag = at(head, 1)
  return head[2] === undefined ? { flag, text } : { flag, arg: head[2].toUpperCase(), text }
}

/**
 * The help rows of a record of options.
 *
 * @since 0.2.0
 * @category help
 */
export const docsOf = (options: Record<string, Options.Options<unknown>>): ReadonlyArray<FlagDoc> =>
  Object.values(options).map(docOf).filter((d): d is FlagDoc => d !== undefined)
