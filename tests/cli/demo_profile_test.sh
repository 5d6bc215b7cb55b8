#!/usr/bin/env bash
# `tfdebug demo --profile`: the per-layer table, the five files read back by independent readers
# (Python's json, protoc --decode_raw, Python's XML parser, `tfdebug trace`), the demo's linear
# layers' FLOPs against hand-computed values, the memory peak, and `tfdebug regress` on two
# profile.json files.
set -u
tfdebug="$1"
source "$(dirname "$0")/harness.sh"
require protoc

"$tfdebug" demo --profile --profile-steps 5 --out "$work/a" >"$work/a.txt"
check "demo --profile exits 0" test $? -eq 0
check "prints the per-layer table, the top ops and the memory peak" bash -c \
  "grep -q '^per layer' '$work/a.txt' && grep -q 'blocks.0.mlp.fc1' '$work/a.txt' && grep -q '^top 8 ops' '$work/a.txt' && grep -Eq '^memory: peak [0-9.]+ (KiB|MiB)' '$work/a.txt'"
for f in trace.json trace.perfetto-trace profile.speedscope.json flame.svg profile.json; do
  check "writes $f" test -s "$work/a/$f"
done
check "profile.json: linear layers' FLOPs per step equal the hand-computed values; memory peak > 0" $py - "$work/a/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["format"] == "tfdebug-profile" and p["version"] == 1 and p["steps"] == 5
mm = {"aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::linear"}
def flops(module, phase):
    return sum(r["flops"] for r in p["ops"] if r["module"] == module and r["phase"] == phase and r["op"] in mm) / 5
# 512 tokens: q/k/v/o 2*512*32*32, fc1/fc2 2*512*32*64, head 2*512*32*16
expect = {"attn.q": 1048576, "attn.k": 1048576, "attn.v": 1048576, "attn.o": 1048576, "mlp.fc1": 2097152, "mlp.fc2": 2097152}
for b in ("blocks.0", "blocks.1"):
    for m, f in expect.items():
        assert flops(b + "." + m, "forward") == f, (b, m, flops(b + "." + m, "forward"))
        assert flops(b + "." + m, "backward") == 2 * f, (b, m, flops(b + "." + m, "backward"))
assert flops("head", "forward") == 524288
mods = {m["module"]: m for m in p["modules"]}
total = sum(r["flops"] for r in p["ops"])
assert mods[""]["total_flops"] == total and abs(p["flops_per_step"] - total / 5) < 1e-6
assert mods["blocks.0.mlp"]["total_ns"] == mods["blocks.0.mlp"]["self_ns"] + mods["blocks.0.mlp.fc1"]["total_ns"] + mods["blocks.0.mlp.fc2"]["total_ns"]
m = p["memory"]
assert m["reported"] and m["peak_bytes"] > 0 and m["allocations"] > 0 and m["peak_op"].startswith("aten::")
assert len(m["rss_bytes"]) == 5 and all(r > 0 for r in m["rss_bytes"])
assert all(len(s["step_self_ns"]) == 5 for s in p["series"])
assert len(p["bottlenecks"]) == 8 and all("% of step" in b["text"] for b in p["bottlenecks"])
assert p["tokens_per_s"] > 0 and p["samples_per_s"] > 0
PY
check "Chrome trace: X events nest in steps, live-bytes counter, thread names" $py - "$work/a/trace.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
xs = [e for e in ev if e["ph"] == "X"]
steps = [e for e in xs if e["name"] == "step"]
assert len(steps) == 5, len(steps)
assert sum(1 for e in xs if e["name"] == "forward") == 5
assert any(e["name"] == "aten::mm" for e in xs)
cs = [e for e in ev if e["ph"] == "C" and e["name"].startswith("live bytes")]
assert cs and max(c["args"]["value"] for c in cs) > 0
assert any(e["ph"] == "C" and e["name"] == "RSS bytes" for e in ev)
PY
"$tfdebug" trace "$work/a/trace.json" --json --top 100000 >"$work/summary.json"
check "tfdebug trace reads our trace" $py -c "import json,sys; s=json.load(open(sys.argv[1])); f={x['name']:x for x in s['frames']}; assert f['step']['calls']==5 and f['aten::mm']['calls']>0" "$work/summary.json"
check "Perfetto protobuf: protoc --decode_raw reads it" bash -c "protoc --decode_raw <'$work/a/trace.perfetto-trace' >/dev/null"
check "speedscope: evented, balanced" $py - "$work/a/profile.speedscope.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
for p in d["profiles"]:
    stack = []
    for e in p["events"]:
        if e["type"] == "O":
            stack.append(e["frame"])
        else:
            assert stack.pop() == e["frame"]
    assert not stack
PY
check "flame graph: well-formed SVG with the model's modules" $py -c "import sys, xml.etree.ElementTree as ET; t=open(sys.argv[1]).read(); ET.fromstring(t); assert 'blocks.0.mlp.fc1' in t" "$work/a/flame.svg"
# The schema check of speedscope's own npm package, where it is installed (speedscope_schema_check).
schema="$(dirname "$0")/../../build/npm-speedscope/node_modules/speedscope/dist/release/file-format-schema.json"
if [ -f "$schema" ]; then
  check "speedscope: its npm schema accepts the file" env NODE_PATH="$(dirname "$schema")/../../.." \
    node "$(dirname "$0")/speedscope_schema_check.js" "$schema" "$work/a/profile.speedscope.json"
fi

"$tfdebug" demo --profile --profile-steps 5 --out "$work/b" >/dev/null
"$tfdebug" regress "$work/a/profile.json" "$work/b/profile.json" --json --threshold 1000 >"$work/regress.json"
check "regress compares two profile.json files op by op (exit 0 at a 1000% threshold)" test $? -eq 0
check "regress: every aten op of both runs, with 5 steps each" $py - "$work/regress.json" "$work/a/profile.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
names = {b["name"] for b in r["benchmarks"]}
assert "aten::mm" in names and "aten::addcdiv_" in names, names
assert all(b["n_baseline"] == 5 and b["n_current"] == 5 for b in r["benchmarks"])
assert names | set(r["only_in_baseline"]) == {s["op"] for s in p["series"]}
PY
echo '{"format": "tfdebug-profile", "series": [{"op": "aten::mm", "step_self_ns": ["x"]}]}' >"$work/bad.json"
"$tfdebug" regress "$work/bad.json" "$work/a/profile.json" 2>"$work/err.txt"
check "a bad profile.json exits 2 naming the field" bash -c "test $? -eq 2 && grep -q 'step_self_ns' '$work/err.txt'"
"$tfdebug" demo --profile 2>"$work/err.txt" >/dev/null
check "--profile without --out exits 2" bash -c "test $? -eq 2 && grep -q -- '--out' '$work/err.txt'"

finish "cli demo --profile"
