#!/usr/bin/env bash
# The test suite (the README's test command, `npm test`) once on each Node
# major given, e.g. `bash .ci/node-versions.sh 20 22 24`: the Node versions
# users run. The major of the `node` on PATH runs as is; each other one is the
# official binary of the `node@<major>` npm package, installed into
# .ci/node-<major>/ (ignored by git) when missing.
#
# Native addons: better-sqlite3 (under @effect/sql-sqlite-node, the cluster's
# SQLite store) is compiled against one Node ABI. For a Node of another ABI
# it is rebuilt from that Node's own headers (shipped in the npm package; for
# Node 24, those of 24.18.1: see headers_version), cached in .ci/node-<major>/,
# and the addon `npm ci` built is put back at the end. msgpackr-extract loads its N-API build, which every
# Node version takes. A test that cannot load the addon fails: nothing is
# skipped.
#
# `MAJOR:light` runs that version's suite with GEPA_TEST_LIGHT=1: every test,
# fewer rounds of the stress loops (test/fixtures/repeats.ts). With
# `--prepare` first, it only installs the Node binaries and builds their
# better-sqlite3 addons (cached in .ci/node-<major>/), running no test: CI
# does that on its second core while single-threaded checks run.
#
# Prints, per version, "node vX.Y.Z: N passed, N failed, N skipped (T s, C s
# of CPU)";
# the last line is the plain "N passed, N failed" of all the runs together.
# Exits non-zero when any run failed. With REPORTS=<dir>, each run's vitest
# JSON report (per-file and per-test durations) is kept as <dir>/node-<major>.json.
set -euo pipefail
cd "$(dirname "$0")/.."
prepare=0
if [ "${1:-}" = "--prepare" ]; then prepare=1; shift; fi
[ "$#" -gt 0 ] || { echo "usage: bash .ci/node-versions.sh [--prepare] MAJOR[:light]..." >&2; exit 2; }

addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
[ -f "$addon" ] || { echo "$addon is missing: run npm ci first" >&2; exit 2; }
original="$(mktemp -d)"
cp "$addon" "$original/"
restore() {
  # --prepare never replaces the addon: nothing to put back (and something else may be loading it)
  [ "$prepare" = 1 ] || cp "$original/better_sqlite3.node" "$addon"
  rm -rf "$original" "${times_file:-}"
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

# The headers an addon for a major is compiled against, when not the node@
# binary's own. Node 24.19 put environment cleanup hooks into the inline
# node::ObjectWrap of node_object_wrap.h (nodejs/node#65446): better-sqlite3
# 12 (an ObjectWrap) compiled against 24.19+ headers aborts the process
# ("Assertion failed: (env) != nullptr") when the GC collects a statement
# outside a JavaScript context (it did, in the Node 24 run of the cluster
# tests). 24.18.1's headers (same ABI, 137) have the ObjectWrap of before the
# change: a script preparing 200,000 statements aborted 3 times of 3 on Node
# 24.21 with the addon compiled against 24.21.0's headers, 0 of 3 with
# 24.18.1's.
headers_version() {
  case "$1" in
    24) echo 24.18.1 ;;
  esac
}

# the include/node directory to compile an addon for the node of $1 (a bin directory) against
headers_dir() {
  local bin="$1" major="$2" pinned
  pinned="$(headers_version "$major")"
  if [ -z "$pinned" ]; then
    # the platform package the node@ package installed
    ls -d .ci/node-"$major"/node_modules/node/node_modules/node-*/include/node 2> /dev/null | head -n 1
    return
  fi
  local dir=".ci/node-$major/headers-$pinned"
  if [ ! -d "$dir/include/node" ]; then
    # the include/ folder of that version's platform package (its binary is not kept)
    local platform tarball
    platform="$(PATH="$bin:$PATH" node -p '`node-${process.platform}-${process.arch}`')"
    rm -rf "$dir" && mkdir -p "$dir"
    tarball="$(cd "$dir" && npm pack --silent --loglevel=error "$platform@$pinned")"
    tar xzf "$dir/$tarball" -C "$dir" --strip-components=1 package/include
    rm -f "$dir/$tarball"
  fi
  echo "$dir/include/node"
}

