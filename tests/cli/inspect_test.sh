#!/usr/bin/env bash
# End-to-end tests of `tfdebug inspect` on checkpoints written by numpy (tests/io/make_fixtures.py).
set -u
tfdebug="$1"
fx="$2"
source "$(dirname "$0")/harness.sh"

"$tfdebug" inspect "$fx/model.safetensors" --target-dtype f16 --json >"$work/model.json"
check "inspect --json exits 0 without --fail-on" test $? -eq 0
check "tensors, stats and findings match numpy and the planted defects" $py - "$work" "$fx" <<'PY'
import json, sys, numpy as np
work, fx = sys.argv[1], sys.argv[2]
j = json.load(open(f"{work}/model.json"))
assert j["files"][0]["format"] == "safetensors" and j["metadata"]["format"] == "pt"
t = {x["name"]: x for x in j["tensors"]}
assert len(t) == 9, list(t)
embed = np.load(f"{fx}/embed.npy").astype(np.float64)
s = t["embed.weight"]["stats"]
assert t["embed.weight"]["shape"] == [16, 8] and t["embed.weight"]["params"] == 128
assert s["zero"] == 16 and abs(s["mean"] - embed.mean()) <= 1e-6 * abs(embed).max()
assert s["abs_max"] == np.abs(embed).max()
assert t["layers.0.attn.q.weight"]["stats"]["nan"] == 1 and t["layers.0.attn.q.weight"]["stats"]["pos_inf"] == 1
f = {}
for x in j["findings"]:
    f.setdefault(x["rule"], []).append(x)
assert f["nonfinite"][0]["tensor"] == "layers.0.attn.q.weight" and f["nonfinite"][0]["index"] == [2, 3], f["nonfinite"]
assert f["nonfinite"][0]["severity"] == "error"
assert f["dead_embedding_rows"][0]["rows"] == [3, 11]
assert f["dead_input_units"][0]["tensor"] == "layers.1.mlp.fc2.weight" and f["dead_input_units"][0]["columns"] == [3, 7]
assert f["outlier_channels"][0]["tensor"] == "layers.0.mlp.fc1.weight" and f["outlier_channels"][0]["rows"] == [7]
assert f["constant"][0]["tensor"] == "layers.1.norm.weight" and f["constant"][0]["value"] == 1
assert f["identical_tensors"][0]["same_as"] == "embed.weight"
over = f["target_overflow"][0]
assert over["tensor"] == "layers.1.scale" and over["overflow"] == 1 and over["dtype"] == "f16", over
for x in j["findings"]:
    assert set(["rule", "severity", "tensor", "message"]) <= set(x), x
PY

"$tfdebug" inspect "$fx/model.safetensors" --fail-on error >/dev/null
check "--fail-on error exits 1 when an error finding exists" test $? -eq 1
"$tfdebug" inspect "$fx/c_f4.npy" --fail-on warning >/dev/null
check "--fail-on warning exits 0 on a clean tensor" test $? -eq 0
"$tfdebug" inspect "$fx/model.safetensors" --filter 'layers.1.*' --json >"$work/filtered.json"
check "--filter keeps only matching tensors" $py -c "
import json; t=[x['name'] for x in json.load(open('$work/filtered.json'))['tensors']]
assert t and all(n.startswith('layers.1.') for n in t), t"
"$tfdebug" inspect "$fx/sharded/model.safetensors.index.json" --json >"$work/sharded.json"
check "sharded checkpoint: 3 tensors from 2 files" $py -c "
import json; j=json.load(open('$work/sharded.json')); assert len(j['tensors'])==3 and len(j['files'])==2, j['files']"
"$tfdebug" inspect "$fx/model.safetensors" >"$work/human.txt"
check "human output lists findings and the per-layer summary" bash -c "grep -q '^  error    nonfinite layers.0.attn.q.weight: ' '$work/human.txt' && grep -q '^  layer ' '$work/human.txt'"

