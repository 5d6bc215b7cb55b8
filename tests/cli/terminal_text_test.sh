#!/usr/bin/env bash
# What a terminal shows (docs/cli.md, "Colour, width and counts"): findings errors first with a
# count per severity, plurals, tables that fit COLUMNS with names elided in the middle, no escape
# code under NO_COLOR / TERM=dumb / --color never, escape codes with --color always, metadata in
# the text output (GGUF, safetensors, PyTorch), the range used and its headroom. A real terminal
# comes from script(1) (util-linux), which runs the command on a pseudo-terminal, and tmux.
set -u
tfdebug="$1"
fx="$2"
source "$(dirname "$0")/harness.sh"
require script tmux
unset COLUMNS NO_COLOR
export TERM=xterm-256color

# A checkpoint with long names, written here (numpy and the safetensors layout by hand).
$py - "$work" <<'PY'
import json, struct, sys
import numpy as np
names = ["model.layers.10.self_attention.query_key_value.weight", "model.layers.10.mlp.dense_h_to_4h.weight",
         "lm_head.weight"]
header, blobs, offset = {}, [], 0
for i, name in enumerate(names):
    raw = (np.arange(8, dtype=np.float32) - i).reshape(2, 4).tobytes()
    header[name] = {"dtype": "F32", "shape": [2, 4], "data_offsets": [offset, offset + len(raw)]}
    blobs.append(raw)
    offset += len(raw)
header["__metadata__"] = {"format": "pt", "note": "long names"}
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
open(f"{sys.argv[1]}/long.safetensors", "wb").write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
np.array([0.5, -2.0, 16.0], dtype=np.float32).tofile(f"{sys.argv[1]}/three.f32")
PY

# --- Findings: errors first, then warnings, then info (each in the order found), counted.
"$tfdebug" inspect "$fx/model.safetensors" --target-dtype f16 >"$work/model.txt"
"$tfdebug" inspect "$fx/model.safetensors" --target-dtype f16 --json >"$work/model.json"
check "inspect: findings sorted by severity under an exact count per severity" $py - "$work" <<'PY'
import json, sys
work = sys.argv[1]
found = json.load(open(f"{work}/model.json"))["findings"]
rank = {"error": 0, "warning": 1, "info": 2}
want = [(f["severity"], f["rule"]) for f in sorted(found, key=lambda f: rank[f["severity"]])]  # stable
lines = open(f"{work}/model.txt").read().splitlines()
got = [tuple(l.split()[:2]) for l in lines if l.startswith(("  error ", "  warning ", "  info "))]
assert got == want, (got, want)
assert want[:2] == [("error", "nonfinite"), ("error", "target_overflow")], want
assert "8 findings: 2 errors, 4 warnings, 2 info" in lines, lines
PY

# --- Plurals: one of a thing is singular; "info" has no plural.
"$tfdebug" inspect "$fx/c_f4.npy" >"$work/one.txt"
check "1 tensor (singular), no findings" bash -c "sed -n 2p '$work/one.txt' | grep -qx '1 tensor, 12 parameters' && grep -qx 'no findings' '$work/one.txt'"
"$tfdebug" diff "$fx/model.safetensors" "$fx/model_b.safetensors" >"$work/diff.txt"
check "diff: 1 shape change, 1 dtype change" grep -q "; 1 only in a, 1 only in b, 1 shape change, 1 dtype change$" "$work/diff.txt"
"$tfdebug" scan "$fx/pickles/evil/state_dict_reduce.pt" >"$work/scan.txt"
check "scan: 1 file: 1 error, 0 warnings" grep -qx "1 file: 1 error, 0 warnings, 0 unreadable, 0 clean, 0 skipped" "$work/scan.txt"
check "scan: the error global comes before the safe ones" $py - "$work/scan.txt" <<'PY'
import sys
words = [l.split()[0] for l in open(sys.argv[1]) if l.startswith("    ")]
assert words == ["error", "safe", "safe", "safe"], words
PY

