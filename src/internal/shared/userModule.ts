/**
 * Imports a module of the user's (a metric, an evaluator, a cluster
 * evaluation) by path: JavaScript with `import()`, TypeScript through tsx's
 * ESM API (`tsImport`), loaded only for a TypeScript file. tsx compiles the
 * module as ESM or CommonJS by its own package type and resolves its imports
 * as Node does, so `.ts`, `.mts` and `.cts` load wherever they sit, also from
 * the compiled `gepa` bin. Before the first, `packageResolve` lets a module
 * with no `node_modules` of its own import `effect-gepa` and its dependencies.
 *
 * @internal
 */
// node:fs, not FileSystem: part of loading a user's module (how Node will
// read it: its package.json's "type"), done beside import() and outside
// any Effect context
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { field } from "./fields.js"
import * as packageResolve from "./packageResolve.js"

const isTypeScript = (file: string): boolean => /\.[cm]?tsx?$/i.test(file)

/**
 * With `sameGraphFirst`, the user's module shares one module graph with the
 * process: a plain `import()` first (a process that already runs TypeScript:
 * tsx, a test runner; not where Node would strip the types itself, by rules
 * of its own), else tsx registered for the whole process. With
 * `orIsolated` as well, a module that cannot load that way (a `.ts` file that
 * tsx compiles to CommonJS, whose `require` may not see the ES modules it
 * imports) is loaded through `tsImport` instead, with copies of its own of
 * what it imports: slower to start, but it loads wherever it sits.
 *
 * @internal
 */
export const importUserModule = async (
  file: string,
  options?: { readonly sameGraphFirst?: boolean; readonly orIsolated?: boolean }
): Promise<unknown> => {
  if (options?.sameGraphFirst === true && options.orIsolated === true && isTypeScript(file)) {
    try {
      return await importUserModule(file, { sameGraphFirst: true })
    } catch {
      return importUserModule(file)
    }
  }
  // a module outside any project (no node_modules of its own) may import effect-gepa and its dependencies
  packageResolve.register()
  try {
    return await load(file, options)
  } catch (e) {
    const hint = requireFailure(e) ? commonJsHint(file) : undefined
    if (hint === undefined) throw e
    throw new Error(`${e instanceof Error ? e.message : String(e)} (${hint})`, { cause: e })
  }
}

/**
 * Whether this file runs as TypeScript: the process already has a loader
 * for TypeScript (tsx, a test runner), which a plain `import()` of the
 * user's module goes through.
 */
const runsAsTypeScript = isTypeScript(new URL(import.meta.url).pathname)

/**
 * Whether Node strips TypeScript types itself (`process.features.typescript`:
 * on by default from Node 22.18 and 23.6). Its loader takes a `.ts` file
 * when nothing else does, by rules of its own: no `./x.js` import of an
 * `x.ts`, no enums, and a `.ts` in a CommonJS package read as CommonJS (a
 * module with `import`/`export` fails, after a warning on stderr).
 */
const nodeStripsTypes = (): boolean => {
  const typescript = field(process.features, "typescript")
  return typescript !== undefined && typescript !== false
}

const load = async (file: string, options?: { readonly sameGraphFirst?: boolean }): Promise<unknown> => {
  const url = pathToFileURL(file).href
  if (!isTypeScript(file)) return importUrl(url)
  if (options?.sameGraphFirst === true) {
    // a plain import() first when it can only succeed through a TypeScript loader of the process's
    // own: where Node strips types itself, it would be Node that answers, with other rules than tsx's
    if (runsAsTypeScript || !nodeStripsTypes()) {
      try {
        return await importUrl(url)
      } catch (e) {
        if (field(e, "code") !== "ERR_UNKNOWN_FILE_EXTENSION") throw e
      }
    }
    // tsx's hooks for the whole process, not tsImport's: tsImport resolves everything the module imports
    // under a namespace of its own, so effect and this package would load a second time, as other
    // modules (a second Effect runtime, ~1 s more to start). Node keeps the failed attempt under the
    // plain URL: the module loads under a marked one.
    if (!tsxRegistered) {
      const tsx = await tsxApi()
      tsx.register()
      tsxRegistered = true
    }
    return importUrl(`${url}?with-tsx`)
  }
  const loaded: Promise<unknown> = (await tsxApi()).tsImport(url, { parentURL: import.meta.url })
  return loaded
}

let tsxRegistered = false

const tsxApi = () =>
  import("tsx/esm/api").catch((e: unknown) => {
    throw new Error(`loading a TypeScript module needs the "tsx" package (npm install tsx): ${e instanceof Error ? e.message : String(e)}`)
  })

// what `require` of a CommonJS-compiled module fails with when it cannot load what the module imports
const requireFailure = (e: unknown): boolean => {
  const code = field(e, "code")
  return code === "MODULE_NOT_FOUND" || code === "ERR_REQUIRE_CYCLE_MODULE" || code === "ERR_REQUIRE_ESM" ||
    code === "ERR_REQUIRE_ASYNC_MODULE"
}

/**
 * Why a `.ts` module may have failed: outside a `"type": "module"` package
 * it is compiled as CommonJS, whose `require` neither loads ES modules in
 * every case nor sees the resolution of `effect-gepa` above. Undefined when
 * the module is ESM by its extension or its package.
 *
 * @internal
 */
export const commonJsHint = (file: string): string | undefined => {
  if (!/\.tsx?$/i.test(file)) return undefined
  let dir = path.dirname(path.resolve(file))
  for (;;) {
    const manifest = path.join(dir, "package.json")
    if (fs.existsSync(manifest)) {
      try {
        if (field(JSON.parse(fs.readFileSync(manifest, "utf8")), "type") === "module") return undefined
      } catch {
        // unreadable: Node treats the folder as CommonJS too
      }
      break
    }
    const up = path.dirname(dir)
    if (up === dir) break
    dir = up
  }
  return `${path.basename(file)} is loaded as CommonJS here: name it .mts, or put it in a package whose package.json has "type": "module"`
}

// a module's namespace, of no known shape until its exports are checked
const importUrl = (url: string): Promise<unknown> => import(url)