"$tfdebug" inspect "$fx/objects.npy" 2>"$work/err" >/dev/null
check "object arrays are refused with exit 2" test $? -eq 2
check "the refusal names the file" grep -q "objects.npy: holds a NumPy object array" "$work/err"
head -c 100 "$fx/model.safetensors" >"$work/truncated.safetensors"
"$tfdebug" inspect "$work/truncated.safetensors" 2>"$work/err" >/dev/null
check "a truncated safetensors file exits 2" test $? -eq 2
check "with a one-line reason" grep -q "truncated.safetensors: header length .* runs past the end" "$work/err"

# tfdebug diff on a changed copy written by the same generator.
"$tfdebug" diff "$fx/model.safetensors" "$fx/model_b.safetensors" --json >"$work/diff.json"
check "diff exits 1 when checkpoints differ" test $? -eq 1
check "diff reports every planted change" $py - "$work" <<'PY'
import json, sys
j = json.load(open(f"{sys.argv[1]}/diff.json"))
assert j["missing"] == ["step"] and j["extra"] == ["layers.2.new.weight"], j
assert j["shape_changes"] == [{"name": "layers.1.scale", "a": [4, 4], "b": [2, 8]}], j["shape_changes"]
assert j["dtype_changes"] == [{"name": "layers.1.norm.weight", "a": "f32", "b": "bf16"}]
top = j["tensors"][0]
assert top["name"] == "layers.1.mlp.fc2.weight" and not top["allclose"], top
assert top["first_diff_index"] == [1, 2] and abs(top["max_abs_diff"] - 0.5) < 1e-6, top
others = [t for t in j["tensors"][1:]]
assert all(t["allclose"] and t["max_abs_diff"] == 0 and t["cosine"] == 1 for t in others), others
assert not j["identical"]
PY
"$tfdebug" diff "$fx/model.safetensors" "$fx/model.safetensors" >/dev/null
check "diff of a checkpoint with itself exits 0" test $? -eq 0
"$tfdebug" diff "$fx/embed.npy" "$fx/embed.npy" --rtol -1 2>"$work/err" >/dev/null
check "negative tolerance is a usage error" test $? -eq 2

# GGUF: block-quantised tensors are inspected through their decoded values.
"$tfdebug" inspect "$fx/quantized.gguf" --json >"$work/gguf.json"
check "inspect reads GGUF" test $? -eq 0
check "GGUF stats equal numpy's decoding of the same blocks" $py - "$work" "$fx" <<'PY'
import json, sys, numpy as np
work, fx = sys.argv[1], sys.argv[2]
j = json.load(open(f"{work}/gguf.json"))
assert j["files"][0]["format"] == "gguf" and j["metadata"]["general.architecture"] == "llama"
t = {x["name"]: x for x in j["tensors"]}
assert len(t) == 13 and "other.iq2_xxs" not in t
for kind in ["q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k"]:
    x = t["quant." + kind]
    v = np.load(f"{fx}/gguf_expected/quant.{kind}.npy").astype(np.float64)
    assert x["dtype"] == kind and x["shape"] == list(v.shape) and x["params"] == v.size, x
    s = x["stats"]
    assert s["zero"] == int((v == 0).sum()) and s["min"] == v.min() and s["max"] == v.max(), (kind, s)
    assert abs(s["mean"] - v.mean()) <= 1e-6 * np.abs(v).max() and abs(s["std"] - v.std()) <= 1e-6 * v.std(), kind
