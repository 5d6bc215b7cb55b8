#!/usr/bin/env bash
# `tfdebug explain --method grad-cam | grad-cam-plus-plus | score-cam --layer conv2` end to end
# (docs/interpretability.md) on a CNN trained on the digits the repo ships and saved as
# TorchScript (tests/interpret/make_digits_cnn.py, the digits_fixtures setup test), whose maps the
# script computed on its own with PyTorch hooks and F.interpolate. tfdebug's JSON must agree; the
# PNG is a real PNG of the asked size; a missing or wrong --layer is one line, exit 2, listing the
# layers.
#
#   explain_cam_test.sh TFDEBUG FIXTURE_DIR
set -u
tfdebug="$1"
fixtures="$2"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python torch numpy

m="$fixtures/cnn.pt"
x="$fixtures/x.npy"
explain() { "$tfdebug" explain --model "$m" --input "$x" "$@"; }

for method in grad-cam grad-cam-plus-plus score-cam; do
  explain --method $method --layer conv2 --json >"$work/$method.json"
  check "explain --method $method --layer conv2 --json exits 0" test $? -eq 0
done
explain --method score-cam --layer conv2 --max-batch 3 --json >"$work/score3.json"
explain --method grad-cam --layer conv2 --png "$work/cam.png" >"$work/text.txt"
check "explain --method grad-cam --png exits 0" test $? -eq 0

check "the maps agree with PyTorch hooks and F.interpolate" $py - "$work" "$fixtures" <<'PY'
import json, sys
w, f = sys.argv[1], sys.argv[2]
e = json.load(open(f"{f}/expected.json"))
def flat(rows):
    return [v for row in rows for v in row]
def close(a, b, tol):
    return len(a) == len(b) and all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b))
for method, key in [("grad-cam", "grad_cam"), ("grad-cam-plus-plus", "grad_cam_plus_plus"), ("score-cam", "score_cam")]:
    j = json.load(open(f"{w}/{method}.json"))
    assert j["method"] == method and j["layer"] == "conv2", j["method"]
    assert j["target"] == e["target"] and j["target_chosen"] == "top output", (j["target"], e["target"])
    assert j["shape"] == [8, 8] and j["layer_shape"] == [4, 4], (j["shape"], j["layer_shape"])
    assert abs(j["output"] - e["output"]) < 1e-4, (j["output"], e["output"])
    assert max(flat(e[key])) > 0, "the expected map is all zero: not a test"
    assert close(flat(j["attributions"]), flat(e[key]), 1e-4), (method, j["attributions"], e[key])
g = json.load(open(f"{w}/grad-cam.json"))
assert close(flat(g["layer_map"]), flat(e["grad_cam_layer"]), 1e-4)
assert g["evaluations"] == 1, g["evaluations"]
s = json.load(open(f"{w}/score-cam.json"))
assert s["skipped_channels"] == e["skipped"], (s["skipped_channels"], e["skipped"])
assert s["evaluations"] == 2 + 16 - len(e["skipped"]), s["evaluations"]
assert abs(sum(s["channel_weights"]) - 1) < 1e-9
# LibTorch's convolution may sum in another order for another batch size: equal to float rounding.
s3 = json.load(open(f"{w}/score3.json"))
assert close(flat(s3["attributions"]), flat(s["attributions"]), 1e-6), "max_batch changed the answer"
assert s3["evaluations"] == s["evaluations"]
PY
check "the PNG is a 900 x 420 PNG" $py -c "
import struct, sys
d = open('$work/cam.png', 'rb').read(24)
assert d[:8] == b'\x89PNG\r\n\x1a\n', d[:8]
assert struct.unpack('>II', d[16:24]) == (900, 420), struct.unpack('>II', d[16:24])"
check "the text names the method, the layer and prints 8 rows of 8 numbers" bash -c "
  head -1 '$work/text.txt' | grep -q '^grad-cam of output [0-9] (the model.s top output) of .* at layer conv2' &&
  [ \$(grep -cE '^( +[-0-9.e+]+){8}$' '$work/text.txt') -eq 8 ]"

# The other methods on the same [1, 8, 8] file: the model refuses a batch of one 8 x 8 example, so
# the leading 1 is its channel. Integrated Gradients is complete: the sum is f(x) - f(0).
"$tfdebug" explain --model "$m" --input "$x" --method integrated-gradients --steps 200 --json >"$work/ig.json"
check "integrated-gradients on the [1, 8, 8] digit exits 0" test $? -eq 0
check "its attributions have the digit's [1, 8, 8] shape and sum to f(x) - f(0)" $py -c "
import json
j = json.load(open('$work/ig.json'))
assert j['shape'] == [1, 8, 8] and len(j['attributions']) == 1 and len(j['attributions'][0]) == 8, j['shape']
assert abs(j['sum'] - (j['output'] - j['reference_output'])) < 1e-2 * abs(j['sum']), (j['sum'], j['output'], j['reference_output'])"

expect2() {  # expect2 NAME PATTERN ARGS...
  local name="$1" pattern="$2"
  shift 2
  "$tfdebug" explain "$@" >/dev/null 2>"$work/err.txt"
  local rc=$?
  check "$name: exit 2" test $rc -eq 2
  check "$name: one line" bash -c "[ \$(wc -l <'$work/err.txt') -eq 1 ] && grep -qF -- \"$pattern\" '$work/err.txt'"
}
expect2 "no --layer" "grad-cam needs --layer NAME, a module of the model" --model "$m" --input "$x" --method grad-cam
expect2 "no --layer lists the layers" "(layers: conv1, conv2, fc)" --model "$m" --input "$x" --method score-cam
expect2 "a layer the model does not have" "layer 'conv3' is not a module of the model with parameters (layers: conv1, conv2, fc)" \
  --model "$m" --input "$x" --method grad-cam --layer conv3
expect2 "a target the model does not have" "--target 10: the model has 10 outputs (0..9)" \
  --model "$m" --input "$x" --method grad-cam --layer conv2 --target 10
expect2 "--layer with another method" "--layer and --png are for grad-cam" \
  --model "$m" --input "$x" --method integrated-gradients --layer conv2

finish "explain-cam"
