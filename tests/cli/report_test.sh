#!/usr/bin/env bash
# `tfdebug report RUN_DIR` (docs/report.md): a run written live by every sink
# (tests/export/write_run.cpp), its exports rebuilt from the run directory and compared with the
# live ones by independent readers (python3-openpyxl, tests/export/read_tfevents.py,
# tests/export/check_mlflow.py, the bytes of the CSV); the same run killed with SIGKILL, whose
# workbook exists only rebuilt; and the bad inputs, each a one-line error with exit code 2.
set -u
tfdebug="$1"
write_run="$2"
here="$(dirname "$0")"
source "$here/harness.sh"

"$write_run" "$work/full"
check "the live run finishes" test $? -eq 0
"$tfdebug" report "$work/full/run" --xlsx "$work/re.xlsx" --tensorboard "$work/re_tb" --mlflow "$work/re_ml" \
  --csv "$work/re.csv" >"$work/re.txt" 2>&1
echo $? >"$work/re.rc"
check "report exits 1: the run has an error-level finding" grep -qx 1 "$work/re.rc"
check "the CSV rebuilt is the live one, byte for byte" cmp "$work/full/run/metrics.csv" "$work/re.csv"

check "Excel: every sheet and cell of the rebuilt workbook equals the live one" $py - "$work" <<'PY'
import sys, openpyxl
work = sys.argv[1]
def cells(path):
    wb = openpyxl.load_workbook(path)
    return {name: [[c.value for c in row] for row in wb[name].iter_rows()] for name in wb.sheetnames}, wb
live, live_wb = cells(f"{work}/full/live.xlsx")
re, re_wb = cells(f"{work}/re.xlsx")
assert list(live) == list(re) == ["Findings", "Loss", "Gradients", "Update ratio", "Activations", "Run"], (list(live), list(re))
for name in live:
    assert live[name] == re[name], (name, live[name][:3], re[name][:3])
findings = live["Findings"]
assert [r[4] for r in findings[1:]] == ["init_scale", "dead_units", "nonfinite", "divergence"], findings
assert findings[3][0] == 5 and findings[3][3] == "error" and findings[3][6] == "fc2", findings[3]
assert len(live["Loss"]) == 1 + 12 and live["Loss"][1] == [0, 2.0], live["Loss"][:2]
for cell in ("A2", "A3", "A4"):  # amber, amber, red
    assert re_wb["Findings"][cell].fill.fgColor.rgb == live_wb["Findings"][cell].fill.fgColor.rgb, cell
PY

$py "$here/../export/read_tfevents.py" "$work"/full/tb/events.out.tfevents.* >"$work/live_tb.json"
$py "$here/../export/read_tfevents.py" "$work"/re_tb/events.out.tfevents.* >"$work/re_tb.json"
check "TensorBoard: the same scalars and findings text; histograms only live" $py - "$work" <<'PY'
import json, math, sys
work = sys.argv[1]
def read(name):
    records = json.load(open(f"{work}/{name}.json"))
    assert not records["partial_tail"]
    scalars, texts, histos = {}, {}, set()
    for r in records["records"]:
        for v in r.get("values", []):
            key = (v["tag"], r.get("step", 0))
            if "simple_value" in v:
                x = v["simple_value"]
                scalars[key] = "nan" if math.isnan(x) else x
            elif "histo" in v:
                histos.add(key)
            elif v.get("plugin_name") == "text":
                texts[key] = v["tensor"]["string_val"][0]
    return scalars, texts, histos
live, live_text, live_histos = read("live_tb")
re, re_text, re_histos = read("re_tb")
assert live == re, sorted(set(live.items()) ^ set(re.items()))[:5]
assert ("loss", 11) in live and live[("loss", 11)] == "nan" and live[("loss", 0)] == 2.0
assert ("grad_norm/fc1", 3) in live, sorted(live)[:10]
assert live_text == re_text, (sorted(live_text), sorted(re_text))
assert ("findings/nonfinite", 5) in live_text and ("run", 11) in live_text, sorted(live_text)
assert live_histos and not re_histos
PY

$py "$here/../export/check_mlflow.py" "$work/full/mlruns" >"$work/live_ml.json"
$py "$here/../export/check_mlflow.py" "$work/re_ml" >"$work/re_ml.json"
check "MLflow: the same params, metrics (value and step), tags and report" $py - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def run(name):
    (r,) = json.load(open(f"{work}/{name}.json"))["experiments"]["tfdebug report"]["runs"].values()
    r["points"] = {k: [(p[2], p[1]) for p in v] for k, v in r["metrics"].items()}
    return r
live, re = run("live_ml"), run("re_ml")
assert live["params"] == re["params"] and live["params"]["rules.dead_units.window"] == "3", re["params"]
assert live["points"] == re["points"], sorted(set(live["points"]) ^ set(re["points"]))
assert live["points"]["loss"][0] == ("2.0", 0) and live["points"]["loss"][11] == ("nan", 11)
strip = lambda tags: {k: v for k, v in tags.items() if not k.startswith("mlflow.")}
assert strip(live["tags"]) == strip(re["tags"]), (live["tags"], re["tags"])
assert re["tags"]["tfdebug.complete"] == "true" and re["meta"]["status"] == 4  # FAILED: an error
assert live["artifacts"] == re["artifacts"] == ["report.json"]
PY

