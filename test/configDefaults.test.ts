/**
 * The defaults are written once, in `Config.defaults`: the engine resolves
 * against it, the CLI's defaults for the same settings are read from it, and
 * the option tables of docs/configuration.md and docs/cli.md are checked
 * against it here.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Cli from "../src/Cli.js"
import * as Config from "../src/Config.js"
import * as Strategy from "../src/Strategy.js"

const page = (name: string) => fs.readFileSync(path.resolve(import.meta.dirname, "..", "docs", name), "utf8")

/** The rows of the first markdown table of docs/`name` from `heading` on (the heading may be the table's header row), as cells. */
const tableAfter = (name: string, heading: string): ReadonlyArray<ReadonlyArray<string>> => {
  const text = page(name)
  const at = text.indexOf(heading)
  if (at < 0) throw new Error(`docs/${name}: no "${heading}"`)
  const lines = text.slice(at).split("\n")
  const start = lines.findIndex((l) => l.startsWith("|"))
  const rows: Array<ReadonlyArray<string>> = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break
    rows.push(line.slice(1, -1).split(" | ").map((c) => c.trim()))
  }
  return rows
}

/** How the docs write a default: the value as code. */
const written = (value: unknown) => `\`${JSON.stringify(value)}\``

describe("the defaults table", () => {
  it("docs/configuration.md's table of Gepa.Config options shows every default of Config.defaults", () => {
    const rows = new Map(tableAfter("configuration.md", "The options of `Gepa.optimize` / `Gepa.stream` (`Gepa.Config`):").map((r) => [r[0] ?? "", r]))
    const wrong: Array<string> = []
    for (const [name, value] of Object.entries(Config.defaults)) {
      const row = rows.get(`\`${name}\``)
      if (row === undefined) wrong.push(`${name}: no row`)
      else if (row[1] !== written(value)) wrong.push(`${name}: the docs say ${row[1]}, Config.defaults ${written(value)}`)
    }
    const merge = rows.get("`merge`")?.[2] ?? ""
    for (const [name, value] of Object.entries(Config.mergeDefaults)) {
      if (!merge.includes(`\`${name}\` ${value}`)) wrong.push(`merge.${name}: the docs do not say ${value}`)
    }
    expect(wrong).toEqual([])
  })

  it("the CLI's defaults of the same settings are the library's, and so is its table", () => {
    for (const name of ["maxConcurrency", "minibatchSize", "merge", "seed"] as const) {
      expect(Cli.defaults[name]).toBe(Config.defaults[name])
    }
    const rows = new Map(tableAfter("cli.md", "| Field | Flag | Default | Meaning |").map((r) => [r[0] ?? "", r]))
    expect(rows.size).toBeGreaterThan(0)
    for (const name of ["maxConcurrency", "minibatchSize", "merge", "seed", "parallelProposals"] as const) {
      expect(rows.get(`\`${name}\``)?.[2], name).toBe(written(Config.defaults[name]))
    }
    // the CLI optimizes one component: the default strategy of one component
    expect(rows.get("`proposalsPerStep`")?.[2]).toBe(written(Strategy.defaultFor(1).proposalsPerStep))
  })
})
