#!/usr/bin/env node
// Completes package-lock.json after `npm install` on these machines.
//
// The registry reachable here serves only this platform's prebuilt binary
// packages (rollup's and msgpackr-extract's per-platform optional
// dependencies answer 404), so npm leaves the others out of the lock, and
// `npm ci` then rejects the lock as out of sync with package.json. This adds
// the missing entries with their os/cpu/libc, which is all npm needs to skip
// them on a platform they do not fit. Run it after every `npm install` that
// changes the lock: `node .ci/complete-lock.mjs`.
import { readFileSync, writeFileSync } from "node:fs"

const file = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(file, "utf8"))
const families = ["@rollup/rollup-", "@msgpackr-extract/msgpackr-extract-", "@esbuild/"]

/** os, cpu and libc from a binary package's name (e.g. rollup-linux-arm64-musl). */
const platformOf = (name) => {
  const tail = name.slice(name.indexOf("/") + 1).replace(/^(rollup|msgpackr-extract)-/, "")
  const [os, cpu, ...rest] = tail.split("-")
  const libc = os !== "linux" ? undefined
    : rest.some((p) => p.startsWith("musl")) ? "musl"
    : rest.some((p) => p.startsWith("gnu")) ? "glibc"
    : undefined
  return { os, cpu, libc }
}

const added = []
for (const entry of Object.values(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (!families.some((f) => dep.startsWith(f))) continue
    const key = `node_modules/${dep}`
    if (key in lock.packages) continue
    const { os, cpu, libc } = platformOf(dep)
    lock.packages[key] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      license: "MIT",
      optional: true,
      os: [os]
    }
    added.push(`${dep}@${version} (${os}/${cpu}${libc ? `/${libc}` : ""})`)
  }
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0))
)
writeFileSync(file, JSON.stringify({ ...lock, packages: sorted }, null, 2) + "\n")
console.log(added.length === 0 ? "package-lock.json is complete" : `added ${added.length} entries:\n  ${added.join("\n  ")}`)
