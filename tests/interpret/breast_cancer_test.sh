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
COLUMNS=120 explain --input "$data/x.csv" --background "$data/training.csv" --method dice --count 2 --seed 1 \
  >"$work/dice.txt"
check "dice text names the features from the CSV header" grep -qE '^  [0-9]+ (mean|worst) ' "$work/dice.txt"

finish "breast cancer"
