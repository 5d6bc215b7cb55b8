#!/usr/bin/env bash
# End-to-end tests of the profiler's files and `tfdebug trace`: the example program records a
# trace; Python's json checks the Chrome fields that Perfetto, chrome://tracing and Tracy need;
# conversions round-trip; folded stacks and speedscope agree with the summary.
set -u
tfdebug="$1"
example="$2"
source "$(dirname "$0")/harness.sh"

"$example" "$work/step.json" >/dev/null
check "the example writes a trace" test -s "$work/step.json"
check "Chrome fields: integer pid/tid, X with dur, numeric C args, thread names" $py - "$work/step.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ev = doc["traceEvents"]
assert all(isinstance(e["pid"], int) and isinstance(e["tid"], int) for e in ev)
xs = [e for e in ev if e["ph"] == "X"]
assert xs and all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 for e in xs)
cs = [e for e in ev if e["ph"] == "C"]
assert len(cs) == 5 and all(all(isinstance(v, (int, float)) for v in e["args"].values()) for e in cs)
assert [e["args"]["value"] for e in cs] == [1.0, 0.5, 1 / 3, 0.25, 0.2], [e["args"] for e in cs]
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert sorted(names.values()) == ["data loader", "train"], names
assert {e["tid"] for e in xs} <= set(names)
steps = [e for e in xs if e["name"] == "step"]
assert len(steps) == 5
# forward and backward nest inside their step, on the train thread
for e in xs:
    if e["name"] in ("forward", "backward"):
        assert names[e["tid"]] == "train"
        assert any(s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 1e-9 for s in steps), e
assert sum(1 for e in xs if e["name"] == "matmul") == 15
assert [e["name"] for e in ev if e["ph"] == "i"] == ["done"]
PY

"$tfdebug" trace "$work/step.json" >"$work/summary.txt"
check "summary exits 0" test $? -eq 0
check "summary lists frames and threads" bash -c "grep -q 'top self time' '$work/summary.txt' && grep -q 'matmul' '$work/summary.txt' && grep -q 'data loader' '$work/summary.txt'"
"$tfdebug" trace "$work/step.json" --json >"$work/summary.json"
check "--json summary: calls and self times add up" $py - "$work/step.json" "$work/summary.json" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
frames = {f["name"]: f for f in s["frames"]}
assert frames["matmul"]["calls"] == 15 and frames["step"]["calls"] == 5, frames
train = [t for t in s["threads"] if t["name"] == "train"][0]
steps_ns = sum(round(e["dur"] * 1000) for e in xs if e["name"] == "step")
assert train["busy_ns"] == steps_ns, (train["busy_ns"], steps_ns)
assert all(t["dropped"] == 0 for t in s["threads"])
PY

"$tfdebug" trace "$work/step.json" -o "$work/again.json"
"$tfdebug" trace "$work/again.json" -o "$work/again2.json"
check "Chrome -> Chrome is stable" cmp "$work/again.json" "$work/again2.json"
"$tfdebug" trace "$work/again.json" --json >"$work/summary2.json"
check "the round trip keeps the summary" $py -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); a.pop('file'); b.pop('file'); assert a==b" "$work/summary.json" "$work/summary2.json"

"$tfdebug" trace "$work/step.json" -o "$work/step.folded"
check "folded stacks: one 'a;b;c N' per line, totals equal the threads' busy time" $py - "$work/step.folded" "$work/summary.json" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[2]))
total = {}
for line in open(sys.argv[1]):
    m = re.fullmatch(r"(.+) (\d+(\.\d*)?)\n", line)
    assert m, line
    root = m.group(1).split(";")[0]
    total[root] = total.get(root, 0) + int(m.group(2))
busy = {t["name"]: t["busy_ns"] for t in s["threads"]}
assert total == busy, (total, busy)
assert any(l.startswith("train;step;backward;matmul ") for l in open(sys.argv[1]))
PY

"$tfdebug" trace "$work/step.json" -o "$work/step.speedscope.json"
check "speedscope: evented profiles, balanced, non-decreasing" $py - "$work/step.speedscope.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
assert sorted(p["name"] for p in d["profiles"]) == ["data loader", "train"]
for p in d["profiles"]:
    assert p["type"] == "evented" and p["unit"] == "nanoseconds"
    stack, last = [], p["startValue"]
    for e in p["events"]:
        assert e["at"] >= last and e["at"] <= p["endValue"]
        last = e["at"]
        if e["type"] == "O":
            stack.append(e["frame"])
        else:
            assert stack.pop() == e["frame"]
    assert not stack
PY

"$tfdebug" trace "$work/step.json" -o "$work/step.svg"
check "flame-graph SVG: well-formed, widths from inclusive times, titles, offline" $py - "$work/step.svg" "$work/summary.json" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
svg_text = open(sys.argv[1]).read()
root = ET.fromstring(svg_text)
s = json.load(open(sys.argv[2]))
# No network: the only URL is the SVG namespace; no external hrefs.
assert re.findall(r"https?://[^\"' ]+", svg_text) == ["http://www.w3.org/2000/svg"], re.findall(r"https?://\S+", svg_text)
assert "href" not in svg_text
frames = root.findall("s:g", ns)
ns_of = {}
for g in frames:
    title = g.find("s:title", ns).text
    name = re.sub(r" \([^()]*\)$", "", title)
    ns_of.setdefault(name, 0)
    ns_of[name] += int(g.get("data-ns"))
    w = float(g.find("s:rect", ns).get("width"))
    assert abs(w - 1180 * int(g.get("data-ns")) / int(frames[0].get("data-ns"))) < 0.01, (title, w)
assert frames[0].find("s:title", ns).text.startswith("all (")
busy = {t["name"]: t["busy_ns"] for t in s["threads"]}
assert int(frames[0].get("data-ns")) == sum(busy.values())
for name, b in busy.items():
    assert ns_of[name] == b, (name, ns_of[name], b)
frames_by_name = {f["name"]: f for f in s["frames"]}
assert ns_of["matmul"] == frames_by_name["matmul"]["total_ns"], (ns_of["matmul"], frames_by_name["matmul"])
assert root.find("s:script", ns) is not None
open(sys.argv[1] + ".js", "w").write(root.find("s:script", ns).text)
PY
check "its inline JavaScript parses (node --check)" node --check "$work/step.svg.js"

"$tfdebug" trace "$work/missing.json" 2>/dev/null
check "a missing file exits 2" test $? -eq 2
echo '{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]}' >"$work/bad.json"
"$tfdebug" trace "$work/bad.json" 2>"$work/err.txt"
check "an event without tid exits 2 and says so" bash -c "test $? -eq 2 && grep -q 'tid' '$work/err.txt'"
"$tfdebug" trace "$work/step.json" -o "$work/out.txt" 2>/dev/null
check "an unknown output type exits 2" test $? -eq 2
check "and leaves no file behind" test ! -e "$work/out.txt"
"$tfdebug" trace "$work/step.folded" 2>/dev/null
check "a non-Chrome input exits 2" test $? -eq 2

finish "cli trace"
