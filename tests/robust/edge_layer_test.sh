#!/usr/bin/env bash
# `tfdebug robust --edge-cases --layer NAME` (docs/robustness.md, "Edge cases") on the iris MLP of
# tests/interpret/make_iris_model.py: python3-torch runs the same TorchScript file's fc1 on the
# flowers and the training rows, numpy fits the shrunk covariance and takes the Mahalanobis
# distances, and counts the covered units; the JSON must agree. Bad input: one line, exit 2.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python torch numpy

$py "$here/../interpret/make_iris_model.py" "$work" >/dev/null || { echo "FAIL: make_iris_model.py"; exit 1; }
robust() {
  "$tfdebug" robust --model "$work/iris_mlp.pt" --input "$work/flowers.npy" --labels "$work/labels.npy" \
    --edge-cases --training "$work/training.csv" "$@"
}
robust --layer fc1 --json >"$work/layer0.json"
check "robust --edge-cases --layer fc1 --json exits 0" test $? -eq 0
robust --layer fc1 --coverage-threshold 1.5 --json >"$work/layer15.json"
check "... with --coverage-threshold 1.5 exits 0" test $? -eq 0
robust --json >"$work/inputs.json"

check "layer distances and coverage equal numpy's on torch's fc1 activations" $py - "$work" <<'PY'
import json, sys
import numpy as np, torch
w = sys.argv[1]
m = torch.jit.load(f"{w}/iris_mlp.pt")
X = torch.tensor(np.load(f"{w}/flowers.npy"))
T = torch.tensor(np.loadtxt(f"{w}/training.csv", delimiter=",", dtype=np.float32))
with torch.no_grad():
    a = m.fc1((X - m.mean) / m.std).double().numpy()
    t = m.fc1((T - m.mean) / m.std).double().numpy()
C = np.cov(t, rowvar=False)
d = C.shape[0]
S = 0.99 * C + 0.01 * np.trace(C) / d * np.eye(d)
mu = t.mean(0)
inv = np.linalg.inv(S)
expected = np.sqrt(np.einsum("ij,jk,ik->i", a - mu, inv, a - mu))
for name, threshold in [("layer0", 0.0), ("layer15", 1.5)]:
    e = json.load(open(f"{w}/{name}.json"))["edge_cases"]
    assert e["distance_space"] == "layer" and e["layer"] == "fc1" and e["layer_units"] == 16, e["distance_space"]
    got = np.array(e["mahalanobis"])
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-4), np.abs(got - expected).max()
    cov = e["coverage"]
    covered = int((a.max(0) > threshold).sum())
    assert cov["covered"] == covered and cov["units"] == 16 and abs(cov["fraction"] - covered / 16) < 1e-12, (cov, covered)
    assert cov["threshold"] == threshold
c0 = json.load(open(f"{w}/layer0.json"))["edge_cases"]["coverage"]["covered"]
c15 = json.load(open(f"{w}/layer15.json"))["edge_cases"]["coverage"]["covered"]
assert c15 < c0, (c15, c0)  # the threshold matters on this data
inputs = json.load(open(f"{w}/inputs.json"))["edge_cases"]
assert inputs["distance_space"] == "inputs" and "coverage" not in inputs
assert not np.allclose(inputs["mahalanobis"], expected)
PY

robust --layer fc1 --coverage-threshold 1.5 | grep -q "neuron coverage of layer fc1: [0-9]* of 16 units above 1.5"
check "the text names the layer's coverage" test $? -eq 0
robust --layer nosuch 2>"$work/err1.txt" >/dev/null
check "an unknown layer exits 2" test $? -eq 2
check "... with one line naming the layers" bash -c "[ \$(wc -l <'$work/err1.txt') -eq 1 ] && grep -q 'fc1' '$work/err1.txt'"
"$tfdebug" robust --model "$work/iris_mlp.pt" --input "$work/flowers.npy" --layer fc1 2>"$work/err2.txt" >/dev/null
check "--layer without --edge-cases exits 2" test $? -eq 2
check "... with one line" bash -c "[ \$(wc -l <'$work/err2.txt') -eq 1 ] && grep -q 'add --edge-cases' '$work/err2.txt'"

"$tfdebug" robust --help >"$work/help.txt"
for word in --layer --coverage-threshold --mask-id --vocabulary; do
  check "robust --help lists $word" grep -q -- "$word" "$work/help.txt"
done

finish "edge_layer"