# --- Width: COLUMNS=60 elides long names in the middle and leaves out optional columns.
COLUMNS=60 "$tfdebug" inspect "$work/long.safetensors" >"$work/narrow.txt"
check "COLUMNS=60: every line fits, names keep their start and end" $py - "$work/narrow.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
assert all(len(l) <= 60 for l in lines), [l for l in lines if len(l) > 60]
rows = [l.split()[0] for l in lines if l.startswith("  model.") or l.startswith("  lm_head")]
assert rows == ["model.layers.…_value.weight", "model.layers.…_to_4h.weight", "lm_head.weight"], rows
assert "  name                         dtype  shape  params  abs max" in lines, lines
assert "  (mean, std, zero, histogram left out to fit 60 columns; a" in lines, lines
PY
"$tfdebug" inspect "$work/long.safetensors" >"$work/wide.txt"
check "not a terminal: no limit, names whole" bash -c "grep -q '^  model.layers.10.self_attention.query_key_value.weight  f32 ' '$work/wide.txt' && ! grep -q '…' '$work/wide.txt'"
# Without COLUMNS, a terminal's own width (TIOCGWINSZ): a tmux window 70 columns wide; a
# pseudo-terminal that reports no size (script's, 0x0) gets 80.
socket="tfdebug_text_$$"
tmux -L "$socket" new-session -d -x 70 -y 40 -s text \
  "'$tfdebug' inspect '$work/long.safetensors'; tmux -L '$socket' wait-for -S printed; sleep 30"
timeout 20 tmux -L "$socket" wait-for printed
tmux -L "$socket" capture-pane -p -t text >"$work/tmux70.txt"
tmux -L "$socket" kill-server
check "a 70-column tmux window: the table fits 70 columns" $py - "$work/tmux70.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
assert "  name                             dtype  shape  params  abs max  mean" in lines, lines
assert "  model.layers.10…ey_value.weight  f32    [2,4]       8        7   3.5" in lines, lines
assert max(len(l) for l in lines) <= 70, lines
PY
script -qec "'$tfdebug' inspect '$work/long.safetensors'" /dev/null </dev/null | tr -d '\r' >"$work/tty80.txt"
check "a terminal that reports no width: 80 columns" $py - "$work/tty80.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
table = [l for l in lines if l.startswith("  model.") or l.startswith("  name ")]
assert table and max(len(l) for l in table) == 80, table
assert all("…" in l for l in table[1:]), table
PY
COLUMNS=60 "$tfdebug" inspect "$fx/model.safetensors" >"$work/narrow_findings.txt"
check "COLUMNS=60: finding lines wrap under their text" $py - "$work/narrow_findings.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
i = lines.index("  error    nonfinite layers.0.attn.q.weight: 1 NaN, 1 +Inf,")
assert lines[i + 1] == "           0 -Inf; first at [2, 3]", lines[i:i + 4]
assert lines[i + 2].startswith("           → the checkpoint was saved"), lines[i:i + 4]
assert all(len(l) <= 60 for l in lines[i:]), [l for l in lines if len(l) > 60]
PY

# --- Colour: escape codes only where wanted. On a pseudo-terminal, auto colours...
on_tty() { script -qec "$1" /dev/null; }
has_esc() { grep -q $'\033\\[' "$1"; }
no_esc() { ! grep -q $'\033' "$1"; }
for cmd in "inspect $fx/model.safetensors" "stats $work/three.f32 --target-dtype f16" \
  "diff $fx/model.safetensors $fx/model_b.safetensors" "scan $fx/pickles/evil/state_dict_reduce.pt" "doctor"; do
  name=${cmd%% *}
  on_tty "'$tfdebug' $cmd" >"$work/tty_$name.txt"
  check "$name on a terminal: colour" has_esc "$work/tty_$name.txt"
  NO_COLOR=1 on_tty "'$tfdebug' $cmd" >"$work/nocolor_$name.txt"
  check "$name on a terminal with NO_COLOR=1: no escape code" no_esc "$work/nocolor_$name.txt"
  TERM=dumb on_tty "'$tfdebug' $cmd" >"$work/dumb_$name.txt"
  check "$name on a terminal with TERM=dumb: no escape code" no_esc "$work/dumb_$name.txt"
  on_tty "'$tfdebug' --color never $cmd" >"$work/never_$name.txt"
  check "$name --color never (before the subcommand) on a terminal: no escape code" no_esc "$work/never_$name.txt"
  on_tty "'$tfdebug' $cmd --color=never" >"$work/never2_$name.txt"
  check "$name --color=never (after it): no escape code" no_esc "$work/never2_$name.txt"
  "$tfdebug" $cmd --color always >"$work/always_$name.txt" 2>&1
  check "$name --color always into a file: escape codes" has_esc "$work/always_$name.txt"
  NO_COLOR=1 "$tfdebug" $cmd --color always >"$work/always_nc_$name.txt" 2>&1
  check "$name --color always wins over NO_COLOR" has_esc "$work/always_nc_$name.txt"
  "$tfdebug" $cmd >"$work/pipe_$name.txt" 2>&1
  check "$name into a file (auto): no escape code" no_esc "$work/pipe_$name.txt"
