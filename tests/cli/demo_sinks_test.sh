#!/usr/bin/env bash
# A live debugging run written to TensorBoard, MLflow, Excel, JSON Lines and CSV at once
# (docs/exports.md, "From a training run"), each read back by an independent reader:
# tests/export/read_tfevents.py, tests/export/check_mlflow.py, python3-openpyxl, Python's json
# and csv. Built and run only with LibTorch.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/harness.sh"

"$tfdebug" demo --fault log --steps 80 --every 0 --out "$work/run" --tensorboard "$work/tb" \
  --mlflow "$work/mlruns" --xlsx "$work/run.xlsx" >"$work/demo.txt" 2>&1
echo $? >"$work/demo.rc"
check "the demo finds the log fault (exit 1)" grep -qx 1 "$work/demo.rc"
check "one TensorBoard event file" bash -c "[ \$(ls $work/tb/events.out.tfevents.* | wc -l) -eq 1 ]"
$py "$here/../export/read_tfevents.py" "$work"/tb/events.out.tfevents.* >"$work/tb.json"
$py "$here/../export/check_mlflow.py" "$work/mlruns" >"$work/mlflow.json"

# metrics.jsonl is the reference the other files are compared with; its own numbers are
# checked against hand computation in tests/session/step_metrics_test.cpp.
check "metrics.jsonl and metrics.csv hold every step" $py - "$work" <<'PY'
import csv, json, math, sys
work = sys.argv[1]
lines = [json.loads(l) for l in open(f"{work}/run/metrics.jsonl")]
assert [l["step"] for l in lines] == list(range(80)), [l["step"] for l in lines]
assert all(l["loss"] is not None and l["loss"] > 0 for l in lines[:73]) and lines[73]["loss"] is None
fc1 = [l["modules"]["blocks.1.mlp.fc1"] for l in lines]
assert all(m["grad_norm"] > 0 for m in fc1[:73]), fc1[:3]
assert all(0 < m["update_ratio"] < 1 for m in fc1[:73]), fc1[:3]
# tier diagnose observes every op: fc1's forward output (its linear) each step; the log and the
# ReLU after it run in blocks.1.mlp (Note [Module of an op]), whose activations hold the NaN
act = fc1[0]["activations"]
assert act["outputs"] >= 1 and act["values"] > 0 and act["nonfinite"] == 0 and 0 <= act["zero_fraction"] < 1, act
mlp = [l["modules"]["blocks.1.mlp"] for l in lines]
assert mlp[0]["activations"]["outputs"] >= 2 and mlp[0]["activations"]["nonfinite"] == 0, mlp[0]
assert mlp[73]["activations"]["nonfinite"] > 0, mlp[73]
rows = list(csv.DictReader(open(f"{work}/run/metrics.csv", newline="")))
assert list(rows[0]) == ["step", "metric", "module", "value"], list(rows[0])
loss = {int(r["step"]): float(r["value"]) for r in rows if r["metric"] == "loss"}
assert sorted(loss) == list(range(80))
for l in lines:
    if l["loss"] is None:
        assert math.isnan(loss[l["step"]])
    else:
        assert loss[l["step"]] == l["loss"], (l["step"], loss[l["step"]], l["loss"])
grad = {(int(r["step"]), r["module"]): float(r["value"]) for r in rows if r["metric"] == "grad_norm"}
for l in lines[:73]:
    for module, m in l["modules"].items():
        if "grad_norm" in m:
            assert grad[(l["step"], module)] == m["grad_norm"]
PY

check "TensorBoard: loss and grad_norm per step, histograms, findings as text" $py - "$work" <<'PY'
import json, math, re, struct, sys
work = sys.argv[1]
lines = [json.loads(l) for l in open(f"{work}/run/metrics.jsonl")]
records = json.load(open(f"{work}/tb.json"))
assert not records["partial_tail"]
values = [(r.get("step", 0), v) for r in records["records"] for v in r.get("values", [])]
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
scalars = {}
for step, v in values:
    if "simple_value" in v:
        scalars.setdefault(v["tag"], {})[step] = v["simple_value"]
