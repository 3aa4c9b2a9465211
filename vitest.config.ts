import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const src = fileURLToPath(new URL("./src/", import.meta.url))

export default defineConfig({
  resolve: {
    // `effect-gepa` (as the examples import it) is this repository's source
    alias: [
      { find: /^effect-gepa$/, replacement: `${src}index.ts` },
      { find: /^effect-gepa\/(.*)$/, replacement: `${src}$1.ts` }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    // type tests (test/**/*.test-d.ts, expectTypeOf) run with tsc as part of `npm test`
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
