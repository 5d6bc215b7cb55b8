#!/usr/bin/env bash
# The HTML report end to end (docs/html-report.md): `tfdebug report RUN_DIR -o` and `tfdebug
# inspect --html` write pages that headless Chromium opens (tests/html/report_page_test.js: no
# console error, no request, every section, hover values, zoom, sorting, filtering, findings that
# point at their evidence, the bounds of a 100,000-tensor checkpoint); the embedded scripts pass
# `node --check`; bad input is a one-line error and exit 2.
#
#   html_report_test.sh TFDEBUG WRITE_HTML_RUN WRITE_RUN NPM_DIR [SCREENSHOT_DIR]
set -u
tfdebug="$(realpath "$1")"
write_html_run="$(realpath "$2")"
write_run="$(realpath "$3")"
npm_dir="$(realpath "$4")"
shots="${5:+$(realpath "$5")}"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../cli/harness.sh"
require node /usr/bin/chromium
require_python numpy
require_npm "$npm_dir" playwright-core

# The scripts as the page embeds them: each parses on its own.
for js in "$here"/../../src/export/html/*.js; do
  check "node --check $(basename "$js")" node --check "$js"
  check "$(basename "$js") has no '</' (it would end the page's script)" bash -c "! grep -q '</' '$js'"
done
check "report.css has no '</' (it would end the page's style)" bash -c "! grep -q '</' '$here/../../src/export/html/report.css'"

"$write_html_run" "$work/run" || { echo "FAIL: write_html_run"; exit 1; }
# Killed by SIGKILL after step 7, as the OOM killer would (the shell's "Killed" line goes to /dev/null).
{ "$write_run" "$work/killed" --kill-after 7; } 2>/dev/null
check "the killed run was killed" test $? -eq 137
# Named as a user would from the folder that holds it: the page's title is "run".
(cd "$work" && "$tfdebug" report run -o run.html) >"$work/out.txt"
check "report -o exits 1 for a run with errors" test $? -eq 1
check "report -o says what it wrote" grep -q "^wrote run.html ([0-9]* KB)$" "$work/out.txt"
check "the page's title is the run directory" grep -q "<title>run — tfdebug</title>" "$work/run.html"
"$tfdebug" report "$work/killed/run" --html "$work/killed.html" >/dev/null
check "a killed run gets a page" test -s "$work/killed.html"
check "the run page is a few hundred KB at most" test "$(stat -c %s "$work/run.html")" -lt 400000

/usr/bin/python3 "$here/make_checkpoints.py" "$work" || { echo "FAIL: make_checkpoints.py"; exit 1; }
(cd "$work" && "$tfdebug" inspect small.safetensors --html small.html) >"$work/small.txt"
check "inspect --html exits 0 without --fail-on" test $? -eq 0
check "inspect --html says what it wrote" grep -q "^wrote small.html ([0-9]* KB; 22 of 22 tensors in its table)$" "$work/small.txt"
"$tfdebug" inspect "$work/big.safetensors" --html "$work/big.html" >"$work/big.txt"
check "the big page embeds 2,000 of 100,002 rows" grep -q "; 2,000 of 100,002 tensors in its table)$" "$work/big.txt"
# --json stays one JSON document: the line about the page goes to stderr.
"$tfdebug" inspect "$work/small.safetensors" --json --html "$work/small2.html" >"$work/small.json" 2>"$work/small.err"
check "inspect --json --html keeps stdout JSON" /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$work/small.json"
check "inspect --json --html reports the page on stderr" grep -q "^wrote $work/small2.html" "$work/small.err"

# The model graph: an ONNX checkpoint's page, and a run directory that holds model.onnx.
/usr/bin/python3 "$here/make_graph_model.py" "$work/graph.onnx" || { echo "FAIL: make_graph_model.py"; exit 1; }
"$tfdebug" inspect "$work/graph.onnx" --html "$work/graph.html" >/dev/null
check "inspect --html of an ONNX model exits 0" test $? -eq 0
cp -r "$work/run" "$work/run_graph"
cp "$work/graph.onnx" "$work/run_graph/model.onnx"
"$tfdebug" report "$work/run_graph" -o "$work/run_graph.html" >/dev/null
check "report -o of a run with model.onnx exits 1 (its errors)" test $? -eq 1

# Bad input: one line, exit 2.
"$tfdebug" report "$work/nowhere" -o "$work/x.html" 2>"$work/err.txt"
check "a missing run directory exits 2" test $? -eq 2
check "... with one line naming it" bash -c "[ \$(wc -l <'$work/err.txt') -eq 1 ] && grep -q 'nowhere: not a folder' '$work/err.txt'"
cp -r "$work/run" "$work/broken"
printf '{"trigger": {"rule": 3}, "steps": []}' >"$work/broken/flight_recorder.json"
"$tfdebug" report "$work/broken" -o "$work/x.html" 2>"$work/err.txt"
check "a malformed flight_recorder.json exits 2" test $? -eq 2
check "... naming the file" grep -q "flight_recorder.json: not a flight recorder dump" "$work/err.txt"
"$tfdebug" report "$work/run" -o "$work/no/such/dir/x.html" 2>"$work/err.txt"
check "an unwritable page exits 2" test $? -eq 2
check "... naming it" grep -q "x.html: cannot be written" "$work/err.txt"
check "... leaving nothing behind" test ! -e "$work/no"

[ -n "$shots" ] && mkdir -p "$shots"
NODE_PATH="$npm_dir/node_modules" timeout 240 node "$here/report_page_test.js" "$work" $shots
check "the pages in Chromium" test $? -eq 0
finish "html report"
