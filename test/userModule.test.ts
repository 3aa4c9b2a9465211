/**
 * A user's TypeScript module loaded by the compiled package (what an
 * installed `gepa` runs), in a child process on the Node under test. From
 * Node 22.18 and 23.6, Node strips TypeScript types itself: a plain
 * `import()` of a `.ts` file no longer fails when the process has no
 * TypeScript loader, Node loads it by rules of its own (no `./x.js` import of
 * `x.ts`, no enums; a `.ts` in a CommonJS package fails after a warning on
 * stderr). The module must load as it does on Node 20, through tsx, in the
 * process's own module graph, and print nothing.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, root } from "./fixtures/bin.js"
import { tmpDir } from "./fixtures/tmp.js"

const helper =
  `export enum Case { Lower, Upper }\nexport const norm = (s: string, c: Case = Case.Lower): string => c === Case.Lower ? s.trim().toLowerCase() : s.trim().toUpperCase()\n`
const metric = `import { norm, Case } from "./helper.js"\nexport const metric = (s: string) => norm(s, Case.Upper)\n`
// a CommonJS module's require() does not reach effect-gepa's dependencies (commonJsHint): effect only in the ES module
const sources = { esm: `import { Effect } from "effect"\nexport { Effect }\n${metric}`, cjs: metric }

// cwd is the repository: `effect` and the compiled package resolve from there
const script = `
const { importUserModule } = await import("./dist/src/internal/shared/userModule.js")
const effect = await import("effect")
const [esm, commonJs] = process.argv.slice(1)
const a = await importUserModule(esm, { sameGraphFirst: true })
const b = await importUserModule(commonJs, { sameGraphFirst: true, orIsolated: true })
const metricOf = (m) => m.metric ?? m.default?.metric
console.log(JSON.stringify({ esm: a.metric(" ab "), sameEffect: a.Effect === effect.Effect, commonJs: metricOf(b)(" cd ") }))
`

const node = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
    execFile(process.execPath, args, { cwd: root, encoding: "utf8" }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
  })

describe("a user's TypeScript module, loaded by the compiled package", () => {
  beforeAll(ensureBuilt, 180_000)

  it("an ES module with a ./x.js import of x.ts and an enum shares the process's effect; one in a CommonJS package loads; nothing on stderr", async () => {
    const dir = tmpDir("gepa-user-module-")
    for (const [folder, type] of [["esm", "module"], ["cjs", "commonjs"]] as const) {
      fs.mkdirSync(path.join(dir, folder))
      fs.writeFileSync(path.join(dir, folder, "package.json"), JSON.stringify({ type }))
      fs.writeFileSync(path.join(dir, folder, "helper.ts"), helper)
      fs.writeFileSync(path.join(dir, folder, "evaluation.ts"), sources[folder])
    }
    const r = await node(["--input-type=module", "-e", script, path.join(dir, "esm", "evaluation.ts"), path.join(dir, "cjs", "evaluation.ts")])
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ esm: "AB", sameEffect: true, commonJs: "CD" })
  })
})
