#!/usr/bin/env bash
# Names hostile to JSON and to a terminal (issue 17), from tests/cli/make_hostile_names.py:
# invalid UTF-8 in GGUF, npz and ONNX names comes out of every --json as valid JSON with U+FFFD
# (Note [JSON of invalid UTF-8]); control characters in names are escaped on a terminal and in
# errors (Note [Terminal-safe text]), so every error stays one line.
set -u
tfdebug="$1"
source "$(dirname "$0")/harness.sh"
fx="$work/fx"
$py "$(dirname "$0")/make_hostile_names.py" "$fx" || exit 1

# strict_json FILE: FILE is UTF-8 and JSON (Python's decoder, no errors= leniency).
strict_json() {
  $py -c "import json, sys; json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))" "$1"
}
# run_json NAME ARGS...: tfdebug ARGS exits 0 (or 1, a diff) and writes strict JSON to $work/NAME.json.
run_json() {
  local name="$1"
  shift
  "$tfdebug" "$@" >"$work/$name.json" 2>"$work/err"
  local got=$?
  [ "$got" -le 1 ] || { echo "  exit $got for: tfdebug $*"; cat "$work/err"; return 1; }
  strict_json "$work/$name.json"
}

check "inspect --json of a GGUF with invalid UTF-8 names" run_json gguf inspect "$fx/invalid_utf8.gguf" --json
check "inspect --json of an npz with an invalid UTF-8 entry name" run_json npz inspect "$fx/invalid_utf8.npz" --json
check "inspect --json of an ONNX model with invalid UTF-8 names" run_json onnx inspect "$fx/invalid_utf8.onnx" --json
check "diff --json of GGUF against itself" run_json diff diff "$fx/invalid_utf8.gguf" "$fx/invalid_utf8.gguf" --json
"$tfdebug" graph "$fx/invalid_utf8.onnx" -o "$work/graph.json" 2>"$work/err"
check "graph -o x.json of the ONNX model" test $? -eq 0
check "the graph JSON is strict JSON" strict_json "$work/graph.json"
check "the JSON holds each name with U+FFFD for each invalid sequence" $py - "$work" "$fx" <<'PY'
import json, sys
work, fx = sys.argv[1], sys.argv[2]
e = json.load(open(f"{fx}/expected.json"))
load = lambda n: json.load(open(f"{work}/{n}.json", encoding="utf-8"))
g = load("gguf")
assert [t["name"] for t in g["tensors"]] == [e["bad"], "ok.weight"], g["tensors"]
assert g["metadata"][e["bad2"]] == e["bad"], g["metadata"]
n = load("npz")
assert sorted(t["name"] for t in n["tensors"]) == sorted([e["bad"], "ok"]), n["tensors"]
o = load("onnx")
assert [t["name"] for t in o["tensors"]] == [e["bad"]], o["tensors"]
d = load("diff")
assert sorted(t["name"] for t in d["tensors"]) == sorted([e["bad"], "ok.weight"]) and d["identical"], d
gr = load("graph")
assert gr["producer"] == e["bad"], gr["producer"]
assert [x["name"] for x in gr["nodes"]] == [e["bad2"], e["title"]], gr["nodes"]
assert gr["weights"][0]["name"] == e["bad"], gr["weights"]
PY

# Paths from the command line are names too.
cp "$fx/invalid_utf8.gguf" "$work/$(printf 'p\xff.gguf')"
printf '\0\0\0\0' >"$work/$(printf 'r\xfe.f32')"
check "stats --json of a file whose name is not UTF-8" run_json stats stats "$work/$(printf 'r\xfe.f32')" --json
check "its file name reads with U+FFFD" $py -c "
import json; assert json.load(open('$work/stats.json', encoding='utf-8'))['file'].endswith('r\ufffd.f32')"
check "inspect --json of such a path" run_json ipath inspect "$work/$(printf 'p\xff.gguf')" --json
printf '{"benchmarks":[' >"$work/$(printf 'b\xff.json')"
for r in 0 1 2 3; do
  printf '{"name":"b/1","run_type":"iteration","real_time":1%d,"cpu_time":10,"time_unit":"ns"}%s' "$r" \
    "$([ $r -lt 3 ] && echo ,)" >>"$work/$(printf 'b\xff.json')"
done
printf ']}' >>"$work/$(printf 'b\xff.json')"
check "regress --json of files whose names are not UTF-8" \
  run_json regress regress "$work/$(printf 'b\xff.json')" "$work/$(printf 'b\xff.json')" --json
