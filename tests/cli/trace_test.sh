#!/usr/bin/env bash
# End-to-end tests of the profiler's files and `tfdebug trace`: the example program records a
# trace; Python's json checks the Chrome fields that Perfetto, chrome://tracing and Tracy need;
# conversions round-trip; folded stacks and speedscope agree with the summary.
set -u
tfdebug="$1"
example="$2"
source "$(dirname "$0")/harness.sh"
require protoc node

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

"$tfdebug" trace "$work/step.json" -o "$work/step.pftrace"
check "Perfetto protobuf: protoc --decode_raw reads it" bash -c "protoc --decode_raw <'$work/step.pftrace' >'$work/pftrace.txt'"
check "Perfetto protobuf: tracks, interned names, nested slices and counters (a wire-format reader)" $py - "$work/step.pftrace" "$work/step.json" <<'PY'
import json, struct, sys

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7F) << s; s += 7
        if c < 0x80:
            return v, i

def fields(b):
    out, i = [], 0
    while i < len(b):
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0:
            v, i = varint(b, i)
        elif t == 1:
            v = b[i:i + 8]; i += 8
        elif t == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif t == 5:
            v = b[i:i + 4]; i += 4
        else:
            raise ValueError(t)
        out.append((f, v))
    return out

def get(fs, f):
    return [v for k, v in fs if k == f]

data = open(sys.argv[1], "rb").read()
assert data[0] == 0x0A
packets = [fields(p) for p in get(fields(data), 1)]
assert all(get(p, 10) == [1] for p in packets), "one trusted_packet_sequence_id"
first = packets[0]
assert get(first, 13) == [3]
names = {}
for e in get(fields(get(first, 12)[0]), 2):
    ef = fields(e)
    names[get(ef, 1)[0]] = get(ef, 2)[0].decode()
tracks = {}
for p in packets:
    for td in get(p, 60):
        tf = fields(td)
        tracks[get(tf, 1)[0]] = tf
procs = [t for t in tracks.values() if get(t, 3)]
threads = {u: t for u, t in tracks.items() if get(t, 4)}
counters = {u: get(t, 2)[0].decode() for u, t in tracks.items() if get(t, 8)}
assert len(procs) == 1
thread_names = {u: get(fields(get(t, 4)[0]), 5)[0].decode() for u, t in threads.items()}
assert sorted(thread_names.values()) == ["data loader", "train"], thread_names
assert all(get(t, 5) == [get(procs[0], 1)[0]] for t in threads.values()), "thread tracks parented to the process"
chrome = json.load(open(sys.argv[2]))["traceEvents"]
x_by_thread = {}
tid_name = {e["tid"]: e["args"]["name"] for e in chrome if e["ph"] == "M" and e["name"] == "thread_name"}
for e in chrome:
    if e["ph"] == "X":
        x_by_thread.setdefault(tid_name[e["tid"]], []).append((round(e["ts"] * 1000), e["name"]))
stacks = {u: [] for u in threads}
begins = {u: [] for u in threads}
values, last = [], {}
for p in packets[1:]:
    for te in get(p, 11):
        ef = fields(te)
        track, kind, ts = get(ef, 11)[0], get(ef, 9)[0], get(p, 8)[0]
        assert ts >= last.get(track, 0); last[track] = ts
        if kind == 1:
            stacks[track].append(ts); begins[track].append((ts, names[get(ef, 10)[0]]))
        elif kind == 2:
            assert stacks[track].pop() <= ts
        elif kind == 4:
            assert counters[track] == "loss"
            values.append(struct.unpack("<d", get(ef, 44)[0])[0])
assert all(not s for s in stacks.values())
for u, n in thread_names.items():
    assert sorted(begins[u]) == sorted(x_by_thread[n]), n
assert values == [1.0, 0.5, 1 / 3, 0.25, 0.2], values
PY

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
