#!/usr/bin/env bash
# The AI SDK 7 line against AiSdkLanguageModel and FunctionAdapter: installs
# ai@7, @ai-sdk/provider@4 and @ai-sdk/openai@4 (they need Node 22) into a
# temporary app beside this repository's effect, type-checks
# .ci/ai-sdk-7/check.ts against them, and runs it on Node 22+: a v4 mock
# model, @ai-sdk/openai 4 on a local server (a 429 retried), generateText in
# the function adapter, a 401 that stops the run. The repository itself
# stays on ai 6 (Node 20).
#
# Node: `node` when it is 22 or later, else $NODE22, else the `node@22`
# package from the registry, installed into the temporary app.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
echo '{ "name": "ai-sdk-7-check", "private": true, "type": "module" }' > package.json
packages=(ai@^7 @ai-sdk/provider@^4 @ai-sdk/openai@^4 zod@^4)
node_bin="$(command -v node)"
if [ "$(node -p 'Number(process.versions.node.split(".")[0])')" -lt 22 ]; then
  if [ -n "${NODE22:-}" ]; then node_bin="$NODE22"; else packages+=(node@22); node_bin="$work/node_modules/.bin/node"; fi
fi
npm install --no-audit --no-fund --loglevel=error --prefer-offline "${packages[@]}" > install.log 2>&1 || { cat install.log >&2; exit 1; }
ln -s "$root/node_modules/effect" node_modules/effect
sed "s|ROOT/|$root/|g" "$root/.ci/ai-sdk-7/check.ts" > check.ts
cat > tsconfig.json <<JSON
{
  "compilerOptions": {
    "target": "ES2022", "lib": ["ES2023", "DOM"], "module": "NodeNext", "moduleResolution": "NodeNext",
    "strict": true, "exactOptionalPropertyTypes": true, "noUncheckedIndexedAccess": true, "skipLibCheck": true,
    "noEmit": true, "types": ["node"], "typeRoots": ["$root/node_modules/@types"]
  },
  "files": ["check.ts"]
}
JSON
"$root/node_modules/.bin/tsc" -p tsconfig.json
echo "ai-sdk-7: type-checked against ai $(node -p 'require("./node_modules/ai/package.json").version'), @ai-sdk/provider $(node -p 'require("./node_modules/@ai-sdk/provider/package.json").version'), @ai-sdk/openai $(node -p 'require("./node_modules/@ai-sdk/openai/package.json").version')"
"$node_bin" --import "$root/node_modules/tsx/dist/esm/index.mjs" check.ts
