/**
 * The README and the pages of docs/ tell the truth: every TypeScript example
 * in them type-checks against the package entry (`effect-gepa`, mapped to
 * `src/` by tsconfig.json's paths, as an app would import it); an example
 * marked `<!-- file: examples/x.ts -->` is that file, word for word (its
 * opening doc comment aside), so what the page shows is what CI compiles and
 * runs; the config file docs/cli.md shows is one `gepa optimize` starts a
 * run with, without a warning; and the demo summary docs/concepts.md quotes is what
 * `npm start` prints. test/quickstart.test.ts runs the README's quick starts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { runDemo, summarize } from "../examples/demo/run.js"
import { parseConfig } from "../src/cli/configFile.js"
import { resolveSettings } from "../src/cli/resolve.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"

const root = path.resolve(import.meta.dirname, "..")

/** README.md, then the pages of docs/ */
const pages: ReadonlyArray<string> = [
  "README.md",
  ...fs.readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)
]

interface Block {
  /** the page, relative to the repository */
  readonly page: string
  readonly lang: string
  /** line of the opening fence, 1-based */
  readonly line: number
  readonly code: string
  /** the examples/ file a `<!-- file: ... -->` line right before the block names */
  readonly file: string | undefined
}

const blocks = (page: string): ReadonlyArray<Block> => {
  const out: Array<Block> = []
  const lines = fs.readFileSync(path.join(root, page), "utf8").split("\n")
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.findIndex((l, j) => j > i && l === "```")
    if (end < 0) throw new Error(`${page}:${i + 1}: unclosed code fence`)
    const marker = lines.slice(Math.max(0, i - 2), i).map((l) => /^<!-- file: (\S+) -->$/.exec(l)?.[1]).find((f) => f)
    out.push({ page, lang: open[1]!, line: i + 1, code: lines.slice(i + 1, end).join("\n"), file: marker })
    i = end
  }
  return out
}

const all = pages.flatMap(blocks)
const snippets = all.filter((b) => b.lang === "ts" || b.lang === "typescript")
const nameOf = (s: Block) => `${s.page}:${s.line}`

/**
 * Type-checks the snippets as modules of one program with tsc, in a folder
 * inside the repository (the package's "type": "module" applies, and
 * `effect-gepa` resolves through tsconfig.json's paths, as in an app); the
 * diagnostics of each, with page line numbers. tsc runs in a child process,
 * so the worker is free while it works.
 */
const typecheck = async (): Promise<ReadonlyMap<string, ReadonlyArray<string>>> => {
  const dir = fs.mkdtempSync(path.join(root, ".snippets-"))
  try {
    const files = new Map<string, Block>()
    for (const s of snippets) {
      const name = `${s.page.replace(/[/.]/g, "-")}-${s.line}.ts`
      files.set(name, s)
      // `export {}` makes a snippet without imports a module of its own
      fs.writeFileSync(path.join(dir, name), `${s.code}\nexport {}\n`)
    }
    // snippets declare things for the reader that they do not all use
    const options = { noEmit: true, noUnusedLocals: false, declaration: false, sourceMap: false, incremental: false }
    fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ extends: "../tsconfig.json", compilerOptions: options, include: ["*.ts"] }))
    const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc")
    const { error, output } = await new Promise<{ error: Error | null; output: string }>((resolve) =>
      execFile(
        process.execPath,
        [tsc, "-p", dir, "--pretty", "false"],
        { maxBuffer: 1 << 26 },
        (error, stdout, stderr) => resolve({ error, output: `${stdout}${stderr}` })
      )
    )
    const result = new Map<string, Array<string>>(snippets.map((s) => [nameOf(s), []]))
    let last: Array<string> | undefined
    for (const line of output.split("\n")) {
      const d = /^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$/.exec(line)
      if (d === null) {
        // a message's continuation lines belong to the diagnostic above
        if (line.startsWith(" ") && last !== undefined) last[last.length - 1] += `\n${line}`
        continue
      }
      const snippet = files.get(path.basename(d[1]!))
      if (snippet === undefined) {
        // a diagnostic outside the snippets (options, the library) fails every snippet
        for (const list of result.values()) list.push(line)
        last = undefined
        continue
      }
      last = result.get(nameOf(snippet))!
      last.push(`${snippet.page}:${snippet.line + Number(d[2])}: ${d[3]}: ${d[4]}`)
    }
    // tsc failed without a diagnostic the lines above could place (it did not run, bad options)
    if (error !== null && [...result.values()].every((l) => l.length === 0)) {
      for (const list of result.values()) list.push(`tsc: ${error.message}\n${output}`)
    }
    return result
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")