assert sorted(scalars["loss"]) == list(range(80)), sorted(scalars["loss"])
for l in lines:
    got = scalars["loss"][l["step"]]
    assert (math.isnan(got) if l["loss"] is None else got == f32(l["loss"])), (l["step"], got, l["loss"])
layers = {m for l in lines for m, x in l["modules"].items() if "grad_norm" in x}
assert {f"grad_norm/{m}" for m in layers} == {t for t in scalars if t.startswith("grad_norm/")}
assert {"blocks.0.mlp.fc1", "blocks.1.attn.q", "head"} <= layers and len(layers) >= 10, layers
for m in layers:
    assert sorted(scalars[f"grad_norm/{m}"]) == list(range(80)), m
    assert scalars[f"grad_norm/{m}"][5] == f32(lines[5]["modules"][m]["grad_norm"]), m
assert "update_ratio/blocks.1.mlp.fc1" in scalars and "zero_fraction/blocks.1.mlp.fc1" in scalars

histos = {}
for step, v in values:
    if "histo" in v:
        histos.setdefault(v["tag"], {})[step] = v["histo"]
weights = [t for t in histos if t.startswith("weights/")]
acts = [t for t in histos if t.startswith("activations/")]
assert "weights/blocks.1.mlp.fc1.weight" in weights and "activations/blocks.1.mlp.fc1" in acts, sorted(histos)
for t in weights + acts:
    assert sorted(histos[t]) == list(range(0, 80, 10)), (t, sorted(histos[t]))  # metrics.histogram_every
    for h in histos[t].values():
        assert sum(h["bucket"]) == h["num"] and h["min"] <= h["max"], t
# Every parameter once per histogram step: the demo's parameter count (its banner).
params = int(re.search(r"(\d+) parameters", open(f"{work}/demo.txt").read()).group(1))
assert sum(histos[t][0]["num"] for t in weights) == params, params

texts = {}
for step, v in values:
    if v.get("plugin_name") == "text":
        texts[(v["tag"], step)] = v["tensor"]["string_val"][0]
nonfinite = texts[("findings/nonfinite", 73)]
assert "`aten::log`" in nonfinite and "`blocks.1.mlp`" in nonfinite and "**error**" in nonfinite, nonfinite
assert ("run", 79) in texts and "80 steps" in texts[("run", 79)], texts.keys()
PY

check "MLflow: a FAILED run with metrics per step, config params and the report" $py - "$work" <<'PY'
import json, math, sys
work = sys.argv[1]
lines = [json.loads(l) for l in open(f"{work}/run/metrics.jsonl")]
e = json.load(open(f"{work}/mlflow.json"))["experiments"]["tfdebug demo"]
(run,) = e["runs"].values()
assert run["meta"]["status"] == 4 and run["meta"]["run_name"] == "fault log", run["meta"]  # 4: FAILED
assert run["params"]["tier"] == "diagnose" and run["params"]["metrics.histogram_every"] == "10"
assert run["params"]["rules.loss.window"] == "50", run["params"]
loss = run["metrics"]["loss"]
assert [p[1] for p in loss] == list(range(80))
for (value, step, text), l in zip(loss, lines):
    assert (text == "nan" if l["loss"] is None else value == l["loss"]), (step, text, l["loss"])
grad = run["metrics"]["grad_norm/blocks.0.mlp.fc1"]
assert [p[1] for p in grad] == list(range(80))
assert grad[10][0] == lines[10]["modules"]["blocks.0.mlp.fc1"]["grad_norm"]
assert run["metrics"]["findings.error"][0][0] >= 1
assert run["tags"]["tfdebug.healthy"] == "false" and run["tags"]["tfdebug.first_error"].startswith("nonfinite at step 73")
assert run["artifacts"] == ["report.json"]
report = json.load(open(f"{work}/mlruns/{e['id']}/{run['meta']['run_id']}/artifacts/report.json"))
assert any(f["rule"] == "nonfinite" and f["step"] == 73 for f in report["findings"])
PY

