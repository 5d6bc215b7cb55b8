#!/usr/bin/env bash
# Reads the GGUF fixtures with an independent parser, the @huggingface/gguf npm package, and
# checks that `tfdebug inspect --json` sees the same metadata, tensor names, shapes, types and
# parameter count. The package is installed once into build/npm; without the npm registry the
# test is skipped (exit 77), never passed.
set -u
tfdebug="$1"
fixtures="$2"
npm_dir="$3"
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -f "$npm_dir/node_modules/@huggingface/gguf/package.json" ]; then
  mkdir -p "$npm_dir"
  if ! timeout 180 npm install --prefix "$npm_dir" --silent --no-audit --no-fund @huggingface/gguf@0.4.6 >/dev/null 2>&1; then
    echo "skipped: could not install @huggingface/gguf from the npm registry"
    exit 77
  fi
fi
status=0
for file in "$fixtures/quantized.gguf" "$fixtures/model.gguf"; do
  "$tfdebug" inspect "$file" --json >"$npm_dir/tfdebug.json" || { echo "FAIL: tfdebug inspect $file"; exit 1; }
  NODE_PATH="$npm_dir/node_modules" node "$here/gguf_npm_check.mjs" "$file" "$npm_dir/tfdebug.json" || status=1
done
exit $status
