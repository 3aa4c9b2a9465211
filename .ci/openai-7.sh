#!/usr/bin/env bash
# openai 7 (it needs Node 22) under OpenAiLanguageModel: package.json accepts
# openai ^6 || ^7, npm installs 6 on Node 20 and 7 on Node 22 and later (it
# prefers a version whose engines fit), and this repository's lock keeps 6.
# Installs openai@^7 into a temporary folder, type-checks the modules that
# import openai against it, and runs the OpenAI layer's tests
# (test/openai.test.ts, test/hostile.test.ts, test/e2e.test.ts, and a check
# that the client is openai 7) with `openai` resolved to it, on Node 22+.
#
# Node: `node` when it is 22 or later, else $NODE22, else the `node@22`
# package from the registry, installed into the temporary folder.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
echo '{ "name": "openai-7-check", "private": true }' > package.json
packages=(openai@^7)
node_dir="$(dirname "$(command -v node)")"
if [ "$(node -p 'Number(process.versions.node.split(".")[0])')" -lt 22 ]; then
  if [ -n "${NODE22:-}" ]; then node_dir="$(dirname "$NODE22")"; else packages+=(node@22); node_dir="$work/node_modules/node/bin"; fi
fi
npm install --no-audit --no-fund --loglevel=error --prefer-offline "${packages[@]}" > install.log 2>&1 || { cat install.log >&2; exit 1; }
version="$(node -p 'require("./node_modules/openai/package.json").version')"
cat > tsconfig.json <<JSON
{
  "extends": "$root/tsconfig.json",
  "compilerOptions": {
    "noEmit": true, "rootDir": "$root", "typeRoots": ["$root/node_modules/@types"],
    "paths": { "openai": ["$work/node_modules/openai/index.d.mts"], "openai/*": ["$work/node_modules/openai/*.d.mts"] }
  },
  "include": [],
  "files": ["$root/src/OpenAiLanguageModel.ts", "$root/src/internal/models/openaiWire.ts"]
}
JSON
"$root/node_modules/.bin/tsc" -p tsconfig.json
echo "openai-7: src/OpenAiLanguageModel.ts and src/internal/models/openaiWire.ts type-check against openai $version"
cd "$root"
OPENAI7_DIR="$work" PATH="$node_dir:$PATH" node_modules/.bin/vitest run --config .ci/openai-7/vitest.config.ts
echo "openai-7: the OpenAI layer's tests pass with openai $version on Node $(PATH="$node_dir:$PATH" node -v)"
