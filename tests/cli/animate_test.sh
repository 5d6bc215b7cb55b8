#!/usr/bin/env bash
# `tfdebug animate RUN_DIR -o OUT` (docs/animation.md): a run of twelve layers over 200 steps
# (tests/export/write_flow_run.cpp) animated as GIF, WebM and MP4, each decoded back by ffprobe
# (frame count, codec, size, frame duration) and ffmpeg; the small run of tests/export/write_run.cpp
# too; the progress line only on a terminal; and the bad inputs, each a one-line error with exit
# code 2. The pixels of decoded frames are checked in tests/export/gradient_flow_test.cpp.
set -u
tfdebug="$1"
write_flow_run="$2"
write_run="$3"
here="$(dirname "$0")"
source "$here/harness.sh"
require ffprobe ffmpeg script

probe() {  # probe FILE FIELD: a field of the first video stream, every frame decoded
  ffprobe -v error -count_frames -select_streams v:0 -show_entries "stream=$2" \
    -of default=noprint_wrappers=1:nokey=1 "$1"
}
field() {  # field JSON_FILE KEY
  $py -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

"$write_flow_run" "$work/run"
check "the run is written" test -s "$work/run/metrics.jsonl"

"$tfdebug" animate "$work/run" -o "$work/flow.gif" --json >"$work/gif.json" 2>"$work/gif.err"
check "GIF: exit 0" test $? -eq 0
check "GIF: nothing on stderr off a terminal (no progress line)" test ! -s "$work/gif.err"
check "GIF: 151 frames (a 50-step window over 200 steps)" test "$(field "$work/gif.json" frames)" = 151
check "GIF: --json says gif" test "$(field "$work/gif.json" format)" = gif
check "GIF: ffprobe decodes 151 frames" test "$(probe "$work/flow.gif" nb_read_frames)" = 151
check "GIF: 800 x 500" test "$(probe "$work/flow.gif" width)x$(probe "$work/flow.gif" height)" = 800x500
check "GIF: a log colour scale over the run's range" $py - "$work/gif.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["scale"] == "log" and d["metric"] == "grad_norm", d
assert d["modules"] == 12 and d["steps"] == 200 and d["window"] == 50, d
assert 2e-4 < d["lo"] < 3e-4 and 0.99 < d["hi"] < 1.01, d
PY
check "GIF: loops forever (NETSCAPE2.0, count 0)" $py - "$work/flow.gif" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
assert data[:6] == b"GIF89a"
assert b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00" in data
PY

"$tfdebug" animate "$work/run" -o "$work/flow.webm" --window 20 --stride 30 --fps 25 >"$work/webm.txt"
check "WebM: exit 0" test $? -eq 0
check "WebM: the summary names the file and the codec" grep -q "wrote .*flow.webm" "$work/webm.txt"
check "WebM: VP9" test "$(probe "$work/flow.webm" codec_name)" = vp9
check "WebM: 7 frames (a 20-step window every 30 steps)" test "$(probe "$work/flow.webm" nb_read_frames)" = 7
check "WebM: 25 frames a second" test "$(probe "$work/flow.webm" r_frame_rate)" = 25/1

"$tfdebug" animate "$work/run" -o "$work/flow.mp4" --metric update_ratio --size 641x401 --json >"$work/mp4.json"
check "MP4: exit 0" test $? -eq 0
check "MP4: H.264" test "$(probe "$work/flow.mp4" codec_name)" = h264
check "MP4: an odd size padded to even" test "$(probe "$work/flow.mp4" width)x$(probe "$work/flow.mp4" height)" = 642x402
check "MP4: the update ratio" test "$(field "$work/mp4.json" metric)" = update_ratio
check "MP4: --json names the encoder" test "$(field "$work/mp4.json" codec)" = libx264
check "MP4: ffprobe decodes every frame" test "$(probe "$work/flow.mp4" nb_read_frames)" = "$(field "$work/mp4.json" frames)"

"$write_run" "$work/small" >/dev/null
"$tfdebug" animate "$work/small/run" -o "$work/small.gif" --window 5 --fps 4 >/dev/null
check "small run: 8 frames (a 5-step window over 12 steps)" test "$(probe "$work/small.gif" nb_read_frames)" = 8
check "small run: 250 ms a frame" test "$(ffprobe -v error -select_streams v:0 -show_entries packet=duration_time \
  -of csv=p=0 "$work/small.gif" | sort -u)" = 0.250000

script -qec "'$tfdebug' animate '$work/small/run' -o '$work/tty.webm' --window 5" /dev/null >"$work/tty.txt"
check "on a terminal: a progress line" grep -q "encoding frame 8 of 8 (100%)" "$work/tty.txt"

"$tfdebug" animate --help >"$work/help.txt"
check "--help names the formats and options" bash -c "grep -q '.webm' '$work/help.txt' && grep -q -- '--window' '$work/help.txt' && grep -q -- '--metric' '$work/help.txt'"
"$tfdebug" --help >"$work/tophelp.txt"
check "tfdebug --help lists animate" grep -q "^  animate " "$work/tophelp.txt"

# Bad input: exit 2, one line on stderr naming the file or option and what was expected.
bad() {  # bad NAME EXPECTED_TEXT ARGS...
  local name="$1" expected="$2"
  shift 2
  "$tfdebug" animate "$@" >"$work/out.txt" 2>"$work/err.txt"
  local rc=$?
  check "$name: exit 2" test "$rc" -eq 2
  check "$name: one line" test "$(wc -l <"$work/err.txt")" -eq 1
  check "$name: says '$expected'" grep -qF -- "$expected" "$work/err.txt"
}
bad "an unknown extension" "$work/flow.avi: unknown animation extension '.avi'; expected .gif, .webm or .mp4" \
  "$work/run" -o "$work/flow.avi"
bad "no run directory" "$work/none: not found: expected a run directory (with metrics.jsonl) or a metrics.jsonl file" \
  "$work/none" -o "$work/x.gif"
mkdir -p "$work/empty"
bad "a run without metrics.jsonl" "$work/empty/metrics.jsonl: not found" "$work/empty" -o "$work/x.gif"
bad "an unwritable output" "/nonexistent-dir/x.gif: cannot open for writing" "$work/run" -o /nonexistent-dir/x.gif
bad "an unwritable video" "/nonexistent-dir/x.mp4: cannot open for writing" "$work/run" -o /nonexistent-dir/x.mp4
bad "--window 0" "--window" "$work/run" -o "$work/x.gif" --window 0
bad "an unknown metric" "--metric" "$work/run" -o "$work/x.gif" --metric loss
bad "a bad --size" "--size '10x10': expected WIDTHxHEIGHT in pixels" "$work/run" -o "$work/x.gif" --size 10x10
bad "a bad --fps" "--fps 0: expected a frame rate above 0 and at most 100" "$work/run" -o "$work/x.gif" --fps 0
mkdir -p "$work/badline"
printf '{"step": 0, "loss": 1, "modules": {"fc": {"grad_norm": "x"}}}\n' >"$work/badline/metrics.jsonl"
bad "a bad metrics line" "$work/badline/metrics.jsonl: line 1: field 'modules.fc.grad_norm': expected a number or null" \
  "$work/badline" -o "$work/x.gif"
check "no file left for the bad inputs" test ! -e "$work/x.gif"

finish "animate"
