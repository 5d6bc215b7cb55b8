#!/usr/bin/env bash
# `tfdebug demo --trace-window K`: the Session and the step-windowed op profiler together. The
# trace holds exactly the steps first_error-K .. first_error+1 (read back by Python's json, by
# `tfdebug trace` and, for the Perfetto file, by protoc --decode_raw), with the anomaly's instant
# event inside the first error's step; report.json's first error falls inside the window.
set -u
tfdebug="$1"
source "$(dirname "$0")/harness.sh"
require protoc

"$tfdebug" demo --fault log --steps 100 --every 0 --trace-window 3 --out "$work/w" >"$work/w.txt"
check "demo --trace-window exits 1 (the log fault is an error-level finding)" test $? -eq 1
for f in report.json trace.json trace.perfetto-trace profile.speedscope.json profile.json; do
  check "writes $f" test -s "$work/w/$f"
done
check "trace.json: exactly the steps around report.json's first error, and the anomaly inside its step" \
  $py - "$work/w/report.json" "$work/w/trace.json" "$work/w.txt" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
errors = [f for f in report["findings"] if f["severity"] == "error"]
assert errors, "no error-level finding"
first = min(errors, key=lambda f: f["step"])
s = first["step"]
assert first["rule"] == "nonfinite" and first["op"] == "aten::log", first
ev = json.load(open(sys.argv[2]))["traceEvents"]
steps = [e for e in ev if e["ph"] == "X" and e["name"].startswith("step")]
assert [e["name"] for e in steps] == ["step %d" % n for n in range(s - 3, s + 2)], [e["name"] for e in steps]
what = "nonfinite in %s aten::log" % first["module"]
instants = [e for e in ev if e["ph"] == "i"]
assert [e["name"] for e in instants] == ["tfdebug: " + what], instants
at = instants[0]["ts"]
(step_s,) = [e for e in steps if e["name"] == "step %d" % s]
assert step_s["ts"] <= at <= step_s["ts"] + step_s["dur"], (step_s, at)
# Every event lies within the window's steps (no op from steps before or after it). Times are
# microseconds as doubles: the last step's ts + dur and a counter at its end may differ in the
# last bit, hence the nanosecond of slack.
lo, hi = steps[0]["ts"] - 1e-3, steps[-1]["ts"] + steps[-1]["dur"] + 1e-3
outside = [e for e in ev if e["ph"] in ("X", "i", "C") and not lo <= e["ts"] <= hi]
assert not outside, outside[:5]
(proc,) = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert proc["args"]["name"] == "tfdebug torch profile: steps %d-%d around step %d (%s)" % (s - 3, s + 1, s, what), proc
out = open(sys.argv[3]).read()
assert "trace window: steps %d-%d around step %d (%s)" % (s - 3, s + 1, s, what) in out, out
PY
check "profile.json: the run's op profile, a time per step for each op over all 100 steps (what the report and dashboard show)" \
  $py - "$work/w/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["format"] == "tfdebug-profile", p.get("format")
series = {s["op"]: s["step_self_ns"] for s in p["series"]}
assert "aten::mm" in series and all(len(v) == 100 for v in series.values()), {k: len(v) for k, v in series.items()}
assert any(r["op"] == "aten::log" for r in p["ops"]), [r["op"] for r in p["ops"]][:20]
PY
"$tfdebug" demo --steps 6 --profile --serve 0 --out "$work/p" 2>"$work/err.txt" >/dev/null
check "--serve with --profile exits 2 and names --trace-window" bash -c "test $? -eq 2 && grep -q -- '--trace-window' '$work/err.txt'"
"$tfdebug" trace "$work/w/trace.json" --json --top 100000 >"$work/summary.json"
check "tfdebug trace: five step slices of one call each, ops, and the window's evictions" $py - "$work/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
f = {x["name"]: x for x in s["frames"]}
steps = [n for n in f if n.startswith("step ")]
assert len(steps) == 5 and all(f[n]["calls"] == 1 for n in steps), steps
assert f["aten::matmul"]["calls"] > 0 and f["forward"]["calls"] == 5
(main,) = [t for t in s["threads"] if t["name"] == "main"]
assert main["events"] <= 1 << 18 and main["evicted"] > 0
PY
check "Perfetto protobuf: protoc --decode_raw reads it and it names the anomaly" bash -c \
  "protoc --decode_raw <'$work/w/trace.perfetto-trace' | grep -q 'tfdebug: nonfinite in blocks.1.mlp aten::log'"

"$tfdebug" demo --steps 6 --every 0 --trace-window 2 --out "$work/n" >"$work/n.txt"
check "no fault: exits 0 and keeps the last 2 steps" bash -c \
  "test $? -eq 0 && grep -q 'trace window: no error-level finding; the last steps 4-5' '$work/n.txt'"
"$tfdebug" demo --steps 6 --trace-window 2 2>"$work/err.txt" >/dev/null
check "--trace-window without --out exits 2" bash -c "test $? -eq 2 && grep -q -- '--out' '$work/err.txt'"
"$tfdebug" demo --steps 6 --trace-window -1 --out "$work/x" 2>"$work/err.txt" >/dev/null
check "--trace-window -1 exits 2" bash -c "test $? -eq 2 && grep -q -- '--trace-window' '$work/err.txt'"

finish "cli demo --trace-window"
