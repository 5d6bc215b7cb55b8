#!/usr/bin/env bash
# Careless input and lost output (issue 17): mistyped subcommands and options, a --filter or a
# regress that matches nothing, file names that start with '-', absurd numbers, and standard
# output that cannot be written (/dev/full). Each is exit 2 with one line naming what went wrong.
set -u
tfdebug="$1"
source "$(dirname "$0")/harness.sh"

# expect CODE PATTERN ARGS...: tfdebug exits CODE, its stderr is exactly one line, and that line
# holds PATTERN (a fixed string).
expect() {
  local code="$1" pattern="$2"
  shift 2
  "$tfdebug" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  local lines
  lines=$(wc -l <"$work/err")
  if [ "$got" -ne "$code" ]; then
    echo "  exit $got, expected $code for: tfdebug $*"
    cat "$work/err"
    return 1
  fi
  if [ "$lines" -ne 1 ]; then
    echo "  stderr has $lines lines, expected one, for: tfdebug $*"
    cat "$work/err"
    return 1
  fi
  grep -qF -- "$pattern" "$work/err" || { echo "  no '$pattern' in: $(cat "$work/err")"; return 1; }
}

cd "$work" || exit 1
$py - <<'PY'
import json, struct, numpy as np
def safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        raw = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw); offset += len(raw)
    text = json.dumps(header).encode(); text += b" " * ((8 - len(text) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
t = {f"layers.{i}.w": np.full((3, 3), i, np.float32) for i in range(4)}
safetensors("m.safetensors", t)
safetensors("-weird.safetensors", t)
np.arange(12, dtype=np.float32).tofile("-w.f32")
np.arange(12, dtype=np.float32).tofile("w.f32")
def bench(path, names):
    rows = [{"name": n, "run_name": n, "run_type": "iteration", "real_time": 100.0 + r, "cpu_time": 100.0 + r,
             "time_unit": "ns"} for n in names for r in range(5)]
    json.dump({"benchmarks": rows}, open(path, "w"))
bench("base.json", ["a/1", "b/2"])
bench("-base.json", ["a/1", "b/2"])
bench("other.json", ["c/3", "d/4"])
events = [{"ph": "X", "name": "step", "ts": 0, "dur": 10, "pid": 1, "tid": 1}]
json.dump({"traceEvents": events}, open("t.json", "w"))
json.dump({"traceEvents": events}, open("-t.json", "w"))
PY
# A one-node ONNX graph for `graph`, under a name that starts with '-'.
$py -c "
import onnx; from onnx import helper, TensorProto
x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [2]); y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [2])
onnx.save(helper.make_model(helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g', [x], [y])), '-g.onnx')"

# Mistyped subcommands and options.
check "a mistyped subcommand is named, with the one meant" \
  expect 2 "tfdebug: error: unknown subcommand 'inspec' — did you mean 'inspect'?" inspec m.safetensors
check "a swapped pair of letters is one edit" expect 2 "did you mean 'graph'?" grpah -g.onnx
check "a subcommand far from every name lists them" \
  expect 2 "unknown subcommand 'frobnicate'; the subcommands are inspect, scan, diff, graph" frobnicate
"$tfdebug" >"$work/out" 2>"$work/err"
check "tfdebug alone is a usage error" test $? -eq 2
check "tfdebug alone prints the usage" grep -q "^Usage: tfdebug" "$work/err"
check "a mistyped long option is named, with the one meant" \
  expect 2 "tfdebug: error: unknown option '--jsn' — did you mean '--json'?" inspect m.safetensors --jsn
check "the same with --option=value" expect 2 "unknown option '--bnis=3' — did you mean '--bins'?" stats w.f32 --bnis=3
check "diff's options are the ones suggested" expect 2 "did you mean '--rtol'?" diff m.safetensors m.safetensors --rtl 1
check "an option far from every name points at --help" \
  expect 2 "unknown option '--zzzzzz' (tfdebug stats --help lists the options)" stats w.f32 --zzzzzz
check "an argument too many is named" expect 2 "unexpected argument 'extra'" stats w.f32 extra

# A --filter that matches nothing is an error, not an empty report.
check "inspect --filter matching nothing names the pattern and the count" \
  expect 2 "--filter 'layer.*' matches none of the 4 tensor names in m.safetensors" inspect m.safetensors --filter 'layer.*'
check "the same with --json" expect 2 "matches none of the 4 tensor names" inspect m.safetensors --filter 'x*' --json
check "diff --filter matching nothing" \
  expect 2 "--filter 'x*' matches none of the 4 tensor names in m.safetensors nor the 4 in ./-weird.safetensors" \
  diff m.safetensors ./-weird.safetensors --filter 'x*'
"$tfdebug" inspect m.safetensors --filter 'layers.1.*' --json >"$work/f.json" 2>"$work/err"
check "a matching --filter exits 0 with its tensors" $py -c "
import json; t = [x['name'] for x in json.load(open('$work/f.json'))['tensors']]; assert t == ['layers.1.w'], t"

# regress with nothing in common compares nothing: it must not pass.
check "regress of two files without a benchmark in common" \
  expect 2 "nothing matched: none of the 2 names in other.json (e.g. 'c/3') is among the 2 in base.json" \
  regress base.json other.json
check "the same with --json" expect 2 "nothing matched" regress base.json other.json --json
"$tfdebug" regress base.json base.json >/dev/null 2>&1
check "regress of a file against itself still exits 0" test $? -eq 0

# File names that start with '-'.
check "a file named like an option gets the hint" \
  expect 2 "unknown option '-weird.safetensors'; to open a file whose name starts with '-', write \`-- -weird.safetensors\` or \`./-weird.safetensors\`" \
  inspect -weird.safetensors
check "the hint also for a file that does not exist but looks like one" \
  expect 2 "write \`-- -nope.bin\`" stats -nope.bin
for cmd in "inspect -- -weird.safetensors" "inspect --json -- -weird.safetensors" \
           "diff -- -weird.safetensors m.safetensors" "diff m.safetensors -- -weird.safetensors" \
           "stats -- -w.f32" "stats --bins 4 -- -w.f32" "graph -- -g.onnx" "trace -- -t.json" \
           "regress -- -base.json base.json"; do
  # shellcheck disable=SC2086
  "$tfdebug" $cmd >"$work/out" 2>"$work/err"
  code=$?
  check "tfdebug $cmd opens the file (exit $code)" test "$code" -le 1 -a ! -s "$work/err"
done
"$tfdebug" stats --json -- -w.f32 >"$work/s.json"
check "stats -- -w.f32 reads that file" $py -c "
import json; j = json.load(open('$work/s.json')); assert j['file'] == '-w.f32' and j['stats']['count'] == 12, j"

# Absurd numbers are bounded before anything is allocated.
check "stats --bins 2000000000" expect 2 "--bins must be between 1 and 1000000, got 2000000000" stats w.f32 --bins 2000000000
check "stats --bins 0" expect 2 "--bins must be between 1 and 1000000, got 0" stats w.f32 --bins 0
check "stats --bins beyond int" expect 2 "--bins" stats w.f32 --bins 99999999999999
check "stats --bins not a number" expect 2 "--bins" stats w.f32 --bins many
check "stats --threads 100000" expect 2 "--threads must be between 0 (one per core) and 1024, got 100000" stats w.f32 --threads 100000
check "stats --threads -3" expect 2 "--threads must be between 0 (one per core) and 1024, got -3" stats w.f32 --threads -3
check "inspect --threads 100000" expect 2 "--threads must be between 0 (one per core) and 1024" inspect m.safetensors --threads 100000
check "stats --offset -1" expect 2 "--offset" stats w.f32 --offset -1
check "stats --offset 2^64-1" expect 2 "--offset 18446744073709551615 is past the end" stats w.f32 --offset 18446744073709551615
check "stats --shape with a huge product" expect 2 "--shape" stats w.f32 --shape 4294967296,4294967296,4294967296
check "stats --quantiles outside [0, 1]" expect 2 "--quantiles" stats w.f32 --quantiles 2
check "diff --rtol nan" expect 2 "--rtol and --atol must be non-negative" diff m.safetensors m.safetensors --rtol nan
check "graph --depth -5" expect 2 "--depth must be 0 or more" graph --depth -5 -- -g.onnx
check "regress --alpha 5" expect 2 "--alpha must be between 0 and 1" regress base.json base.json --alpha 5
check "regress --threshold -1" expect 2 "--threshold must be a percentage" regress base.json base.json --threshold -1
check "trace --top -1" expect 2 "--top" trace t.json --top -1

# Output that cannot be written is an error, not a silent exit 0.
to_full() {  # to_full ARGS...: tfdebug ARGS >/dev/full exits 2 with the one-line reason
  "$tfdebug" "$@" >/dev/full 2>"$work/err"
  local got=$?
  [ "$got" -eq 2 ] || { echo "  exit $got for: tfdebug $* >/dev/full"; return 1; }
  [ "$(wc -l <"$work/err")" -eq 1 ] || { cat "$work/err"; return 1; }
  grep -qF "tfdebug: error: cannot write to standard output: No space left on device" "$work/err" ||
    { cat "$work/err"; return 1; }
}
for cmd in "inspect m.safetensors" "inspect --json m.safetensors" "diff m.safetensors -- -weird.safetensors" \
           "diff --json m.safetensors m.safetensors" "stats w.f32" "stats --json w.f32" "graph -- -g.onnx" \
           "dtypes" "dtypes --json" "doctor" "doctor --json" "--help" "stats --help" "--version" \
           "trace t.json" "trace --json t.json" "regress base.json base.json" "regress --json base.json base.json"; do
  # shellcheck disable=SC2086
  check "tfdebug $cmd >/dev/full" to_full $cmd
done
"$tfdebug" inspect m.safetensors --fail-on info >/dev/full 2>/dev/null
check "lost output outranks findings (exit 2, not 1)" test $? -eq 2

finish "careless input"
