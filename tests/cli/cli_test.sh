#!/usr/bin/env bash
# End-to-end tests of the tfdebug CLI: files written by numpy, values checked against numpy,
# exit codes and messages for bad input.
set -u
tfdebug="$1"
source "$(dirname "$0")/harness.sh"

expect_exit() {  # expect_exit CODE PATTERN ARGS...: tfdebug exits CODE and stderr matches PATTERN
  local code="$1" pattern="$2"
  shift 2
  "$tfdebug" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -ne "$code" ]; then
    echo "  exit $got, expected $code for: tfdebug $*"
    cat "$work/err"
    return 1
  fi
  grep -q -- "$pattern" "$work/err" "$work/out" || { echo "  no '$pattern' in output of: tfdebug $*"; cat "$work/err"; return 1; }
}

check "--version" expect_exit 0 "tfdebug 0.1.0" --version
check "--help lists subcommands" expect_exit 0 "stats" --help
check "stats --help documents --target-dtype" expect_exit 0 "target-dtype" stats --help
check "no subcommand is a usage error" expect_exit 2 "subcommand" 
check "unknown option is a usage error" expect_exit 2 "frobnicate" stats --frobnicate x
check "missing file" expect_exit 2 "nope.bin: cannot open" stats "$work/nope.bin"

# Fixtures from numpy.
$py - "$work" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(0)
a = rng.normal(0.5, 2.0, size=(300, 70)).astype(np.float32)
a[3, 4] = np.nan; a[10, 0] = np.inf; a[299, 69] = -np.inf; a[5, :] = 0
a.tofile(f"{d}/a.f32")
with np.errstate(over="ignore"):
    h = rng.normal(0, 3e4, size=5000).astype(np.float16)   # some overflow to inf in f16
h.tofile(f"{d}/h.f16")
open(f"{d}/odd.bin", "wb").write(b"\x00" * 7)
PY

check "wrong shape names the byte counts" expect_exit 2 "needs 85200 bytes, but the file has 84000" stats "$work/a.f32" --shape 300,71
check "ragged file" expect_exit 2 "not a whole number of f32 elements" stats "$work/odd.bin"
check "unknown dtype" expect_exit 2 "unknown dtype 'f17'" stats "$work/a.f32" --dtype f17
check "bad shape token" expect_exit 2 "is not a dimension" stats "$work/a.f32" --shape 300,seventy
check "offset past the end" expect_exit 2 "past the end" stats "$work/a.f32" --offset 999999
check "integer target dtype" expect_exit 2 "not a floating-point format" stats "$work/a.f32" --target-dtype i8

"$tfdebug" stats "$work/a.f32" --shape 300,-1 --target-dtype f16 --exact --json >"$work/a.json" 2>"$work/err"
check "stats --json exits 0" test $? -eq 0
"$tfdebug" stats "$work/a.f32" --json >"$work/fast.json"
check "default (fast) moments are within 1e-6 of numpy" $py - "$work" <<'PY'
import json, sys, numpy as np
d = sys.argv[1]
s = json.load(open(f"{d}/fast.json"))["stats"]
a = np.fromfile(f"{d}/a.f32", dtype=np.float32).astype(np.float64)
f = a[np.isfinite(a)]
for key, ref in (("mean", f.mean()), ("std", f.std()), ("l1", np.abs(f).sum()), ("l2", np.linalg.norm(f))):
    assert abs(s[key] - ref) <= 1e-6 * abs(ref), (key, s[key], ref)
PY
check "f32 stats agree with numpy" $py - "$work" <<'PY'
import json, sys, numpy as np
d = sys.argv[1]
j = json.load(open(f"{d}/a.json"))
a = np.fromfile(f"{d}/a.f32", dtype=np.float32).astype(np.float64)
f = a[np.isfinite(a)]
s = j["stats"]
assert j["shape"] == [300, 70], j["shape"]
assert s["count"] == a.size
assert s["nan"] == 1 and s["pos_inf"] == 1 and s["neg_inf"] == 1, s
assert s["zero"] == int((a == 0).sum()), (s["zero"], (a == 0).sum())
assert s["min"] == f.min() and s["max"] == f.max() and s["abs_max"] == np.abs(f).max()
assert abs(s["mean"] - f.mean()) <= 1e-12 * abs(f.mean()), (s["mean"], f.mean())
assert abs(s["std"] - f.std()) <= 1e-12 * f.std(), (s["std"], f.std())
assert abs(s["l2"] - np.linalg.norm(f)) <= 1e-12 * np.linalg.norm(f)
assert abs(s["l1"] - np.abs(f).sum()) <= 1e-12 * np.abs(f).sum()
assert s["target"]["dtype"] == "f16" and s["target"]["overflow"] == 0
counts, edges = np.histogram(f, bins=24, range=(f.min(), f.max()))
assert j["histogram"]["counts"] == counts.tolist(), (j["histogram"]["counts"], counts.tolist())
q = {round(e["p"], 6): e["value"] for e in j["quantiles"]}
assert abs(q[0.5] - np.quantile(f, 0.5)) <= 1e-12 * abs(np.quantile(f, 0.5)) + 1e-15
PY

"$tfdebug" stats "$work/h.f16" --dtype float16 --target-dtype fp8-e4m3 --exact --json >"$work/h.json"
check "f16 stats agree with numpy" $py - "$work" <<'PY'
import json, sys, numpy as np
d = sys.argv[1]
s = json.load(open(f"{d}/h.json"))["stats"]
h = np.fromfile(f"{d}/h.f16", dtype=np.float16).astype(np.float64)
f = h[np.isfinite(h)]
assert s["pos_inf"] == int(np.isposinf(h).sum()) and s["neg_inf"] == int(np.isneginf(h).sum()), s
assert s["pos_inf"] + s["neg_inf"] > 0
assert s["max"] == f.max() and s["min"] == f.min()
assert abs(s["mean"] - f.mean()) <= 1e-12 * np.abs(f).max()
assert s["target"]["overflow"] == int((np.abs(f) > 448).sum())
assert s["target"]["underflow"] == int(((np.abs(f) <= 2.0**-10) & (f != 0)).sum())
PY

"$tfdebug" stats "$work/a.f32" >"$work/human.txt"
check "human output shows NaN count and a histogram" grep -q "nan .*1 (" "$work/human.txt"
check "no colour codes when not a terminal" bash -c "! grep -q $'\033' '$work/human.txt'"

"$tfdebug" doctor --json >"$work/doctor.json"
check "doctor self-test passes on every SIMD target" $py -c "
import json,sys; j=json.load(open('$work/doctor.json')); assert j['self_test_ok'] and len(j['simd_targets'])>=1, j"

"$tfdebug" dtypes --json >"$work/dtypes.json"
check "dtypes lists f8_e4m3fn with max 448" $py -c "
import json; j={d['name']:d for d in json.load(open('$work/dtypes.json'))}; assert j['f8_e4m3fn']['max_finite']==448 and j['bf16']['size']==2"

finish cli
