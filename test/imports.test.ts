/**
 * Imports only go down: the import graph of `src/` has no circle. Every edge
 * counts, type-only ones too (`import type`, `export type ... from`,
 * `typeof import("...")`), and dynamic `import("./...")` of relative paths:
 * a circle through types still makes a reader go back and forth, and a live
 * re-export that only works because of load order is a circle waiting to
 * break. A failure names each circle, file by file.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const root = path.resolve(import.meta.dirname, "..")
const src = path.join(root, "src")

/** The module specifiers a file imports, of every kind. */
const specifiersOf = (fileName: string, text: string): ReadonlyArray<string> => {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const out: Array<string> = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      if (ts.isStringLiteral(node.moduleSpecifier)) out.push(node.moduleSpecifier.text)
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const e = node.moduleReference.expression
      if (ts.isStringLiteral(e)) out.push(e.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0]
      if (arg !== undefined && ts.isStringLiteralLike(arg)) out.push(arg.text)
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) out.push(arg.literal.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return out
}

/** A relative specifier as the `.ts` file it names, when that file exists. */
const target = (from: string, specifier: string, exists: (file: string) => boolean): string | undefined => {
  if (!specifier.startsWith(".")) return undefined
  const base = path.resolve(path.dirname(from), specifier)
  const candidates = [base.replace(/\.js$/, ".ts"), `${base}.ts`, path.join(base, "index.ts"), base]
  return candidates.find((c) => c.endsWith(".ts") && exists(c))
}

/**
 * The circles of a graph: one per strongly connected component with more
 * than one file (or a file importing itself), each as a path that returns
 * to its start.
 */
const circlesOf = (graph: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const components: Array<ReadonlyArray<string>> = []
  const connect = (v: string): void => {
    index.set(v, counter)
    low.set(v, counter)
    counter++
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w)
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0))
    }
    if (low.get(v) !== index.get(v)) return
    const component: Array<string> = []
    for (;;) {
      const w = stack.pop()
      if (w === undefined) break
      onStack.delete(w)
      component.push(w)
      if (w === v) break
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component)
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v)
  // within a component, a shortest path from its first file back to itself
  return components.map((component) => {
    const members = new Set(component)
    const start = [...component].sort()[0] ?? ""
    const previous = new Map<string, string>()
    const queue = [start]
    for (let i = 0; i < queue.length; i++) {
      const v = queue[i] ?? ""
      for (const w of graph.get(v) ?? []) {
        if (!members.has(w)) continue
        if (w === start) {
          const loop = [v]
          for (let at = v; at !== start;) {
            at = previous.get(at) ?? start
            loop.unshift(at)
          }
          return [...loop, start]
        }
        if (!previous.has(w)) {
          previous.set(w, v)
          queue.push(w)
        }
      }
    }
    return [...component, component[0] ?? ""]
  })
}

const filesUnder = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? filesUnder(p) : p.endsWith(".ts") ? [p] : []
  })

const graphOf = (files: ReadonlyArray<string>, read: (file: string) => string): Map<string, ReadonlyArray<string>> => {
  const known = new Set(files)
  const graph = new Map<string, ReadonlyArray<string>>()
  for (const file of files) {
    const edges = new Set<string>()
    for (const s of specifiersOf(file, read(file))) {
      const t = target(file, s, (c) => known.has(c))
      if (t !== undefined) edges.add(t)
    }
    graph.set(file, [...edges])
  }
  return graph
}

describe("the import graph of src/", () => {
  it("has no circle", () => {
    const files = filesUnder(src)
    const graph = graphOf(files, (f) => fs.readFileSync(f, "utf8"))
    const circles = circlesOf(graph).map((c) => c.map((f) => path.relative(src, f)).join(" -> "))
    expect(circles, `import circles in src/:\n${circles.join("\n")}`).toEqual([])
    // the walk sees the whole tree, not an empty one
    expect(files.length).toBeGreaterThan(50)
    expect(graph.get(path.join(src, "Gepa.ts"))?.length ?? 0).toBeGreaterThan(3)
  })

  it("counts every kind of import, and names the files of a circle", () => {
    const files: Record<string, string> = {
      "/p/A.ts": `import type { B } from "./B.js"\nexport const a = 1`,
      "/p/B.ts": `export type B = typeof import("./internal/c.js")`,
      "/p/internal/c.ts": `export const c = () => import("../A.js")\nexport * from "effect"`,
      "/p/D.ts": `export { a } from "./A.js"`,
      "/p/E.ts": `// import { x } from "./D.js" is only a comment\nexport const e = "./D.js"`
    }
    const graph = graphOf(Object.keys(files), (f) => files[f] ?? "")
    expect(graph.get("/p/D.ts")).toEqual(["/p/A.ts"])
    expect(graph.get("/p/E.ts")).toEqual([])
    expect(circlesOf(graph)).toEqual([["/p/A.ts", "/p/B.ts", "/p/internal/c.ts", "/p/A.ts"]])
    expect(circlesOf(new Map([["/p/S.ts", ["/p/S.ts"]]]))).toEqual([["/p/S.ts", "/p/S.ts"]])
  })
})

describe("the package's exports", () => {
  it("are the main entry and each public module of src/, by name: no wildcard, no CLI or engine internals", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { readonly exports: Record<string, unknown> }
    const faces = fs.readdirSync(src).filter((f) => /^[A-Z]\w*\.ts$/.test(f)).map((f) => f.slice(0, -3)).sort()
    expect(Object.keys(pkg.exports).sort(), "package.json \"exports\" lists \".\", \"./package.json\" and each public module of src/ (add a new one there)")
      .toEqual([".", "./package.json", ...faces.map((f) => `./${f}`)].sort())
    for (const face of faces) {
      expect(pkg.exports[`./${face}`]).toEqual({ types: `./dist/src/${face}.d.ts`, default: `./dist/src/${face}.js` })
    }
    // what the main entry re-exports is a subpath of its own too
    const index = fs.readFileSync(path.join(src, "index.ts"), "utf8")
    for (const m of index.matchAll(/from "\.\/(\w+)\.js"/g)) expect(faces).toContain(m[1])
  })
})
