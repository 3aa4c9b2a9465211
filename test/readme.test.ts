/**
 * The README tells the truth: every TypeScript snippet in it type-checks
 * against the package entry (`effect-gepa`, mapped to `src/` by
 * tsconfig.json's paths, as an app would import it), and the demo summary it
 * quotes is what `npm start` prints.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { runDemo, summarize } from "../examples/demo/run.js"
import { tmpDir as makeTmpDir } from "./fixtures/tmp.js"

const root = path.resolve(import.meta.dirname, "..")
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")

interface Block {
  readonly lang: string
  /** line of the opening fence, 1-based */
  readonly line: number
  readonly code: string
}

const blocks = (markdown: string): ReadonlyArray<Block> => {
  const out: Array<Block> = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.findIndex((l, j) => j > i && l === "```")
    if (end < 0) throw new Error(`README.md:${i + 1}: unclosed code fence`)
    out.push({ lang: open[1]!, line: i + 1, code: lines.slice(i + 1, end).join("\n") })
    i = end
  }
  return out
}

const snippets = blocks(readme).filter((b) => b.lang === "ts" || b.lang === "typescript")

/** Type-checks the snippets as modules of one program; the diagnostics of each, with README line numbers. */
const typecheck = (): ReadonlyMap<number, ReadonlyArray<string>> => {
  const config = ts.readConfigFile(path.join(root, "tsconfig.json"), ts.sys.readFile)
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
  // snippets declare things for the reader that they do not all use
  const options: ts.CompilerOptions = { ...parsed.options, noEmit: true, noUnusedLocals: false }
  // virtual files at the repository root: the package's "type": "module"
  // applies, and `effect-gepa` resolves through the paths mapping
  const files = new Map(snippets.map((s) => [path.join(root, `README.md.line-${s.line}.ts`), s]))
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, language, ...rest) => {
    const snippet = files.get(fileName)
    // `export {}` makes a snippet without imports a module of its own
    return snippet ? ts.createSourceFile(fileName, `${snippet.code}\nexport {}\n`, language) : getSourceFile(fileName, language, ...rest)
  }
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (fileName) => files.has(fileName) || fileExists(fileName)
  const readFile = host.readFile.bind(host)
  host.readFile = (fileName) => {
    const snippet = files.get(fileName)
    return snippet ? `${snippet.code}\nexport {}\n` : readFile(fileName)
  }
  const program = ts.createProgram([...files.keys()], options, host)
  const result = new Map<number, Array<string>>(snippets.map((s) => [s.line, []]))
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const snippet = d.file ? files.get(d.file.fileName) : undefined
    if (d.file === undefined || snippet === undefined) {
      // a diagnostic outside the snippets (options, the library) fails every snippet
      for (const list of result.values()) list.push(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
      continue
    }
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0)
    result.get(snippet.line)!.push(
      `README.md:${snippet.line + 1 + line}: TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
    )
  }
  return result
}

describe("README", () => {
  it("has TypeScript snippets", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(8)
  })

  describe("every TypeScript snippet type-checks against effect-gepa", () => {
    let diagnostics: ReadonlyMap<number, ReadonlyArray<string>> | undefined
    const check = () => (diagnostics ??= typecheck())
    for (const snippet of snippets) {
      const title = snippet.code.split("\n").find((l) => l.trim() !== "" && !l.startsWith("import")) ?? ""
      it(`line ${snippet.line}: ${title.slice(0, 60)}`, () => {
        expect(check().get(snippet.line)).toEqual([])
      }, 120_000)
    }
  })

  it.effect("quotes the summary the demo prints (every line but the time)", () =>
    Effect.gen(function*() {
      const quote = blocks(readme).find((b) => b.lang === "text" && b.code.startsWith("Summary\n"))
      expect(quote).toBeDefined()
      const quoted = quote!.code.split("\n")
      const summaryEnd = quoted.findIndex((l) => l.trim() === "" || l === "...")
      const demo = yield* runDemo({ runDir: path.join(makeTmpDir("gepa-readme-"), "run"), writeReport: false })
      const printed = yield* summarize(demo)
      const untimed = (lines: ReadonlyArray<string>) => lines.map((l) => l.replace(/^( {2}time +)[\d.]+ s$/, "$1<time>"))
      expect(untimed(quoted.slice(0, summaryEnd < 0 ? quoted.length : summaryEnd))).toEqual(untimed(printed))
    }), 120_000)
})
