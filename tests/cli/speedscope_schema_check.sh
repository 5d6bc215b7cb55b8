#!/usr/bin/env bash
# Validates our speedscope export against speedscope's own JSON schema (the npm package ships
# dist/release/file-format-schema.json), with ajv. Both are test clients that
# scripts/install-deps.sh installs into NPM_DIR (tests/npm, npm ci); without them the test fails.
set -u
tfdebug="$1"
example="$2"
npm_dir="$3"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../require.sh"
require node
require_npm "$npm_dir" speedscope ajv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$example" "$work/step.json" >/dev/null || { echo "FAIL: the example"; exit 1; }
"$tfdebug" trace "$work/step.json" -o "$work/step.speedscope.json" || { echo "FAIL: tfdebug trace"; exit 1; }
NODE_PATH="$npm_dir/node_modules" node "$here/speedscope_schema_check.js" \
  "$npm_dir/node_modules/speedscope/dist/release/file-format-schema.json" "$work/step.speedscope.json"
