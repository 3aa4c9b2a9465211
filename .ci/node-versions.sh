#!/usr/bin/env bash
# The test suite (the README's test command, `npm test`) once on each Node
# major given, e.g. `bash .ci/node-versions.sh 20 22 24`: the Node versions
# users run. The major of the `node` on PATH runs as is; each other one is the
# official binary of the `node@<major>` npm package, installed into
# .ci/node-<major>/ (ignored by git) when missing.
#
# Native addons: better-sqlite3 (under @effect/sql-sqlite-node, the cluster's
# SQLite store) is compiled against one Node ABI. For a Node of another ABI
# it is rebuilt from that Node's own headers (shipped in the npm package,
# so no download), cached in .ci/node-<major>/, and the addon `npm ci` built is
# put back at the end. msgpackr-extract loads its N-API build, which every
# Node version takes. A test that cannot load the addon fails: nothing is
# skipped.
#
# Prints, per version, "node vX.Y.Z: N passed, N failed, N skipped (T s)";
# the last line is the plain "N passed, N failed" of all the runs together.
# Exits non-zero when any run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -gt 0 ] || { echo "usage: bash .ci/node-versions.sh MAJOR..." >&2; exit 2; }

addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
[ -f "$addon" ] || { echo "$addon is missing: run npm ci first" >&2; exit 2; }
original="$(mktemp -d)"
cp "$addon" "$original/"
restore() {
  cp "$original/better_sqlite3.node" "$addon"
  rm -rf "$original"
}
trap restore EXIT

system_major="$(node -p 'process.versions.node.split(".")[0]')"
node_gyp="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"

# the directory of the `node` binary of a major
node_bin() {
  local major="$1"
  if [ "$major" = "$system_major" ]; then
    dirname "$(command -v node)"
    return
  fi
  local dir=".ci/node-$major"
  if [ ! -x "$dir/node_modules/node/bin/node" ]; then
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node@$major" >&2
  fi
  [ -x "$dir/node_modules/node/bin/node" ] || { echo "node@$major gave no binary at $dir/node_modules/node/bin/node" >&2; exit 1; }
  echo "$PWD/$dir/node_modules/node/bin"
}

# puts a better-sqlite3 addon that loads in the node of $1 (a bin directory) in place
match_addon() {
  local bin="$1" major="$2"
  if PATH="$bin:$PATH" node -e 'new (require("better-sqlite3"))(":memory:").close()' 2> /dev/null; then return; fi
  local abi cache
  abi="$(PATH="$bin:$PATH" node -p process.versions.modules)"
  cache=".ci/node-$major/better_sqlite3.abi$abi.node"
  if [ ! -f "$cache" ]; then
    # the binary's headers: the platform package the node@ package installed
    local headers
    headers="$(ls -d .ci/node-"$major"/node_modules/node/node_modules/node-*/include/node 2> /dev/null | head -n 1)"
    [ -n "$headers" ] || { echo "no Node $major headers to rebuild better-sqlite3 with" >&2; exit 1; }
    local nodedir started=$SECONDS
    nodedir="$PWD/$(dirname "$(dirname "$headers")")"
    local log=".ci/node-$major/better-sqlite3-build.log"
    (cd node_modules/better-sqlite3 && PATH="$bin:$PATH" node "$node_gyp" rebuild --release --jobs max --nodedir="$nodedir") > "$log" 2>&1 ||
      { tail -n 40 "$log" >&2; echo "better-sqlite3 could not be rebuilt for Node $major (log: $log)" >&2; exit 1; }
    echo "better-sqlite3 rebuilt for Node $major (ABI $abi) in $((SECONDS - started)) s" >&2
    cp "$addon" "$cache"
  fi
  cp "$cache" "$addon"
  PATH="$bin:$PATH" node -e 'new (require("better-sqlite3"))(":memory:").close()'
}

passed=0
failed=0
status=0
summary=()
for major in "$@"; do
  bin="$(node_bin "$major")"
  match_addon "$bin" "$major"
  version="$(PATH="$bin:$PATH" node -v)"
  echo "=== the test suite on Node $version ==="
  report="$(mktemp)"
  started=$SECONDS
  PATH="$bin:$PATH" npm test -- --reporter=default --reporter=json --outputFile.json="$report" || status=1
  seconds=$((SECONDS - started))
  counts="$(node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
    console.log(r.numPassedTests, r.numFailedTests, r.numPendingTests + r.numTodoTests)
  ' "$report" 2> /dev/null || echo "0 1 0")"
  rm -f "$report"
  read -r p f s <<< "$counts"
  passed=$((passed + p))
  failed=$((failed + f))
  summary+=("node $version: $p passed, $f failed, $s skipped ($seconds s)")
done
for line in "${summary[@]}"; do echo "$line"; done
echo "$passed passed, $failed failed"
exit "$status"
