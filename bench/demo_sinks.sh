#!/usr/bin/env bash
# Step time of `tfdebug demo` with the run sinks (TensorBoard, MLflow, xlsx, and metrics.jsonl /
# metrics.csv through --out) against the same run without them, tier diagnose (the demo's
# default) and watch. Per-step time = (time of a long run - time of a short run) / the step
# difference, which cancels start-up and evaluation; the median (and the minimum, less sensitive
# to other load on the machine) over interleaved rounds.
#   bench/demo_sinks.sh [TFDEBUG] [ROUNDS]
set -eu
tfdebug="${1:-build/release/tools/tfdebug/tfdebug}"
rounds="${2:-5}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
short=20
long=120
run() {  # run TIER STEPS on|off -> seconds
  local sinks=()
  [ "$3" = on ] && sinks=(--out "$work/run" --tensorboard "$work/tb" --mlflow "$work/mlruns" --xlsx "$work/run.xlsx")
  rm -rf "$work/run" "$work/tb" "$work/mlruns" "$work/run.xlsx"
  local start end
  start=$(date +%s.%N)
  "$tfdebug" demo --tier "$1" --steps "$2" --every 0 "${sinks[@]}" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
for tier in diagnose watch; do
  for sinks in off on; do : >"$work/$tier.$sinks"; done
  for ((r = 0; r < rounds; ++r)); do
    for sinks in off on; do
      echo "$(run "$tier" $short $sinks) $(run "$tier" $long $sinks)" >>"$work/$tier.$sinks"
    done
  done
  /usr/bin/python3 - "$work" "$tier" $short $long <<'PY'
import statistics, sys
work, tier, short, long = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
out = f"{tier:9s}"
for name, pick in (("median", statistics.median), ("min", min)):
    step = {}
    for sinks in ("off", "on"):
        pairs = [tuple(map(float, l.split())) for l in open(f"{work}/{tier}.{sinks}")]
        step[sinks] = (pick(b for _, b in pairs) - pick(a for a, _ in pairs)) / (long - short)
    out += (f"  {name}: off {step['off'] * 1e3:6.2f} ms/step, on {step['on'] * 1e3:6.2f} ms/step,"
            f" {step['on'] / step['off']:.3f}x")
print(out)
PY
done
