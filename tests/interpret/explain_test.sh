#!/usr/bin/env bash
# `tfdebug explain` end to end (docs/interpretability.md) on a real model: an MLP trained on iris
# by python3-torch and saved as TorchScript (tests/interpret/make_iris_model.py), whose
# attributions the script also computes on its own — autograd with numpy's Gauss-Legendre nodes
# for Integrated Gradients, an enumeration of coalitions for the Shapley values. tfdebug's JSON
# must agree; the text shows the top features; bad input is one line and exit 2.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python torch sklearn

$py "$here/make_iris_model.py" "$work" || { echo "FAIL: make_iris_model.py"; exit 1; }
m="$work/iris_mlp.pt"
explain() { "$tfdebug" explain --model "$m" "$@"; }

for method in integrated-gradients gradient-x-input shap-exact kernel-shap shap-permutation; do
  explain --input "$work/x.npy" --background "$work/background.npy" --method $method --json >"$work/$method.json"
  check "explain --method $method --json exits 0" test $? -eq 0
done
explain --input "$work/x.csv" --background "$work/background.csv" --method kernel-shap --json >"$work/csv.json"
explain --input "$work/x.npy" --method integrated-gradients --max-batch 7 --json >"$work/ig7.json"
explain --input "$work/x.npy" --method smoothgrad --stdev 0.2 --samples 40 --seed 3 --json >"$work/sg1.json"
explain --input "$work/x.npy" --method smoothgrad --stdev 0.2 --samples 40 --seed 3 --json >"$work/sg2.json"
explain --input "$work/x.npy" --background "$work/background.npy" --method expected-gradients --samples 4000 --json \
  >"$work/eg.json"
check "the JSON agrees with PyTorch autograd and an enumeration of coalitions" $py - "$work" <<'PY'
import json, sys
w = sys.argv[1]
e = json.load(open(f"{w}/expected.json"))
j = {m: json.load(open(f"{w}/{m}.json")) for m in
     ["integrated-gradients", "gradient-x-input", "shap-exact", "kernel-shap", "shap-permutation", "csv", "ig7", "sg1", "sg2", "eg"]}
def close(a, b, tol):
    return len(a) == len(b) and all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b))
ig = j["integrated-gradients"]
assert ig["target"] == e["target"] and ig["target_chosen"] == "top output" and ig["shape"] == [4], ig
assert close(ig["attributions"], e["integrated_gradients"], 1e-4), (ig["attributions"], e["integrated_gradients"])
assert abs(ig["output"] - e["f_x"]) < 1e-5 and abs(ig["reference_output"] - e["f_zero"]) < 1e-5
assert abs(ig["delta"]) < 1e-3 and ig["evaluations"] == 52, ig
# up to BLAS rounding (OpenBLAS may block a product by its number of rows)
assert close(j["ig7"]["attributions"], ig["attributions"], 1e-6), "max_batch changed the answer"
assert close(j["gradient-x-input"]["attributions"], e["gradient_x_input"], 1e-5)
for m in ["shap-exact", "kernel-shap", "csv"]:
    assert close(j[m]["attributions"], e["shapley"], 1e-5), (m, j[m]["attributions"], e["shapley"])
    assert abs(j[m]["reference_output"] - e["background_mean_output"]) < 1e-5 and abs(j[m]["delta"]) < 1e-9
p = j["shap-permutation"]
assert abs(p["delta"]) < 1e-9 and close(p["attributions"], e["shapley"], 0.1), p["attributions"]
assert j["sg1"]["attributions"] == j["sg2"]["attributions"] and "variance" in j["sg1"], "same seed, same answer"
# Completeness in expectation: within four standard errors (the sum's, bounded by the features').
eg = j["eg"]
bound = 4 * sum(v ** 0.5 for v in eg["variance"])
assert abs(eg["sum"] - (e["f_x"] - e["background_mean_output"])) < bound, (eg["sum"], bound)
assert eg["evaluations"] == 4000 + 1 + 19, eg["evaluations"]  # samples, f(x), the 19 background rows
PY

# LIME: the surrogate is sklearn's Ridge(alpha=1) on the neighbourhood tfdebug sampled, weighted.
explain --input "$work/x.npy" --method lime --background "$work/training.csv" --seed 5 \
  --save-neighbourhood "$work/nb.csv" --json >"$work/lime.json"
