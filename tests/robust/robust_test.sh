#!/usr/bin/env bash
# `tfdebug robust` end to end (docs/robustness.md) on the iris MLP of
# tests/interpret/make_iris_model.py and 30 of its flowers. Python recomputes what it can on its
# own — torch for the model's outputs, partial dependence and margin gradients, its own noise for
# smoothing and Gaussian flip rates (statistical agreement), scipy for the Clopper-Pearson bounds,
# numpy for the Mahalanobis distances — and the JSON must agree; bad input is one line and exit 2.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python torch scipy

$py "$here/../interpret/make_iris_model.py" "$work" >/dev/null || { echo "FAIL: make_iris_model.py"; exit 1; }
m="$work/iris_mlp.pt"
robust() { "$tfdebug" robust --model "$m" --input "$work/flowers.npy" "$@"; }

robust --labels "$work/labels.npy" --certify --sigma 0.25 --n 4000 --seed 1 --json >"$work/certify.json"
check "robust --certify --json exits 0" test $? -eq 0
robust --labels "$work/labels.npy" --certify --sigma 0.25 --n 4000 --seed 1 --max-batch 33 --json >"$work/certify33.json"
robust --labels "$work/labels.npy" --perturb gaussian,feature-dropout --samples 400 --seed 2 --json >"$work/perturb.json"
check "robust --perturb --json exits 0" test $? -eq 0
robust --whatif 2 --grid 12 --row 15 --scenario "2=1.5,3=0.2" --json >"$work/whatif.json"
check "robust --whatif --json exits 0" test $? -eq 0
robust --whatif 2,3 --grid 5 --json >"$work/whatif2.json"
robust --labels "$work/labels.npy" --edge-cases --training "$work/training.csv" --json >"$work/edge.json"
check "robust --edge-cases --json exits 0" test $? -eq 0

check "the JSON agrees with torch, scipy and numpy" $py - "$work" <<'PY'
import json, sys
import numpy as np, torch
from scipy import stats
w = sys.argv[1]
torch.manual_seed(0)
model = torch.jit.load(f"{w}/iris_mlp.pt")
X = torch.tensor(np.load(f"{w}/flowers.npy"))
y = np.load(f"{w}/labels.npy")
with torch.no_grad():
    clean = model(X)
pred = clean.argmax(1).numpy()
J = {k: json.load(open(f"{w}/{k}.json")) for k in ["certify", "certify33", "perturb", "whatif", "whatif2", "edge"]}

# Certify: the bounds are scipy's beta quantiles of the counts; the radius sigma Phi^-1(pA); the
# certified class is the majority under noise, as torch with its own noise estimates it.
c = J["certify"]["certify"]
assert J["certify33"]["certify"] == c, "max_batch changed the certificates"
n, alpha, sigma = c["n"], c["alpha"], c["sigma"]
assert (n, c["n0"], alpha, sigma) == (4000, 100, 0.001, 0.25)
for i in range(len(X)):
    k = c["count"][i]
    lower = stats.beta.ppf(alpha, k, n - k + 1) if k > 0 else 0.0
    assert abs(c["p_lower"][i] - lower) < 1e-10, (i, c["p_lower"][i], lower)
    with torch.no_grad():
        votes = model(X[i] + sigma * torch.randn(20000, 4)).argmax(1)
    counts = np.bincount(votes.numpy(), minlength=3)
    top = int(counts.argmax()); p_hat = counts[top] / 20000
    if lower >= 0.5:
        assert c["predicted"][i] == top, (i, c["predicted"][i], counts)
        assert abs(c["radius"][i] - sigma * stats.norm.ppf(lower)) < 1e-9
        # The two-proportion test's pooled standard error: it stays positive when torch's 20000
        # votes are unanimous and ours are not (a miss rate of 1e-5 does that now and then).
        pooled = (k + counts[top]) / (n + 20000)
        se = (pooled * (1 - pooled) * (1 / n + 1 / 20000)) ** 0.5
        assert abs(k / n - p_hat) < 5 * se + 1e-9, (i, k / n, p_hat)
    else:
        assert c["predicted"][i] == -1 and c["radius"][i] == 0
        assert p_hat < 0.5 + 0.05, (i, p_hat)
