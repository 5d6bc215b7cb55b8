#!/usr/bin/env bash
# tfdebug report RUN_DIR --plots: the pictures of a debugged run (tests/export/write_run.cpp: fc1's
# ReLU dead from the start, fc2's log NaN from step 5), decoded by ffmpeg and read by Python.
# Usage: run_plots_test.sh TFDEBUG WRITE_RUN
set -uo pipefail
tfdebug="$1"
write_run="$2"
source "$(dirname "$0")/harness.sh"
require ffmpeg

png_size() { $py -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(*struct.unpack(">II", d[16:24]))' "$1"; }
pixels_near() {
  ffmpeg -loglevel error -i "$1" -f rawvideo -pix_fmt rgb24 - |
    $py -c 'import sys
d=sys.stdin.buffer.read(); r,g,b=map(int,sys.argv[1:4])
print(sum(1 for i in range(0,len(d),3) if abs(d[i]-r)+abs(d[i+1]-g)+abs(d[i+2]-b)<=40))' "$2" "$3" "$4"
}

"$write_run" "$work/full" >/dev/null
out=$("$tfdebug" report "$work/full/run" --plots "$work/plots")
check "report --plots exits 1 (the run has errors)" [ $? -eq 1 ]
check "it says what it drew" grep -qx "plots: 7 pictures in $work/plots (12 steps, 2 modules)" <<<"$out"
for f in loss grad_norm grad_norm_top gradient_flow update_ratio activations dead_units; do
  check "$f.png is a PNG" [ "$(head -c 8 "$work/plots/$f.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ]
done
check "the loss plot is 900 x 420" [ "$(png_size "$work/plots/loss.png")" = "900 420" ]
# Steps 5 to 11 have a NaN loss: a vermillion mark under each of the 7.
check "NaN losses are marked, not drawn" [ "$(pixels_near "$work/plots/loss.png" 213 94 0)" -gt 100 ]
# fc1's ReLU is dead from the start: its dead fraction is 1 in every step, viridis' yellow.
check "the dead fc1 is a yellow row of dead_units.png" [ "$(pixels_near "$work/plots/dead_units.png" 253 231 37)" -gt 5000 ]
"$tfdebug" report "$work/full/run" --plots "$work/svg" --plot-format svg --json >"$work/json" 2>"$work/err"
check "--json stays one JSON document" $py -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/json"
check "SVG pictures parse" $py -c 'import sys,xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$work/svg/grad_norm.svg"

"$write_run" "$work/killed" --kill-after 7 >/dev/null 2>&1
out=$("$tfdebug" report "$work/killed/run" --plots "$work/killed_plots")
# The metrics sink is queued, so the killed run has between 1 and 8 of its steps on disk.
lines=$(wc -l <"$work/killed/run/metrics.jsonl")
check "a killed run is drawn too, up to its last written step" grep -q "^plots: 7 pictures in $work/killed_plots ($lines steps" <<<"$out"

mkdir -p "$work/empty"
"$tfdebug" report "$work/empty" --plots "$work/x" >/dev/null 2>"$work/err"
check "not a run directory: exit 2" [ $? -eq 2 ]
finish "cli_run_plots"