explain --input "$work/x.npy" --method lime --background "$work/training.csv" --seed 5 --json >"$work/lime2.json"
explain --input "$work/x.npy" --method lime --background "$work/training.csv" --seed 6 --json >"$work/lime3.json"
check "lime: the surrogate equals sklearn's weighted Ridge on the same samples; seeded" $py - "$work" <<'PY'
import json, sys
import numpy as np
from sklearn.linear_model import Ridge
w = sys.argv[1]
j = json.load(open(f"{w}/lime.json"))
d = np.loadtxt(f"{w}/nb.csv", delimiter=",", skiprows=1)
weights, y, X = d[:, 0], d[:, 1], d[:, 2:]
assert X.shape == (5000, 4) and weights[0] == 1 and (X[0] == 1).all(), X[:2]
assert set(np.unique(X)) <= {0.0, 1.0}
r = Ridge(alpha=1.0).fit(X, y, sample_weight=weights)
assert np.allclose(j["attributions"], r.coef_, rtol=1e-6, atol=1e-9), (j["attributions"], r.coef_)
s = j["surrogate"]
assert abs(s["intercept"] - r.intercept_) < 1e-6 * max(1, abs(r.intercept_)), (s, r.intercept_)
assert abs(s["r2"] - r.score(X, y, sample_weight=weights)) < 1e-9, (s["r2"], r.score(X, y, sample_weight=weights))
assert abs(s["local_prediction"] - r.predict(X[:1])[0]) < 1e-6
assert json.load(open(f"{w}/lime2.json"))["attributions"] == j["attributions"], "the same seed, the same explanation"
assert json.load(open(f"{w}/lime3.json"))["attributions"] != j["attributions"]
PY

# Counterfactuals: every one printed is put in the wanted class by the model itself, run by
# python3-torch; immutable features keep the input's value; the same seed, the same set.
explain --input "$work/x.npy" --method dice --background "$work/training.csv" --seed 1 --json >"$work/dice.json"
check "dice --json exits 0" test $? -eq 0
explain --input "$work/x.npy" --method dice --background "$work/training.csv" --seed 1 --json >"$work/dice2.json"
explain --input "$work/x.npy" --method dice --background "$work/training.csv" --count 3 --wanted-class 0 \
  --immutable 0,1 --seed 2 --json >"$work/dice_immutable.json"
explain --input "$work/x.npy" --method wachter --background "$work/training.csv" --wanted-class 2 --json \
  >"$work/wachter.json"
check "dice, wachter: python3-torch puts every counterfactual in the wanted class" $py - "$work" <<'PY'
import json, sys
import torch
w = sys.argv[1]
model = torch.jit.load(f"{w}/iris_mlp.pt")
e = json.load(open(f"{w}/expected.json"))
for name, count, wanted, immutable in [("dice", 4, None, []), ("dice_immutable", 3, 0, [0, 1]), ("wachter", 1, 2, [])]:
    j = json.load(open(f"{w}/{name}.json"))
    assert j["class"] == e["target"] == 1, j["class"]
    if wanted is None:  # the runner-up
        wanted = sorted(range(3), key=lambda c: -e["outputs"][c])[1]
    assert j["wanted_class"] == wanted and j["immutable"] == immutable, (name, j["wanted_class"], j["immutable"])
    cfs = j["counterfactuals"]
    assert len(cfs) == count, (name, len(cfs))
    with torch.no_grad():
        out = model(torch.tensor([c["x"] for c in cfs], dtype=torch.float32))
    assert (out.argmax(1) == wanted).all(), (name, out)
    assert all(c["valid"] and c["class"] == wanted for c in cfs), name
    for c in cfs:
        assert all(c["x"][i] == j["input"][i] for i in immutable), (name, c["x"])
        assert c["changed"] == [i for i in range(4) if c["x"][i] != j["input"][i]] and c["changed"], (name, c)
    m = j["metrics"]
    assert m["validity"] == 1 and m["proximity"] > 0 and 1 <= m["sparsity"] <= 4, (name, m)
    if count > 1:
        assert 0 < m["determinant"] <= 1 and m["diversity"] > 0 and 0 < m["count_diversity"] <= 1, (name, m)
        assert len({tuple(c["x"]) for c in cfs}) == count, "the counterfactuals are pairwise different"
