#!/usr/bin/env bash
# `tfdebug plot` and `tfdebug stats`' histogram bars (docs/terminal.md), read back as text: the
# series' numbers against metrics.jsonl parsed by Python's json, the plot's width, a known point
# on a known cell, NaN steps marked, ASCII in the C locale, --list, and bad input (exit 2, one
# line, did-you-mean).
set -u
tfdebug="$1"
write_run="$2"
here="$(dirname "$0")"
source "$here/harness.sh"

"$write_run" "$work/w" >/dev/null
run="$work/w/run"
check "the fixture run is written" test -s "$run/metrics.jsonl"

"$tfdebug" plot "$run" --json >"$work/loss.json"
"$tfdebug" plot "$run/metrics.jsonl" -m grad_norm --json >"$work/grad.json"
"$tfdebug" plot "$run" -m abs_max --module fc2 --json >"$work/abs.json"
check "--json: the series are metrics.jsonl's numbers (NaN as null)" $py - "$run/metrics.jsonl" "$work" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
work = sys.argv[2]
loss = json.load(open(f"{work}/loss.json"))
assert loss["metric"] == "loss" and loss["steps"] == 12, loss
[s] = loss["series"]
assert s["steps"] == list(range(12)), s
assert s["values"] == [l["loss"] for l in lines], (s["values"], [l["loss"] for l in lines])
assert s["values"][:5] == [2.0, 1.0, 2 / 3, 0.5, 0.4] and s["values"][5:] == [None] * 7, s["values"]
grad = json.load(open(f"{work}/grad.json"))
assert [g["module"] for g in grad["series"]] == ["fc1", "fc2"], grad
for g in grad["series"]:
    assert g["values"] == [l["modules"][g["module"]]["grad_norm"] for l in lines], g
abs_max = json.load(open(f"{work}/abs.json"))
assert abs_max["metric"] == "activations.abs_max", abs_max
assert [a["module"] for a in abs_max["series"]] == ["fc2"]
assert abs_max["series"][0]["values"] == [l["modules"]["fc2"]["activations"]["abs_max"] for l in lines]
PY

LANG=C.UTF-8 COLUMNS=50 "$tfdebug" plot "$run" --height 12 >"$work/loss50.txt"
check "the plot fits COLUMNS=50 and the height asked" $py - "$work/loss50.txt" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == 12, len(lines)
assert all(len(l) <= 50 for l in lines), [l for l in lines if len(l) > 50]
assert lines[0].startswith("loss - ") and lines[0].endswith(", 12 steps"), lines[0]
PY
LANG=C.UTF-8 "$tfdebug" plot "$run" --width 80 --height 20 >"$work/loss80.txt"
check "a known point on a known cell: step 0's loss 2.0, the maximum, is the top-left dot" $py - "$work/loss80.txt" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
# y ticks 0 .. 2; the top row is labelled 2, its first cell holds the dot of column 0, row 0 (bit 0x01).
row = lines[1]
label, cell = row.split("\u2524")[0], row.split("\u2524")[1][0]
assert label.strip() == "2", row
assert 0x2800 <= ord(cell) <= 0x28FF and (ord(cell) - 0x2800) & 0x01, hex(ord(cell))
# Steps 5..11 are NaN: seven crosses on the x axis, none before step 5's column.
axis = next(l for l in lines if "\u2514" in l)
assert axis.count("\u00d7") == 7, axis
assert lines[-1].strip() == "\u00d7 not finite", lines[-1]
labels = lines[lines.index(axis) + 1].split()
assert labels[0] == "0" and labels[-1] in ("10", "11"), labels
PY

LANG=C LC_ALL=C "$tfdebug" plot "$run" -m grad_norm --width 60 >"$work/ascii.txt"
check "the C locale: ASCII only, two series told apart by glyph, a legend" $py - "$work/ascii.txt" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
assert all(b < 0x80 for b in data), "non-ASCII bytes"
lines = data.decode().splitlines()
assert lines[-1] == "  * fc1  + fc2", lines[-1]  # by module path
assert any("*" in l for l in lines[1:-3]) and any("+" in l for l in lines[1:-3])
PY