# puts a better-sqlite3 addon that loads in the node of $1 (a bin directory) in place
match_addon() {
  local bin="$1" major="$2"
  if PATH="$bin:$PATH" node -e 'new (require("better-sqlite3"))(":memory:").close()' 2> /dev/null; then return; fi
  local abi headers cache
  abi="$(PATH="$bin:$PATH" node -p process.versions.modules)"
  headers="$(headers_dir "$bin" "$major")"
  [ -n "$headers" ] && [ -d "$headers" ] || { echo "no Node $major headers to rebuild better-sqlite3 with" >&2; exit 1; }
  # named by the headers' version: an addon compiled against other headers is not reused
  cache=".ci/node-$major/better_sqlite3.abi$abi.headers-$(sed -n 's/^#define NODE_\(MAJOR\|MINOR\|PATCH\)_VERSION \([0-9]*\)$/\2/p' "$headers/node_version.h" | paste -sd.).node"
  if [ ! -f "$cache" ]; then
    local nodedir started=$SECONDS
    nodedir="$PWD/$(dirname "$(dirname "$headers")")"
    local log=".ci/node-$major/better-sqlite3-build.log" src=".ci/node-$major/better-sqlite3"
    # compiled in a copy of the package, so the addon npm ci built stays in place meanwhile; at -O1
    # (node-gyp's release build is -O3): about half the compile time, the same sources
    rm -rf "$src" && cp -R node_modules/better-sqlite3 "$src" && rm -rf "$src/build"
    (cd "$src" && CFLAGS=-O1 CXXFLAGS=-O1 PATH="$bin:$PATH" node "$node_gyp" rebuild --release --jobs max --nodedir="$nodedir") > "$log" 2>&1 ||
      { tail -n 40 "$log" >&2; echo "better-sqlite3 could not be rebuilt for Node $major (log: $log)" >&2; exit 1; }
    echo "better-sqlite3 rebuilt for Node $major (ABI $abi, headers $(basename "$cache" .node | sed 's/.*headers-//')) in $((SECONDS - started)) s" >&2
    cp "$src/build/Release/better_sqlite3.node" "$cache"
    rm -rf "$src"
  fi
  if [ "$prepare" = 1 ]; then return; fi
  cp "$cache" "$addon"
  PATH="$bin:$PATH" node -e 'new (require("better-sqlite3"))(":memory:").close()'
}

# cpu_now: the CPU seconds (user + system) of this script's finished children
# so far. On a shared machine a figure the other load changes less than the
# wall time. `times` runs in this shell (a subshell would count its own children)
times_file="$(mktemp)"
read_cpu() {
  times > "$times_file"
  cpu_now="$(tail -n 1 "$times_file" | awk '{
    t = 0
    for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
    printf "%d\n", t
  }')"
}

passed=0
failed=0
status=0
summary=()
for spec in "$@"; do
  major="${spec%%:light}"
  # (if, not &&: a false test as an assignment's last command would end the script under set -e)
  if [ "$major" != "$spec" ]; then light=1; tag=" (light)"; else light=0; tag=""; fi
  bin="$(node_bin "$major")"
  if [ "$prepare" = 1 ]; then
    # the cache only: the addon npm ci built stays in place for whatever runs meanwhile
    [ "$major" = "$system_major" ] || match_addon "$bin" "$major"
    echo "Node $(PATH="$bin:$PATH" node -v) ready"
    continue
  fi
  match_addon "$bin" "$major"
  version="$(PATH="$bin:$PATH" node -v)"
  echo "=== the test suite on Node $version$tag ==="
  [ "$light" = 0 ] || echo "(GEPA_TEST_LIGHT=1: every test, fewer rounds of the stress loops: test/fixtures/repeats.ts)"
  report="$(mktemp)"
  started=$SECONDS
  read_cpu
  cpu_before=$cpu_now
  PATH="$bin:$PATH" GEPA_TEST_LIGHT="$light" npm test -- --reporter=default --reporter=json --outputFile.json="$report" || status=1
  seconds=$((SECONDS - started))
  read_cpu
  cpu=$((cpu_now - cpu_before))
  counts="$(node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
    console.log(r.numPassedTests, r.numFailedTests, r.numPendingTests + r.numTodoTests)
  ' "$report" 2> /dev/null || echo "0 1 0")"
  if [ -n "${REPORTS:-}" ]; then mkdir -p "$REPORTS" && mv "$report" "$REPORTS/node-$major.json"; else rm -f "$report"; fi
  read -r p f s <<< "$counts"
  passed=$((passed + p))
  failed=$((failed + f))
  summary+=("node $version$tag: $p passed, $f failed, $s skipped ($seconds s, $cpu s of CPU)")
done
if [ "$prepare" = 1 ]; then exit 0; fi
for line in "${summary[@]}"; do echo "$line"; done
echo "$passed passed, $failed failed"
exit "$status"
