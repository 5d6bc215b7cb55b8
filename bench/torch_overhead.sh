#!/usr/bin/env bash
# The overhead table of docs/performance.md ("Attaching to LibTorch"): tfdebug::torch on the demo
# model against LibTorch's anomaly mode (one C++ process), then Debian's python3-torch with
# detect_anomaly and with isfinite forward hooks on the same model. One thread everywhere.
#   bash bench/torch_overhead.sh [build_dir] [rounds] [steps]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build/release}"
rounds="${2:-20}"
steps="${3:-5}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
"$build_dir/bench/torch_overhead" --rounds "$rounds" --steps "$steps"
/usr/bin/python3 bench/torch_overhead.py "$rounds" "$steps"
