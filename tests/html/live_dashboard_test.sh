#!/usr/bin/env bash
# The live dashboard end to end (docs/dashboard.md): `tfdebug demo --fault log --serve 0` trains
# while headless Chromium watches its page (tests/html/live_page_test.js: the loss chart grows,
# the NaN finding and the flight recorder appear live, no console error); curl reads the stream
# and the snapshot; bad options are one-line errors with exit 2.
#
#   live_dashboard_test.sh TFDEBUG NPM_DIR [SCREENSHOT_DIR]
set -u
tfdebug="$(realpath "$1")"
npm_dir="$(realpath "$2")"
shots="${3:+$(realpath "$3")}"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../cli/harness.sh"
require node /usr/bin/chromium curl
require_npm "$npm_dir" playwright-core

# Waits (at most 120 s) for the demo writing $1 to print its dashboard's address; prints the port.
port_of() {
  local i
  for i in $(seq 1200); do
    if grep -q '^dashboard: ' "$1" 2>/dev/null; then
      sed -n 's|^dashboard: http://127.0.0.1:\([0-9]*\)/$|\1|p' "$1"
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# The browser watches a run of 120 steps, slowed to about 7 steps a second (the NaN comes at step
# 73, some 11 s in: Chromium has started by then).
OPENBLAS_NUM_THREADS=1 "$tfdebug" demo --fault log --steps 120 --step-delay-ms 120 --every 0 --serve 0 \
  --serve-linger 60 --out "$work/run" >"$work/demo.log" 2>&1 &
demo=$!
port=$(port_of "$work/demo.log")
check "the demo prints its dashboard's address once" test "$(grep -c '^dashboard: ' "$work/demo.log")" -eq 1
NODE_PATH="$npm_dir/node_modules" timeout 240 node "$here/live_page_test.js" "http://127.0.0.1:$port/" $shots
check "live_page_test.js" test $? -eq 0
# curl, an independent client: the stream starts with the snapshot of the finished run.
curl -sN --max-time 2 "http://127.0.0.1:$port/events" >"$work/events.txt"
check "curl: the stream's first event is the snapshot" bash -c "sed -n 2p '$work/events.txt' | grep -q '^data: {\"data\":{.*\"kind\":\"snapshot\"}$'"
curl -s "http://127.0.0.1:$port/snapshot" >"$work/snapshot.json"
check "curl: the snapshot holds the 120 steps and the NaN finding" "$py" -c "
import json, sys
d = json.load(open('$work/snapshot.json'))
assert d['run']['complete'] and len(d['metrics']['steps']) == 120, d['run']
assert any(f['op'] == 'aten::log' and f['severity'] == 'error' for f in d['findings'])
assert d['flight']['trigger']['op'] == 'aten::log'
"
check "curl: another Host is refused" test "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: attacker.example' "http://127.0.0.1:$port/snapshot")" = 403
kill -TERM "$demo"
wait "$demo"
check "the demo exits 1 (an error finding) after SIGTERM ends its linger" test $? -eq 1

# Bad options: one line, exit 2.
"$tfdebug" demo --serve 70000 >"$work/out.txt" 2>&1
check "--serve 70000: exit 2" test $? -eq 2
check "--serve 70000: one line naming the option" bash -c "[ \$(wc -l <'$work/out.txt') -eq 1 ] && grep -q -- '--serve' '$work/out.txt'"
"$tfdebug" demo --host 0.0.0.0 >"$work/out.txt" 2>&1
check "--host without --serve: exit 2" test $? -eq 2
"$tfdebug" demo --steps 1 --serve 0 --host 203.0.113.7 >"$work/out.txt" 2>&1
check "--host not of this machine: exit 2" test $? -eq 2
check "--host not of this machine: one line saying it cannot listen" bash -c "grep -q 'cannot listen' '$work/out.txt'"
finish live_dashboard
