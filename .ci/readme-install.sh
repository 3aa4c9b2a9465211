#!/usr/bin/env bash
# The README's install lines, as a newcomer runs them: packs the tarball,
# makes a fresh app (npm init), and runs each `npm install` line of the
# README's "Install" block exactly as written, with the one
# word `effect-gepa` pointing at the tarball. Checks what the README says
# about each step:
#   after the library line: `npx gepa --version` prints package.json's
#   version, and a command needing the CLI packages exits 2 with one line
#   that gives the README's second line as the install command;
#   after the command line: `npx gepa --help` works and a command runs (a
#   missing run directory is one line and exit 2);
#   after the tsx line: nothing more to check than that it installs.
# npm uses its cache first (prefer-offline, set by environment so that the
# lines run unchanged) and fetches only what is missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "readme-install: $*" >&2; exit 1; }

lines="$(node -e '
  const text = require("fs").readFileSync(process.argv[1], "utf8")
  const at = text.indexOf("\n## Install\n")
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(at))
  if (at < 0 || block === null) { console.error("no install block in the README"); process.exit(1) }
  for (const line of block[1].split("\n")) if (line.trim() !== "") console.log(line.replace(/\s+#.*$/, ""))
' "$root/README.md")"
[ "$(echo "$lines" | wc -l)" = "3" ] || fail "expected three install lines in the README, got: $lines"
version="$(node -p "require('$root/package.json').version")"

cd "$root"
npm pack --silent --pack-destination "$work" > "$work/pack.log" 2>&1 || { cat "$work/pack.log" >&2; fail "npm pack failed"; }
tarball="$work/$(cd "$work" && ls effect-gepa-*.tgz)"

app="$work/app"
mkdir -p "$app"
cd "$app"
npm init -y > /dev/null
export npm_config_prefer_offline=true npm_config_audit=false npm_config_fund=false npm_config_loglevel=error npm_config_update_notifier=false

n=0
while IFS= read -r line; do
  n=$((n + 1))
  echo "readme-install: $line"
  run="${line//effect-gepa/$tarball}"
  bash -c "$run" > "$work/install-$n.log" 2>&1 || { cat "$work/install-$n.log" >&2; fail "README install line $n failed: $line"; }
  case "$n" in
    1)
      got="$(npx --no-install gepa --version)" || fail "npx gepa --version failed with only the library installed"
      [ "$got" = "$version" ] || fail "gepa --version printed '$got', package.json says $version"
      status=0
      npx --no-install gepa show somewhere > "$work/out.txt" 2> "$work/err.txt" || status=$?
      [ "$status" = "2" ] || { cat "$work/err.txt" >&2; fail "without the CLI packages: exit $status, expected 2"; }
      [ "$(wc -l < "$work/err.txt")" = "1" ] || { cat "$work/err.txt" >&2; fail "without the CLI packages: expected one line"; }
      second="$(echo "$lines" | sed -n 2p)"
      grep -qF "$second" "$work/err.txt" || { cat "$work/err.txt" >&2; fail "the missing-packages line does not give the README's line: $second"; }
      echo "readme-install: without the CLI packages: $(cat "$work/err.txt")"
      ;;
    2)
      npx --no-install gepa --help > "$work/help.txt" || fail "npx gepa --help failed"
      grep -q "^Usage: gepa" "$work/help.txt" || fail "npx gepa --help printed no usage"
      status=0
      npx --no-install gepa show somewhere > "$work/out.txt" 2> "$work/err.txt" || status=$?
      [ "$status" = "2" ] && [ "$(wc -l < "$work/err.txt")" = "1" ] && grep -q "run directory not found" "$work/err.txt" ||
        { cat "$work/err.txt" >&2; fail "gepa show on a missing folder: exit $status, expected 2 and one line"; }
      ;;
  esac
done <<< "$lines"
npm ls --all > "$work/ls.txt" 2>&1 || { cat "$work/ls.txt" >&2; fail "npm ls reports problems in the app"; }
echo "readme-install: ok: the README's $n install lines in a fresh app ($(node -p "require('./node_modules/effect/package.json').version") effect), gepa --version, --help and a command"