assert json.load(open(f"{w}/dice2.json")) == json.load(open(f"{w}/dice.json")), "the same seed, the same set"
PY
COLUMNS=100 explain --input "$work/x.csv" --method dice --background "$work/training.csv" --count 2 >"$work/dice.txt"
check "dice text: the header, the metrics, the changed features with their names, the classes" bash -c "
  head -1 '$work/dice.txt' | grep -q '^dice: 2 counterfactuals into class 2 (the input is class 1)' &&
  grep -q '^  validity  *1 ' '$work/dice.txt' && grep -q 'det K' '$work/dice.txt' &&
  grep -qE '^  feature +input +#1 +#2' '$work/dice.txt' && grep -qE '^  [0-3] (sepal|petal) ' '$work/dice.txt' &&
  grep -qE '^  class +1 +2 +2' '$work/dice.txt'"

# dice --categorical: petal length and width (2, 3) take only values the training rows have;
# every counterfactual still in the wanted class by python3-torch; the distances count them by
# mismatch. --categorical is dice's alone, and needs --background.
explain --input "$work/x.npy" --method dice --background "$work/training.csv" --categorical 2,3 --seed 1 \
  --json >"$work/dice_categorical.json"
check "dice --categorical exits 0" test $? -eq 0
check "dice --categorical: only the training rows' values, valid by python3-torch, mismatch distances" \
  $py - "$work" <<'PY'
import json, sys
import numpy as np
import torch
w = sys.argv[1]
j = json.load(open(f"{w}/dice_categorical.json"))
rows = np.loadtxt(f"{w}/training.csv", delimiter=",", dtype=np.float32, ndmin=2)
x = np.array(j["input"], dtype=np.float32)
assert j["categorical"] == [2, 3], j["categorical"]
allowed = [sorted(set(rows[:, c].tolist()) | {float(x[c])}) for c in (2, 3)]
assert j["allowed"] == allowed, (j["allowed"], allowed)
cfs = j["counterfactuals"]
assert len(cfs) == 4
model = torch.jit.load(f"{w}/iris_mlp.pt")
with torch.no_grad():
    out = model(torch.tensor([c["x"] for c in cfs], dtype=torch.float32))
assert (out.argmax(1) == j["wanted_class"]).all() and all(c["valid"] for c in cfs), out
scale = j["scale"]
for c in cfs:
    for k, col in enumerate((2, 3)):
        assert c["x"][col] in allowed[k], (col, c["x"][col])
    d = sum(abs(c["x"][i] - float(x[i])) / scale[i] for i in (0, 1)) + sum(c["x"][i] != float(x[i]) for i in (2, 3))
    assert abs(d - c["distance"]) < 1e-6 * max(1, d), (d, c["distance"])
PY
explain --input "$work/x.npy" --method dice --background "$work/training.csv" --categorical 7 >/dev/null 2>"$work/err"
check "dice --categorical 7 (4 features): exit 2, one line" bash -c "test $? -eq 2 && test \$(wc -l <'$work/err') -eq 1"
explain --input "$work/x.npy" --method wachter --background "$work/training.csv" --categorical 2 >/dev/null 2>"$work/err"
check "wachter --categorical: exit 2, one line" bash -c "test $? -eq 2 && test \$(wc -l <'$work/err') -eq 1"

# LIME on tokens and on an image, with TorchScript models whose answers are known: a sum of a
# weight per token, and a [1, 40, 40] image model that reads the top-left quadrant only.
$py "$here/make_lime_models.py" "$work" || { echo "FAIL: make_lime_models.py"; exit 1; }
"$tfdebug" explain --model "$work/tokens.pt" --input tok:3,5,1,7,2 --method lime --seed 3 \
  --save-neighbourhood "$work/nb_text.csv" --json >"$work/lime_text.json"
check "lime on tokens exits 0" test $? -eq 0
"$tfdebug" explain --model "$work/tokens.pt" --input tok:3,5,1,7,2 --method lime --seed 3 --token-masking remove \
  --max-batch 9 --json >"$work/lime_text_remove.json"
"$tfdebug" explain --model "$work/quadrant.pt" --input "$work/image.npy" --method lime --hide zero --seed 3 --json \
  >"$work/lime_image.json"