"$tfdebug" plot "$run" --list >"$work/list.txt"
check "--list names the metrics and their modules" $py - "$work/list.txt" <<'PY'
import sys
text = open(sys.argv[1]).read()
assert text.splitlines()[0].endswith("metrics.jsonl: 12 steps (0-11)"), text
for metric in ("loss", "grad_norm", "update_ratio", "activations.abs_max", "activations.zero_fraction",
               "activations.nonfinite", "activations.dead_fraction"):
    assert f"\n{metric}  " in text, metric
assert "  fc1  fc2" in text
PY
"$tfdebug" plot "$run" --list --json >"$work/list.json"
check "--list --json" $py -c "
import json; d = json.load(open('$work/list.json'))
assert d['steps'] == 12 and d['metrics'][0] == {'metric': 'loss'}, d
assert d['metrics'][1] == {'metric': 'grad_norm', 'modules': ['fc1', 'fc2']}, d"

# bad_input NAME PATTERN ARGS...: exit 2 and one line on stderr matching PATTERN.
bad_input() {
  local pattern="$1"
  shift
  "$tfdebug" plot "$@" >/dev/null 2>"$work/err.txt"
  local rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$work/err.txt")" -eq 1 ] && grep -qE -- "$pattern" "$work/err.txt" ||
    { echo "rc=$rc: $(cat "$work/err.txt")" >&2; return 1; }
}
check "a mistyped metric: did you mean" bad_input "--metric 'los': .*did you mean 'loss'\?" "$run" -m los
check "a mistyped module: did you mean" bad_input "--module 'fc3': .*did you mean 'fc1'\?" "$run" -m grad_norm --module fc3
check "no such run" bad_input "nowhere: not found" "$work/nowhere"
check "a directory without metrics.jsonl" bad_input "no metrics.jsonl in this directory" "$work"
check "a bad --scale" bad_input "--scale 'cubic': expected auto, linear or log" "$run" --scale cubic
printf '{"step": 0, "loss": "high"}\n' >"$work/bad.jsonl"
check "a metrics line that is not one" bad_input "bad.jsonl: line 1" "$work/bad.jsonl"

# -o: the same series as a picture (viz::save), read back by ffprobe (PNG) and rsvg-convert (SVG).
require ffprobe rsvg-convert
"$tfdebug" plot "$run" -m grad_norm -o "$work/grad.png" >"$work/o.txt"
check "-o: says what it wrote" grep -qx "wrote $work/grad.png: grad_norm of 2 modules over 12 steps" "$work/o.txt"
check "-o FILE.png: an 800 x 500 PNG" bash -c "ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 '$work/grad.png' | grep -qx 'png,800,500'"
"$tfdebug" plot "$run" -o "$work/loss.svg" >/dev/null
check "-o FILE.svg: an SVG that parses as XML and that rsvg renders at its size" bash -c "
  rsvg-convert '$work/loss.svg' -o '$work/loss_svg.png' &&
  ffprobe -v error -show_entries stream=width,height -of csv=p=0 '$work/loss_svg.png' | grep -qx '800,500' &&
  $py -c \"import xml.etree.ElementTree as E; r = E.parse('$work/loss.svg').getroot(); assert r.tag.endswith('svg') and r.get('width').startswith('800'), r.attrib\""
check "-o with another extension: exit 2" bad_input "x.bmp: unknown picture format" "$run" -o "$work/x.bmp"

# stats: the histogram as bars. 10 values in 4 bins over [0, 3]: 3, 2, 1, 4.
$py -c "import struct; open('$work/v.f32', 'wb').write(struct.pack('<10f', 0, 0, 0, 1, 1, 2, 3, 3, 3, 3))"
LANG=C LC_ALL=C COLUMNS=40 "$tfdebug" stats "$work/v.f32" --bins 4 >"$work/stats.txt"
check "stats: one bar a bin, labelled by its range and count, the longest for the fullest" $py - "$work/stats.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
bars = [l for l in lines if l.startswith("  [")]
assert [b.split()[-1] for b in bars] == ["3", "2", "1", "4"], bars
assert [b[:14].rstrip() for b in bars] == ["  [   0, 0.75)", "  [0.75, 1.5)", "  [ 1.5, 2.25)", "  [2.25, 3]"], bars
widths = [b.count("#") for b in bars]
assert all(len(l) <= 40 for l in bars), bars
# 40 columns - 2 indent - 12 (label) - 1 (count) - 2 spaces = 23 cells for 4: 17, 11.5, 5.75 -> 17, 12, 6.
assert widths == [17, 12, 6, 23], widths
PY

finish "cli_plot"
