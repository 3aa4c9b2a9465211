import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { configDefaults, defineConfig } from "vitest/config"

const src = fileURLToPath(new URL("./src/", import.meta.url))

// test files that need a module graph of their own: a module mocked with
// vi.mock, or Effect's global metric registry read whole
const isolated = ["test/eventCost.test.ts", "test/telemetry.test.ts"]

export default defineConfig({
  resolve: {
    // `effect-gepa` (as the examples import it) is this repository's source
    alias: [
      { find: /^effect-gepa$/, replacement: `${src}index.ts` },
      { find: /^effect-gepa\/(.*)$/, replacement: `${src}$1.ts` }
    ]
  },
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // two workers at least (vitest's default is one less than the cores: one on two): a test file
    // spends much of its time waiting on the child processes, browsers and sockets it drives
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...isolated],
          // the files of a worker share one module graph: effect, the engine and the platform are
          // loaded once per worker, not once per file (a second or more of each file's time)
          isolate: false,
          // type tests (test/**/*.test-d.ts, expectTypeOf) run with tsc as part of `npm test`
          typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" }
        }
      },
      { extends: true, test: { name: "isolated", include: isolated, isolate: true } }
    ]
  }
})
