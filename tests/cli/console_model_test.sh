#!/usr/bin/env bash
# `tfdebug console --model M.pt --input X.npy [--labels y.npy]` on a small TorchScript classifier
# written by torch itself (make_debug_model.py): a NaN planted in the input stops `break nan` at
# the first op that receives it; with labels the backward runs and the gradients can be read;
# the run's shapes.json (--out) lists the model's modules with the shapes torch itself reports
# (python reads both); a watch's kept output is torch's; token ids (an i64 input) without labels run the forward only; the demo's
# shapes.json has the demo's dimensions; bad options give exit 2 and one line.
set -u
tfdebug="$1"
source "$(dirname "$0")/harness.sh"
require_python numpy torch
$py "$(dirname "$0")/make_debug_model.py" "$work"

console() {  # console NAME [OPTIONS...] < commands: output in $work/NAME.txt, exit code in $work/NAME.rc
  local name="$1"
  shift
  "$tfdebug" console "$@" >"$work/$name.txt" 2>&1
  echo $? >"$work/$name.rc"
}

# The planted NaN: the first op that reads it (enc's linear) makes NaN from the input data.
printf 'break nan\ncontinue\nwhere\nstats inputs\nquit\n' |
  console nan --model "$work/model.pt" --input "$work/x_nan.npy" --labels "$work/y.npy" --steps 3
check "nan: exit 0" grep -qx 0 "$work/nan.rc"
check "nan: the banner" grep -q "^tfdebug console: .*model.pt, 83 parameters; input \[5, 6\] from .*; cross-entropy on .*y.npy, backward; tier diagnose; 3 steps$" "$work/nan.txt"
check "nan: stopped at the first op that received it" \
  grep -qx "stopped: breakpoint 1: nan, received from the input data" "$work/nan.txt"
check "nan: enc's linear, forward, step 0" grep -qx "  aten::linear in enc  (forward, step 0)  f32\[5, 8\]" "$work/nan.txt"
check "nan: where" bash -c "grep -A4 -x '(tfdebug) where' '$work/nan.txt' | tr '\n' '|' |
  grep -qF '#0 aten::linear  f32[5, 8]  (output)|#1 enc|#2 (model)|phase forward, step 0, thread 1|'"
check "nan: the input holds the one NaN" grep -qE "^input0  f32\[5, 6\]  f32 count 30 .* nan 1  inf 0$" "$work/nan.txt"
check "nan: quit" grep -q "^run stopped by quit after 1 of 3 steps" "$work/nan.txt"

# Clean data with labels: the backward runs; at enc's backward, head's gradient is there and is
# torch's own (python computes it); the loss is torch's; shapes.json (--out).
printf 'break module enc backward\ncontinue\ninfo tensors\nstats head.weight.grad\ndetach\n' |
  console grad --model "$work/model.pt" --input "$work/x.npy" --labels "$work/y.npy" --steps 2 --out "$work/run"
check "grad: exit 0" grep -qx 0 "$work/grad.rc"
check "grad: stopped entering enc in backward" grep -qx "stopped: breakpoint 1: module enc backward, entered enc (backward)" "$work/grad.txt"
check "grad: the gradients are named at the stop" grep -qx "head.weight.grad  f32\[3, 8\]" "$work/grad.txt"
check "grad: the run finished" grep -q "^run finished after 2 of 2 steps" "$work/grad.txt"
check "grad: the loss and head's gradient are torch's" $py - "$work" <<'PY'
import re, sys
import numpy as np, torch
work = sys.argv[1]
text = open(f"{work}/grad.txt").read()
model = torch.jit.load(f"{work}/model.pt")
x = torch.from_numpy(np.load(f"{work}/x.npy"))
y = torch.from_numpy(np.load(f"{work}/y.npy"))
loss = torch.nn.functional.cross_entropy(model(x), y)
loss.backward()
g = model.head.weight.grad
line = re.search(r"^head.weight.grad  f32\[3, 8\]  f32 count 24  min (\S+)  max (\S+) .* abs_max (\S+)", text, re.M)
lo, hi, absmax = map(float, line.groups())
assert np.isclose(lo, g.min().item(), rtol=1e-4) and np.isclose(hi, g.max().item(), rtol=1e-4), (lo, hi, g)
assert np.isclose(absmax, g.abs().max().item(), rtol=1e-4), absmax
for step in (0, 1):  # the parameters are not updated: the same loss each step
    shown = float(re.search(rf"^step +{step}  loss (\S+)$", text, re.M).group(1))
    assert np.isclose(shown, loss.item(), rtol=1e-4), (shown, loss.item())
