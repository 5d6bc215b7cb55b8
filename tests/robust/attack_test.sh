#!/usr/bin/env bash
# `tfdebug attack` end to end (docs/robustness.md) on an MLP trained on the shipped digits by
# python3-torch (tests/robust/make_digits_model.py). Each adversarial example the JSON calls a
# success is misclassified when PyTorch itself runs the model on the --out file, and its reported
# L0/L2/L-inf norms are recomputed with numpy; seeded runs repeat; bad input is one line, exit 2.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python torch numpy

OPENBLAS_NUM_THREADS=1 $py "$here/make_digits_model.py" "$work" >/dev/null || { echo "FAIL: make_digits_model.py"; exit 1; }
m="$work/digits_mlp.pt"
attack() { "$tfdebug" attack --model "$m" --input "$work/small_x.npy" --labels "$work/small_y.npy" --clip 0,1 "$@"; }

attack --attack fgsm --eps 0.1 --json --out "$work/fgsm.npy" >"$work/fgsm.json"
check "fgsm --json exits 0" test $? -eq 0
attack --attack pgd --eps 0.1 --steps 20 --seed 4 --json --out "$work/pgd.npy" >"$work/pgd.json"
check "pgd --json exits 0" test $? -eq 0
attack --attack pgd --eps 0.1 --steps 20 --seed 4 --max-batch 5 --json >"$work/pgd5.json"
attack --attack pgd --norm l2 --eps 1.0 --json --out "$work/pgdl2.npy" >"$work/pgdl2.json"
check "pgd --norm l2 --json exits 0" test $? -eq 0
attack --attack cw --steps 200 --step-size 0.05 --json --out "$work/cw.npy" >"$work/cw.json"
check "cw --json exits 0" test $? -eq 0
attack --attack deepfool --json --out "$work/deepfool.npy" >"$work/deepfool.json"
check "deepfool --json exits 0" test $? -eq 0
attack --attack pgd --eps 0.3 --steps 30 --target-class 3 --json --out "$work/targeted.npy" >"$work/targeted.json"
check "targeted pgd exits 0" test $? -eq 0

check "every reported success is misclassified by PyTorch; norms recomputed with numpy" $py - "$work" <<'PY'
import json, sys
import numpy as np, torch
w = sys.argv[1]
model = torch.jit.load(f"{w}/digits_mlp.pt")
x = np.load(f"{w}/small_x.npy"); y = np.load(f"{w}/small_y.npy")
with torch.no_grad():
    clean = model(torch.tensor(x)).argmax(1).numpy()
for name, eps, norm in [("fgsm", 0.1, "linf"), ("pgd", 0.1, "linf"), ("pgdl2", 1.0, "l2"), ("cw", None, None),
                        ("deepfool", None, None), ("targeted", 0.3, "linf")]:
    j = json.load(open(f"{w}/{name}.json"))
    adv = np.load(f"{w}/{name}.npy")
    assert adv.shape == x.shape and adv.dtype == np.float32, (name, adv.shape, adv.dtype)
    n = len(y)
    for key in ["success", "l0", "l2", "linf", "predicted_before", "predicted_after", "confidence_before", "confidence_after"]:
        assert len(j[key]) == n, (name, key)
    assert j["examples"] == n and j["predicted_before"] == clean.tolist(), name
    with torch.no_grad():
        logits = model(torch.tensor(adv))
    pred = logits.argmax(1).numpy()
    assert j["predicted_after"] == pred.tolist(), (name, j["predicted_after"], pred.tolist())
    target = 3 if name == "targeted" else None
    for i in range(n):
        fooled = pred[i] == target if target is not None else pred[i] != y[i]
        assert j["success"][i] == bool(fooled), (name, i)
    d = adv.astype(np.float64) - x.astype(np.float64)
    assert np.allclose(j["l2"], np.linalg.norm(d, axis=1), rtol=1e-6, atol=1e-7), name
    assert np.allclose(j["linf"], np.abs(d).max(axis=1), rtol=1e-6, atol=1e-7), name
    assert j["l0"] == (d != 0).sum(axis=1).tolist(), name
    assert adv.min() >= 0 and adv.max() <= 1, name
    if eps is not None:
        assert max(j["linf" if norm == "linf" else "l2"]) <= eps * (1 + 1e-5), (name, max(j["l2"]))
    s = j["summary"]
    assert abs(s["success_rate"] - np.mean(j["success"])) < 1e-12 and s["queries"] > n, (name, s)
    assert abs(s["clean_accuracy"] - (clean == y).mean()) < 1e-12, name
    p = torch.softmax(logits.double(), 1).numpy()
    goal = np.full(n, 3) if target is not None else y
    assert np.allclose(j["confidence_after"], p[np.arange(n), goal], atol=1e-5), name
