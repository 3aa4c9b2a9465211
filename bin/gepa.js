#!/usr/bin/env node
// The `gepa` command. It runs the compiled CLI (dist/, built by `npm run
// build`, and by `prepack` for the published package). In a checkout that
// has not been built, it falls back to compiling the TypeScript sources on
// the fly with tsx (a dev dependency): slower to start, same behaviour.
import { existsSync } from "node:fs"

// where the build puts the CLI: dist/src/ when the build's rootDir is the
// package, dist/ when it is src/
const compiled = ["../dist/src/cli/main.js", "../dist/cli/main.js"]
  .map((file) => new URL(file, import.meta.url))
  .find((url) => existsSync(url))

let cli
if (compiled !== undefined) {
  cli = await import(compiled.href)
} else {
  const source = new URL("../src/cli/main.ts", import.meta.url)
  const tsx = existsSync(source) ? await import("tsx/esm/api").catch(() => undefined) : undefined
  if (tsx === undefined) {
    process.stderr.write("gepa: the compiled CLI is missing (dist/src/cli/main.js); run `npm run build`\n")
    process.exit(1)
  }
  tsx.register()
  cli = await import(source.href)
}
await cli.main()
