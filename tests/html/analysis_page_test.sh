#!/usr/bin/env bash
# Analyses beside a run (docs/html-report.md, "Analyses"): `tfdebug explain`, `attack` and `robust`
# with --run-dir save their results into the run directory, `tfdebug report` shows them in the
# run's page, --html writes a page of their own; headless Chromium opens both
# (tests/html/analysis_page_test.js) and checks what they draw against the commands' --json.
#
#   analysis_page_test.sh TFDEBUG WRITE_HTML_RUN DIGITS_DIR NPM_DIR [SCREENSHOT_DIR]
set -u
tfdebug="$(realpath "$1")"
write_html_run="$(realpath "$2")"
digits="$(realpath "$3")"
npm_dir="$(realpath "$4")"
shots="${5:+$(realpath "$5")}"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../cli/harness.sh"
require node /usr/bin/chromium
require_python torch sklearn
require_npm "$npm_dir" playwright-core

$py "$here/../interpret/make_iris_model.py" "$work" >/dev/null || { echo "FAIL: make_iris_model.py"; exit 1; }
"$write_html_run" "$work/run" || { echo "FAIL: write_html_run"; exit 1; }
iris="$work/iris_mlp.pt"

# Each command once with --json, once with --run-dir: the saved result is the printed one.
"$tfdebug" explain --model "$iris" --input "$work/x.npy" --method integrated-gradients --evaluate --feature-names \
  "sepal length,sepal width,petal length,petal width" --json >"$work/ig.json"
"$tfdebug" explain --model "$iris" --input "$work/x.npy" --method integrated-gradients --evaluate --feature-names \
  "sepal length,sepal width,petal length,petal width" --run-dir "$work/run" >"$work/ig.txt" 2>"$work/ig.err"
check "explain --run-dir exits 0" test $? -eq 0
check "explain --run-dir still prints its text" grep -q "the 4 features with the largest |attribution|" "$work/ig.txt"
check "explain --run-dir says where it saved" grep -q "^saved $work/run/analyses/0001-explain.json" "$work/ig.err"
"$tfdebug" explain --model "$digits/cnn.pt" --input "$digits/x.npy" --method grad-cam --layer conv2 --png "$work/cam.png" \
  --run-dir "$work/run" >/dev/null 2>&1
check "grad-cam --run-dir exits 0" test $? -eq 0
"$tfdebug" explain --model "$iris" --input "$work/x.npy" --method dice --background "$work/background.npy" \
  --run-dir "$work/run" --json >"$work/dice.json" 2>/dev/null
check "dice --run-dir --json exits 0" test $? -eq 0
"$tfdebug" attack --model "$iris" --input "$work/flowers.npy" --attack pgd --eps 0.3 --json >"$work/pgd.json"
"$tfdebug" attack --model "$iris" --input "$work/flowers.npy" --attack pgd --eps 0.3 --run-dir "$work/run" >/dev/null 2>&1
check "attack --run-dir exits 0" test $? -eq 0
"$tfdebug" attack --model "$iris" --input "$work/flowers.npy" --attack fgsm --eps-sweep 0,0.1,0.2,0.4 \
  --run-dir "$work/run" >/dev/null 2>&1
check "attack --eps-sweep --run-dir exits 0" test $? -eq 0
"$tfdebug" robust --model "$iris" --input "$work/flowers.npy" --certify --n 2000 --perturb gaussian --whatif 2 \
  --edge-cases --training "$work/background.npy" --json >"$work/robust.json"
"$tfdebug" robust --model "$iris" --input "$work/flowers.npy" --certify --n 2000 --perturb gaussian --whatif 2 \
  --edge-cases --training "$work/background.npy" --run-dir "$work/run" --html "$work/robust.html" >/dev/null 2>"$work/robust.err"
check "robust --run-dir --html exits 0" test $? -eq 0
check "robust --html says what it wrote" grep -q "^wrote $work/robust.html ([0-9]* KB)$" "$work/robust.err"

check "the saved results are the printed ones, with the input and the names beside them" $py - "$work" <<'PY'
import json, sys, base64
w = sys.argv[1]
def record(n, kind):
    r = json.load(open(f"{w}/run/analyses/{n:04d}-{kind}.json"))
    assert r["format"] == "tfdebug-analysis" and r["version"] == 1 and r["kind"] == kind, r.keys()
    return r
ig = record(1, "explain")
printed = json.load(open(f"{w}/ig.json"))
saved = ig["result"]
assert saved.pop("feature_names") == ["sepal length", "sepal width", "petal length", "petal width"]
assert len(saved.pop("input")) == 4
assert saved == printed, (saved, printed)
cam = record(2, "explain")
png = open(f"{w}/cam.png", "rb").read()
assert [i["name"] for i in cam["images"]] == ["cam.png"] and base64.b64decode(cam["images"][0]["png"]) == png
assert len(cam["result"]["input"]) == 64 and cam["result"]["shape"] == [8, 8]
dice = record(3, "explain")
assert dice["result"] == json.load(open(f"{w}/dice.json")), "dice: saved != printed"
pgd = record(4, "attack")
assert pgd["result"] == json.load(open(f"{w}/pgd.json")) and pgd["title"].startswith("pgd-linf on ")
eps = [p["eps"] for p in record(5, "attack")["result"]["sweep"]]
assert len(eps) == 4 and all(abs(a - b) < 1e-7 for a, b in zip(eps, [0, 0.1, 0.2, 0.4])), eps
rb = record(6, "robust")
printed = json.load(open(f"{w}/robust.json"))
assert rb["result"]["certify"] == printed["certify"] and rb["result"]["recommendations"] == printed["recommendations"]
PY

# A record that is not one (cut off, hostile) is left out of the page with a note, not fatal.
printf '{"format": "tfdebug-analysis", "version": 1, "kind": "explain", "title": "cut' >"$work/run/analyses/0007-explain.json"
$py -c "print('[' * 100000)" >"$work/run/analyses/0008-explain.json"
printf '{"format":"tfdebug-analysis","version":1,"kind":"attack","title":"t","result":{},"images":[{"name":"x","png":"PHNjcmlwdD4="}]}' \
  >"$work/run/analyses/0009-attack.json"
(cd "$work" && "$tfdebug" report run -o run.html) >"$work/report.txt"
check "report -o writes the page (exit 1: the run has errors)" test $? -eq 1
check "report says what it wrote" grep -q "^wrote run.html" "$work/report.txt"

# Bad input: one line, exit 2, nothing computed.
"$tfdebug" explain --model "$iris" --input "$work/x.npy" --run-dir "$work/nope" >/dev/null 2>"$work/bad.err"
check "--run-dir that is not a folder: exit 2" test $? -eq 2
check "--run-dir that is not a folder: one line naming it" \
  bash -c "test \$(wc -l <'$work/bad.err') -eq 1 && grep -q 'run-dir $work/nope: not a folder' '$work/bad.err'"
"$tfdebug" attack --model "$iris" --input "$work/flowers.npy" --html "$work/no/such/dir/a.html" >/dev/null 2>"$work/bad2.err"
check "--html into a missing folder: exit 2" test $? -eq 2

NODE_PATH="$npm_dir/node_modules" timeout 240 node "$here/analysis_page_test.js" "$work" ${shots:+"$shots"}
check "the pages in Chromium" test $? -eq 0
finish "analysis pages"
