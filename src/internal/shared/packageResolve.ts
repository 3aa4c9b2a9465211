/**
 * Lets a user's module (an evaluation, a metric, an evaluator) import
 * `effect-gepa` and the packages it depends on (`effect`, `@effect/*`) when
 * it cannot resolve them itself: a module in a folder with no
 * `node_modules`, next to a checkout of this package that was never built
 * or installed.
 *
 * A Node resolve hook (registered once, before the first user module is
 * imported) tries the ordinary resolution first and changes nothing that
 * resolves. Only a bare specifier that is not found is retried:
 *
 * - `effect-gepa` and `effect-gepa/<Module>` map to the modules of the copy
 *   of effect-gepa that is running (its TypeScript sources under tsx, its
 *   compiled files otherwise), so the user's module shares one module graph
 *   (one Effect, one set of tags) with the runner or CLI that loaded it;
 * - any other bare specifier is resolved from this package's folder, where
 *   its dependencies are installed.
 *
 * The hook runs in Node's loader thread, so it is plain JavaScript kept as
 * source text here (a data: URL), independent of how this file itself was
 * compiled or loaded.
 *
 * @internal
 */
// node:fs, not FileSystem: module resolution (the package.json above this
// module), synchronous and before the optional @effect/platform is loaded
import * as fs from "node:fs"
import * as nodeModule from "node:module"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

/** What the hook needs to know about the running copy of the package. @internal */
export interface Target {
  /** file URL of the folder holding the package's public modules (`src/` or `dist/src/`), with a trailing slash */
  readonly modules: string
  /** their extension: ".ts" when running from the sources, ".js" when compiled */
  readonly extension: string
  /** file URL of the package's package.json: other packages resolve from there */
  readonly packageJson: string
}

const hookSource = `
let target
export async function initialize(data) { target = data }
const name = "effect-gepa"
const isBare = (s) => !s.startsWith(".") && !s.startsWith("/") && !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s)
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context)
  } catch (error) {
    if (error?.code !== "ERR_MODULE_NOT_FOUND" || !isBare(specifier) || target === undefined) throw error
    // when the retry fails too, the user's module is the one to name
    try {
      if (specifier === name || specifier.startsWith(name + "/")) {
        const sub = specifier === name ? "index" : specifier.slice(name.length + 1)
        if (sub.startsWith("internal/") || sub.includes("..")) throw error
        return await next(new URL(sub + target.extension, target.modules).href, context)
      }
      return await next(specifier, { ...context, parentURL: target.packageJson })
    } catch {
      throw error
    }
  }
}
`

/**
 * The running copy of the package, found from this file's own location
 * (`<modules>/internal/shared/packageResolve.{ts,js}`); undefined when it
 * is not inside a package folder (bundled, say).
 *
 * @internal
 */
export const target = (): Target | undefined => {
  const here = fileURLToPath(import.meta.url)
  const modules = path.resolve(path.dirname(here), "..", "..")
  let dir = modules
  while (!fs.existsSync(path.join(dir, "package.json"))) {
    const up = path.dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
  return {
    modules: pathToFileURL(modules + path.sep).href,
    extension: path.extname(here),
    packageJson: pathToFileURL(path.join(dir, "package.json")).href
  }
}

let registered = false

/**
 * Registers the hook (once per process). Without `module.register` (an old
 * Node) or a package folder, user modules resolve as Node resolves them.
 *
 * @internal
 */
export const register = (): void => {
  if (registered) return
  registered = true
  const found = target()
  if (found === undefined || typeof nodeModule.register !== "function") return
  nodeModule.register(`data:text/javascript,${encodeURIComponent(hookSource)}`, { data: found })
}