# --bow: token 3 twice is one feature; both places get its weight (2 + 2), sklearn's Ridge on the
# saved neighbourhood (one column per distinct token: 3, 5, 7, 2) gives the same coefficients.
"$tfdebug" explain --model "$work/tokens.pt" --input tok:3,5,3,7,2 --method lime --seed 3 --bow \
  --save-neighbourhood "$work/nb_bow.csv" --json >"$work/lime_bow.json"
check "lime --bow on tokens: one weight for a repeated token, sklearn's Ridge on its neighbourhood" $py - "$work" <<'PY'
import json, sys
import numpy as np
from sklearn.linear_model import Ridge
w = sys.argv[1]
a = json.load(open(f"{w}/lime_bow.json"))["attributions"]
assert a[0] == a[2] and np.allclose(a, [4, -3, 4, 1, -1], atol=0.05), a
d = np.loadtxt(f"{w}/nb_bow.csv", delimiter=",", skiprows=1)
assert d.shape == (5000, 2 + 4), d.shape
r = Ridge(alpha=1.0).fit(d[:, 2:], d[:, 1], sample_weight=d[:, 0])
assert np.allclose([a[0], a[1], a[3], a[4]], r.coef_, rtol=1e-6, atol=1e-9), (a, r.coef_)
PY
check "lime on tokens: the weights' ranking, sklearn's Ridge; on an image: the quadrant read" $py - "$work" <<'PY'
import json, sys
import numpy as np
from sklearn.linear_model import Ridge
w = sys.argv[1]
truth = [2.0, -3.0, 0.5, 1.0, -1.0]  # the weights of tokens 3, 5, 1, 7, 2
for name in ["lime_text", "lime_text_remove"]:
    j = json.load(open(f"{w}/{name}.json"))
    a = j["attributions"]
    assert sorted(range(5), key=lambda i: -a[i]) == sorted(range(5), key=lambda i: -truth[i]), (name, a)
    assert np.allclose(a, truth, atol=0.05), (name, a)
    assert 0.999 < j["surrogate"]["r2"] <= 1 and j["evaluations"] == 5000, j["surrogate"]
d = np.loadtxt(f"{w}/nb_text.csv", delimiter=",", skiprows=1)
r = Ridge(alpha=1.0).fit(d[:, 2:], d[:, 1], sample_weight=d[:, 0])
assert np.allclose(json.load(open(f"{w}/lime_text.json"))["attributions"], r.coef_, rtol=1e-6, atol=1e-9)
j = json.load(open(f"{w}/lime_image.json"))
a = np.array(j["attributions"])
assert a.shape == (1, 40, 40) and j["evaluations"] == 1000, a.shape
assert a[0, :20, :20].min() > 300 and np.abs(a[0, 20:, :]).max() < 5 and np.abs(a[0, :, 20:]).max() < 5, a[0, ::10, ::10]
PY

explain --input "$work/x.npy" --evaluate --json >"$work/evaluate.json"
check "--evaluate: the curves run from f(x) to f(0) and back, the measures are there" $py - "$work" <<'PY'
import json, sys
w = sys.argv[1]
e = json.load(open(f"{w}/expected.json"))
v = json.load(open(f"{w}/evaluate.json"))["evaluation"]
assert set(v) == {"infidelity", "infidelity_normalized", "sensitivity_max", "deletion_auc", "insertion_auc",
                  "deletion", "insertion"}, v
assert len(v["deletion"]) == 21 and abs(v["deletion"][0] - e["f_x"]) < 1e-5 and abs(v["deletion"][-1] - e["f_zero"]) < 1e-5
assert abs(v["insertion"][0] - e["f_zero"]) < 1e-5 and abs(v["insertion"][-1] - e["f_x"]) < 1e-5
assert v["infidelity"] >= 0 and 0 <= v["infidelity_normalized"] <= v["infidelity"] and v["sensitivity_max"] > 0, v
PY

COLUMNS=80 explain --input "$work/x.csv" --top 3 >"$work/text.txt"
check "the text names the method, the target and the completeness delta" bash -c "
  head -1 '$work/text.txt' | grep -q '^integrated-gradients of output 1 (the model.s top output)' &&
  grep -q 'completeness delta' '$work/text.txt'"
check "... and the top features by |attribution|, named by the CSV header" bash -c "
  grep -A1 '^  feature' '$work/text.txt' | tail -1 | grep -qE '^  0 sepal length +6\.7 +16\.5[0-9]* +\+{20}'"

