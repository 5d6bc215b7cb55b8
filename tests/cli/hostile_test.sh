#!/usr/bin/env bash
# Hostile files (tests/io/make_hostile.py) through inspect, inspect --json, diff, stats and graph:
# each run ends within a time limit and under a memory limit, exits 0, 1 or 2 (the expected code
# where expect.txt names one), never crashes, hangs or exits 3, and writes at most one line to
# stderr with no raw control character. Usage: hostile_test.sh TFDEBUG [HOSTILE_DIR]
set -uo pipefail
source "$(dirname "$0")/harness.sh"
tfdebug="$1"
dir="${2:-$work/hostile}"
[ -f "$dir/expect.txt" ] || $py "$(dirname "$0")/../io/make_hostile.py" "$dir" || exit 1
limit_s=10       # generous for a loaded CI machine; the slowest run (inspect --json of 100,000 tensors) takes ~2 s
limit_kb=512000  # resident memory, as /usr/bin/time reports it

declare -A expected
while read -r file code; do expected[$file]=$code; done <"$dir/expect.txt"

# run LABEL EXPECTED_CODE ARGS...: one command under the limits.
run() {
  local label="$1" want="$2"
  shift 2
  local err="$work/err" stats="$work/time"
  timeout -s KILL "$limit_s" /usr/bin/time -f "%M %e" -o "$stats" "$tfdebug" "$@" >"$work/out" 2>"$err"
  local rc=$?
  local ok=1
  if [ "$rc" -eq 137 ] || [ ! -s "$stats" ] || grep -q "Command terminated by signal" "$stats"; then
    echo "FAIL: $label: killed (timeout ${limit_s}s) or crashed (exit $rc)"
    ok=0
  else
    local kb secs
    read -r kb secs < <(tail -1 "$stats")
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ]; then
      echo "FAIL: $label: exit $rc: $(head -c 300 "$err")"
      ok=0
    elif [ -n "$want" ] && [ "$rc" -ne "$want" ]; then
      echo "FAIL: $label: exit $rc, expected $want: $(head -c 300 "$err")"
      ok=0
    fi
    if [ "$kb" -gt "$limit_kb" ]; then
      echo "FAIL: $label: ${kb} KB resident (limit ${limit_kb} KB)"
      ok=0
    fi
  fi
  if [ "$(wc -l <"$err")" -gt 1 ]; then
    echo "FAIL: $label: $(wc -l <"$err") lines on stderr"
    ok=0
  fi
  if [ "$(wc -c <"$err")" -gt 2000 ]; then
    echo "FAIL: $label: an error of $(wc -c <"$err") bytes"
    ok=0
  fi
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$err"; then
    echo "FAIL: $label: a raw control character on stderr"
    ok=0
  fi
  if [ "$ok" -eq 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

cd "$dir" || exit 1
targets=()
for f in *; do
  [ "$f" = expect.txt ] && continue
  targets+=("$f")
  [ -d "$f" ] && for g in "$f"/*; do [ -L "$g" ] || [ -f "$g" ] && targets+=("$g"); done
done
for f in "${targets[@]}"; do
  want="${expected[$f]:-}"
  run "inspect $f" "$want" inspect "$f" --threads 1
  run "inspect --json $f" "$want" inspect --json "$f"
  run "diff $f $f" "" diff "$f" "$f"
  run "stats $f" "" stats "$f"
  case "$f" in *.onnx) run "graph $f" "" graph "$f" ;; esac
done
finish hostile_test
