#!/usr/bin/env bash
# Builds the libFuzzer targets (preset "fuzz") and runs each for FUZZ_SECONDS (default 30),
# starting from the checked-in corpus in fuzz/corpus/<name>/. Exits non-zero on any crash, and on
# any input that takes over 10 s (a hang is a bug too).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
for source in fuzz/*_fuzz.cpp; do
  name="$(basename "$source" .cpp)"
  corpus="build/fuzz/corpus/$name"
  mkdir -p "$corpus"
  [ -d "fuzz/corpus/$name" ] && cp -n fuzz/corpus/$name/* "$corpus"/ 2>/dev/null || true
  echo "fuzz: $name for ${seconds}s"
  set +e
  "build/fuzz/fuzz/$name" -max_total_time="$seconds" -max_len=70000 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="build/fuzz/$name-" "$corpus" >"build/fuzz/$name.log" 2>&1
  rc=$?
  set -e
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units)" "build/fuzz/$name.log" || true
  if [ "$rc" -ne 0 ]; then
    grep -v "^INFO" "build/fuzz/$name.log" | tail -40 || true
    echo "fuzz: $name failed (exit $rc); the input is in build/fuzz/$name-*"
    exit 1
  fi
done
echo "fuzz: ok"
