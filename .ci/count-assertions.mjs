#!/usr/bin/env node
// Counts type assertions in TypeScript sources, read with the compiler's own
// parser (so a `!` in `!==` or a word "as" in a comment never counts):
//   - `as` casts (`x as T`, `<T>x`), not counting `as const`, which narrows
//     a literal and asserts nothing;
//   - non-null assertions (`x!`).
// Usage: node .ci/count-assertions.mjs [--files] [dir ...]   (default: src)
// --files lists the count per file, most first.
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import ts from "typescript"

const args = process.argv.slice(2)
const perFile = args.includes("--files")
const roots = args.filter((a) => !a.startsWith("--"))

const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : isSource(name) ? [path] : []
  })
const isSource = (name) => /\.(m|c)?tsx?$/.test(name) && !name.endsWith(".d.ts")
const filesOf = (root) => statSync(root).isDirectory() ? walk(root) : [root]

const isConst = (type) =>
  ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) && type.typeName.text === "const"

let casts = 0
let nonNull = 0
const rows = []
for (const file of (roots.length > 0 ? roots : ["src"]).flatMap(filesOf).sort()) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  let c = 0
  let n = 0
  const visit = (node) => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !isConst(node.type)) c++
    else if (ts.isNonNullExpression(node)) n++
    ts.forEachChild(node, visit)
  }
  visit(source)
  casts += c
  nonNull += n
  if (c + n > 0) rows.push([file, c, n])
}
if (perFile) {
  for (const [file, c, n] of rows.sort((a, b) => b[1] + b[2] - a[1] - a[2])) console.log(`${String(c).padStart(4)} ${String(n).padStart(4)}  ${file}`)
}
console.log(`as casts: ${casts}, non-null assertions: ${nonNull}`)
