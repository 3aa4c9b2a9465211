#!/usr/bin/env node
// The `gepa` command. It runs the compiled CLI (dist/, built by `npm run
// build`, and by `prepack` for the published package). In a checkout that
// has not been built, it falls back to compiling the TypeScript sources on
// the fly with tsx (a dev dependency): slower to start, same behaviour.
import { existsSync } from "node:fs"

const compiled = new URL("../dist/src/cli/main.js", import.meta.url)
let cli
if (existsSync(compiled)) {
  cli = await import(compiled.href)
} else {
  const { register } = await import("tsx/esm/api")
  register()
  cli = await import("../src/cli/main.ts")
}
await cli.main()
