#!/usr/bin/env bash
# Validates our speedscope export against speedscope's own JSON schema (the npm package ships
# dist/release/file-format-schema.json), with ajv. Both are installed once into NPM_DIR; without
# the npm registry the test is skipped (exit 77), never passed.
set -u
tfdebug="$1"
example="$2"
npm_dir="$3"
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -f "$npm_dir/node_modules/speedscope/dist/release/file-format-schema.json" ] ||
  [ ! -f "$npm_dir/node_modules/ajv/package.json" ]; then
  mkdir -p "$npm_dir"
  if ! timeout 300 npm install --prefix "$npm_dir" --silent --no-audit --no-fund speedscope@1.25.0 ajv@8.20.0 >/dev/null 2>&1; then
    echo "skipped: could not install speedscope and ajv from the npm registry"
    exit 77
  fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$example" "$work/step.json" >/dev/null || { echo "FAIL: the example"; exit 1; }
"$tfdebug" trace "$work/step.json" -o "$work/step.speedscope.json" || { echo "FAIL: tfdebug trace"; exit 1; }
NODE_PATH="$npm_dir/node_modules" node "$here/speedscope_schema_check.js" \
  "$npm_dir/node_modules/speedscope/dist/release/file-format-schema.json" "$work/step.speedscope.json"
