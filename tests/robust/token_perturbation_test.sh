#!/usr/bin/env bash
# `tfdebug robust --perturb token-masking,token-replacement` end to end (docs/robustness.md,
# "Perturbation testing") on real data: the shipped digits read as 64 tokens each (pixel values
# 0..16 as ids), a token classifier trained by tests/robust/make_digit_tokens_model.py and loaded
# from TorchScript. Python3-torch re-evaluates the same .pt: at intensity 0 the curve is the clean
# accuracy and confidence; at intensity 1 token-masking makes every image blank, so accuracy and
# agreement are those of the all-zero image; every masking hotspot (one token masked alone, for
# every image) equals torch's flip rate exactly; at intensity 0.3 both kinds' flip rates agree
# with torch's own random masking and replacement within 5 standard errors.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python torch numpy

$py "$here/make_digit_tokens_model.py" "$work" >/dev/null || { echo "FAIL: make_digit_tokens_model.py"; exit 1; }
"$tfdebug" robust --model "$work/digit_tokens.pt" --input "$work/ids.npy" --labels "$work/labels.npy" \
  --perturb token-masking,token-replacement --vocabulary 17 --intensities 0,0.3,1 --samples 50 --seed 4 \
  --json >"$work/tokens.json"
check "robust --perturb token-masking,token-replacement --json exits 0" test $? -eq 0

check "the token curves and hotspots agree with torch" $py - "$work" <<'PY'
import json, sys
import numpy as np, torch
w = sys.argv[1]
torch.manual_seed(0)
m = torch.jit.load(f"{w}/digit_tokens.pt")
ids = torch.tensor(np.load(f"{w}/ids.npy"))
y = np.load(f"{w}/labels.npy")
n = len(y)
J = {p["kind"]: p for p in json.load(open(f"{w}/tokens.json"))["perturbation"]}
with torch.no_grad():
    def predict(x):
        return m(x.float()).argmax(1).numpy()
    logits = m(ids.float())
    pred = logits.argmax(1).numpy()
    conf = torch.softmax(logits, 1)[torch.arange(n), torch.tensor(y)].numpy()
    blank = predict(torch.zeros(1, 64, dtype=torch.long))[0]
    for kind, p in J.items():
        assert np.allclose(p["intensities"], [0, 0.3, 1]), p["intensities"]
        assert p["accuracy"][0] == (pred == y).mean() == p["clean_accuracy"], (kind, p["accuracy"][0])
        assert p["agreement"][0] == 1 and p["flip_rate"][0] == 0
        assert abs(p["confidence"][0] - conf.mean()) < 1e-5, (p["confidence"][0], conf.mean())
    mask = J["token-masking"]
    assert mask["accuracy"][2] == (y == blank).mean(), (mask["accuracy"][2], blank)
    assert mask["agreement"][2] == (pred == blank).mean()
    # Each token masked alone, for every image: a deterministic flip rate.
    got = {h["unit"]: h["flip_rate"] for h in mask["hotspots"]}
    assert sorted(got) == list(range(64))
    for j in range(64):
        x = ids.clone()
        x[:, j] = 0
        assert abs(got[j] - (predict(x) != pred).mean()) < 1e-12, (j, got[j])
    rates = [h["flip_rate"] for h in mask["hotspots"]]
    assert rates == sorted(rates, reverse=True) and rates[0] > 0
    # Intensity 0.3: torch's own draws, 400 per image.
    g = torch.Generator().manual_seed(1)
    reps = 400
    x = ids.repeat(reps, 1)
    hit = torch.rand(x.shape, generator=g) < 0.3
    for kind, fill in [("token-masking", torch.zeros_like(x)), ("token-replacement", torch.randint(0, 17, x.shape, generator=g))]:
        flips = (predict(torch.where(hit, fill, x)) != np.tile(pred, reps)).mean()
        ours = J[kind]["flip_rate"][1]
        se = np.sqrt(flips * (1 - flips) / (n * reps) + ours * (1 - ours) / (n * 50))
        assert abs(ours - flips) < 5 * se, (kind, ours, flips, se)
        assert 0.05 < ours < 0.6, (kind, ours)
PY

"$tfdebug" robust --model "$work/digit_tokens.pt" --input "$work/ids.npy" --perturb token-masking --mask-id -1 \
  2>"$work/err.txt" >/dev/null
check "--mask-id -1 exits 2" test $? -eq 2
check "... with one line" bash -c "[ \$(wc -l <'$work/err.txt') -eq 1 ]"

finish "token_perturbation"
