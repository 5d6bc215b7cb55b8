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
# The installed CLI: `tfdebug` links no LibTorch and hands demo to libexec/tfdebug/tfdebug-torch
# (Note [Two executables] in tools/tfdebug/main.cpp).
"$work/prefix/bin/tfdebug" --version | grep -qx "tfdebug 0.1.0" || { echo "FAIL: the installed tfdebug --version"; exit 1; }
if ldd "$work/prefix/bin/tfdebug" | grep -q libtorch; then echo "FAIL: the installed tfdebug links LibTorch"; exit 1; fi
if [ -x "$work/prefix/libexec/tfdebug/tfdebug-torch" ]; then
  OPENBLAS_NUM_THREADS=1 "$work/prefix/bin/tfdebug" demo --steps 2 --every 0 >"$work/demo.txt" ||
    { echo "FAIL: the installed tfdebug demo"; cat "$work/demo.txt"; exit 1; }
  grep -q "^tfdebug: 2 steps" "$work/demo.txt" || { echo "FAIL: the installed demo's summary"; cat "$work/demo.txt"; exit 1; }
  echo "installed tfdebug demo: ran through libexec/tfdebug/tfdebug-torch"
fi
