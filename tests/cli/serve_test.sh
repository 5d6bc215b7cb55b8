#!/usr/bin/env bash
# `tfdebug serve RUN_DIR` (docs/dashboard.md): a finished run's dashboard holds what its files hold
# (checked by Python reading report.json and metrics.jsonl itself), and a run that another process
# is still writing is followed: curl's event stream gets each new step in order, the findings and
# the end. Bad input: one line, exit 2.
#
#   serve_test.sh TFDEBUG WRITE_RUN
set -u
tfdebug="$(realpath "$1")"
write_run="$(realpath "$2")"
source "$(dirname "$0")/harness.sh"
require curl

# Waits (at most 60 s) for the server writing $1 to print its address; prints the port.
port_of() {
  local i
  for i in $(seq 600); do
    if grep -q '^dashboard: ' "$1" 2>/dev/null; then
      sed -n 's|^dashboard: http://127.0.0.1:\([0-9]*\)/$|\1|p' "$1"
      return 0
    fi
    sleep 0.1
  done
  return 1
}

"$write_run" "$work/finished" >/dev/null || { echo "FAIL: write_run"; exit 1; }
run="$work/finished/run"

# A finished run: everything at once.
"$tfdebug" serve "$run" --port 0 --interval 0.1 >"$work/serve.log" 2>&1 &
server=$!
port=$(port_of "$work/serve.log")
for i in $(seq 100); do grep -q 'the run is complete' "$work/serve.log" && break; sleep 0.1; done
curl -s "http://127.0.0.1:$port/snapshot" >"$work/snapshot.json"
check "finished run: the snapshot holds metrics.jsonl's losses and report.json's findings" "$py" - "$work/snapshot.json" "$run" <<'PY'
import json, math, sys
snap = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2] + "/metrics.jsonl")]
report = json.load(open(sys.argv[2] + "/report.json"))
steps = [l["step"] for l in lines]
assert snap["metrics"]["steps"] == steps, (snap["metrics"]["steps"], steps)
def page(l):
    if l.get("loss") is None:
        return "NaN" if l.get("loss_nonfinite") == "nan" else l.get("loss_nonfinite")
    return l["loss"]
want = [page(l) for l in lines]
assert snap["metrics"]["loss"] == want, (snap["metrics"]["loss"], want)
got = sorted((f["rule"], f["module"], f["op"], f["step"], f["count"]) for f in snap["findings"])
exp = sorted((f["rule"], f["module"], f["op"], f["step"], f["count"]) for f in report["findings"])
assert got == exp, (got, exp)
assert snap["run"]["complete"] is True and snap["run"]["steps"] == report["steps"]
assert snap["flight"] is not None and snap["flight"]["trigger"]["rule"] == "nonfinite"
PY
check "finished run: the page is served" bash -c "curl -s 'http://127.0.0.1:$port/' | grep -q 'data-kind=\"live\"'"
check "finished run: no file of the run directory is served" test "$(curl -s -o /dev/null -w '%{http_code}' --path-as-is "http://127.0.0.1:$port/../report.json")" = 404
kill -TERM "$server"
wait "$server"
check "SIGTERM: exit 0" test $? -eq 0

# A run still being written: the first 4 lines, then a line every 0.1 s, then report.json.
mkdir "$work/growing"
head -n 4 "$run/metrics.jsonl" >"$work/growing/metrics.jsonl"
"$tfdebug" serve "$work/growing" --port 0 --interval 0.1 >"$work/serve2.log" 2>&1 &
server=$!
port=$(port_of "$work/serve2.log")
curl -sN --max-time 8 "http://127.0.0.1:$port/events" >"$work/events.txt" &
reader=$!
sleep 0.5
total=$(wc -l <"$run/metrics.jsonl")
for n in $(seq 5 "$total"); do
  sed -n "${n}p" "$run/metrics.jsonl" >>"$work/growing/metrics.jsonl"
  sleep 0.1
done
# The flight recorder first, as in a run (written a few steps after the first error): the server
# stops following once report.json says complete.
cp "$run/flight_recorder.json" "$work/growing/"
cp "$run/report.json" "$work/growing/report.json.tmp" && mv "$work/growing/report.json.tmp" "$work/growing/report.json"
wait "$reader"
check "growing run: the stream has the snapshot, every later step in order, the findings and the end" "$py" - "$work/events.txt" "$run" <<'PY'
import json, sys
events = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith("data: ")]
lines = [json.loads(l) for l in open(sys.argv[2] + "/metrics.jsonl")]
report = json.load(open(sys.argv[2] + "/report.json"))
assert events[0]["kind"] == "snapshot", events[0]["kind"]
first = events[0]["data"]["metrics"]["steps"] if events[0]["data"]["metrics"] else []
streamed = [e["step"] for e in events if e["kind"] == "step"]
assert first + streamed == [l["step"] for l in lines], (first, streamed)
assert len(streamed) >= len(lines) - 4 - 1, streamed  # the snapshot came before the lines were added
kinds = [e["kind"] for e in events]
assert kinds.count("finding") == len(report["findings"]), kinds
assert kinds.count("end") == 1 and kinds.index("end") > max(i for i, k in enumerate(kinds) if k == "step")
assert "flight" in kinds
PY
ids=$(grep -c '^id: ' "$work/events.txt")
check "growing run: event ids count up by one" bash -c "grep '^id: ' '$work/events.txt' | sed 's/id: //' | awk 'NR > 1 && \$1 != prev + 1 { bad = 1 } { prev = \$1 } END { exit bad }'"
kill -TERM "$server"
wait "$server"
check "growing run: the server follows until SIGTERM, then exits 0" test $? -eq 0

# Bad input: one line, exit 2.
"$tfdebug" serve "$work/nope" --port 0 >"$work/out.txt" 2>&1
check "not a folder: exit 2" test $? -eq 2
check "not a folder: one line naming it" bash -c "[ \$(wc -l <'$work/out.txt') -eq 1 ] && grep -q 'nope: not a folder' '$work/out.txt'"
"$tfdebug" serve "$run" --port 70000 >"$work/out.txt" 2>&1
check "--port 70000: exit 2" test $? -eq 2
mkdir "$work/bad" && echo '{"step": "x"}' >"$work/bad/metrics.jsonl"
"$tfdebug" serve "$work/bad" --port 0 >"$work/out.txt" 2>&1
check "a bad metrics.jsonl line: exit 2" test $? -eq 2
check "a bad metrics.jsonl line: names the file" grep -q 'metrics.jsonl' "$work/out.txt"
finish cli_serve
