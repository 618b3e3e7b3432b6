#!/usr/bin/env bash
# Biome over the whole tree, once, after the branches in flight are merged: its safe lint fixes
# (`import type`, and the like), then the formatter (biome.jsonc). Commit the result alone, as
# `format: biome format --write over the tree`. It then checks what `npm run lint` checks and
# exits non-zero if a lint finding is left that has no safe fix (fix those by hand).
set -euo pipefail
cd "$(dirname "$0")/.."

npx biome lint --write .
npx biome format --write .
echo "changed by the format: $(git diff --shortstat -- . || true)"
npx biome lint --error-on-warnings .
npx biome format .