/** The anchors of a page's headings (outside code blocks). */
const anchorsOf = (page: string): ReadonlySet<string> => {
  const text = fs.readFileSync(path.join(root, page), "utf8").replace(/^```[\s\S]*?^```$/gm, "")
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)))
}

/** Every relative link of a page (outside code), as `page:line: target`. */
const linksOf = (page: string): ReadonlyArray<{ readonly where: string; readonly target: string }> =>
  fs.readFileSync(path.join(root, page), "utf8").replace(/^```[\s\S]*?^```$/gm, (block) => block.replace(/[^\n]/g, ""))
    .split("\n").flatMap((line, i) =>
      [...line.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => ({ where: `${page}:${i + 1}`, target: m[1]! }))
        .filter((l) => !/^[a-z]+:/.test(l.target))
    )

/** A file of examples/ as a page shows it: without its opening doc comment. */
const shown = (file: string) => fs.readFileSync(path.join(root, file), "utf8").replace(/^\/\*\*[\s\S]*?\*\/\n/, "").trimEnd()

describe("README and docs/", () => {
  it("have TypeScript examples, and the README's quick starts are files of examples/", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(20)
    expect(snippets.filter((s) => s.page === "README.md").map((s) => s.file)).toEqual([
      "examples/quickstart.ts",
      "examples/quickstart-ai-sdk.ts",
      "examples/quickstart-anything.ts"
    ])
  })

  it("every relative link leads to a file of the repository, and every anchor to a heading", () => {
    const broken: Array<string> = []
    for (const page of pages) {
      for (const { target, where } of linksOf(page)) {
        const [file, anchor] = target.split("#") as [string, string | undefined]
        const resolved = file === "" ? page : path.relative(root, path.resolve(root, path.dirname(page), file))
        if (!fs.existsSync(path.join(root, resolved))) broken.push(`${where}: ${target}: no ${resolved}`)
        else if (anchor !== undefined && !anchorsOf(resolved).has(anchor)) broken.push(`${where}: ${target}: no heading #${anchor} in ${resolved}`)
      }
    }
    expect(broken).toEqual([])
    expect(linksOf("docs/README.md").length).toBeGreaterThanOrEqual(10)
  })

  describe("an example marked with its file is that file", () => {
    for (const snippet of snippets.filter((s) => s.file !== undefined)) {
      it(`${nameOf(snippet)}: ${snippet.file}`, () => {
        expect(snippet.code.trimEnd()).toBe(shown(snippet.file!))
      })
    }
  })

  describe("every TypeScript example type-checks against effect-gepa", () => {
    let diagnostics: Promise<ReadonlyMap<string, ReadonlyArray<string>>> | undefined
    const check = () => (diagnostics ??= typecheck())
    for (const snippet of snippets) {
      const title = snippet.code.split("\n").find((l) => l.trim() !== "" && !l.startsWith("import")) ?? ""
      it(`${nameOf(snippet)}: ${title.slice(0, 60)}`, async () => {
        expect((await check()).get(nameOf(snippet))).toEqual([])
      }, 300_000)
    }
  })

  it.effect("docs/cli.md's complete gepa.json is a config file gepa optimize starts a run with, without a warning", () =>
    Effect.gen(function*() {
      const config = blocks("docs/cli.md").filter((b) => b.lang === "json" && b.code.startsWith("{\n  \"train\"") && !b.code.includes("\"components\""))
      expect(config).toHaveLength(1)
      // the seed prompt file it names, where it names it (relative to the config file)
      const dir = makeTmpDir("gepa-config-")
      fs.mkdirSync(path.join(dir, "prompts"))
      fs.writeFileSync(path.join(dir, "prompts", "seed.txt"), "Answer the question.\n")
      const parsed = Either.getOrThrow(parseConfig(config[0]!.code, path.join(dir, "gepa.json")))
      expect(parsed.warnings).toEqual([])
      const settings = yield* Effect.either(resolveSettings(parsed.input, {}, { cwd: dir }))
      expect(Either.isRight(settings) ? "accepted" : settings.left.message).toBe("accepted")
    }))

  it.effect("docs/concepts.md quotes the summary the demo prints (every line but the time, which it leaves out)", () =>
    Effect.gen(function*() {
      const quote = blocks("docs/concepts.md").find((b) => b.lang === "text" && b.code.startsWith("Summary\n"))
      expect(quote).toBeDefined()
      const quoted = quote!.code.split("\n")
      const summaryEnd = quoted.findIndex((l) => l.trim() === "" || l === "...")
      const demo = yield* runDemo({ runDir: path.join(makeTmpDir("gepa-readme-"), "run"), writeReport: false })
      const printed = yield* summarize(demo)
      expect(quoted.slice(0, summaryEnd < 0 ? quoted.length : summaryEnd)).toEqual(printed.filter((l) => !/^ {2}time +/.test(l)))
    }), 120_000)
})