done
check "--color always paints the error severity word bold red" grep -q $'  \033\\[1;31merror  \033\\[0m  nonfinite' "$work/always_inspect.txt"
"$tfdebug" --color sometimes inspect "$fx/c_f4.npy" >/dev/null 2>"$work/err"
check "--color sometimes exits 2" test $? -eq 2
check "with a one-line reason" grep -qx "tfdebug: error: --color must be auto, always or never, not 'sometimes'" "$work/err"

"$tfdebug" inspect "$fx/c_f4.npy" --colr never >/dev/null 2>"$work/err"
check "a mistyped --color after the subcommand is suggested" \
  grep -qx "tfdebug: error: unknown option '--colr' — did you mean '--color'?" "$work/err"

# --- Metadata in the text output.
"$tfdebug" inspect "$fx/llama_q8.gguf" >"$work/gguf.txt"
check "GGUF: the architecture, then its hyper-parameters, then the rest" $py - "$work/gguf.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
i = lines.index("metadata (7 keys)")
assert lines[i + 1:i + 8] == [
    "  general.architecture           llama",
    "  llama.attention.head_count     4",
    "  llama.attention.head_count_kv  2",
    "  llama.block_count              2",
    "  llama.embedding_length         64",
    "  general.file_type              7",
    "  gguf.version                   3"], lines[i:i + 8]
PY
check "safetensors: __metadata__" bash -c "grep -qx '  format  pt' '$work/model.txt' && grep -qx '  source  make_fixtures.py' '$work/model.txt'"
"$tfdebug" inspect "$fx/torch/nested.pt" >"$work/nested.txt"
check "PyTorch: a training checkpoint's entries that are not tensors" $py - "$work/nested.txt" <<'PY'
import sys, re
lines = open(sys.argv[1]).read().splitlines()
assert "entries that are not tensors (15 values)" in lines, lines
rows = dict(re.split(r"\s{2,}", l.strip(), maxsplit=1) for l in lines if l.startswith("  ") and "  " in l.strip())
assert rows["epoch"] == "3" and rows["lr"] == "0.5" and rows["run"] == "run1", rows
assert rows["optimizer.param_groups.0.betas.1"] == "0.999", rows
assert any(l.startswith("  optimizer.state.0.exp_avg ") for l in lines), lines  # its tensors, in the table
PY
"$tfdebug" inspect "$fx/torch/training_checkpoint.pt" >"$work/training.txt"
check "PyTorch: pickled objects it does not read are named" grep -q "^  objects not read  .*argparse.Namespace.*torch.device" "$work/training.txt"

# --- The range used, and a headroom where a bigger number means more room.
"$tfdebug" stats "$work/three.f32" --target-dtype f16 >"$work/stats.txt"
check "stats: the range used, and its headroom (65504 / 16 = 4094x)" $py - "$work/stats.txt" <<'PY'
import re, sys
rows = dict(re.split(r"\s{2,}", l.strip(), maxsplit=1) for l in open(sys.argv[1]) if l.startswith("  "))
assert rows["range used"] == "4.701978e-36% of f32's range, 2.126765e+37x headroom", rows
assert rows["as f16"] == ("0.02442599% of f16's range, 4094x headroom, overflow 0 (0%), flush to zero 0 (0%), "
                          "subnormal 0"), rows
PY
"$tfdebug" stats "$work/three.f32" --target-dtype f16 --json >"$work/stats.json"
check "stats --json: range_used, and no field called headroom any more" $py - "$work/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["stats"]
assert s["range_used"] == 16 / 3.4028234663852886e38 and s["target"]["range_used"] == 16 / 65504, s
assert "headroom" not in s and "headroom" not in s["target"], s
PY

finish "terminal text"
