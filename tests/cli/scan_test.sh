#!/usr/bin/env bash
# End-to-end tests of `tfdebug scan` and of inspect's pickle_code finding, on the malicious and
# benign pickles of tests/io/make_pickle_fixtures.py (never unpickled) and their expected.json.
set -u
tfdebug="$1"
fx="$(cd "$2" && pwd)/pickles"
source "$(dirname "$0")/harness.sh"

# Every fixture: scan's exit code and, in --json, exactly the globals expected.json flags.
"$tfdebug" scan --json "$fx/evil" "$fx/benign" >"$work/all.json"
check "scan of both folders exits 1 (errors found)" test $? -eq 1
check "every file's verdict and flagged globals match expected.json" $py - "$work/all.json" "$fx" <<'PY'
import json, os, sys
report, fx = json.load(open(sys.argv[1])), sys.argv[2]
expected = json.load(open(os.path.join(fx, "expected.json")))
files = {os.path.relpath(f["path"], fx): f for f in report["files"]}
assert set(files) == set(expected), sorted(set(files) ^ set(expected))
def flagged(pickles, out):
    for p in pickles:
        for g in p["globals"]:
            if g["risk"] != "allowed":
                out[g["global"]] = [g["risk"], g["called"]]
        flagged(p["nested"], out)
    return out
for name, want in expected.items():
    f = files[name]
    assert f["verdict"] == want["verdict"], (name, f["verdict"], want)
    assert flagged(f["pickles"], {}) == want["flagged"], (name, flagged(f["pickles"], {}), want)
    for p in f["pickles"]:
        for g in p["globals"]:
            if g["risk"] == "runs_code" and g["called"]:
                assert g["message"].startswith("this file runs code when `torch.load` opens it: calls " + g["global"]), g
s = report["summary"]
assert s["files"] == len(expected) and s["error"] == sum(w["verdict"] == "error" for w in expected.values()), s
assert report["exit_code"] == 1
PY