PY
check "grad: shapes.json agrees with torch" $py - "$work" <<'PY'
import json, sys
import numpy as np, torch
work = sys.argv[1]
doc = json.load(open(f"{work}/run/shapes.json"))
assert doc["format"] == "tfdebug-shapes" and doc["version"] == 1, doc["format"]
assert (doc["first_step"], doc["last_step"], doc["dropped"]) == (0, 1, 0)
modules = {m["module"]: m for m in doc["modules"]}
assert set(modules) >= {"enc", "head"}, sorted(modules)
model = torch.jit.load(f"{work}/model.pt")
x = torch.from_numpy(np.load(f"{work}/x.npy"))
h = model.enc(x)
out = model(x)
expected = {"enc": (x.shape, h.shape), "head": (h.shape, out.shape)}
for path, (in_shape, out_shape) in expected.items():
    m = modules[path]
    params = {p["name"]: p for p in m["parameters"]}
    sub = getattr(model, path)
    assert set(params) == {f"{path}.{n}" for n, _ in sub.named_parameters()}, params
    for n, t in sub.named_parameters():
        assert params[f"{path}.{n}"]["shape"] == list(t.shape) and params[f"{path}.{n}"]["dtype"] == "f32"
    fwd = [o for o in m["ops"] if o["phase"] == "forward" and o["op"] == "aten::linear"]
    assert len(fwd) == 1, fwd
    assert fwd[0]["output"] == {"dtype": "f32", "shape": list(out_shape)}, fwd[0]
    assert [i["shape"] for i in fwd[0]["inputs"]] == [list(in_shape), list(sub.weight.shape), list(sub.bias.shape)], fwd[0]
    assert fwd[0]["calls"] == 2 and fwd[0]["last_step"] == 1, fwd[0]
    assert any(o["phase"] == "backward" for o in m["ops"]), path
PY

# A watch keeps a copy of the last matching output: enc's linear, saved at head's entry as watch1,
# is torch's enc(x).
printf 'watch enc aten::linear\nbreak module head\ncontinue\ninfo watch\nsave watch1 %s\ndetach\n' "$work/watch1.npy" |
  console watch --model "$work/model.pt" --input "$work/x.npy"
check "watch: info watch says what watch1 holds" \
  grep -qE "^watch enc aten::linear: .*\(enc aten::linear, step 0\)  kept as watch1 f32\[5, 8\]$" "$work/watch.txt"
check "watch: the kept output is torch's enc(x)" $py - "$work" <<'PY'
import sys
import numpy as np, torch
work = sys.argv[1]
kept = np.load(f"{work}/watch1.npy")
model = torch.jit.load(f"{work}/model.pt")
expected = model.enc(torch.from_numpy(np.load(f"{work}/x.npy"))).detach().numpy()
assert kept.shape == (5, 8) and np.allclose(kept, expected, rtol=1e-6, atol=1e-6), (kept, expected)
PY

