#!/usr/bin/env bash
# tfdebug inspect --plots: the figures of a checkpoint, checked by an independent decoder (ffmpeg
# turns each PNG into raw RGB that Python reads): which files, their sizes, and that the panel of
# the tensor holding a NaN says so (vermillion note) while a clean layer's does not.
# Usage: plots_test.sh TFDEBUG FIXTURES_DIR
set -uo pipefail
tfdebug="$1"
fixtures="$2"
source "$(dirname "$0")/harness.sh"
require ffmpeg
here="$(dirname "$0")"

# width height of a PNG (its IHDR chunk)
png_size() { $py -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(*struct.unpack(">II", d[16:24]))' "$1"; }
# how many pixels of the PNG are within 40 (sum of |channel differences|) of R G B
pixels_near() {
  ffmpeg -loglevel error -i "$1" -f rawvideo -pix_fmt rgb24 - |
    $py -c 'import sys
d=sys.stdin.buffer.read(); r,g,b=map(int,sys.argv[1:4])
print(sum(1 for i in range(0,len(d),3) if abs(d[i]-r)+abs(d[i+1]-g)+abs(d[i+2]-b)<=40))' "$2" "$3" "$4"
}

$py "$here/make_deep_model.py" "$work/deep.safetensors" 100
out=$("$tfdebug" inspect "$work/deep.safetensors" --plots "$work/plots")
check "inspect --plots exits 0" [ $? -eq 0 ]
check "it says what it drew" grep -qx "plots: 66 pictures in $work/plots (histograms of 193 tensors; 64 of 100 layers)" <<<"$out"
check "64 layer figures, spread from the first layer to the last" \
  [ "$(ls "$work/plots" | grep -c '^layer_[0-9]*\.png$')" = 64 ]
check "the first and the last layer are drawn" [ -f "$work/plots/layer_000.png" -a -f "$work/plots/layer_099.png" ]
check "depth.png and other.png" [ -f "$work/plots/depth.png" -a -f "$work/plots/other.png" ]
check "a layer figure is 3 panels of 360 x 240 under a title" [ "$(png_size "$work/plots/layer_003.png")" = "1080 276" ]
check "the depth plot is 900 x 420" [ "$(png_size "$work/plots/depth.png")" = "900 420" ]
check "layer 3 (NaN and +inf planted) carries the vermillion note" [ "$(pixels_near "$work/plots/layer_003.png" 213 94 0)" -gt 20 ]
check "layer 4 (clean) has no vermillion" [ "$(pixels_near "$work/plots/layer_004.png" 213 94 0)" -eq 0 ]
check "the histograms are drawn in the palette's blue" [ "$(pixels_near "$work/plots/layer_004.png" 38 133 189)" -gt 500 ]

out=$("$tfdebug" inspect "$fixtures/llama_q8.gguf" --plots "$work/q8" --plot-format svg --json 2>"$work/q8.err")
check "--json keeps stdout JSON" $py -c 'import json,sys; json.loads(sys.argv[1])' "$out"
check "--plots reports on stderr under --json" grep -q "^plots: 4 pictures" "$work/q8.err"
check "block-quantised tensors are decoded for their histograms (SVG parses, rsvg renders it)" \
  $py -c 'import sys,xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$work/q8/layer_000.svg"
require rsvg-convert
check "rsvg-convert renders the SVG" rsvg-convert -o "$work/q8.png" "$work/q8/layer_000.svg"

touch "$work/a_file"
"$tfdebug" inspect "$fixtures/model.safetensors" --plots "$work/a_file" >/dev/null 2>"$work/err"
check "--plots onto a file: exit 2" [ $? -eq 2 ]
check "the error names the folder" grep -q "a_file: cannot create the folder" "$work/err"
"$tfdebug" inspect "$fixtures/model.safetensors" --plots "$work/x" --plot-format gif >/dev/null 2>"$work/err"
check "--plot-format gif: exit 2" [ $? -eq 2 ]

# tfdebug heatmap: attention probabilities [batch, heads, queries, keys] with token labels.
$py "$here/make_attention.py" "$work"
out=$("$tfdebug" heatmap "$work/attn.npy" --labels "$work/tokens.txt" --index 1 -o "$work/attn.png")
check "heatmap exits 0" [ $? -eq 0 ]
check "heatmap says what it drew" grep -qx "heatmap: $work/attn.png (4 panels of 10 x 10)" <<<"$out"
check "4 heads side by side: 1920 x 460" [ "$(png_size "$work/attn.png")" = "1920 460" ]
# Causal attention: the first query attends only to the first key (p = 1, viridis' yellow) in
# every head, so at least 4 cells of some 30 x 30 pixels are yellow.
check "the first query's cell is yellow in every head" [ "$(pixels_near "$work/attn.png" 253 231 37)" -gt 3000 ]
check "masked cells (p = 0) are viridis' purple" [ "$(pixels_near "$work/attn.png" 68 1 84)" -gt 20000 ]
"$tfdebug" heatmap "$work/signed.npy" -o "$work/signed.svg" >/dev/null
check "a signed matrix: the diverging map's white middle is in the SVG" grep -q "rgb(96[0-9.]*%,96[0-9.]*%,96[0-9.]*%)\|#f7f7f7\|rgb(247,247,247)" "$work/signed.svg"
"$tfdebug" heatmap "$work/attn.npy" --index 2 -o "$work/x.png" 2>"$work/err"
check "--index past the batch: exit 2" [ $? -eq 2 ]
check "the error says the batch size" grep -q "outside the batch of 2" "$work/err"
printf 'a\nb\n' >"$work/two.txt"
"$tfdebug" heatmap "$work/attn.npy" --labels "$work/two.txt" -o "$work/x.png" 2>"$work/err"
check "labels that do not match: exit 2" [ $? -eq 2 ]
check "the error counts them" grep -q "2 labels for a 10 x 10 matrix" "$work/err"
"$tfdebug" heatmap "$fixtures/compressed.npz" -o "$work/x.png" 2>"$work/err"
check "several tensors and no --tensor: exit 2" [ $? -eq 2 ]
check "the error lists them" grep -q "holds 3 tensors; choose one with --tensor (w, b, arr_0)" "$work/err"
"$tfdebug" heatmap "$fixtures/compressed.npz" --tensor W -o "$work/x.png" 2>"$work/err"
check "a mistyped --tensor gets a did-you-mean" grep -q "no tensor named .W.; did you mean .w.?" "$work/err"
"$tfdebug" heatmap "$work/attn.npy" -o "$work/x.jpg" 2>"$work/err"
check "-o x.jpg: exit 2" [ $? -eq 2 ]
finish "cli_plots"