PY
"$tfdebug" inspect "$fx/quantized.gguf" >"$work/gguf.txt"
check "undecoded GGUF tensors are named in the human output" grep -q "not decoded: other.iq2_xxs (IQ2_XXS)" "$work/gguf.txt"
"$tfdebug" diff "$fx/model.safetensors" "$fx/model.gguf" --json >"$work/gguf_diff.json"
check "diff safetensors against its GGUF export" $py - "$work" <<'PY'
import json, sys
j = json.load(open(f"{sys.argv[1]}/gguf_diff.json"))
assert not j["missing"] and not j["extra"] and not j["shape_changes"], j
assert {"name": "embed.weight", "a": "f32", "b": "f16"} in j["dtype_changes"]
top = j["tensors"][0]  # 70000 became inf in f16: ranked first
assert top["name"] == "layers.1.scale" and top["finiteness_changes"] == 1, top
q = [t for t in j["tensors"] if t["name"] == "layers.0.attn.q.weight"][0]
assert q["finiteness_changes"] == 0 and 0 < q["relative_l2"] < 1e-3 and q["cosine"] > 0.999999, q
PY

# A llama.cpp-style export against its Hugging Face original: names matched, rows un-permuted.
"$tfdebug" diff "$fx/llama_hf.safetensors" "$fx/llama_q8.gguf" --json >"$work/llama_q8.json"
"$tfdebug" diff "$fx/llama_hf.safetensors" "$fx/llama_f32.gguf" --rtol 1e-3 --atol 1e-4 --json >"$work/llama_f32.json"
check "diff matches llama.cpp names and undoes the query/key permutation" $py - "$work" <<'PY'
import json, sys
q8 = json.load(open(f"{sys.argv[1]}/llama_q8.json"))
assert q8["renamed"] == "b" and not q8["missing"] and not q8["extra"] and not q8["shape_changes"], q8
t = {x["name"]: x for x in q8["tensors"]}
assert len(t) == 21
for n in ["model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight"]:
    assert t[n]["cosine"] > 0.9999 and t[n]["relative_l2"] < 0.01, t[n]  # Q8_0 error only
assert t["model.norm.weight"]["allclose"] and t["model.norm.weight"]["max_abs_diff"] == 0
f32 = json.load(open(f"{sys.argv[1]}/llama_f32.json"))
bad = [x for x in f32["tensors"] if not x["allclose"]]
assert [x["name"] for x in bad] == ["model.layers.0.self_attn.q_proj.weight"], bad
assert bad[0]["mismatches"] == 1 and bad[0]["first_diff_index"] == [5, 7], bad[0]
PY
"$tfdebug" diff "$fx/model.gguf" "$fx/model.safetensors" --json >"$work/same_names.json"
check "GGUF files that already share names are matched by name" $py -c "
import json; j=json.load(open('$work/same_names.json')); assert j['renamed'] is None and not j['missing'], j"

# --tensorboard: a run that an independent reader (tests/export/read_tfevents.py) decodes.
rm -rf "$work/tb"
"$tfdebug" inspect "$fx/model.safetensors" --tensorboard "$work/tb" >/dev/null
check "inspect --tensorboard writes one event file" bash -c "ls '$work/tb' | grep -q '^events.out.tfevents.'"
/usr/bin/python3 "$(dirname "$0")/../export/read_tfevents.py" "$work"/tb/events.out.tfevents.* >"$work/tb.json"
check "its histograms, scalars and findings text read back" $py - "$work" <<'PY'
import json, sys
j = json.load(open(f"{sys.argv[1]}/tb.json"))
assert not j["partial_tail"] and j["records"][0]["file_version"] == "brain.Event:2"
values = {v["tag"]: v for e in j["records"][1:] for v in e["values"]}
h = values["embed.weight"]["histo"]
assert h["num"] == 128 and sum(h["bucket"]) == 128 and abs(h["max"] - 0.04489513) < 1e-7, h
assert values["layers.0.attn.q.weight"]["histo"]["num"] == 62  # NaN and +Inf are not binned
assert abs(values["zero_fraction/embed.weight"]["simple_value"] - 0.125) < 1e-7
assert "nonfinite" in values["findings"]["tensor"]["string_val"][0]
PY