printf '{"traceEvents":[{"ph":"X","name":"s\\u001b]0;t\\u0007","ts":0,"dur":5,"pid":1,"tid":1}]}' \
  >"$work/$(printf 't\xff.json')"
check "trace --json of such a file" run_json trace trace "$work/$(printf 't\xff.json')" --json

# On a terminal: no raw control character, and the table has one line per tensor.
"$tfdebug" inspect "$fx/names.safetensors" >"$work/human.txt" 2>"$work/err"
check "inspect of names with control characters exits 0" test $? -eq 0
# no_controls FILE: FILE is UTF-8 with no C0 control but newline, no DEL, no C1 code point.
no_controls() {
  $py - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
bad = re.findall(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", text)
assert not bad, bad
PY
}
check "inspect's table holds no raw control character" no_controls "$work/human.txt"
check "each name is shown with its escapes" grep -qF 'a\nb\x1b]0;pwned\x07' "$work/human.txt"
check "ESC, CR, DEL and C1 escaped" grep -qF 'c\x1b[2J\rd\x7fe\u009b2J' "$work/human.txt"
check "the table is one header and one line per tensor" $py - "$work/human.txt" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("  name "))
rows = lines[start + 1:lines.index("", start)]
assert len(rows) == 3, rows
assert [r.split()[1] for r in rows] == ["f32"] * 3, rows  # columns stay in place
PY
check "findings quote the name escaped" grep -qF 'warning  all_zero a\nb\x1b]0;pwned\x07: every value is zero' "$work/human.txt"
"$tfdebug" inspect "$fx/names.safetensors" --json >"$work/names.json"
check "JSON keeps the real characters" $py - "$work" "$fx" <<'PY'
import json, sys
e = json.load(open(f"{sys.argv[2]}/expected.json"))
j = json.load(open(f"{sys.argv[1]}/names.json"))
assert sorted(t["name"] for t in j["tensors"]) == sorted(["ok.weight", e["title"], e["clear"]]), j["tensors"]
assert j["metadata"]["k\rforged"] == "v\x1b[2Jx", j["metadata"]
PY

"$tfdebug" diff "$fx/names.safetensors" "$fx/names.safetensors" >"$work/diff.txt" 2>&1
check "diff's table holds no raw control character" no_controls "$work/diff.txt"
check "diff shows the names escaped" grep -qF 'a\nb\x1b]0;pwned\x07' "$work/diff.txt"
"$tfdebug" graph "$fx/invalid_utf8.onnx" >"$work/graph.dot" 2>"$work/err"
check "graph's DOT on stdout holds no raw control character and is UTF-8" no_controls "$work/graph.dot"
check "the DOT label shows the node name escaped" grep -qF 'a\\nb\\x1b]0;pwned\\x07' "$work/graph.dot"
"$tfdebug" trace "$work/$(printf 't\xff.json')" >"$work/trace.txt" 2>&1
check "trace's summary holds no raw control character" no_controls "$work/trace.txt"
check "trace's summary shows the path escaped" grep -qF 't\xff.json: ' "$work/trace.txt"
check "and the frame" grep -qF 's\x1b]0;t\x07' "$work/trace.txt"

# Errors that quote a name are one line, escaped.
"$tfdebug" inspect "$fx/bad_offsets.safetensors" >/dev/null 2>"$work/err"
check "an error quoting a hostile name exits 2" test $? -eq 2
check "and is one line" test "$(wc -l <"$work/err")" -eq 1
check "with the name escaped" grep -qF "tfdebug: error: " "$work/err"
check "naming the tensor" grep -qF "tensor 'a\\nb\\x1b]0;pwned\\x07': data_offsets end 16 is past the end" "$work/err"
check "an error's text holds no raw control character" no_controls "$work/err"
"$tfdebug" stats "$(printf 'no\x1b]0;x\x07such\nfile')" >/dev/null 2>"$work/err"
check "a missing file whose name holds controls: one line" test "$(wc -l <"$work/err")" -eq 1
check "escaped" grep -qF 'no\x1b]0;x\x07such\nfile' "$work/err"
"$tfdebug" inspect "$fx/names.safetensors" $'--fil\nter' x >/dev/null 2>"$work/err"
check "a mistyped option with a newline: one line" test "$(wc -l <"$work/err")" -eq 1

finish "hostile names"