radii = sorted(c["radius"]); med = (radii[14] + radii[15]) / 2
assert abs(c["median_radius"] - med) < 1e-12
rec = [r for r in J["certify"]["recommendations"] if r["topic"] == "certified"][0]
assert f"median certified L2 radius {med:.3g}" in rec["text"], rec["text"]

# Perturbation: clean accuracy exact; Gaussian flip rates within 5 standard errors of torch's own.
for p in J["perturb"]["perturbation"]:
    assert abs(p["clean_accuracy"] - float((pred == y).mean())) < 1e-12
    assert p["flip_rate"][0] == 0 and p["agreement"][0] == 1
    xs, ys = p["intensities"], p["agreement"]
    area = sum((xs[k] - xs[k - 1]) * (ys[k] + ys[k - 1]) / 2 for k in range(1, len(xs))) / (xs[-1] - xs[0])
    assert abs(p["score"] - area) < 1e-12, (p["score"], area)
g = J["perturb"]["perturbation"][0]
assert g["kind"] == "gaussian" and g["samples"] == 400
for s, flip in zip(g["intensities"], g["flip_rate"]):
    with torch.no_grad():
        noisy = model(X.repeat(2000, 1) + s * torch.randn(30 * 2000, 4)).argmax(1).numpy()
    theirs = float((noisy != np.tile(pred, 2000)).mean())
    se = (theirs * (1 - theirs) / 60000 + theirs * (1 - theirs) / 12000) ** 0.5
    assert abs(flip - theirs) < 5 * se + 1e-3, (s, flip, theirs)
# Dropout of every feature at intensity 1: every input becomes the zero input.
d = J["perturb"]["perturbation"][1]
with torch.no_grad():
    zero_class = int(model(torch.zeros(1, 4)).argmax())
assert abs(d["accuracy"][-1] - float((y == zero_class).mean())) < 1e-12

# What-if: the grid is numpy's 5th..95th percentile; the PDP and ICE are torch's outputs.
wi = J["whatif"]["whatif"]
col = X[:, 2].numpy().astype(np.float64)
lo, hi = np.percentile(col, 5), np.percentile(col, 95)
grid = np.linspace(lo, hi, 12)
assert np.allclose(wi["grids"][0], grid, atol=1e-6), (wi["grids"][0], grid)
assert wi["target"] == int(pred[15])
for g_i, v in enumerate(wi["grids"][0]):
    Z = X.clone(); Z[:, 2] = v
    with torch.no_grad():
        outs = model(Z)[:, wi["target"]].numpy()
    assert abs(wi["pdp"][g_i] - outs.mean()) < 1e-5, (g_i, wi["pdp"][g_i], outs.mean())
    assert all(abs(wi["ice"][r][g_i] - outs[r]) < 1e-5 for r in range(30))
for f in wi["sweeps"][0]["flips"]:
    for delta, cls in [(-1e-4, f["from"]), (1e-4, f["to"])]:
        z = X[15].clone(); z[2] = f["at"] + delta
        with torch.no_grad():
            assert int(model(z[None]).argmax()) == cls, f
sc = wi["scenarios"]
z = X[15].clone(); z[2] = 1.5; z[3] = 0.2
with torch.no_grad():
    out = model(z[None])[0].numpy()
assert sc[0]["name"] == "as is" and np.allclose(sc[1]["outputs"], out, atol=1e-6), (sc, out)
w2 = J["whatif2"]["whatif"]
assert len(w2["pdp"]) == 25 and w2["features"] == [2, 3]
Z = X.clone(); Z[:, 2] = w2["grids"][0][1]; Z[:, 3] = w2["grids"][1][4]
with torch.no_grad():
    assert abs(w2["pdp"][1 * 5 + 4] - float(model(Z)[:, w2["target"]].mean())) < 1e-5

