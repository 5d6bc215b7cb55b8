#!/usr/bin/env bash
# `tfdebug top RUN_DIR` (docs/terminal.md) under tmux: a run directory grown step by step by this
# script (lines of a real run's metrics.jsonl, from tests/export/write_run.cpp, appended one at a
# time; report.json rewritten by a rename, as a Session does), read back from the screen with
# `tmux capture-pane`: the new step and the new finding appear, a resize redraws at the new width,
# `q` exits with 0. Then the plain text of a dumb terminal and of a pipe, and bad input.
set -u
tfdebug="$1"
write_run="$2"
here="$(dirname "$0")"
source "$here/harness.sh"
require tmux

"$write_run" "$work/full" >/dev/null
check "the fixture run is written" test -s "$work/full/run/metrics.jsonl"
src="$work/full/run"
live="$work/live"
mkdir -p "$live"

# report.json as the run had it at step STEP: the findings first seen by then, not finished.
report_at() {
  $py - "$src/report.json" "$live/report.json.tmp" "$1" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
step = int(sys.argv[3])
report["complete"] = False
report["last_step"] = step
report["steps"] = step + 1
report["findings"] = [f for f in report["findings"] if f["step"] <= step]
for f in report["findings"]:
    f["last_step"] = min(f["last_step"], step)
    f["count"] = f["last_step"] - f["step"] + 1
json.dump(report, open(sys.argv[2], "w"))
PY
  mv "$live/report.json.tmp" "$live/report.json"
}
append_steps() {  # append_steps FIRST LAST: lines FIRST..LAST (1-based) of the real metrics.jsonl
  sed -n "$1,$2p" "$src/metrics.jsonl" >>"$live/metrics.jsonl"
}

append_steps 1 3
report_at 2

sock="tfdebug_top_test_$$"
source "$here/tmux.sh"
trap 'tmx kill-server 2>/dev/null; rm -rf "$work"' EXIT

tmx -u new-session -d -s top -x 120 -y 40 \
  "env LANG=C.UTF-8 TERM=tmux-256color '$tfdebug' top '$live' --interval 0.1; echo \$? >'$work/rc'; sleep 30"
check "the dashboard shows the run at step 2" wait_for "step 2 \(3 steps read\)"
check "the findings of step 2: dead_units and init_scale, no error" \
  bash -c "screen=\$(tmux -L '$sock' capture-pane -p -t top); grep -q 'findings: 0 errors, 2 warnings' <<<\"\$screen\" && grep -q 'dead_units  fc1' <<<\"\$screen\""
check "the loss is plotted in braille with a y tick at 2" wait_for "^  2┤"
check "gradient norms of both modules as bars" wait_for "^  fc2 █+"

# The run goes on: step by step, a half-written line first (it must wait for its end).
line4=$(sed -n 4p "$src/metrics.jsonl")
printf '%s' "${line4:0:40}" >>"$live/metrics.jsonl"
sleep 0.5
check "a half-written line is not a step yet" bash -c "! tmux -L '$sock' capture-pane -p -t top | grep -q 'step 3 '"
printf '%s\n' "${line4:40}" >>"$live/metrics.jsonl"
check "its end makes it step 3" wait_for "step 3 \(4 steps read\)"
for n in 5 6 7 8; do
  append_steps $n $n
  sleep 0.15
done
report_at 7
check "the new step 7 is shown" wait_for "step 7 \(8 steps read\)"
check "the new finding: nonfinite in fc2, an error, newest first" wait_for "^  error +step 5-7 \(x3\)  (nonfinite  fc2|divergence)"
check "the error count" wait_for "findings: 2 errors, 2 warnings"
check "the loss's NaN steps are marked on the x axis" wait_for "└.*×"
check "a step rate is shown" wait_for "[0-9.]+ steps/s"

tmx resize-window -t top -x 70 -y 30
# Redrawn for 70 x 30: the x axis spans the new width, the key help is on the new last line.
resized() {
  screen >"$work/resized.txt"
  $py - "$work/resized.txt" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
axis = [l for l in lines if l.lstrip().startswith("\u2514")]
assert axis and len(axis[0].rstrip()) == 70, axis
assert lines[29].startswith("q quit"), lines[29]
PY
}
# retry COMMAND...: up to 5 s for it to pass (the screen is redrawn every 0.1 s).
retry() {
  local i
  for i in $(seq 50); do
    "$@" 2>/dev/null && return 0
    sleep 0.1
  done
  "$@"
}
check "a resize redraws at the new width and height" retry resized

tmx send-keys -t top q
for i in $(seq 50); do [ -s "$work/rc" ] && break; sleep 0.1; done
check "q exits with code 0" grep -qx 0 "$work/rc"
check "the terminal is given back (no dashboard left on the screen)" bash -c "! tmux -L '$sock' capture-pane -p -t top | grep -q 'q quit'"
tmx kill-server 2>/dev/null

