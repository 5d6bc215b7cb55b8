#!/usr/bin/env bash
# `tfdebug explain` on real data (docs/interpretability.md, "A real data set"): the breast-cancer
# MLP of tests/interpret/make_breast_cancer_model.py (ctest's interpret_breast_cancer_fixtures).
# KernelSHAP is efficient against the model's own outputs (computed by python3-torch when the
# model was saved), LIME's weighted R^2 is in [0, 1], every DiCE counterfactual is benign when
# python3-torch runs the model on it.
set -u
tfdebug="$1"
data="$2"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python torch sklearn

m="$data/breast_cancer_mlp.pt"
explain() { "$tfdebug" explain --model "$m" "$@"; }
explain --input "$data/x.csv" --background "$data/background.csv" --method kernel-shap --target 0 --json \
  >"$work/shap.json"
check "kernel-shap exits 0" test $? -eq 0
explain --input "$data/x.csv" --background "$data/training.csv" --method lime --target 0 --seed 1 --json \
  >"$work/lime.json"
check "lime exits 0" test $? -eq 0
explain --input "$data/x.csv" --background "$data/training.csv" --method dice --immutable 0,1 --seed 1 --json \
  >"$work/dice.json"
check "dice exits 0" test $? -eq 0
check "Shapley efficiency, LIME's R², DiCE's validity by python3-torch" $py - "$work" "$data" <<'PY'
import json, sys
import torch
w, d = sys.argv[1], sys.argv[2]
e = json.load(open(f"{d}/expected.json"))
s = json.load(open(f"{w}/shap.json"))
assert len(s["attributions"]) == 30 and s["target"] == 0
gap = e["outputs"][0] - e["background_mean_outputs"][0]
assert abs(sum(s["attributions"]) - gap) < 1e-4 * max(1, abs(gap)), (sum(s["attributions"]), gap)
l = json.load(open(f"{w}/lime.json"))
assert 0 <= l["surrogate"]["r2"] <= 1 and len(l["attributions"]) == 30, l["surrogate"]
c = json.load(open(f"{w}/dice.json"))
assert c["class"] == 0 and c["wanted_class"] == 1 and len(c["counterfactuals"]) == 4, (c["class"], c["wanted_class"])
model = torch.jit.load(f"{d}/breast_cancer_mlp.pt")
with torch.no_grad():
    out = model(torch.tensor([x["x"] for x in c["counterfactuals"]], dtype=torch.float32))
assert (out.argmax(1) == 1).all(), out
assert all(x["x"][0] == c["input"][0] and x["x"][1] == c["input"][1] for x in c["counterfactuals"])
assert c["metrics"]["validity"] == 1 and 0 < c["metrics"]["determinant"] <= 1, c["metrics"]
PY
# --background-kmeans: the training rows as 8 weighted centroids. python3-torch runs the model on
# the centroids: their weighted mean output is the reference, and the values are efficient against
# it; the weights are the cluster sizes (they sum to the rows); a coalition costs 8 rows.
explain --input "$data/x.csv" --background "$data/training.csv" --background-kmeans 8 --method kernel-shap \
  --target 0 --seed 3 --json >"$work/shap_kmeans.json"
check "kernel-shap --background-kmeans exits 0" test $? -eq 0
explain --input "$data/x.csv" --background "$data/training.csv" --background-kmeans 8 --method shap-permutation \
  --target 0 --seed 3 --json >"$work/perm_kmeans.json"
check "kmeans summary: weights, efficiency and cost by python3-torch" $py - "$work" "$data" <<'PY'
import json, sys
import numpy as np, torch
w, d = sys.argv[1], sys.argv[2]
rows = np.loadtxt(f"{d}/training.csv", delimiter=",", ndmin=2)
model = torch.jit.load(f"{d}/breast_cancer_mlp.pt")
full = json.load(open(f"{w}/shap.json"))
for name in ["shap_kmeans", "perm_kmeans"]:
    s = json.load(open(f"{w}/{name}.json"))
    b = s["background"]
    assert b["summary"] == "kmeans" and b["rows"] == len(rows) and b["clusters"] == 8 and b["converged"], b
    weights = np.array(b["weights"])
    assert weights.sum() == len(rows) and (weights > 0).all() and (weights == np.round(weights)).all(), weights
    c = torch.tensor(b["centroids"], dtype=torch.float32)
    assert c.shape == (8, 30), c.shape
    with torch.no_grad():
        ref = float((model(c)[:, 0].double().numpy() * weights).sum() / weights.sum())
        out = float(model(torch.tensor(np.loadtxt(f"{d}/x.csv", delimiter=",", skiprows=1, ndmin=2), dtype=torch.float32))[0, 0])
    assert abs(s["reference_output"] - ref) < 1e-5 * max(1, abs(ref)), (s["reference_output"], ref)
    assert abs(sum(s["attributions"]) - (out - ref)) < 1e-4 * max(1, abs(out - ref)), (sum(s["attributions"]), out - ref)
    # each centroid is the mean of its cluster's rows: inside the rows' range
    assert (c.numpy() >= rows.min(0) - 1e-4).all() and (c.numpy() <= rows.max(0) + 1e-4).all()
k = json.load(open(f"{w}/shap_kmeans.json"))
assert full["background"] == {"summary": "none", "rows": full["background"]["rows"]}, full["background"]
assert k["evaluations"] - 2 * 8 == (full["evaluations"] - 2 * full["background"]["rows"]) // full["background"]["rows"] * 8, (k["evaluations"], full["evaluations"])
PY
bad() {  # bad NAME PATTERN ARGS...: one line naming the problem, exit 2
  local name="$1" pattern="$2"
  shift 2
  explain --input "$data/x.csv" "$@" >/dev/null 2>"$work/err.txt"
  check "$name: exit 2" test $? -eq 2
  check "$name: one line" bash -c "[ \$(wc -l <'$work/err.txt') -eq 1 ] && grep -qF -- \"$pattern\" '$work/err.txt'"
}
bad "--background-kmeans without --background" "--background-kmeans needs --background rows" \
  --method kernel-shap --background-kmeans 4
bad "--background-kmeans 0" "--background-kmeans: k must be at least 1, got 0" \
  --method kernel-shap --background "$data/training.csv" --background-kmeans 0
bad "--background-kmeans for lime" "--background-kmeans is for the SHAP methods" \
  --method lime --background "$data/training.csv" --background-kmeans 4

COLUMNS=120 explain --input "$data/x.csv" --background "$data/training.csv" --method dice --count 2 --seed 1 \
  >"$work/dice.txt"
check "dice text names the features from the CSV header" grep -qE '^  [0-9]+ (mean|worst) ' "$work/dice.txt"

finish "breast cancer"
