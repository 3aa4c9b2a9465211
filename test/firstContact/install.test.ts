import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { commandPackages, installCommand, missingPackagesLine } from "../../src/cli/packageInfo.js"
import { ensureBuilt, gepa, root } from "../fixtures/bin.js"
import { tmpDir } from "../fixtures/tmp.js"

const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  version: string
  peerDependencies: Record<string, string>
}
const hideCli = ["--import", path.join(root, "test", "fixtures", "hideCliPeers.mjs")]

// the README's install block, as .ci/readme-install.sh reads it
const installLines = (): ReadonlyArray<string> => {
  const at = readme.indexOf("\n## Install\n")
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))![1]!
  return block.split("\n").filter((l) => l.trim() !== "").map((l) => l.replace(/\s+#.*$/, ""))
}

describe("the README's install lines", () => {
  it("pin every package to a range that is not npm's latest (Effect 4), and the command's line is the CLI's", () => {
    const lines = installLines()
    expect(lines).toHaveLength(3)
    for (const line of lines) {
      for (const word of line.split(" ").slice(2).filter((w) => !w.startsWith("-") && w !== "effect-gepa")) {
        expect(word, `${line}: ${word} has no version range`).toMatch(/.@[~^]?\d/)
      }
    }
    expect(lines[1]).toBe(installCommand(commandPackages))
    // the ranges are the package's own peer ranges
    for (const name of commandPackages) expect(lines[1]).toContain(`${name}@${pkg.peerDependencies[name]}`)
  })

  it("say one thing about Effect versions, and the version is package.json's", () => {
    expect(readme).not.toMatch(/any 3\.x from 3\.17 on\)/)
    expect(readme).toContain("effect@^3.22")
  })

  it("the version is one: package.json's is the CHANGELOG's newest, and no @since is newer", () => {
    const changelog = fs.readFileSync(path.join(root, "CHANGELOG.md"), "utf8")
    const newest = /^## .*$/m.exec(changelog)?.[0] ?? ""
    expect(newest, `the CHANGELOG's newest heading, ${newest}, names package.json's version`).toContain(pkg.version)
    const order = (v: string) => v.split(".").map(Number).reduce((a, n) => a * 1000 + n, 0)
    const src = path.join(root, "src")
    const files = fs.readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
    for (const file of files) {
      for (const [, since] of fs.readFileSync(path.join(src, file), "utf8").matchAll(/@since (\d+\.\d+\.\d+)/g)) {
        expect(order(since!), `src/${file}: @since ${since} is newer than ${pkg.version}`).toBeLessThanOrEqual(order(pkg.version))
      }
    }
  })
})

describe("gepa without its optional packages", () => {
  beforeAll(ensureBuilt, 180_000)

  it("a command is one line naming the packages and the install command, exit 2, nothing written", async () => {
    const dir = tmpDir("gepa-nocli-")
    const r = await gepa(dir, ["optimize", "--train", "t.jsonl", "--run-dir", "run"], { nodeArgs: hideCli })
    expect(r.status).toBe(2)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr.trim()).toBe(missingPackagesLine([...commandPackages]))
    expect(r.stderr).toContain(installLines()[1])
    expect(fs.readdirSync(dir)).toEqual([])
  }, 60_000)

  it("--version, -v and version print package.json's version; --help works", async () => {
    const dir = tmpDir("gepa-nocli-")
    for (const flag of ["--version", "-v", "version"]) {
      const r = await gepa(dir, [flag], { nodeArgs: hideCli })
      expect(r.stderr, flag).toBe("")
      expect(r.status, flag).toBe(0)
      expect(r.stdout.trim(), flag).toBe(pkg.version)
    }
    const help = await gepa(dir, ["--help"], { nodeArgs: hideCli })
    expect(help.status).toBe(0)
    expect(help.stdout).toContain("Usage: gepa")
  }, 60_000)
})