# --xlsx: a workbook that python3-openpyxl (an independent reader) opens.
"$tfdebug" inspect "$fx/model.safetensors" --xlsx "$work/model.xlsx" >/dev/null
check "inspect --xlsx writes a workbook openpyxl reads" /usr/bin/python3 - "$work/model.xlsx" "$fx" <<'PY'
import sys, zipfile, numpy as np, openpyxl
path, fx = sys.argv[1], sys.argv[2]
wb = openpyxl.load_workbook(path)
assert wb.sheetnames == ["Tensors", "Layers", "Findings"], wb.sheetnames
t = wb["Tensors"]
assert t.freeze_panes == "A2" and t.auto_filter.ref == "A1:N10", (t.freeze_panes, t.auto_filter.ref)
header = [c.value for c in t[1]]
assert header[:5] == ["name", "file", "dtype", "shape", "params"], header
rows = {r[0].value: r for r in t.iter_rows(min_row=2)}
embed = rows["embed.weight"]
assert embed[4].value == 128 and embed[4].data_type == "n"
assert abs(embed[5].value - np.load(f"{fx}/embed.npy").astype(np.float64).mean()) < 1e-9
q = rows["layers.0.attn.q.weight"]
assert q[11].value == 1 and q[12].value == 1  # NaN and +Inf counts
assert q[0].fill.fgColor.rgb.endswith("FFC7CE"), q[0].fill.fgColor.rgb  # error rows are red
f = wb["Findings"]
severities = [r[0].value for r in f.iter_rows(min_row=2)]
assert "error" in severities and "warning" in severities and "info" in severities
for r in f.iter_rows(min_row=2):
    colour = r[0].fill.fgColor.rgb
    want = {"error": "FFC7CE", "warning": "FFEB9C", "info": "DDEBF7"}[r[0].value]
    assert colour.endswith(want), (r[0].value, colour)
layers = [[c.value for c in r] for r in wb["Layers"].iter_rows(min_row=2)]
assert [l[0] for l in layers] == [0, 1] and layers[0][1] == 158, layers
assert any(n.startswith("xl/charts/chart") for n in zipfile.ZipFile(path).namelist())
PY

# --csv: the per-tensor table, read by Python's csv module and checked against numpy.
"$tfdebug" inspect "$fx/model.safetensors" --csv "$work/model.csv" >/dev/null
check "inspect --csv writes the per-tensor table" $py - "$work/model.csv" "$fx" <<'PY'
import csv, sys, numpy as np
rows = {r["name"]: r for r in csv.DictReader(open(sys.argv[1], newline=""))}
assert len(rows) == 9 and list(next(iter(rows.values())))[:4] == ["name", "file", "dtype", "shape"]
e = rows["embed.weight"]
assert e["shape"] == "[16,8]" and int(e["params"]) == 128 and int(e["zero"]) == 16, e
x = np.load(f"{sys.argv[2]}/embed.npy").astype(np.float64)
assert abs(float(e["mean"]) - x.mean()) <= 1e-6 * np.abs(x).max() and float(e["abs_max"]) == np.abs(x).max(), e
assert int(rows["layers.0.attn.q.weight"]["nan"]) == 1
PY

# --mlflow: a run in an MLflow file store, checked file by file (tests/export/check_mlflow.py).
rm -rf "$work/mlruns"
"$tfdebug" inspect "$fx/model.safetensors" --mlflow "$work/mlruns" >/dev/null
/usr/bin/python3 "$(dirname "$0")/../export/check_mlflow.py" "$work/mlruns" >"$work/mlflow.json"
check "inspect --mlflow writes a valid MLflow run" $py - "$work" <<'PY'
import json, sys
work = sys.argv[1]
e = json.load(open(f"{work}/mlflow.json"))["experiments"]["tfdebug inspect"]
(run,) = e["runs"].values()
assert run["meta"]["status"] == 3 and run["params"]["tensors"] == "9" and run["params"]["parameters"] == "633", run
assert [p[1] for p in run["metrics"]["layer_rms"]] == [0, 1]
assert run["metrics"]["findings.error"][0][0] == 1 and run["tags"]["tfdebug.healthy"] == "false"
assert run["artifacts"] == ["report.json"]
report = json.load(open(f"{work}/mlruns/{e['id']}/{run['meta']['run_id']}/artifacts/report.json"))
assert len(report["tensors"]) == 9
PY

