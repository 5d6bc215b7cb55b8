#!/usr/bin/env bash
# Reads the GGUF fixtures with an independent parser, the @huggingface/gguf npm package, and
# checks that `tfdebug inspect --json` sees the same metadata, tensor names, shapes, types and
# parameter count. The package is one of the test clients that scripts/install-deps.sh installs
# into tests/npm (npm ci); without it the test fails, naming the command that installs it.
set -u
tfdebug="$1"
fixtures="$2"
npm_dir="$3"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../require.sh"
require node
require_npm "$npm_dir" @huggingface/gguf
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for file in "$fixtures/quantized.gguf" "$fixtures/model.gguf"; do
  "$tfdebug" inspect "$file" --json >"$work/tfdebug.json" || { echo "FAIL: tfdebug inspect $file"; exit 1; }
  NODE_PATH="$npm_dir/node_modules" node "$here/gguf_npm_check.mjs" "$file" "$work/tfdebug.json" || status=1
done
exit $status