# Exit codes one file at a time: 1 for an error, 0 for clean, info and warning files.
bad=0
for f in "$fx"/evil/*; do
  want=$($py -c "import json,sys; print(json.load(open('$fx/expected.json'))['evil/' + sys.argv[1]]['verdict'])" "$(basename "$f")")
  "$tfdebug" scan "$f" >/dev/null
  rc=$?
  if [ "$want" = error ] && [ $rc -ne 1 ]; then echo "  $f: exit $rc, expected 1"; bad=1; fi
  if [ "$want" != error ] && [ $rc -ne 0 ]; then echo "  $f: exit $rc, expected 0"; bad=1; fi
done
check "scan exits 1 on every malicious file with an error, 0 on the warnings" test $bad -eq 0
"$tfdebug" scan "$fx/benign" >"$work/benign.txt"
check "scan of the benign torch.save, pickle and numpy files exits 0" test $? -eq 0
check "no error line for the benign files" bash -c "! grep -Eq '^ +error ' '$work/benign.txt'"
check "one warning, for the user class of a full module" bash -c "[ \$(grep -Ec '^ +warning ' '$work/benign.txt') -eq 1 ] && grep -q 'warning torch.load imports __main__ and calls __main__.Net' '$work/benign.txt'"
check "a full module is reported as info" grep -q "info    a full module: torch.nn.modules.linear.Linear" "$work/benign.txt"

# The text report names the call in one line.
"$tfdebug" scan "$fx/evil/state_dict_reduce.pt" >"$work/one.txt"
check "the text report names the call" grep -q "error   this file runs code when \`torch.load\` opens it: calls posix.system" "$work/one.txt"

# inspect: an error finding for the call, the tensors still listed; benign checkpoints clean.
"$tfdebug" inspect "$fx/evil/state_dict_reduce.pt" --fail-on error --json >"$work/inspect.json"
check "inspect --fail-on error exits 1 on a state dict with a call" test $? -eq 1
check "inspect lists the tensors and a pickle_code error naming posix.system" $py - "$work/inspect.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert sorted(t["name"] for t in j["tensors"]) == ["bias", "weight"], j["tensors"]
code = [f for f in j["findings"] if f["rule"] == "pickle_code"]
assert len(code) == 1 and code[0]["severity"] == "error" and code[0]["global"] == "posix.system", code
assert code[0]["message"].startswith("this file runs code when `torch.load` opens it: calls posix.system")
PY
for f in objects.npy legacy.pt nested_in_list.pkl p0_global_os_system.pkl; do
  "$tfdebug" inspect "$fx/evil/$f" --fail-on error >/dev/null 2>"$work/err.txt"
  check "inspect --fail-on error exits 1 on evil/$f (read or not)" test $? -eq 1
done
for f in state_dict.pt optimizer.pt training_checkpoint.pt full_module.pt user_module.pt; do
  "$tfdebug" inspect "$fx/benign/$f" --fail-on error --json >"$work/b.json"
  check "inspect --fail-on error exits 0 on benign/$f" test $? -eq 0
  check "no pickle_code finding on benign/$f" $py -c "
import json; j = json.load(open('$work/b.json'))
assert not [f for f in j['findings'] if f['rule'] == 'pickle_code'], j['findings']"
done

# Unreadable input: exit 2 with one line; a symbolic link loop is reported, never followed.
"$tfdebug" scan "$work/missing.pt" >"$work/missing.txt"
check "a missing file exits 2" test $? -eq 2
check "and names it" grep -q "missing.pt: no such file or folder" "$work/missing.txt"
printf 'not a pickle at all' >"$work/junk.pkl"
"$tfdebug" scan "$work/junk.pkl" >/dev/null
check "a .pkl that is no pickle exits 2" test $? -eq 2
mkdir -p "$work/tree/sub"
cp "$fx/evil/p0_global_os_system.pkl" "$work/tree/sub/"
ln -s .. "$work/tree/sub/up"
ln -s loop_b "$work/tree/loop_a"
ln -s loop_a "$work/tree/loop_b"
ln -s "$fx/evil/timeit.pkl" "$work/tree/outside.pkl"
timeout 10 "$tfdebug" scan --json "$work/tree" >"$work/tree.json"
check "a folder with link loops exits 1 for the file inside it" test $? -eq 1
check "loops and links out of the folder are reported, not followed" $py - "$work/tree.json" <<'PY'
import json, sys
files = {f["path"].rsplit("/tree/", 1)[1]: f for f in json.load(open(sys.argv[1]))["files"]}
assert set(files) == {"loop_a", "loop_b", "outside.pkl", "sub/p0_global_os_system.pkl", "sub/up"}, files
assert "loop" in files["loop_a"]["note"] and "loop" in files["sub/up"]["note"], files
assert "out of the folder" in files["outside.pkl"]["note"] and files["outside.pkl"]["verdict"] == "skipped"
assert files["sub/p0_global_os_system.pkl"]["verdict"] == "error"
PY

# A hostile name never reaches the terminal raw: an escape sequence in a global's name is escaped.
printf '\x80\x04\x8c\x09evil\x1b[31m\x8c\x01x\x93.' >"$work/escape.pkl"
"$tfdebug" scan "$work/escape.pkl" >"$work/escape.txt"
check "escape sequences in names are printed escaped" bash -c "grep -q 'evil\\\\x1b\\[31m' '$work/escape.txt' && ! grep -q $'\\x1b' '$work/escape.txt'"

# A file name that is not UTF-8 (and holds an escape): still one valid JSON document, escaped.
mkdir -p "$work/names"
cp "$fx/evil/p0_global_os_system.pkl" "$work/names/"$'bad\xff\x1b[2J.pkl'
"$tfdebug" scan --json "$work/names" >"$work/names.json"
check "a non-UTF-8 file name exits 1 for its call" test $? -eq 1
check "and is written escaped in valid JSON" $py -c "
import json; f = json.load(open('$work/names.json'))['files'][0]
assert f['path'].endswith('bad\\\\xff\\\\x1b[2J.pkl') and f['verdict'] == 'error', f['path']"

finish "scan"
