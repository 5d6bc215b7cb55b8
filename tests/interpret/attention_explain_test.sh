#!/usr/bin/env bash
# `tfdebug explain --model demo --method attention-rollout` end to end (docs/interpretability.md):
# the demo model trained in-process, its JSON checked in Python (every captured attention row
# sums to 1, the rollout's rows sum to 1 and its last row is the attributions, a role for every
# head, flow at most 1), the text, the PNG, and the HTML page in headless Chromium
# (tests/html/attention_page_test.js). Bad input is one line and exit 2.
#
#   attention_explain_test.sh TFDEBUG NPM_DIR [SCREENSHOT_DIR]
set -u
tfdebug="$(realpath "$1")"
npm_dir="$(realpath "$2")"
shots="${3:+$(realpath "$3")}"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../cli/harness.sh"
require node /usr/bin/chromium
require_npm "$npm_dir" playwright-core

# Eight tokens, the separator 0, the copy begun: the model should predict 7, the token after
# position 2's 1, and its attention should carry position 3 to the last one.
input="3 5 1 7 2 6 4 9 0 3 5 1"
"$tfdebug" explain --model demo --input "$input" --method attention-rollout --json \
  --attention-html "$work/attention.html" --attention-png "$work/attention.png" >"$work/out.json"
check "explain --model demo --json exits 0" test $? -eq 0
check "the JSON" $py - "$work/out.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
n = len(d["tokens"])
assert d["method"] == "attention-rollout" and d["model"] == "demo", d["method"]
assert d["tokens"] == [3, 5, 1, 7, 2, 6, 4, 9, 0, 3, 5, 1] and d["query"] == n - 1
assert d["target"] == 7 and d["target_chosen"] == "top output", d["target"]  # the copy
earlier = d["attributions"][:-1]
assert earlier.index(max(earlier)) == 3, earlier  # the rollout finds the token it copies
assert d["layers"] == ["blocks.0.attn", "blocks.1.attn"] and d["heads"] == 4, d["layers"]
for layer in d["attention"]:
    for head in layer:
        for i, row in enumerate(head):
            assert abs(sum(row) - 1) < 1e-5, row
            assert all(w == 0 for w in row[i + 1:]), "causal"
for row in d["rollout"]:
    assert abs(sum(row) - 1) < 1e-9, row
assert all(abs(a - b) < 1e-12 for a, b in zip(d["attributions"], d["rollout"][-1]))
assert abs(d["sum"] - 1) < 1e-9
assert all(0 <= f <= 1 + 1e-9 for row in d["flow"] for f in row)
roles = {"self", "previous", "next", "first", "delimiter", "broad", "mixed"}
assert len(d["head_analysis"]) == 8
for h in d["head_analysis"]:
    assert h["role"] in roles, h
    assert 0 <= h["entropy_relative"] <= 1 + 1e-9 and 0 < h["confidence"] <= 1
    assert math.isfinite(h["importance"])
assert d["training"]["steps"] == 300 and d["training"]["seed"] == 1
assert d["wrote"] == [sys.argv[1].replace("out.json", "attention.html"), sys.argv[1].replace("out.json", "attention.png")]
PY
check "the PNG is a PNG" bash -c "head -c 8 '$work/attention.png' | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'"
# Same seed, same answer.
"$tfdebug" explain --model demo --input "$input" --method attention-rollout --json >"$work/again.json"
check "a second run gives the same rollout" $py -c "
import json,sys; a=json.load(open('$work/out.json')); b=json.load(open('$work/again.json'))
assert a['rollout']==b['rollout'] and a['head_analysis']==b['head_analysis']"

"$tfdebug" explain --model demo --input "$input" --method attention-rollout >"$work/out.txt"
check "the text exits 0" test $? -eq 0
check "the text names the method" grep -q "^attention-rollout of the demo's next token" "$work/out.txt"
check "the text lists every head with a role" bash -c "[ \$(grep -cE '^  blocks\.[01]\.attn +[0-3] +(self|previous|next|first|delimiter|broad|mixed) ' '$work/out.txt') -eq 8 ]"

# Bad input: one line, exit 2.
"$tfdebug" explain --model demo --input "3 5 x" --method attention-rollout 2>"$work/err.txt" >/dev/null
check "a bad token exits 2" test $? -eq 2
check "... naming it" grep -q "'x' is not a token id of the demo" "$work/err.txt"
"$tfdebug" explain --model demo --input "3 5" 2>"$work/err.txt" >/dev/null
check "another method on the demo exits 2" test $? -eq 2
check "... saying which one it takes" grep -q "explained by --method attention-rollout" "$work/err.txt"

[ -n "$shots" ] && mkdir -p "$shots"
NODE_PATH="$npm_dir/node_modules" timeout 120 node "$here/../html/attention_page_test.js" "$work" $shots
check "the attention page in Chromium" test $? -eq 0
finish "attention explain"
