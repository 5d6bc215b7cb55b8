#!/usr/bin/env bash
# `tfdebug explain --method attention-rollout` on TorchScript models (docs/interpretability.md):
# a hand-written attention with an explicit softmax, and torch.nn.TransformerEncoder, both made by
# tests/interpret/make_attention_models.py, which also computes each one's attention, logits and
# (for the first) head importance in PyTorch on its own. tfdebug's capture must equal them, its
# rollout must equal numpy's Â = rownorm(mean of heads + I) product, and bad input is one line.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python torch numpy

$py "$here/make_attention_models.py" "$work" 2>/dev/null || { echo "FAIL: make_attention_models.py"; exit 1; }
for m in explicit encoder; do
  "$tfdebug" explain --model "$work/$m.pt" --input "3 5 1 7 0 3" --method attention-rollout --json >"$work/$m.json"
  check "$m: attention-rollout --json exits 0" test $? -eq 0
done
"$tfdebug" explain --model "$work/encoder.pt" --input tok:3,5,1,7,0,3 --method attention-rollout \
  --attention-html "$work/encoder.html" >"$work/encoder.txt"
check "encoder: the text names the layers by module" grep -q "^  enc.layers.1.self_attn *1 " "$work/encoder.txt"
check "encoder: the attention page is written" test -s "$work/encoder.html"

check "the captured attention, outputs, rollout and head importance are PyTorch's" $py - "$work" <<'PY'
import json, sys
import numpy as np
w = sys.argv[1]
e = json.load(open(f"{w}/expected.json"))
for name, layers in [("explicit", ["blocks.0", "blocks.1"]),
                     ("encoder", ["enc.layers.0.self_attn", "enc.layers.1.self_attn"])]:
    j = json.load(open(f"{w}/{name}.json"))
    ex = e[name]
    assert j["layers"] == layers and j["heads"] == 2 and j["tokens"] == e["tokens"], (j["layers"], j["heads"])
    got, want = np.array(j["attention"]), np.array(ex["attention"])
    assert got.shape == (2, 2, 6, 6) and np.abs(got - want).max() < 1e-5, np.abs(got - want).max()
    target = int(np.argmax(ex["logits"]))
    assert j["target"] == target and abs(j["output"] - ex["logits"][target]) < 1e-4, (j["target"], j["output"])
    r = np.eye(6)
    for layer in want:
        a = layer.mean(0) + np.eye(6)
        r = (a / a.sum(1, keepdims=True)) @ r
    assert np.abs(np.array(j["rollout"]) - r).max() < 1e-6, np.abs(np.array(j["rollout"]) - r).max()
    assert np.abs(np.array(j["attributions"]) - r[-1]).max() < 1e-6
    assert "training" not in j and j["model"].endswith(f"{name}.pt")
imp = [h["importance"] for h in json.load(open(f"{w}/explicit.json"))["head_analysis"]]
assert np.abs(np.array(imp) - e["explicit"]["importance"]).max() < 1e-4, (imp, e["explicit"]["importance"])
PY

expect2() {  # expect2 NAME PATTERN ARGS...
  local name="$1" pattern="$2"
  shift 2
  "$tfdebug" explain --method attention-rollout "$@" >/dev/null 2>"$work/err.txt"
  local rc=$?
  check "$name: exit 2" test $rc -eq 2
  check "$name: one line" bash -c "[ \$(wc -l <'$work/err.txt') -eq 1 ] && grep -qF -- \"$pattern\" '$work/err.txt'"
}
expect2 "a token id that is not one" "--input: 'x' is not a token id (an integer >= 0)" --model "$work/encoder.pt" --input "3 x 1"
expect2 "a token the embedding does not have" "the model's forward failed" --model "$work/encoder.pt" --input "3 50 1"
expect2 "a model without attention" "no attention softmax ran in the forward pass" --model "$work/no_attention.pt" --input "3 5 1"
finish "explain-attention-script"