# init_scale: std * sqrt(fan_in) far from any standard initialisation.
"$tfdebug" inspect "$fx/init.safetensors" --json >"$work/init.json"
check "init_scale flags the exploded and collapsed matrices only" $py - "$work" <<'PY'
import json, sys
j = json.load(open(f"{sys.argv[1]}/init.json"))
f = {x["tensor"]: x for x in j["findings"] if x["rule"] == "init_scale"}
assert sorted(f) == ["collapsed.weight", "exploded.weight"], sorted(f)
e = f["exploded.weight"]
assert e["fan_in"] == 64 and e["expected_std"] == 0.125 and 14 < e["ratio"] < 18, e
assert f["collapsed.weight"]["ratio"] < 0.002
PY

# --histogram GLOB: every value binned (numpy.histogram's bins over [min, max]), NaN and Inf apart;
# block-quantised tensors through their decoded values; bars that fit the terminal.
"$tfdebug" inspect "$fx/model.safetensors" --histogram 'layers.0.*' --bins 7 --json >"$work/hist.json"
"$tfdebug" inspect "$fx/quantized.gguf" --histogram 'quant.q[4-6]_k' --bins 9 --json >"$work/qhist.json"
check "--histogram counts equal numpy.histogram's, for f32 with NaN/Inf and for K-quants" $py - "$work" "$fx" <<'PY'
import json, sys, numpy as np
work, fx = sys.argv[1], sys.argv[2]
h = {x["name"]: x["histogram"] for x in json.load(open(f"{work}/hist.json"))["histograms"]}
assert sorted(h) == ["layers.0.attn.q.weight", "layers.0.mlp.fc1.weight"], sorted(h)
q = h["layers.0.attn.q.weight"]
assert q["nan"] == 1 and q["pos_inf"] == 1 and sum(q["counts"]) == 62, q
assert len(q["counts"]) == 7 and len(q["edges"]) == 8
for kind in ["q4_k", "q5_k", "q6_k"]:
    x = {y["name"]: y["histogram"] for y in json.load(open(f"{work}/qhist.json"))["histograms"]}["quant." + kind]
    v = np.load(f"{fx}/gguf_expected/quant.{kind}.npy").astype(np.float64).ravel()
    counts, edges = np.histogram(v, bins=9, range=(v.min(), v.max()))
    assert x["counts"] == counts.tolist(), (kind, x["counts"], counts.tolist())
    assert np.allclose(x["edges"], edges, rtol=0, atol=1e-12 * np.abs(v).max()), kind
PY
COLUMNS=64 "$tfdebug" inspect "$fx/model.safetensors" --histogram 'layers.0.attn.q.weight' --bins 6 >"$work/hist.txt"
check "--histogram text: a title, six bars within 64 columns, the NaN and Inf named" $py - "$work/hist.txt" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
at = lines.index("layers.0.attn.q.weight  f32 [8,8]")
bars = lines[at + 1:at + 7]
assert all(l.startswith("  [") and "█" in l and len(l) <= 64 for l in bars), bars
assert lines[at + 7] == "  not binned: 1 NaN, 1 +inf", lines[at + 7]
PY
"$tfdebug" inspect "$fx/model.safetensors" --histogram 'nothing.*' >/dev/null 2>"$work/hist.err"
check "--histogram matching nothing: exit 2" test $? -eq 2
check "... naming the glob" grep -q "histogram 'nothing.\*' matches none of the 9 tensor names" "$work/hist.err"

finish inspect