# Token ids (i64) without labels: forward only; shapes.json lists the embedding's output.
printf 'detach\n' | console tokens --model "$work/tokens.pt" --input "$work/tokens.npy" --out "$work/tokens_run"
check "tokens: exit 0, forward only" bash -c "grep -qx 0 '$work/tokens.rc' && grep -q 'forward only' '$work/tokens.txt'"
check "tokens: shapes.json" $py - "$work" <<'PY'
import json, sys
doc = json.load(open(f"{sys.argv[1]}/tokens_run/shapes.json"))
modules = {m["module"]: m for m in doc["modules"]}
emb = modules["emb"]
assert [o for o in emb["ops"] if o["op"] == "aten::embedding"][0]["output"] == {"dtype": "f32", "shape": [2, 7, 4]}, emb
assert {p["name"]: p["shape"] for p in emb["parameters"]} == {"emb.weight": [10, 4]}
assert all(o["phase"] == "forward" for m in doc["modules"] for o in m["ops"])
out = modules["out"]
assert out["ops"][0]["output"]["shape"] == [2, 7, 3], out
PY

# The demo's run: shapes.json holds the demo's dimensions (vocab 16, d_model 32, 4 heads, d_ff 64,
# batch 32, sequences of 2 * 8 + 1 tokens, the model reads the first 16).
"$tfdebug" demo --steps 2 --tier diagnose --out "$work/demo" >"$work/demo.txt" 2>&1
check "demo: shapes.json with the demo's dimensions" $py - "$work" <<'PY'
import json, sys
doc = json.load(open(f"{sys.argv[1]}/demo/shapes.json"))
modules = {m["module"]: m for m in doc["modules"]}
params = {p["name"]: p["shape"] for m in doc["modules"] for p in m["parameters"]}
assert params["tok.weight"] == [16, 32], params["tok.weight"]
assert params["blocks.0.mlp.fc1.weight"] == [64, 32] and params["blocks.1.mlp.fc2.weight"] == [32, 64]
assert params["head.weight"] == [16, 32], params["head.weight"]
fc1 = [o for o in modules["blocks.1.mlp.fc1"]["ops"] if o["phase"] == "forward"][0]
assert fc1["output"] == {"dtype": "f32", "shape": [32, 16, 64]}, fc1
assert fc1["inputs"][0]["shape"] == [32, 16, 32], fc1
head = [o for o in modules["head"]["ops"] if o["phase"] == "forward"][0]
assert head["output"]["shape"] == [32, 16, 16], head
assert any(o["phase"] == "backward" for o in modules["blocks.0.attn"]["ops"])
PY

# Bad options: exit 2, one line.
console noinput --model "$work/model.pt" </dev/null
check "no --input: exit 2, one line" bash -c "grep -qx 2 '$work/noinput.rc' && [ \$(wc -l <'$work/noinput.txt') = 1 ] && grep -q -- '--input' '$work/noinput.txt'"
console nofile --model "$work/missing.pt" --input "$work/x.npy" </dev/null
check "no such model: exit 2, one line" bash -c "grep -qx 2 '$work/nofile.rc' && [ \$(wc -l <'$work/nofile.txt') = 1 ] && grep -q 'missing.pt' '$work/nofile.txt'"
$py -c "import numpy as np, sys; np.save(sys.argv[1], np.array([0, 1], dtype=np.int64))" "$work/y2.npy"
console fewlabels --model "$work/model.pt" --input "$work/x.npy" --labels "$work/y2.npy" </dev/null
check "too few labels: exit 2" bash -c "grep -qx 2 '$work/fewlabels.rc' && grep -q '2 labels for 5 rows' '$work/fewlabels.txt'"
console shape --model "$work/model.pt" --input "$work/tokens.npy" </dev/null
check "input the model cannot take: exit 2, one line" bash -c "grep -qx 2 '$work/shape.rc' && [ \$(wc -l <'$work/shape.txt') = 1 ]"
console both --demo --model "$work/model.pt" --input "$work/x.npy" </dev/null
check "--demo and --model: exit 2" grep -qx 2 "$work/both.rc"

finish console_model
