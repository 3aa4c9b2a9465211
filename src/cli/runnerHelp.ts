/**
 * The help of `gepa runner`, from the flags of the runner command (their
 * descriptions are theirs). Loads the flags only, not the cluster modules.
 *
 * @since 0.2.0
 */
import { runnerOptions } from "../internal/cluster/command.js"
import { docsOf } from "./flagHelp.js"
import { commands, paragraph, section } from "./help.js"

// what each flag takes (the command's flags are all text, checked by its handler)
const argNames: Record<string, string> = {
  module: "FILE",
  storage: "FILE|URL",
  host: "HOST",
  port: "N",
  "listen-host": "HOST",
  concurrency: "N",
  shards: "N",
  failover: "DURATION",
  "status-every": "DURATION",
  "log-format": "text|json"
}

/**
 * The help text of `gepa runner`.
 *
 * @since 0.2.0
 * @category help
 */
export const runnerHelp = (): string =>
  [
    `Usage: gepa runner --module FILE [flags]\n\n${paragraph(`${commands.runner.charAt(0).toUpperCase()}${commands.runner.slice(1)}.`)}`,
    paragraph(
      "Runs until Ctrl-C or SIGTERM, then hands its shards over to the other runners; a second signal quits at once. " +
        "Every flag may also come from its environment variable. See docs/scaling-out.md in the repository."
    ),
    section(
      "Flags",
      docsOf(runnerOptions).map((d) => {
        const arg = argNames[d.flag] ?? d.arg
        return { ...d, ...(arg === undefined ? {} : { arg }), ...(d.flag === "module" ? { required: true } : {}) }
      })
    )
  ].join("\n\n") + "\n"
