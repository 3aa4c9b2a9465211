/**
 * The help of `gepa anything`, from the flags of OptimizeAnything's command
 * (their descriptions are theirs), in the layout of the other commands'
 * help. Loaded only for `gepa anything --help`.
 *
 * @since 0.2.0
 */
// OptimizeAnything first: it initializes the internal modules in order
import "../OptimizeAnything.js"
import { flags } from "../internal/optimizeAnything/cliCommand.js"
import { docsOf } from "./flagHelp.js"
import { commands, environment, paragraph, section } from "./help.js"

/**
 * The help text of `gepa anything`.
 *
 * @since 0.2.0
 * @category help
 */
export const anythingHelp = (): string =>
  [
    `Usage: gepa anything --evaluator FILE --reflection-model NAME [flags]\n\n${
      paragraph(`${commands.anything.charAt(0).toUpperCase()}${commands.anything.slice(1)}.`)
    }`,
    paragraph("See docs/optimize-anything.md in the repository for the evaluator module and the run directory."),
    section("Flags", docsOf(flags)),
    environment()
  ].join("\n\n") + "\n"