# Edge cases: margins and margin gradients by torch autograd; Mahalanobis by numpy.
e = J["edge"]["edge_cases"]
top2 = clean.topk(2, 1).values
assert np.allclose(e["margins"], (top2[:, 0] - top2[:, 1]).numpy(), atol=1e-5)
Xg = X.clone().requires_grad_(True)
out = model(Xg)
order = out.topk(2, 1).indices
margin = out.gather(1, order[:, :1]) - out.gather(1, order[:, 1:])
margin.sum().backward()
assert np.allclose(e["gradient_norms"], Xg.grad.norm(dim=1).numpy(), rtol=1e-4, atol=1e-5)
T = np.loadtxt(f"{w}/training.csv", delimiter=",").astype(np.float32).astype(np.float64)
C = np.cov(T, rowvar=False)
S = 0.99 * C + 0.01 * np.trace(C) / 4 * np.eye(4)
D = X.numpy().astype(np.float64) - T.mean(0)
maha = np.sqrt(np.einsum("ij,jk,ik->i", D, np.linalg.inv(S), D))
assert np.allclose(e["mahalanobis"], maha, rtol=1e-6), (e["mahalanobis"][:3], maha[:3])
assert e["distance_space"] == "inputs" and e["risky"], e
low = int(np.argmin(e["margins"]))
assert any(r["index"] == low for r in e["risky"])
PY

robust --labels "$work/labels.npy" --perturb gaussian --samples 50 --seed 9 --json >"$work/s1.json"
robust --labels "$work/labels.npy" --perturb gaussian --samples 50 --seed 9 --max-batch 7 --json >"$work/s2.json"
# Up to BLAS rounding: OpenBLAS's kernels may block a product by its number of rows (its generic
# Prescott kernels do, on CPUs it does not recognise), so a batch of 7 can round differently.
check "same seed, same answer, whatever the batch (up to BLAS rounding)" $py - "$work" <<'PY'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ["s1", "s2"])
def same(x, y, path="$"):
    if isinstance(x, dict):
        assert isinstance(y, dict) and x.keys() == y.keys(), path
        for k in x: same(x[k], y[k], f"{path}.{k}")
    elif isinstance(x, list):
        assert isinstance(y, list) and len(x) == len(y), path
        for i, (u, v) in enumerate(zip(x, y)): same(u, v, f"{path}[{i}]")
    elif isinstance(x, float) and isinstance(y, (int, float)):
        assert abs(x - y) <= 1e-5 * max(1.0, abs(x)), (path, x, y)
    else:
        assert x == y, (path, x, y)
same(a, b)
PY

robust --labels "$work/labels.npy" --certify --n 1000 --perturb gaussian --whatif 2 --edge-cases \
  --training "$work/training.csv" --png "$work/png" >"$work/text.txt"
check "the text report exits 0" test $? -eq 0
check "the text report has every section and the recommendations" grep -q "recommendations" "$work/text.txt"
check "the text shows the certified radius" grep -q "median certified L2 radius" "$work/text.txt"
for f in certified_accuracy perturbation_gaussian whatif_pdp_2; do
  check "--png wrote $f.png" $py -c "import sys; d=open(sys.argv[1],'rb').read(); sys.exit(0 if d[:8]==b'\x89PNG\r\n\x1a\n' and len(d)>5000 else 1)" "$work/png/$f.png"
done

"$tfdebug" robust --help >"$work/help.txt"
for word in --certify --sigma 0.25 --n 100000 --n0 100 --alpha 0.001 --perturb token-replacement --intensities \
  --whatif --grid --edge-cases --training --seed --max-batch --json --png; do
  check "robust --help lists $word" grep -q -- "$word" "$work/help.txt"
done

robust --perturb gausian 2>"$work/err1.txt" >/dev/null
check "an unknown perturbation exits 2" test $? -eq 2
check "... with one line naming the choices" bash -c "[ \$(wc -l <'$work/err1.txt') -eq 1 ] && grep -q 'gaussian' '$work/err1.txt'"
$py -c "import numpy as np, sys; np.save(sys.argv[1], np.zeros(7, dtype=np.int64))" "$work/bad_labels.npy"
robust --labels "$work/bad_labels.npy" 2>"$work/err2.txt" >/dev/null
check "labels of the wrong count exit 2" test $? -eq 2
check "... with one line saying so" bash -c "[ \$(wc -l <'$work/err2.txt') -eq 1 ] && grep -q '7 labels for 30 inputs' '$work/err2.txt'"
robust --whatif 9 2>"$work/err3.txt" >/dev/null
check "a feature out of range exits 2" test $? -eq 2
robust --perturb feature-dropout --intensities 0,2 2>"$work/err4.txt" >/dev/null
check "a dropout intensity above 1 exits 2" test $? -eq 2

finish "robust"