# Killed at the end of step 7 (SIGKILL: no finish(), no destructor): no live workbook.
"$write_run" "$work/killed" --kill-after 7
check "the killed run dies of SIGKILL" test $? -eq 137
check "a killed run has no live workbook" test ! -e "$work/killed/live.xlsx"
"$tfdebug" report "$work/killed/run" >"$work/killed.txt" 2>&1
check "the summary says the run did not finish, and its findings" $py - "$work/killed.txt" <<'PY'
import sys
text = open(sys.argv[1]).read()
assert "did not finish" in text, text
assert "2 errors, 2 warnings, 0 info" in text, text
assert "  error    nonfinite step 5 (2 steps) fc2 log" in text and "  warning  dead_units step 2 (5 steps) fc1 relu" in text, text
# errors first, then warnings, each in the order found
rows = [l.split()[:2] for l in text.splitlines() if l.startswith(("  error ", "  warning "))]
assert rows == [["error", "nonfinite"], ["error", "divergence"], ["warning", "init_scale"], ["warning", "dead_units"]], rows
PY
"$tfdebug" report "$work/killed/run" --json >"$work/killed.json"
check "--json: complete false, the findings, the steps of metrics.jsonl" $py - "$work" <<'PY'
import json, sys
work = sys.argv[1]
s = json.load(open(f"{work}/killed.json"))
lines = [json.loads(l) for l in open(f"{work}/killed/run/metrics.jsonl")]
assert s["complete"] is False and s["counts"] == {"error": 2, "warning": 2, "info": 0}, s
assert [f["rule"] for f in s["findings"]] == ["init_scale", "dead_units", "nonfinite", "divergence"]
assert s["metrics"]["steps"] == len(lines) and 1 <= len(lines) <= 8, (s["metrics"], len(lines))
PY
"$tfdebug" report "$work/killed/run" --xlsx "$work/killed.xlsx" --mlflow "$work/killed_ml" >/dev/null 2>&1
check "the killed run's workbook, rebuilt: its findings and every step metrics.jsonl kept" $py - "$work" <<'PY'
import json, sys, openpyxl
work = sys.argv[1]
wb = openpyxl.load_workbook(f"{work}/killed.xlsx")
report = json.load(open(f"{work}/killed/run/report.json"))
lines = [json.loads(l) for l in open(f"{work}/killed/run/metrics.jsonl")]
assert report["complete"] is False
rows = [[c.value for c in r] for r in wb["Findings"].iter_rows(min_row=2)]
assert [(r[0], r[4], r[6] or "") for r in rows] == [(f["step"], f["rule"], f["module"]) for f in report["findings"]], rows
loss = [[c.value for c in r] for r in wb["Loss"].iter_rows(min_row=2)]
assert loss == [[l["step"], l["loss"]] for l in lines], loss  # NaN: a blank cell, null in the JSON
run = {r[0].value: r[1].value for r in wb["Run"].iter_rows(min_row=2)}
assert run["steps"] == len(lines) and run["config.rules.dead_units.window"] == "3", run
PY
$py "$here/../export/check_mlflow.py" "$work/killed_ml" >"$work/killed_ml.json"
check "the killed run in MLflow: FAILED, tfdebug.complete false" $py - "$work/killed_ml.json" <<'PY'
import json, sys
(r,) = json.load(open(sys.argv[1]))["experiments"]["tfdebug report"]["runs"].values()
assert r["meta"]["status"] == 4 and r["tags"]["tfdebug.complete"] == "false", (r["meta"], r["tags"])
assert r["meta"]["run_name"] == "run", r["meta"]
PY

# A line cut off by the kill is left out, and said so.
printf '{"step": 99, "loss": 1.' >>"$work/killed/run/metrics.jsonl"
"$tfdebug" report "$work/killed/run" >"$work/cut.txt" 2>&1
check "a cut-off last line of metrics.jsonl is reported, not an error" grep -q "its last line was cut off" "$work/cut.txt"

# Bad input: exit 2, one line on stderr naming the file and what was expected.
bad() {  # bad NAME EXPECTED_TEXT ARGS...
  local name="$1" expected="$2"
  shift 2
  "$tfdebug" report "$@" >"$work/out.txt" 2>"$work/err.txt"
  local rc=$?
  check "$name: exit 2" test "$rc" -eq 2
  check "$name: one line" test "$(wc -l <"$work/err.txt")" -eq 1
  check "$name: says '$expected'" grep -qF -- "$expected" "$work/err.txt"
}
bad "no such folder" "$work/none: not a folder: expected a run directory" "$work/none"
mkdir -p "$work/empty"
bad "no report.json" "$work/empty/report.json: not found: expected the report.json" "$work/empty"
cp -r "$work/full/run" "$work/trunc"
head -c 300 "$work/full/run/report.json" >"$work/trunc/report.json"
bad "a truncated report.json" "$work/trunc/report.json: not JSON (a syntax error at byte" "$work/trunc"
cp -r "$work/full/run" "$work/nometrics"
rm "$work/nometrics/metrics.jsonl"
bad "--xlsx without metrics.jsonl" "$work/nometrics/metrics.jsonl: not found" "$work/nometrics" --xlsx "$work/x.xlsx"
cp -r "$work/full/run" "$work/badline"
printf '{"step": 12, "loss": 1, "modules": {"fc\\u001b[31m": {"grad_norm": "x"}}}\n' >>"$work/badline/metrics.jsonl"
bad "a bad metrics line" "$work/badline/metrics.jsonl: line 13: field 'modules.fc?[31m.grad_norm': expected a number or null" \
  "$work/badline" --csv "$work/x.csv"
check "no raw escape sequence on stderr" bash -c "! grep -q $'\033' '$work/err.txt'"

finish "report"
