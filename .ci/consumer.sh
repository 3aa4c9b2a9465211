#!/usr/bin/env bash
# The package as a user gets it: packs the tarball (prepack builds dist),
# installs it into a temporary app that has its own Effect 3.x (another minor
# than the one this repository pins), compiles the app with moduleResolution
# nodenext and declaration: true, runs it, and checks that the app has one
# copy of Effect and that no "Executing an Effect versioned ..." warning is
# printed. The install uses npm's cache only (filled by `npm ci`); when a
# package is not cached yet (the app's Effect version on a first run), it
# falls back to --prefer-offline, which fetches only what is missing.
#
# Usage: .ci/consumer.sh   (CONSUMER_EFFECT_VERSION overrides the app's effect)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
effect_version="${CONSUMER_EFFECT_VERSION:-3.21.5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "consumer: $*" >&2; exit 1; }

cd "$root"
npm pack --silent --pack-destination "$work" > "$work/pack.log" 2>&1 || { cat "$work/pack.log" >&2; fail "npm pack failed"; }
tarball="$(cd "$work" && ls effect-gepa-*.tgz)"
version_of() { node -p "require('./node_modules/$1/package.json').version"; }
types_node="$(version_of @types/node)"
typescript="$(version_of typescript)"

app="$work/app"
mkdir -p "$app"
cp .ci/consumer/app.ts .ci/consumer/tsconfig.json "$app/"
cat > "$app/package.json" <<JSON
{
  "name": "effect-gepa-consumer",
  "private": true,
  "type": "module",
  "dependencies": { "effect": "$effect_version", "effect-gepa": "file:../$tarball" },
  "devDependencies": { "@types/node": "$types_node", "typescript": "$typescript" }
}
JSON

cd "$app"
install_flags=(--no-audit --no-fund --ignore-scripts --loglevel=error)
if npm install "${install_flags[@]}" --offline > "$work/install.log" 2>&1; then
  echo "consumer: installed offline (effect $effect_version, $tarball)"
else
  echo "consumer: not all of it is in npm's cache; installing with --prefer-offline"
  npm install "${install_flags[@]}" --prefer-offline > "$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "npm install failed"; }
fi

# one copy of Effect, the app's own
versions="$(npm ls effect --all --json | node -e '
  const seen = new Set()
  const walk = (deps) => { for (const [name, d] of Object.entries(deps ?? {})) { if (name === "effect") seen.add(d.version); walk(d.dependencies) } }
  walk(JSON.parse(require("fs").readFileSync(0, "utf8")).dependencies)
  console.log([...seen].join(" "))')"
[ "$versions" = "$effect_version" ] || fail "expected one effect@$effect_version in the app, found: ${versions:-none}"
[ "$(find node_modules -name package.json -path '*/effect/package.json' -not -path '*/effect/*/*' | wc -l)" = "1" ] ||
  fail "more than one effect folder in node_modules"

./node_modules/.bin/tsc -p tsconfig.json || fail "the app does not compile against the package"
[ -f dist/app.d.ts ] || fail "no declaration emitted for the app"

node dist/app.js > "$work/out.txt" 2> "$work/err.txt" || { cat "$work/out.txt" "$work/err.txt" >&2; fail "the app failed"; }
if grep -q "Executing an Effect versioned" "$work/out.txt" "$work/err.txt"; then
  fail "Effect version mismatch warnings: $(grep -c 'Executing an Effect versioned' "$work/err.txt") lines"
fi
# the internals are not part of the API
node --input-type=module -e '
  for (const internal of ["effect-gepa/internal/engine", "effect-gepa/internal/engine/loop", "effect-gepa/cli/main", "effect-gepa/cli/run"]) {
    await import(internal).then(
      () => { console.error(`consumer: ${internal} is importable`); process.exit(1) },
      (e) => { if (e.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED") throw e })
  }
  // the public modules are
  await import("effect-gepa/Gepa")
  await import("effect-gepa/Config")
'
# a run directory without @effect/platform-node (not installed here): one line saying what to install
node --input-type=module -e '
  import { Effect } from "effect"
  import { RunDir } from "effect-gepa"
  const r = await Effect.runPromise(Effect.either(Effect.scoped(RunDir.make(process.argv[1]))))
  if (r._tag !== "Left" || !r.left.message.includes("npm install @effect/platform") || r.left.message.includes("\n")) {
    console.error("consumer: expected one line naming @effect/platform-node, got", r); process.exit(1)
  }
' "$work/run-dir"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").pop())
  if (r.bestScore !== 1) { console.error("consumer: expected the app to reach 1, got", r); process.exit(1) }
' "$work/out.txt"
echo "consumer: ok: $tarball ($(du -k "$work/$tarball" | cut -f1) kB), one effect@$effect_version, compiled with declarations, ran without warnings"
