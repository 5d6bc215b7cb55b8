#!/usr/bin/env bash
# `tfdebug top RUN_DIR` following a real training run as it happens (docs/terminal.md): the
# dashboard is started under tmux on an empty run directory, then `tfdebug demo --fault log`
# trains into it. The screen is read with `tmux capture-pane` while the demo runs: the step
# grows, the planted fault's diagnosis (aten::log in blocks.1.mlp, step 73) appears while the
# run is still going, and the end of the run is shown as finished. Then `q` exits with 0.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/harness.sh"
require tmux

run="$work/run"
mkdir -p "$run"
sock="tfdebug_top_demo_test_$$"
source "$here/tmux.sh"
trap 'tmx kill-server 2>/dev/null; [ -n "${demo:-}" ] && kill "$demo" 2>/dev/null; rm -rf "$work"' EXIT

tmx -u new-session -d -s top -x 110 -y 45 \
  "env LANG=C.UTF-8 TERM=tmux-256color '$tfdebug' top '$run' --interval 0.1; echo \$? >'$work/rc'; sleep 60"
check "before the run starts: waiting for metrics.jsonl" wait_for "waiting for metrics.jsonl"

steps=600
"$tfdebug" demo --fault log --steps $steps --every 0 --out "$run" >"$work/demo.txt" 2>&1 &
demo=$!
# Every 0.2 s while the demo trains, the screen as it is, one file each.
n=0
while kill -0 "$demo" 2>/dev/null; do
  screen >"$work/screen_$(printf %04d $n).txt"
  n=$((n + 1))
  sleep 0.2
done
wait "$demo"
echo $? >"$work/demo.rc"
check "the demo ran to its end and found the error (exit 1)" grep -qx 1 "$work/demo.rc"
check "the final screen: every step read, the run finished" \
  wait_for "step $((steps - 1)) \\($steps steps read\\).*  finished  "
screen >"$work/screen_final.txt"

check "followed live: the step grew, the diagnosis appeared before the run ended" \
  $py - "$work" "$steps" <<'PY'
import glob, re, sys
work, steps = sys.argv[1], int(sys.argv[2])
seen = []  # (step, running, nonfinite shown, error count) per screen taken while the demo ran
for path in sorted(glob.glob(f"{work}/screen_0*.txt")):
    text = open(path, encoding="utf-8").read()
    m = re.search(r"tfdebug top  step (\d+) \((\d+) steps read\)", text)
    if not m:
        continue
    step = int(m.group(1))
    assert int(m.group(2)) == step + 1, m.group(0)
    errors = re.search(r"findings: (\d+) errors?", text)
    seen.append((step, "running (or killed)" in text,
                 re.search(r"error +step 73 +nonfinite +blocks\.1\.mlp: aten::log", text) is not None,
                 int(errors.group(1)) if errors else 0))
steps_seen = [s for s, *_ in seen]
assert len(set(steps_seen)) >= 5, f"too few distinct steps seen while running: {sorted(set(steps_seen))}"
assert steps_seen == sorted(steps_seen), "the step went backwards"
assert min(steps_seen) < steps // 2, steps_seen[:5]
live = [s for s, running, nonfinite, errors in seen if running and nonfinite and errors >= 1 and s < steps - 1]
assert live, f"the nonfinite finding was never shown while the run went on: {seen[-5:]}"
assert min(live) >= 73, live[:3]
PY
check "the final screen names the producer and the loss's NaN steps" bash -c "
  grep -qE 'error +step 73 +nonfinite +blocks\.1\.mlp: aten::log' '$work/screen_final.txt' &&
  grep -qE '└.*×' '$work/screen_final.txt'"

tmx send-keys -t top q
for i in $(seq 50); do [ -s "$work/rc" ] && break; sleep 0.1; done
check "q exits with code 0" grep -qx 0 "$work/rc"

finish "cli_top_demo"