# A dumb terminal inside tmux: no full screen, the plain summary, which stops when the run finishes.
cp "$src/report.json" "$live/report.json"
append_steps 9 12
tmx -u new-session -d -s top -x 100 -y 50 \
  "env TERM=dumb LANG=C '$tfdebug' top '$live' --interval 0.1; echo \$? >'$work/rc2'; sleep 30"
for i in $(seq 50); do [ -s "$work/rc2" ] && break; sleep 0.1; done
check "TERM=dumb: a plain summary, exit 0 once the run has finished" grep -qx 0 "$work/rc2"
check "TERM=dumb: ASCII plot and the finished run" \
  bash -c "s=\$(tmux -L '$sock' capture-pane -p -t top); grep -q 'step 11 (12 steps read)  finished  ' <<<\"\$s\" && grep -q '^  2+\*' <<<\"\$s\" && grep -q '^  fc2 #' <<<\"\$s\""
tmx kill-server 2>/dev/null

# Not a terminal: --once prints one summary; the text is ASCII in the C locale.
LANG=C LC_ALL=C COLUMNS=60 "$tfdebug" top "$live" --once >"$work/once.txt" 2>&1
echo $? >"$work/once.rc"
check "--once exits 0" grep -qx 0 "$work/once.rc"
check "--once: the findings, newest first, at 60 columns" $py - "$work/once.txt" <<'PY'
import sys
text = open(sys.argv[1], "rb").read()
assert all(b < 0x80 for b in text), "non-ASCII in the C locale"
lines = text.decode().splitlines()
assert all(len(l) <= 60 for l in lines), [l for l in lines if len(l) > 60]
assert lines[0].startswith("tfdebug top  step 11 (12 steps read)  finished  /"), lines[0]
f = lines.index("findings: 2 errors, 2 warnings, 0 info (newest first)")
assert lines[f + 1].startswith("  error   step 5-11 (x7)"), lines[f + 1]
assert lines[f + 4].startswith("  warning step 0  init_scale  fc1"), lines[f + 4]
PY
check "--count 3 --plain: stops after three refreshes of an unfinished run" bash -c "
  $py -c \"import json; r=json.load(open('$live/report.json')); r['complete']=False; json.dump(r, open('$live/report.json','w'))\"
  timeout 10 '$tfdebug' top '$live' --plain --count 3 --interval 0.05 >'$work/count.txt' && grep -c '^tfdebug top' '$work/count.txt' | grep -qx 1"

# A long run: 100,000 steps are more than the 65,536 loss points top keeps; it thins them to every
# other step, keeping the non-finite ones (a lone NaN at step 77,777 is still a mark on the axis).
mkdir -p "$work/long"
$py -c "
with open('$work/long/metrics.jsonl', 'w') as f:
    for s in range(100_000):
        loss = 'null,\"loss_nonfinite\":\"nan\"' if s == 77_777 else repr(1 + 1 / (1 + s))
        f.write('{\"step\":%d,\"loss\":%s,\"modules\":{}}\n' % (s, loss))"
LANG=C LC_ALL=C COLUMNS=80 "$tfdebug" top "$work/long" --once >"$work/long.txt" 2>&1
check "a long run: every step read, one NaN mark near 78% of the axis" $py - "$work/long.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].startswith("tfdebug top  step 99999 (100,000 steps read)"), lines[0]
axis = next(l for l in lines if l.lstrip().startswith("++-"))  # the corner, then the x axis
assert axis.count("x") == 1, axis
first = axis.index("+") + 1  # the plot's first column
at = (axis.index("x") - first) / (len(axis) - first - 1)
assert abs(at - 0.77777) < 0.02, at
PY

# Bad input: one line, exit 2.
"$tfdebug" top "$work/none" >"$work/err.txt" 2>&1
echo $? >"$work/err.rc"
check "a missing run directory: exit 2" grep -qx 2 "$work/err.rc"
check "... with one line naming it" bash -c "[ \$(wc -l <'$work/err.txt') -eq 1 ] && grep -q 'none: not a directory' '$work/err.txt'"
mkdir -p "$work/bad"
echo '{"step": "x"}' >"$work/bad/metrics.jsonl"
"$tfdebug" top "$work/bad" --once >"$work/bad.txt" 2>&1
echo $? >"$work/bad.rc"
check "a metrics.jsonl line that is not one: exit 2 naming the field" \
  bash -c "grep -qx 2 '$work/bad.rc' && grep -q 'metrics.jsonl: line 1' '$work/bad.txt'"
"$tfdebug" top "$live" --interval 0 >"$work/int.txt" 2>&1
echo $? >"$work/int.rc"
check "--interval 0: exit 2" grep -qx 2 "$work/int.rc"

finish "cli_top"
