/**
 * Imports a module of the user's (a metric, an evaluator, a cluster
 * evaluation) by path: JavaScript with `import()`, TypeScript through tsx's
 * ESM API (`tsImport`), loaded only for a TypeScript file. tsx compiles the
 * module as ESM or CommonJS by its own package type and resolves its imports
 * as Node does, so `.ts`, `.mts` and `.cts` load wherever they sit, also from
 * the compiled `gepa` bin.
 *
 * @internal
 */
import { pathToFileURL } from "node:url"
import { field } from "./fields.js"

const isTypeScript = (file: string): boolean => /\.[cm]?tsx?$/i.test(file)

/**
 * With `sameGraphFirst`, a plain `import()` is tried first, so that a process
 * that already runs TypeScript (tsx, a test runner) shares one module graph
 * with the user's module; tsx is the fallback for a plain Node process.
 *
 * @internal
 */
export const importUserModule = async (file: string, options?: { readonly sameGraphFirst?: boolean }): Promise<unknown> => {
  const url = pathToFileURL(file).href
  if (!isTypeScript(file)) return importUrl(url)
  if (options?.sameGraphFirst === true) {
    try {
      return await importUrl(url)
    } catch (e) {
      if (field(e, "code") !== "ERR_UNKNOWN_FILE_EXTENSION") throw e
    }
  }
  const tsx = await import("tsx/esm/api").catch((e: unknown) => {
    throw new Error(`loading a TypeScript module needs the "tsx" package (npm install tsx): ${e instanceof Error ? e.message : String(e)}`)
  })
  const loaded: Promise<unknown> = tsx.tsImport(url, { parentURL: import.meta.url })
  return loaded
}

// a module's namespace, of no known shape until its exports are checked
const importUrl = (url: string): Promise<unknown> => import(url)
