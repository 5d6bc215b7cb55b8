#!/usr/bin/env bash
# Builds the libFuzzer targets (preset "fuzz") and runs each for FUZZ_SECONDS (default 30),
# starting from the checked-in corpus in fuzz/corpus/<name>/ (the corpus grows in
# build/fuzz/corpus/<name>/) and with fuzz/<name>.dict when there is one. Exits non-zero on any
# crash, leak, input that takes over FUZZ_TIMEOUT seconds (default 1: a hang is a bug too) or
# input that makes the target use over FUZZ_MEMORY_MB of memory (default 512, RSS and any single
# allocation), and names the file that holds the input.
#
#   FUZZ_SECONDS=600 FUZZ_TARGETS="safetensors_fuzz onnx_fuzz" bash scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
timeout="${FUZZ_TIMEOUT:-1}"
memory_mb="${FUZZ_MEMORY_MB:-512}"
# ASan keeps up to 256 MB of freed memory in quarantine by default; that is the sanitizer's, not
# the reader's, and would count against the memory limit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=32}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
targets="${FUZZ_TARGETS:-$(for s in fuzz/*_fuzz.cpp; do basename "$s" .cpp; done)}"
for name in $targets; do
  corpus="build/fuzz/corpus/$name"
  mkdir -p "$corpus" build/fuzz/artifacts
  [ -d "fuzz/corpus/$name" ] && cp -n fuzz/corpus/$name/* "$corpus"/ 2>/dev/null || true
  dict=()
  [ -f "fuzz/$name.dict" ] && dict=(-dict="fuzz/$name.dict")
  echo "fuzz: $name for ${seconds}s (at most ${timeout}s and ${memory_mb} MB an input)"
  set +e
  "build/fuzz/fuzz/$name" -max_total_time="$seconds" -max_len=70000 -timeout="$timeout" \
    -rss_limit_mb="$memory_mb" -malloc_limit_mb="$memory_mb" "${dict[@]}" -print_final_stats=1 \
    -artifact_prefix="build/fuzz/artifacts/$name-" "$corpus" >"build/fuzz/$name.log" 2>&1
  rc=$?
  set -e
  grep -E "^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units)" "build/fuzz/$name.log" || true
  if [ "$rc" -ne 0 ]; then
    grep -v "^INFO" "build/fuzz/$name.log" | tail -40 || true
    inputs="$(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "build/fuzz/$name.log" | tr '\n' ' ')"
    echo "fuzz: $name failed (exit $rc; log build/fuzz/$name.log); the input is in ${inputs:-build/fuzz/artifacts/$name-*}"
    exit 1
  fi
done
echo "fuzz: ok"
