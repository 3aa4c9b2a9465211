/**
 * `npm run readme:demo`: runs the demo with its defaults and rewrites the
 * summary quoted in docs/concepts.md (the ```text block that starts with
 * "Summary"), without its time line: the time depends on the machine and
 * its load, and a quoted time would be read as a promise.
 * `test/readme.test.ts` fails when the quote and a fresh run differ; this
 * script is how the quote is brought up to date.
 *
 * @since 0.2.0
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runDemo, summarize } from "./run.js"

const pagePath = path.resolve(import.meta.dirname, "../../docs/concepts.md")

const program = Effect.acquireUseRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "gepa-readme-"))),
  (dir) => Effect.flatMap(runDemo({ runDir: path.join(dir, "run"), writeReport: false }), summarize),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((summary) => {
  const page = fs.readFileSync(pagePath, "utf8")
  const lines = page.split("\n")
  const start = lines.findIndex((l, i) => l === "```text" && lines[i + 1] === "Summary")
  if (start < 0) throw new Error("docs/concepts.md: no ```text block starting with \"Summary\"")
  let end = start + 1
  while (end < lines.length && lines[end] !== "" && lines[end] !== "..." && lines[end] !== "```") end++
  const untimed = summary.filter((line) => !/^ {2}time +/.test(line))
  const next = [...lines.slice(0, start + 1), ...untimed, ...lines.slice(end)].join("\n")
  if (next === page) return "docs/concepts.md: the demo summary is up to date"
  fs.writeFileSync(pagePath, next)
  return "docs/concepts.md: demo summary updated"
}))

Effect.runPromise(program).then(console.log, (error: unknown) => {
  console.error(`readme:demo failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
})