check "Excel: findings by severity, loss and gradients as numbers, charts" $py - "$work" <<'PY'
import json, sys, zipfile, openpyxl
work = sys.argv[1]
path = f"{work}/run.xlsx"
lines = [json.loads(l) for l in open(f"{work}/run/metrics.jsonl")]
wb = openpyxl.load_workbook(path)
assert wb.sheetnames == ["Findings", "Loss", "Gradients", "Update ratio", "Activations", "Run"], wb.sheetnames
for ws in wb:
    assert ws.freeze_panes == "A2" and ws.auto_filter.ref, (ws.title, ws.freeze_panes, ws.auto_filter.ref)
f = wb["Findings"]
header = [c.value for c in f[1]]
assert header[:5] == ["step", "last step", "steps tripped", "severity", "rule"], header
rows = {(r[4].value, r[6].value): r for r in f.iter_rows(min_row=2)}
nan = rows[("nonfinite", "blocks.1.mlp")]
assert nan[0].value == 73 and nan[0].data_type == "n" and nan[3].value == "error" and nan[7].value == "aten::log"
for r in f.iter_rows(min_row=2):
    want = {"error": "FFC7CE", "warning": "FFEB9C", "info": "DDEBF7"}[r[3].value]
    assert r[0].fill.fgColor.rgb.endswith(want), (r[3].value, r[0].fill.fgColor.rgb)
loss = [(r[0].value, r[1].value, r[1].data_type) for r in wb["Loss"].iter_rows(min_row=2)]
assert [s for s, _, _ in loss] == list(range(80))
for (step, value, kind), l in zip(loss, lines):
    if l["loss"] is None:
        assert value is None  # Excel has no NaN: a blank cell
    else:
        # libxlsxwriter writes 16 significant digits (Excel itself keeps 15)
        assert kind == "n" and abs(value - l["loss"]) <= 1e-15 * abs(l["loss"]), (step, value, l["loss"])
g = wb["Gradients"]
header = [c.value for c in g[1]]
col = header.index("blocks.1.mlp.fc1")
grads = {r[0].value: r[col].value for r in g.iter_rows(min_row=2)}
want = lines[20]["modules"]["blocks.1.mlp.fc1"]["grad_norm"]
assert abs(grads[20] - want) <= 1e-15 * want, (grads[20], want)
names = zipfile.ZipFile(path).namelist()
charts = [zipfile.ZipFile(path).read(n).decode() for n in names if n.startswith("xl/charts/chart")]
assert len(charts) == 3, names  # Loss, Gradients, Update ratio
assert any("'Loss'!$B$2:$B$81" in c for c in charts)
# The gradient chart draws the 8 modules with the largest norms (all are in the table).
grad_chart = [c for c in charts if "'Gradients'!" in c]
assert len(grad_chart) == 1 and grad_chart[0].count("<c:ser>") == min(8, len(header) - 1), grad_chart
run = {r[0].value: r[1].value for r in wb["Run"].iter_rows(min_row=2)}
assert run["steps"] == 80 and run["config.tier"] == "diagnose", run
PY
# A path that cannot be written is an error before the first step (exit 2), naming the path.
"$tfdebug" demo --steps 2 --xlsx /proc/no/run.xlsx >"$work/bad.txt" 2>&1
echo $? >"$work/bad.rc"
check "an unwritable --xlsx fails at once with exit 2" grep -qx 2 "$work/bad.rc"
check "... naming the path" grep -q "/proc/no/run.xlsx: cannot create the workbook" "$work/bad.txt"
check "... before training" bash -c "! grep -q '^step ' $work/bad.txt"
finish demo_sinks
