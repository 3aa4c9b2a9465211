// The OpenAI layer's tests with `openai` resolved to the openai 7 that
// .ci/openai-7.sh installed into $OPENAI7_DIR (this repository keeps openai 6,
// the line Node 20 installs).
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const dir = process.env["OPENAI7_DIR"]
if (dir === undefined) throw new Error("OPENAI7_DIR is not set: run .ci/openai-7.sh")
const src = fileURLToPath(new URL("../../src/", import.meta.url))

export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  resolve: {
    alias: [
      { find: /^effect-gepa$/, replacement: `${src}index.ts` },
      { find: /^effect-gepa\/(.*)$/, replacement: `${src}$1.ts` },
      { find: /^openai$/, replacement: `${dir}/node_modules/openai/index.mjs` },
      { find: /^openai\/(.*)$/, replacement: `${dir}/node_modules/openai/$1.mjs` }
    ]
  },
  test: {
    include: ["test/openai.test.ts", "test/hostile.test.ts", "test/e2e.test.ts", ".ci/openai-7/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
