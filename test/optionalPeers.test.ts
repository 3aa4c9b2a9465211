/**
 * A library user who uses none of the optional integrations installs none of
 * them: the runtime import graph of the main entry (static imports and
 * re-exports, type-only imports excluded, dynamic `import()` not followed)
 * must not reach @effect/ai*, @effect/opentelemetry, @opentelemetry/*, or the
 * Vercel AI SDK (`ai`, `@ai-sdk/*`), whose spec the library types structurally.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")

const staticSpecifiers = (source: string): Array<string> => {
  const out: Array<string> = []
  // `import x from "y"`, `import "y"`, `export * as x from "y"`, `export { a } from "y"`; not `import type`
  const re = /(?:^|\n)[ \t]*(?:import|export)(\s+type\b)?\s*(?:[\w$*{},\s]+?\s+from\s*)?["']([^"'\n]+)["']/g
  for (const m of source.matchAll(re)) {
    if (m[1] !== undefined) continue
    out.push(m[2]!)
  }
  return out
}

const graph = (entry: string): { files: Set<string>; packages: Set<string> } => {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    for (const spec of staticSpecifiers(readFileSync(file, "utf8"))) {
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec.replace(/\.js$/, ".ts")))
      else packages.add(spec)
    }
  }
  visit(entry)
  return { files, packages }
}

const optional =
  /^(@effect\/ai|@effect\/opentelemetry|@opentelemetry\/|@effect\/cli|@effect\/platform|@effect\/cluster|@effect\/rpc|@effect\/sql|tsx|ai$|ai\/|@ai-sdk\/|zod)/

describe("optional peer dependencies", () => {
  it("the main entry's import graph loads no optional integration", () => {
    const { files, packages } = graph(resolve(root, "src/index.ts"))
    expect(files.size).toBeGreaterThan(20)
    expect(packages.has("effect")).toBe(true)
    expect([...packages].filter((p) => optional.test(p))).toEqual([])
    // the modules that do need them are separate entry points
    const rel = [...files].map((f) => f.slice(root.length + 1))
    expect(rel).not.toContain("src/AiLanguageModel.ts")
    // the dashboard serves HTTP with @effect/platform: its own entry point
    expect(rel).not.toContain("src/Dashboard.ts")
    expect(rel).toContain("src/Telemetry.ts")
    expect(rel).toContain("src/ModelString.ts")
    // the AI SDK's spec is a structural type there: its model layer and the function adapter load none of it
    expect(rel).toContain("src/AiSdkLanguageModel.ts")
    expect(rel).toContain("src/FunctionAdapter.ts")
    expect([...graph(resolve(root, "src/AiSdkLanguageModel.ts")).packages].filter((p) => p !== "effect" && !p.startsWith("effect/"))).toEqual([])
  })

  it("the @effect/ai entry point does import @effect/ai (the walker sees it)", () => {
    const { packages } = graph(resolve(root, "src/AiLanguageModel.ts"))
    expect([...packages].some((p) => p.startsWith("@effect/ai/"))).toBe(true)
  })

  it("each optional integration is an optional peer and a subpath export", () => {
    const pkg = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
      peerDependencies: Record<string, string>
      peerDependenciesMeta: Record<string, { optional?: boolean }>
      dependencies: Record<string, string>
      exports: Record<string, unknown>
    }
    for (const name of ["@effect/ai", "@effect/ai-anthropic", "@effect/opentelemetry", "ai", "@ai-sdk/provider"]) {
      expect(pkg.peerDependencies[name]).toBeDefined()
      expect(pkg.peerDependenciesMeta[name]?.optional).toBe(true)
      expect(pkg.dependencies[name]).toBeUndefined()
    }
    // the AI SDK majors the structural spec types fit: v3 (ai 6) and v4 (ai 7)
    expect(pkg.peerDependencies["ai"]).toBe("^6.0.0 || ^7.0.0")
    expect(pkg.peerDependencies["@ai-sdk/provider"]).toBe("^3.0.0 || ^4.0.0")
    // google: models go through Gemini's OpenAI-compatible endpoint; no
    // release of @effect/ai-google installs beside @effect/ai 0.37
    expect(pkg.peerDependencies["@effect/ai-google"]).toBeUndefined()
    // every public module is a subpath export (`effect-gepa/AiLanguageModel`); test/imports.test.ts checks the list
    for (const name of ["./AiLanguageModel", "./Telemetry", "./Dashboard", "./ClusterRunner"]) expect(pkg.exports[name]).toBeDefined()
  })

  it("with the optional peers uninstalled, the main entry loads and works; naming a provider says what to install", async () => {
    // asynchronously: a synchronous child blocks the test worker's event loop (vitest's calls to its main process time out)
    const { stdout: out } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--import", "./test/fixtures/hideOptionalPeers.mjs", "test/fixtures/withoutOptionalPeers.mts"],
      { cwd: root, encoding: "utf8", env: { ...process.env, HIDE_OPTIONAL_PEERS_HOOK: "" } }
    )
    const report = JSON.parse(out.trim().split("\n").at(-1)!) as Record<string, unknown>
    expect(report).toEqual({
      exports: expect.any(Number),
      answer: "ok",
      aiSdk: "ok",
      missing: "Invalid configuration \"model\": install @effect/ai-anthropic to use anthropic: models " +
        "(npm install @effect/ai@^0.37 @effect/ai-anthropic)",
      // the hook does hide the packages: the @effect/ai entry point cannot load
      subpath: "ERR_MODULE_NOT_FOUND"
    })
  }, 120_000)
})