# Strength: PGD at least FGSM; CW and DeepFool fool every correctly classified example.
j = {k: json.load(open(f"{w}/{k}.json")) for k in ["fgsm", "pgd", "cw", "deepfool", "targeted"]}
assert j["pgd"]["summary"]["success_rate"] >= j["fgsm"]["summary"]["success_rate"], "pgd weaker than fgsm"
for k in ["cw", "deepfool"]:
    assert all(s for s, c, t in zip(j[k]["success"], clean, y) if c == t), k
assert j["targeted"]["summary"]["success_rate"] > 0.9 and j["targeted"]["targeted"], j["targeted"]["summary"]
PY

check "same seed, same answer whatever --max-batch (up to BLAS rounding)" $py - "$work" <<'PY'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ["pgd", "pgd5"])
assert a["success"] == b["success"] and a["summary"]["queries"] == b["summary"]["queries"], (a["success"], b["success"])
assert all(abs(x - y) < 1e-4 for x, y in zip(a["l2"], b["l2"])), (a["l2"], b["l2"])
PY

"$tfdebug" attack --model "$m" --input "$work/test_x.npy" --labels "$work/test_y.npy" --clip 0,1 --attack pgd \
  --eps-sweep 0,0.05,0.1,0.2,0.3 --json >"$work/sweep.json"
check "--eps-sweep: accuracy starts above 0.9 and falls monotonically" $py - "$work/sweep.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["sweep"]
acc = [p["accuracy"] for p in s]
assert all(abs(p["eps"] - e) < 1e-6 for p, e in zip(s, [0, 0.05, 0.1, 0.2, 0.3])) and len(s) == 5 and acc[0] > 0.9, acc
assert all(a >= b for a, b in zip(acc, acc[1:])) and acc[-1] < 0.1, acc
PY

# --mask: only the left half of each 8x8 digit may change (a .npy of the example's shape); every
# attack leaves the right half as it was, to the bit, and still fools PyTorch where it says so.
$py -c "import numpy as np; m = np.zeros((8, 8), np.float32); m[:, :4] = 1; np.save('$work/mask.npy', m.reshape(64))"
for a in fgsm pgd deepfool; do
  attack --attack "$a" --eps 0.3 --mask "$work/mask.npy" --json --out "$work/masked_$a.npy" >"$work/masked_$a.json"
  check "$a --mask exits 0" test $? -eq 0
done
check "--mask: the masked-out values never change; successes fool PyTorch" $py - "$work" <<'PY'
import json, sys
import numpy as np, torch
w = sys.argv[1]
model = torch.jit.load(f"{w}/digits_mlp.pt")
x = np.load(f"{w}/small_x.npy"); y = np.load(f"{w}/small_y.npy")
mask = np.load(f"{w}/mask.npy").astype(bool)
for a in ["fgsm", "pgd", "deepfool"]:
    j = json.load(open(f"{w}/masked_{a}.json"))
    adv = np.load(f"{w}/masked_{a}.npy")
    assert (adv[:, ~mask] == x[:, ~mask]).all(), a
    assert (adv[:, mask] != x[:, mask]).any(), a  # the left half did change
    assert all(l0 <= mask.sum() for l0 in j["l0"]), (a, j["l0"])
    with torch.no_grad():
        pred = model(torch.tensor(adv)).argmax(1).numpy()
    assert j["success"] == [bool(p != t) for p, t in zip(pred, y)], a
    assert sum(j["success"]) > 0, a
PY

attack --attack deepfool >"$work/table.txt"
check "the table shows every example and the summary" grep -q "success rate" "$work/table.txt"
"$tfdebug" attack --help >"$work/help.txt"
check "--help lists the attacks with their defaults" grep -q "deepfool: DeepFool L2, untargeted; --steps 50" "$work/help.txt"

bad() {
  "$tfdebug" attack --model "$m" "$@" >"$work/bad.out" 2>"$work/bad.err"
  local rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$work/bad.err")" -eq 1 ] && [ ! -s "$work/bad.out" ]
}
check "unknown attack: exit 2, one line" bad --input "$work/small_x.npy" --attack nope
check "cw without --clip: exit 2, one line" bad --input "$work/small_x.npy" --attack cw
check "labels of the wrong count: exit 2, one line" bad --input "$work/small_x.npy" --labels "$work/test_y.npy"
check "inputs outside --clip: exit 2, one line" bad --input "$work/small_x.npy" --clip 0.5,1
printf '1,0,1\n' >"$work/short_mask.csv"
check "a mask of the wrong size: exit 2, one line" bad --input "$work/small_x.npy" --mask "$work/short_mask.csv"
$py -c "import numpy as np; np.save('$work/two_mask.npy', np.full(64, 2, np.float32))"
check "a mask that is not 0/1: exit 2, one line" bad --input "$work/small_x.npy" --mask "$work/two_mask.npy"
finish attack_test
