#!/usr/bin/env bash
# Installs the built tree into a temporary prefix and builds tests/install/consumer against it
# with find_package(tfdebug): proves install(EXPORT) and the package config work.
set -euo pipefail
source_dir="$1"
build_dir="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/tests/install/consumer" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
output=$("$work/build/consumer")
echo "$output"
[ "$output" = "tfdebug 0.1.0 count=5 nan=1 mean=2.5 finding=nonfinite" ]
