#!/usr/bin/env bash
# Instructions per training step of the demo model (or a zoo model) with tfdebug off and in one
# attached mode, counted by valgrind's callgrind inside bench/torch_overhead's one_step: a
# noise-free companion to bench/torch_overhead's timings (the shared VM's speed drifts by more
# than the differences one change makes). Valgrind emulates no AVX-512, so the SIMD kernels run
# their AVX2 code here (twice the instructions of AVX-512 for the same bytes). ~5 minutes.
#   bash bench/torch_instructions.sh [mode] [build_dir] [model]
#     mode: diagnose (default), watch, ...; model: demo (default), mlp, cnn, encoder, gru, sigmoid
# Needs valgrind (apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-diagnose}"
build_dir="${2:-build/release}"
model="${3:-demo}"
command -v valgrind >/dev/null || { echo "torch_instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
steps=20
# Instructions collected in the timed steps of one run of `--modes $1` (3 warm-up steps + $steps).
count() {
  valgrind --tool=callgrind --callgrind-out-file="$out/$2.out" \
    --toggle-collect='*Runner::one_step*' \
    "$build_dir/bench/torch_overhead" --model "$model" --default-only --no-anomaly --modes "$1" --rounds 1 \
    --steps "$steps" \
    >/dev/null 2>"$out/$2.err"
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/$2.err"
}
off=$(count off off)
both=$(count "off,$mode" both)  # off's steps again, then the mode's
/usr/bin/python3 - "$off" "$both" "$mode" "$steps" <<'EOF'
import sys
off, both, mode, steps = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]) + 3
per_off = off / steps
per_mode = (both - off) / steps
print(f"instructions per step ({steps} steps each, callgrind):")
print(f"  off        {per_off / 1e6:8.2f} M")
print(f"  {mode:10s} {per_mode / 1e6:8.2f} M   {per_mode / per_off:.3f}x")
EOF
