#!/usr/bin/env bash
# The scale goal of docs/performance.md: `tfdebug inspect` on a >= 2 GiB safetensors file with a
# warm page cache against `cat FILE > /dev/null`, and inspect's peak RSS. Best of 5 runs each,
# interleaved, so both see the same machine. Usage: bench/inspect_scale.sh [BUILD_DIR] [f32|bf16]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
dtype="${2:-f32}"
data="${TFDEBUG_BENCH_DATA:-/tmp/tfdebug-bench-data}"
file="$data/checkpoint_$dtype.safetensors"
mkdir -p "$data"
[ -f "$file" ] || /usr/bin/python3 bench/make_checkpoint.py "$file" "$dtype"
export OPENBLAS_NUM_THREADS=1
cat "$file" >/dev/null  # warm the page cache
cat "$file" >/dev/null
best_cat=999 best_inspect=999 rss=0
for _ in 1 2 3 4 5; do
  t=$( { /usr/bin/time -f "%e" cat "$file" >/dev/null; } 2>&1 )
  best_cat=$(python3 -c "print(min($best_cat, $t))")
  out=$( { /usr/bin/time -f "%e %M" "$build/tools/tfdebug/tfdebug" inspect "$file" --json >/dev/null; } 2>&1 )
  best_inspect=$(python3 -c "print(min($best_inspect, ${out% *}))")
  rss=$(python3 -c "print(max($rss, ${out#* }))")
done
size=$(stat -c %s "$file")
python3 - "$size" "$best_cat" "$best_inspect" "$rss" "$dtype" <<'PY'
import sys
size, cat, inspect, rss, dtype = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
print(f"{dtype} checkpoint, {size / 2**30:.2f} GiB, warm page cache, {__import__('os').cpu_count()} cores")
print(f"  cat FILE > /dev/null   {cat:6.2f} s   {size / cat / 1e9:5.2f} GB/s")
print(f"  tfdebug inspect --json {inspect:6.2f} s   {size / inspect / 1e9:5.2f} GB/s   {inspect / cat:.2f}x cat (goal <= 1.0x)")
print(f"  inspect peak RSS       {rss / 1024:6.0f} MiB (file-backed mapped pages included)")
PY