# path-integrated-gradients: from zero through three corners of a box to x, each segment's
# integral by autograd at numpy's 50 Gauss-Legendre nodes.
printf '1,0,0,0\n1,2,0,0\n1,2,3,0\n' >"$work/path.csv"
explain --input "$work/x.npy" --method path-integrated-gradients --path "$work/path.csv" --target 1 --json \
  >"$work/pig.json"
check "path-integrated-gradients exits 0" test $? -eq 0
check "path-integrated-gradients agrees with autograd along the same segments" $py - "$work" <<'PY'
import json, sys
import numpy as np, torch
w = sys.argv[1]
j = json.load(open(f"{w}/pig.json"))
model = torch.jit.load(f"{w}/iris_mlp.pt")
x = np.load(f"{w}/x.npy").astype(np.float64).reshape(4)
points = [np.zeros(4), np.array([1, 0, 0, 0.]), np.array([1, 2, 0, 0.]), np.array([1, 2, 3, 0.]), x]
nodes, weights = np.polynomial.legendre.leggauss(50)
nodes, weights = (nodes + 1) / 2, weights / 2
total = np.zeros(4)
for a, b in zip(points, points[1:]):
    p = torch.tensor(np.array([a + t * (b - a) for t in nodes]), dtype=torch.float32, requires_grad=True)
    model(p)[:, 1].sum().backward()
    total += (weights[:, None] * p.grad.double().numpy()).sum(0) * (b - a)
assert j["method"] == "path-integrated-gradients" and j["target"] == 1, j["method"]
assert np.allclose(j["attributions"], total, rtol=1e-4, atol=1e-4), (j["attributions"], total)
with torch.no_grad():
    f = model(torch.tensor(np.array([x, np.zeros(4)]), dtype=torch.float32))[:, 1].double().numpy()
assert abs(sum(j["attributions"]) - (f[0] - f[1])) < 1e-3 and abs(j["delta"]) < 1e-3, (sum(j["attributions"]), f)
assert j["evaluations"] == 4 * 50 + 2, j["evaluations"]
PY

# Bad input: one line naming the problem, exit 2, before any model is loaded when it can be.
expect2() {  # expect2 NAME PATTERN ARGS...
  local name="$1" pattern="$2"
  shift 2
  "$tfdebug" explain "$@" >/dev/null 2>"$work/err.txt"
  local rc=$?
  check "$name: exit 2" test $rc -eq 2
  check "$name: one line" bash -c "[ \$(wc -l <'$work/err.txt') -eq 1 ] && grep -qF -- \"$pattern\" '$work/err.txt'"
}
expect2 "a misspelt method" "unknown method 'integrated-gradient' — did you mean 'integrated-gradients'?" \
  --model "$m" --input "$work/x.npy" --method integrated-gradient
expect2 "a file that is not TorchScript" "not a TorchScript file" --model "$work/x.csv" --input "$work/x.npy"
expect2 "an input of the wrong size" "the model's forward failed on a batch of shape [1, 3]" \
  --model "$m" --input 1,2,3
expect2 "a target the model does not have" "--target 7: the model has 3 outputs (0..2)" \
  --model "$m" --input "$work/x.npy" --target 7
expect2 "a background of the wrong width" "a row of 2 numbers; the model takes 4" \
  --model "$m" --input "$work/x.npy" --method kernel-shap --background <(printf '1,2\n3,4\n')
expect2 "expected-gradients without a background" "expected-gradients needs --background" \
  --model "$m" --input "$work/x.npy" --method expected-gradients
expect2 "path-integrated-gradients without --path" "path-integrated-gradients needs --path" \
  --model "$m" --input "$work/x.npy" --method path-integrated-gradients
expect2 "--path for another method" "--path is for --method path-integrated-gradients" \
  --model "$m" --input "$work/x.npy" --method integrated-gradients --path "$work/path.csv"
expect2 "a path of the wrong width" "a row of 2 numbers; the model takes 4" \
  --model "$m" --input "$work/x.npy" --method path-integrated-gradients --path <(printf '1,2\n')
expect2 "a CSV input with a word in it" "--input: line 2: 'x' is not a number" --model "$m" --input $'1,2,3,4\n1,x,3,4'

finish "explain"
