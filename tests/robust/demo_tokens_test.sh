#!/usr/bin/env bash
# `tfdebug attack --model demo` and `tfdebug robust --model demo` end to end (docs/robustness.md,
# "The demo model: token sequences") on the shipped copy-task sequences. Python recomputes what
# it can from the sequences alone (the copy task's answers, L0, which positions changed, the query
# count, the accuracy from the predictions), and `tfdebug explain --model demo`, a separate
# process that trains the same model and runs its forward on its own path, must predict what the
# attack reports for the adversarial sequences and what robust reports for the clean ones and
# for the all-masked sequence (token-masking at intensity 1). Bad input: one line, exit 2.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require_python numpy
data="$here/../../examples/data/demo_copy_32.txt"

# The next token `explain --model demo` predicts for a sequence.
next_token() {
  "$tfdebug" explain --model demo --method attention-rollout --input "$1" --json |
    $py -c "import json, sys; print(json.load(sys.stdin)['target'])"
}

"$tfdebug" attack --model demo --input "$data" --json >"$work/copy.json"
check "attack --model demo --json exits 0" test $? -eq 0
check "the copy attack: labels, L0, kept positions and queries recomputed" $py - "$data" "$work/copy.json" <<'PY'
import json, sys
seqs = [list(map(int, l.split())) for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
j = json.load(open(sys.argv[2]))
assert j["attack"] == "hotflip" and j["labels_from"] == "copy task", j["labels_from"]
assert j["inputs"] == seqs
answers = [s[len(s) - s.index(0) - 1] for s in seqs]  # s_{k+1} for s_1..s_m 0 s_1..s_k
assert j["labels"] == answers, (j["labels"], answers)
n = len(seqs)
assert abs(j["summary"]["clean_accuracy"] - sum(p == a for p, a in zip(j["predicted_before"], answers)) / n) < 1e-12
for i, s in enumerate(seqs):
    adv = j["adversarial"][i]
    diff = [p for p in range(len(s)) if adv[p] != s[p]]
    assert j["l0"][i] == len(diff) and sorted(j["positions"][i]) == diff, (i, diff)
    sep = s.index(0)
    assert adv[sep] == 0 and adv[len(s) - sep - 1] == s[len(s) - sep - 1], "the separator and the copied token stay"
    assert all(adv[p] != 0 for p in diff), "no second separator"
    assert j["success"][i] == (j["predicted_after"][i] != answers[i])
    assert j["queries"][i] == 1 + j["l0"][i] * (1 + 10), (i, j["queries"][i])
    assert j["l0"][i] <= 3 and (j["success"][i] or j["l0"][i] == 3)
assert j["summary"]["queries"] == sum(j["queries"])
assert abs(j["summary"]["robust_accuracy"] - (1 - sum(j["success"]) / n)) < 1e-12
PY

# Sequences that are not copies: the model's own predictions are attacked, every position may change.
free="6 3 7 11 1 2 14 9 0 6 3 7 12; 2 6 10 1 15 9 4 1 0 2 6 10 2; 5 5 5 5 5 5 5 5 0 5 5 5 5"
"$tfdebug" attack --model demo --input "$free" --max-changes 2 --candidates 20 --out "$work/adv.txt" --json >"$work/free.json"
check "attack --model demo --out exits 0" test $? -eq 0
check "--out holds the JSON's adversarial sequences" $py - "$work/free.json" "$work/adv.txt" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["labels_from"] == "model predictions" and j["labels"] == j["predicted_before"]
assert [list(map(int, l.split())) for l in open(sys.argv[2])] == j["adversarial"]
assert sum(j["success"]) >= 1
PY
i=0
while IFS= read -r adv; do
  after=$($py -c "import json, sys; print(json.load(open(sys.argv[1]))['predicted_after'][int(sys.argv[2])])" "$work/free.json" $i)
  check "explain --model demo predicts $after for adversarial sequence $i" test "$(next_token "$adv")" = "$after"
  i=$((i + 1))
done <"$work/adv.txt"
before=$($py -c "import json, sys; print(json.load(open(sys.argv[1]))['predicted_before'][0])" "$work/free.json")
check "explain --model demo predicts $before for the first clean sequence" test "$(next_token "6 3 7 11 1 2 14 9 0 6 3 7 12")" = "$before"

# The attack's page (--html): chromium renders each adversarial sequence with its changed positions.
"$tfdebug" attack --model demo --input "$free" --max-changes 2 --candidates 20 --html "$work/attack.html" >/dev/null 2>&1
check "attack --model demo --html exits 0" test $? -eq 0
if [ -x /usr/bin/chromium ]; then
  timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$work/attack.html" \
    2>/dev/null >"$work/attack_dom.html"
  check "the page shows every adversarial sequence and its changed positions" $py - "$work/free.json" "$work/attack_dom.html" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
assert "adversarial sequence (changed positions)" in dom
for adv, where in zip(j["adversarial"], j["positions"]):
    text = " ".join(map(str, adv)) + (" (" + ", ".join(map(str, where)) + ")" if where else "")
    assert text in dom, text
PY
fi

"$tfdebug" robust --model demo --input "$data" --samples 10 --seed 3 --json >"$work/robust.json"
check "robust --model demo --json exits 0" test $? -eq 0
first=$(grep -v '^#' "$data" | head -1)
zeros="0 0 0 0 0 0 0 0 0 0 0 0 0"
$py - "$work/robust.json" "$(next_token "$first")" "$(next_token "$zeros")" <<'PY' >"$work/robust_check.txt" 2>&1
import json, sys
j = json.load(open(sys.argv[1]))
first, masked = int(sys.argv[2]), int(sys.argv[3])
d = j["demo"]
labels, pred = d["labels"], d["predicted"]
assert d["labels_from"] == "copy task" and pred[0] == first, (pred[0], first)
kinds = {p["kind"]: p for p in j["perturbation"]}
assert set(kinds) == {"token-masking", "token-replacement"}
n = len(labels)
for p in kinds.values():
    assert p["intensities"][0] == 0
    clean = sum(a == b for a, b in zip(pred, labels)) / n
    assert abs(p["accuracy"][0] - clean) < 1e-12 and p["agreement"][0] == 1 and p["clean_accuracy"] == clean
    assert [h["unit"] for h in p["hotspots"]][0] == 4, "the copied token is the hotspot"
m = kinds["token-masking"]
assert m["intensities"][-1] == 1
# At intensity 1 every token is the mask id 0: every sequence is the all-zero one.
assert abs(m["accuracy"][-1] - sum(l == masked for l in labels) / n) < 1e-12, (m["accuracy"][-1], masked)
assert abs(m["agreement"][-1] - sum(p == masked for p in pred) / n) < 1e-12
PY
check "robust --model demo: predictions, clean and all-masked accuracy agree with explain ($(tail -1 "$work/robust_check.txt"))" \
  test -z "$(cat "$work/robust_check.txt")"

expect_usage() {
  local name="$1" pattern="$2"
  shift 2
  "$tfdebug" "$@" >/dev/null 2>"$work/err.txt"
  local rc=$?
  check "$name exits 2" test $rc -eq 2
  check "... with one line ($pattern)" bash -c "[ \$(wc -l <'$work/err.txt') -eq 1 ] && grep -q -- '$pattern' '$work/err.txt'"
}
expect_usage "attack --model demo --attack pgd" "hotflip" attack --model demo --input "$data" --attack pgd
expect_usage "attack --model demo --eps" "TorchScript" attack --model demo --input "$data" --eps 0.1
expect_usage "a token id outside the vocabulary" "not a token id" attack --model demo --input "3 5 16 0 3"
expect_usage "sequences of different lengths" "same length" attack --model demo --input "3 5 0 3; 1 2 3 0 1"
expect_usage "robust --model demo --perturb gaussian" "token-masking" robust --model demo --input "$data" --perturb gaussian
expect_usage "robust --model demo --certify" "token ids" robust --model demo --input "$data" --certify
expect_usage "--attack hotflip on a TorchScript file" "demo" attack --model x.pt --input x.npy --attack hotflip

"$tfdebug" attack --help >"$work/help.txt"
for word in hotflip --max-changes --candidates "or demo"; do
  check "attack --help lists $word" grep -q -- "$word" "$work/help.txt"
done

finish "demo_tokens"
