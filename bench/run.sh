#!/usr/bin/env bash
# Prints the stats-kernel table recorded in docs/performance.md: tfdebug's kernel, a plain
# vectorised read-sum of the same buffer (same process), and numpy on the same bytes.
# Single thread throughout. Usage: bench/run.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
data="${TFDEBUG_BENCH_DATA:-/tmp/tfdebug-bench-data}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
[ -f "$data/f16_268435456.bin" ] || /usr/bin/python3 bench/make_data.py "$data"
TFDEBUG_BENCH_DATA="$data" "$build/bench/stats_bench" --benchmark_min_time=0.5 \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_format=json >"$data/tfdebug.json"
/usr/bin/python3 bench/numpy_stats.py "$data" >"$data/numpy.json"
/usr/bin/python3 - "$data" <<'PY'
import json, sys
d = sys.argv[1]
bench = json.load(open(f"{d}/tfdebug.json"))
gbps = {}
for b in bench["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    kind, dtype, size = b["run_name"].split("/")
    gbps[(kind, dtype, size)] = b["bytes_per_second"] / 1e9
    target = b.get("label", "")
numpy = {}
for line in open(f"{d}/numpy.json"):
    r = json.loads(line)
    numpy[(r["dtype"], "256MiB" if r["size"] > 1 << 20 else "256KiB")] = r["gbps"]
print(f"stats kernel, single thread, SIMD target {bench['benchmarks'][0].get('label', '?')}; GB/s of input")
print(f"{'dtype':6} {'size':7} {'tfdebug':>9} {'read-sum':>9} {'ratio':>6} {'numpy':>8} {'speedup':>8}")
for dtype in ("f32", "bf16", "f16"):
    for size in ("256KiB", "256MiB"):
        t = gbps[("stats", dtype, size)]
        r = gbps[("readsum", dtype, size)]
        n = numpy[(dtype, size)]
        print(f"{dtype:6} {size:7} {t:9.2f} {r:9.2f} {t / r:6.2f} {n:8.3f} {t / n:7.1f}x")
PY
