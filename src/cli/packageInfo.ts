/**
 * What the CLI knows about its own package, read from `package.json` (the
 * one place the version and the optional peers' ranges are written): the
 * version `gepa --version` prints and the install command of the packages
 * the command needs. Loads nothing but Node's own modules, so it works when
 * the optional packages are missing.
 *
 * @since 0.2.0
 */
// node:fs, not FileSystem: read synchronously at start-up, where `--version`
// and `--help` must work without the optional @effect/platform installed
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { field } from "../internal/shared/fields.js"

interface PackageJson {
  readonly name: string
  readonly version: string
  readonly peerDependencies?: Readonly<Record<string, string>>
}

const isPackageJson = (u: unknown): u is PackageJson => typeof field(u, "name") === "string" && typeof field(u, "version") === "string"

// The CLI runs from src/cli (tsx) or dist/src/cli (the build): the package
// is the nearest folder upwards whose package.json is this package's.
const findPackage = (): PackageJson => {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const file = path.join(dir, "package.json")
    if (fs.existsSync(file)) {
      const json: unknown = JSON.parse(fs.readFileSync(file, "utf8"))
      if (isPackageJson(json) && json.name === "effect-gepa") return json
    }
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error("effect-gepa: package.json not found above the CLI")
    dir = parent
  }
}

let cached: PackageJson | undefined
const pkg = (): PackageJson => (cached ??= findPackage())

/**
 * The package's version, from its `package.json`.
 *
 * @since 0.2.0
 * @category getters
 */
export const packageVersion = (): string => pkg().version

/**
 * The optional packages every `gepa` command but `--help` and `--version`
 * needs.
 *
 * @since 0.2.0
 * @category constants
 */
export const commandPackages = ["@effect/cli", "@effect/platform", "@effect/platform-node"] as const

/**
 * `npm install` of `packages` at the ranges the package declares for them
 * (its peer dependencies), e.g. `npm install @effect/cli@^0.77.2 ...`: the
 * line the README gives and the CLI prints when they are missing.
 *
 * @since 0.2.0
 * @category getters
 */
export const installCommand = (packages: ReadonlyArray<string>): string => {
  const peers = pkg().peerDependencies ?? {}
  return `npm install ${packages.map((p) => (peers[p] === undefined ? p : `${p}@${peers[p]}`)).join(" ")}`
}

/**
 * The packages of `packages` that cannot be resolved from the CLI's module.
 *
 * @since 0.2.0
 * @category getters
 */
export const missingPackages = (
  packages: ReadonlyArray<string>,
  resolve: (specifier: string) => unknown = (specifier) => import.meta.resolve(specifier)
): ReadonlyArray<string> =>
  packages.filter((p) => {
    try {
      resolve(p)
      return false
    } catch {
      return true
    }
  })

/**
 * The one line printed when packages of the command are missing.
 *
 * @since 0.2.0
 * @category getters
 */
export const missingPackagesLine = (missing: ReadonlyArray<string>): string => {
  const last = missing.at(-1) ?? ""
  const names = missing.length <= 1 ? last : `${missing.slice(0, -1).join(", ")} and ${last}`
  return `gepa: the gepa command needs ${names}, ${missing.length === 1 ? "which is" : "which are"} not installed; ` +
    `install with: ${installCommand(commandPackages)}`
}
