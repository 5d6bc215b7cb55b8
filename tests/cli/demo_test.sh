#!/usr/bin/env bash
# Every `tfdebug demo --fault` is diagnosed by the Session's rules (report.json), end to end:
# LibTorch training, the adapter, the hub. Built and run only with LibTorch.
set -u
tfdebug="$1"
source "$(dirname "$0")/harness.sh"

demo() {  # demo FAULT STEPS: runs it into $work/FAULT, echoing the exit code to $work/FAULT.rc
  "$tfdebug" demo --fault "$1" --steps "$2" --every 0 --out "$work/$1" >"$work/$1.txt" 2>&1
  echo $? >"$work/$1.rc"
}
for run in "none 100" "log 100" "sqrt 100" "div 20" "lr 30" "dead 130" "init 20"; do demo $run; done
# Seed 2 learns the copy task at steps 45-60: its attention's query and key gradients grow tenfold
# from almost nothing, in line with the other layers (Note [Catching up]).
"$tfdebug" demo --seed 2 --steps 120 --every 0 --tier watch --out "$work/seed2" >"$work/seed2.txt" 2>&1
echo $? >"$work/seed2.rc"

check "every fault's run directory holds report.json" bash -c "ls $work/{none,log,sqrt,div,lr,dead,init}/report.json >/dev/null"
check "the diagnoses are right" $py - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def report(fault):
    return json.load(open(f"{work}/{fault}/report.json"))["findings"]
def rc(fault):
    return int(open(f"{work}/{fault}.rc").read())
def first(findings, rule):
    return next(f for f in findings if f["rule"] == rule)

none = report("none")
assert rc("none") == 0 and not [f for f in none if f["severity"] == "error"], none
# A healthy run of another seed, in the default tier: no finding at all; the attention learning
# at steps 45-60 (and the log fault's, before its NaN) is no gradient explosion.
assert rc("seed2") == 0 and report("seed2") == [], report("seed2")
assert not [f for f in report("log") if f["rule"] == "exploding_gradients"], report("log")
# The sqrt fault's run learns at steps 55-70, its loss the lowest of the run each step, while its
# first block's query and key gradients rise to 3-3.9x the median layer: learning too.
assert not [f for f in report("sqrt") if f["rule"] == "exploding_gradients"], report("sqrt")

for fault, op, module in [("log", "aten::log", "blocks.1.mlp"), ("sqrt", "aten::sqrt", "blocks.0.mlp"),
                          ("div", "aten::div", "blocks.1.mlp")]:
    f = first(report(fault), "nonfinite")
    assert rc(fault) == 1, fault
    assert f["op"] == op and f["phase"] == "forward" and f["module"].startswith(module), (fault, f)
    assert f["evidence"]["producer"] == 1, f
log = first(report("log"), "nonfinite")
assert log["step"] == 73, log  # tests/torch: the first step whose log argument goes negative
assert first(report("div"), "nonfinite")["step"] == 0

lr = report("lr")
nonfinite = first(lr, "nonfinite")
# SGD at lr 50: updates larger than their weight from the first steps (immediate_ratio; 10x it at
# the first update, RMSprop's), long before the first NaN
assert rc("lr") == 1 and first(lr, "update_ratio")["step"] <= 1, lr
assert first(lr, "update_ratio")["evidence"]["ratio"] > 1 and nonfinite["step"] > 0, lr

dead = [f for f in report("dead") if f["rule"] == "dead_units"]
assert rc("dead") == 0 and any(f["module"] == "blocks.0.mlp" and f["op"] == "aten::relu" for f in dead), dead
assert not any(f["module"].startswith("blocks.1") for f in dead), dead

init = [f for f in report("init") if f["rule"] == "init_scale"]
assert len(init) >= 10 and all(f["op"].endswith(".weight") for f in init), init
assert not any(f["module"] in ("tok", "pos") for f in init), init  # embeddings are not judged by fan-in
PY
check "the flight recorder kept the window around the first error" test -s "$work/log/flight_recorder.json"
check "the console names the producing op" grep -q "error \[nonfinite\] aten::log in blocks.1.mlp" "$work/log.txt"
# The trained model's graph beside the run (the HTML report draws it; Netron opens it): a valid
# ONNX model whose weights are the demo's parameters, its ops in the demo's modules.
check "the run directory holds the model's graph as model.onnx, with its weights" $py - "$work/none/model.onnx" <<'PY'
import sys, numpy as np, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
w = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
assert sum(v.size for v in w.values()) == 18704, sum(v.size for v in w.values())  # the demo's parameters
assert w["blocks.0.mlp.fc1.weight"].shape == (64, 32) and np.isfinite(w["blocks.0.mlp.fc1.weight"]).all()
names = [n.name for n in m.graph.node]
assert any(n.startswith("blocks.1/mlp/fc1/") for n in names), names[:10]
PY
# --plots: the run drawn from its own run directory when it ends; fc1 of blocks.0 is dead from
# the start (fault dead), so the dead-units heatmap has a yellow (dead fraction 1) row.
require ffmpeg
"$tfdebug" demo --fault dead --steps 20 --every 0 --out "$work/plotted" --plots "$work/plots" >"$work/plotted.txt" 2>&1
check "demo --plots says what it drew" grep -qx "plots: 7 pictures in $work/plots" "$work/plotted.txt"
check "the dead layer is a yellow row" bash -c "ffmpeg -loglevel error -i $work/plots/dead_units.png -f rawvideo -pix_fmt rgb24 - |
  $py -c 'import sys; d=sys.stdin.buffer.read(); sys.exit(0 if sum(1 for i in range(0,len(d),3) if abs(d[i]-253)+abs(d[i+1]-231)+abs(d[i+2]-37)<=40) > 20000 else 1)'"
"$tfdebug" demo --steps 2 --plots "$work/x" >/dev/null 2>&1
check "demo --plots without --out: exit 2" [ $? -eq 2 ]
finish demo
