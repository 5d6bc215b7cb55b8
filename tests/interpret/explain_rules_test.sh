#!/usr/bin/env bash
# `tfdebug explain --method deeplift | deeplift-shap | lrp | guided-backprop` on the iris MLP
# (tests/interpret/make_iris_model.py: standardise, Linear 4->16, tanh, Linear 16->3), checked
# against DeepLIFT's rescale rule and LRP-epsilon written out layer by layer here in numpy from
# the model's own weights, independently of tfdebug's op overrides.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python torch sklearn

$py "$here/make_iris_model.py" "$work" || { echo "FAIL: make_iris_model.py"; exit 1; }
m="$work/iris_mlp.pt"
explain() { "$tfdebug" explain --model "$m" --input "$work/x.npy" "$@"; }

printf '6.0,3.0,4.0,1.2\n' >"$work/baseline.csv"
explain --method deeplift --json >"$work/deeplift.json"
check "deeplift exits 0" test $? -eq 0
explain --method deeplift --baseline "$work/baseline.csv" --json >"$work/deeplift_b.json"
explain --method deeplift-shap --background "$work/background.npy" --max-batch 5 --json >"$work/shap.json"
check "deeplift-shap exits 0" test $? -eq 0
explain --method lrp --json >"$work/lrp.json"
explain --method lrp --lrp-rule gamma --lrp-gamma 0.5 --json >"$work/lrp_gamma.json"
explain --method guided-backprop --json >"$work/gbp.json"
explain --method gradient-x-input --json >"$work/gxi.json"
check "the attributions agree with DeepLIFT and LRP computed layer by layer in numpy" $py - "$work" <<'PY'
import json, sys
import numpy as np
import torch
w = sys.argv[1]
j = {n: json.load(open(f"{w}/{n}.json")) for n in ["deeplift", "deeplift_b", "shap", "lrp", "lrp_gamma", "gbp", "gxi"]}
sd = {k: v.double().numpy() for k, v in torch.jit.load(f"{w}/iris_mlp.pt").state_dict().items()}
mean, std = sd["mean"], sd["std"]
W1, b1, W2, b2 = sd["fc1.weight"], sd["fc1.bias"], sd["fc2.weight"], sd["fc2.bias"]
x = np.load(f"{w}/x.npy").astype(np.float64)
t = j["deeplift"]["target"]

def layers(v):
    z1 = W1 @ ((v - mean) / std) + b1
    h = np.tanh(z1)
    return z1, h, W2 @ h + b2

def deeplift(x, r):
    # The rescale rule: the linear maps keep their derivative, tanh gets dy/dz between x and r.
    z, h, f = layers(x)
    zr, hr, fr = layers(r)
    dz = z - zr
    m = np.where(np.abs(dz) < 1e-10, 1 - h ** 2, (h - hr) / np.where(dz == 0, 1, dz))
    multiplier = (W1.T @ (W2[t] * m)) / std
    return (x - r) * multiplier, f[t], fr[t]

def close(a, b, tol):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * np.maximum(1, np.abs(b)))

for name, r in [("deeplift", np.zeros(4)), ("deeplift_b", np.array([6.0, 3.0, 4.0, 1.2]))]:
    a, f, fr = deeplift(x, r)
    d = j[name]
    assert d["method"] == "deeplift" and d["shape"] == [4], d
    assert close(d["attributions"], a, 1e-4), (name, d["attributions"], a.tolist())
    assert abs(d["output"] - f) < 1e-4 and abs(d["reference_output"] - fr) < 1e-4, (d, f, fr)
    # Summation-to-delta: the attributions sum to f(x) - f(x') up to f32 rounding.
    assert abs(d["delta"]) < 1e-4 and abs(sum(d["attributions"]) - (f - fr)) < 1e-4, d["delta"]

bg = np.load(f"{w}/background.npy").astype(np.float64)
runs = [deeplift(x, r) for r in bg]
s = j["shap"]
assert close(s["attributions"], np.mean([a for a, _, _ in runs], 0), 1e-4), s["attributions"]
assert abs(s["reference_output"] - np.mean([fr for _, _, fr in runs])) < 1e-4 and abs(s["delta"]) < 1e-4, s

def lrp(gamma):
    # Gradient x input form: each Linear passes W_r^T (g * z / (z_r + eps sign z_r)), tanh passes
    # relevance unchanged (g * h / z), the standardisation its plain derivative 1 / std.
    n = (x - mean) / std
    z1, h, f = layers(x)
    def back(W, b, a, z, g):
        Wr = W + gamma * np.clip(W, 0, None)
        zr = Wr @ a + b
        return Wr.T @ (g * z / (zr + 1e-9 * np.where(zr >= 0, 1, -1)))
    g = np.zeros(3)
    g[t] = 1
    gh = back(W2, b2, h, f, g)
    gn = back(W1, b1, n, z1, gh * h / z1)
    return x * gn / std, f[t]

for name, gamma in [("lrp", 0.0), ("lrp_gamma", 0.5)]:
    R, f = lrp(gamma)
    d = j[name]
    assert d["method"] == "lrp" and close(d["attributions"], R, 1e-4), (name, d["attributions"], R.tolist())
    assert abs(d["delta"] - (R.sum() - f)) < 1e-4, (d["delta"], R.sum() - f)

# No ReLU in this model: guided backprop is the plain gradient.
gxi = np.array(j["gxi"]["attributions"]) / x
assert close(j["gbp"]["attributions"], gxi, 1e-5), (j["gbp"]["attributions"], gxi.tolist())
PY

explain --method deeplift --max-batch 1 --json >"$work/deeplift1.json"
check "max-batch does not change deeplift" $py -c "
import json, sys
a, b = (json.load(open(sys.argv[i]))['attributions'] for i in (1, 2))
assert a == b, (a, b)" "$work/deeplift.json" "$work/deeplift1.json"

"$tfdebug" explain --help >"$work/help.txt"
check "explain --help lists the rule methods and the LRP options with defaults" bash -c "
  grep -q 'deeplift: rescale rule' '$work/help.txt' && grep -q 'guided-backprop:' '$work/help.txt' &&
  grep -q 'lrp: relevance by --lrp-rule epsilon' '$work/help.txt' && grep -q -- '--lrp-gamma' '$work/help.txt'"
"$tfdebug" explain --model "$m" --input "$work/x.npy" --method lrp --lrp-rule zeta >/dev/null 2>"$work/err.txt"
check "a bad --lrp-rule: exit 2, one line" bash -c "[ $? -eq 2 ] && [ \$(wc -l <'$work/err.txt') -eq 1 ] &&
  grep -qF \"expected epsilon, gamma or alpha1-beta0\" '$work/err.txt'"
"$tfdebug" explain --model "$m" --input "$work/x.npy" --method deeplift-shap >/dev/null 2>"$work/err.txt"
check "deeplift-shap without a background: exit 2" bash -c "[ $? -eq 2 ] && grep -qF 'deeplift-shap needs --background' '$work/err.txt'"

finish "explain rules"
