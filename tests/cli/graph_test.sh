#!/usr/bin/env bash
# End-to-end tests of `tfdebug graph` on a tiny transformer exported to ONNX by torch
# (tests/io/make_torch_fixtures.py) and, in a build with LibTorch, on the demo transformer traced
# (--demo): Graphviz's dot parses the DOT, python3-onnx agrees with the JSON's nodes and shapes
# and checks the ONNX we write, an independent reader (tests/export/read_tfevents.py) decodes the
# TensorBoard graph.
set -u
tfdebug="$1"
fx="$2"
source "$(dirname "$0")/harness.sh"
require dot
require_python onnx numpy
model="$fx/torch/tiny_transformer.onnx"

"$tfdebug" graph "$model" -o "$work/g.dot" 2>/dev/null
check "graph writes DOT" test $? -eq 0
check "Graphviz's dot parses it" dot -Tsvg "$work/g.dot" -o "$work/check.svg"
check "the two identical blocks are drawn once, marked ×2" bash -c "grep -q 'cluster_blocks.0.attn' '$work/g.dot' && grep -q 'blocks.0 … blocks.1  ×2' '$work/g.dot' && ! grep -q 'cluster_blocks.1' '$work/g.dot'"
"$tfdebug" graph "$model" --expand-repeats -o "$work/all.dot" 2>/dev/null
check "--expand-repeats draws both, clusters following the module scopes" bash -c "grep -q 'cluster_blocks.0.attn' '$work/all.dot' && grep -q 'cluster_blocks.1.mlp' '$work/all.dot'"
check "Graphviz's dot parses the expanded graph" dot -Tsvg "$work/all.dot" -o "$work/check.svg"
"$tfdebug" graph "$model" --depth 1 -o "$work/d1.dot" 2>/dev/null
check "--depth 1 draws blocks.0.attn as one node" grep -qF '"m:blocks.0.attn" [shape=box3d' "$work/d1.dot"
check "--depth 1 draws no cluster below the first level" bash -c "! grep -q 'cluster_blocks.0.attn' '$work/d1.dot' && dot -Tsvg '$work/d1.dot' -o '$work/check.svg'"
"$tfdebug" graph "$model" -o "$work/g.svg" 2>/dev/null
check "graph renders SVG through dot" bash -c "head -c 400 '$work/g.svg' | grep -q '<svg'"
"$tfdebug" graph "$model" -o "$work/g.json" 2>/dev/null
check "JSON nodes, edges and shapes agree with python3-onnx" /usr/bin/python3 - "$work/g.json" "$model" <<'PY'
import json, sys, onnx
j = json.load(open(sys.argv[1]))
m = onnx.load(sys.argv[2])
g = m.graph
assert len(j["nodes"]) == len(g.node), (len(j["nodes"]), len(g.node))
assert [n["op"] for n in j["nodes"]] == [n.op_type for n in g.node]
names = {t.name for t in g.initializer}
shapes = {}
types = {1: "f32", 7: "i64", 9: "bool"}
for v in list(g.value_info) + list(g.input) + list(g.output):
    t = v.type.tensor_type
    dims = ",".join(str(d.dim_value) if d.HasField("dim_value") else d.dim_param for d in t.shape.dim)
    shapes[v.name] = f"{types.get(t.elem_type, '?')}[{dims}]" if t.HasField("shape") else types.get(t.elem_type, "?")
edges = 0
for n in g.node:
    edges += sum(1 for i in n.input if i and i not in names)
assert len(j["edges"]) == edges, (len(j["edges"]), edges)
for e in j["edges"]:
    if e["value"] in shapes and shapes[e["value"]].split("[")[0] != "?":
        assert e["shape"] == shapes[e["value"]], (e, shapes[e["value"]])
mm = [n for n in j["nodes"] if n["name"] == "/blocks.0/attn/MatMul"][0]
assert mm["module"] == "blocks.0.attn" and len(mm["weights"]) == 1, mm
assert j["inputs"] == [{"name": "tokens", "shape": "i64[2,8]"}] and j["outputs"][0]["shape"] == "f32[2,8,50]"
PY
"$tfdebug" graph "$model" --depth 0 | grep -c "subgraph" >"$work/count"
check "--depth 0 draws no clusters" test "$(cat "$work/count")" = 0
# ONNX -> ONNX: the nodes with their attributes as read, the initializers with their values.
"$tfdebug" graph "$model" -o "$work/rt.onnx" 2>"$work/rt.err"
check "an ONNX model written back passes onnx.checker with the same nodes and weights" $py - "$work/rt.onnx" "$model" <<'PY'
import sys, onnx
import numpy as np
from onnx import numpy_helper
rt, orig = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
onnx.checker.check_model(rt, full_check=True)
assert [(n.op_type, list(n.input), list(n.output)) for n in rt.graph.node] == \
       [(n.op_type, list(n.input), list(n.output)) for n in orig.graph.node]
assert [n.attribute for n in rt.graph.node] == [n.attribute for n in orig.graph.node]
want = {t.name: numpy_helper.to_array(t) for t in orig.graph.initializer}
got = {t.name: numpy_helper.to_array(t) for t in rt.graph.initializer}
assert want and sorted(got) == sorted(want), (sorted(got), sorted(want))
for name, a in want.items():
    assert got[name].dtype == a.dtype and got[name].shape == a.shape and np.array_equal(got[name], a), name
inputs = {i.name for i in rt.graph.input}
assert "tokens" in inputs and not inputs & set(want), inputs
PY
check "it says how many weights it wrote" grep -Eq "rt.onnx: [0-9]+ weights with their values \([0-9,]+ bytes\)" "$work/rt.err"
"$tfdebug" graph "$model" --max-weights 0 -o "$work/shapes.onnx" 2>"$work/shapes.err"
check "--max-weights 0: every weight a shaped input, no data" $py - "$work/shapes.onnx" "$model" <<'PY'
import sys, onnx
rt, orig = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
onnx.checker.check_model(rt)
assert len(rt.graph.initializer) == 0
inputs = {i.name for i in rt.graph.input}
assert {t.name for t in orig.graph.initializer} <= inputs and "tokens" in inputs
PY
check "... and says so" grep -q "0 weights with their values (0 bytes), [0-9]* as shapes only past --max-weights 0 MiB" "$work/shapes.err"
"$tfdebug" graph "$model" --max-weights -1 -o "$work/x.onnx" >/dev/null 2>"$work/neg.err"
check "--max-weights -1 is exit 2" test $? -eq 2
check "... with a one-line error naming it" grep -q -- "--max-weights must be a number of MiB" "$work/neg.err"
# ONNX -> TensorBoard graph, decoded by the independent reader.
"$tfdebug" graph "$model" --tensorboard "$work/tb" 2>/dev/null
check "the TensorBoard graph of an ONNX model has every node, scoped, with its inputs" bash -c "$py '$(dirname "$0")/../export/read_tfevents.py' '$work/tb'/events.* > '$work/tb.json' && $py - '$work/tb.json' '$model'" <<'PY'
import json, sys, onnx
records = json.load(open(sys.argv[1]))["records"]
g = [r["graph_def"] for r in records if "graph_def" in r][0]
m = onnx.load(sys.argv[2]).graph
nodes = {n["name"]: n for n in g["nodes"]}
assert len(g["nodes"]) == len(m.node) + len(m.initializer) + 1, len(g["nodes"])
mm = nodes["blocks.0/attn/MatMul"]
assert mm["op"] == "MatMul", mm
src = [n for n in m.node if n.name == "/blocks.0/attn/MatMul"][0]
assert len(mm["input"]) == len(src.input), (mm, src.input)
assert nodes["tokens"]["op"] == "Input" and nodes["tokens"]["attr"]["_output_shapes"] == [[2, 8]]
PY

if "$tfdebug" graph --demo -o "$work/demo.json" 2>"$work/err"; then
  "$tfdebug" graph --demo -o "$work/demo.dot" -o "$work/demo.onnx" --tensorboard "$work/demo_tb" 2>/dev/null
  check "demo: Graphviz's dot parses the traced graph" dot -Tsvg "$work/demo.dot" -o "$work/check.svg"
  check "demo: blocks drawn once, marked ×2" grep -qF 'label="blocks.0 … blocks.1  ×2"' "$work/demo.dot"
  check "demo: nodes show the op, dtype and shape" grep -qF '[label="aten::softmax\nf32[32,4,16,16]"' "$work/demo.dot"
  check "demo: edges are labelled with dtype and shape" grep -qF '[label="f32[32,16,32]"]' "$work/demo.dot"
  "$tfdebug" graph --demo --depth 0 -o "$work/demo0.dot" 2>/dev/null
  check "demo: --depth 0 draws each top-level module as one node" bash -c "! grep -q subgraph '$work/demo0.dot' && dot -Tsvg '$work/demo0.dot' -o '$work/check.svg'"
  check "demo: --depth 0 module nodes count their ops" grep -qF '"m:blocks.0" [shape=box3d, style=filled, fillcolor="#dde6f3", label="blocks.0 … blocks.1  ×2\n38 ops"' "$work/demo0.dot"
  check "demo: the ONNX passes onnx.checker and strict shape inference, and agrees with the JSON" $py - "$work/demo.onnx" "$work/demo.json" <<'PY'
import json, sys, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
onnx.shape_inference.infer_shapes(m, strict_mode=True)
j = json.load(open(sys.argv[2]))
assert m.ir_version == 8 and {(o.domain, o.version) for o in m.opset_import} == {("", 17), ("ai.tfdebug.aten", 1)}
ops = {n.op_type for n in m.graph.node}
assert {"Gather", "LayerNormalization", "Softmax", "MatMul", "Transpose", "Reshape", "Add", "Relu"} <= ops, ops
assert sum(n.op_type == "LayerNormalization" for n in m.graph.node) == 5
assert [n.op_type for n in m.graph.node if n.domain] == ["arange"]
ln = [n for n in m.graph.node if n.op_type == "LayerNormalization"][0]
assert {a.name: onnx.helper.get_attribute_value(a) for a in ln.attribute}["axis"] == -1
shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in m.graph.value_info}
for n in j["nodes"]:
    if n["op"] == "aten::softmax":
        assert shapes[n["outputs"][0]] == [32, 4, 16, 16], shapes[n["outputs"][0]]
assert [o.name for o in m.graph.output] == [o["name"] for o in j["outputs"]]
assert [d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim] == [32, 16, 16]
# Every weight is an initializer with its values (Netron shows them), none a graph input.
weights = {w["name"]: w["shape"] for w in j["weights"]}
from onnx import numpy_helper
inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
assert sorted(inits) == sorted(weights), (sorted(inits), sorted(weights))
for name, shape in weights.items():
    assert inits[name].dtype == "float32" and "f32[" + ",".join(map(str, inits[name].shape)) + "]" == shape, name
assert not {i.name for i in m.graph.input} & set(weights)
assert inits["tok.weight"].shape == (16, 32) and len(set(inits["tok.weight"].ravel().tolist())) == 512
PY
  "$tfdebug" graph "$work/demo.onnx" -o "$work/demo_rt.json" 2>/dev/null
  check "demo: our ONNX reader reads the ONNX back" $py -c "
import json, sys, onnx
j = json.load(open(sys.argv[1])); m = onnx.load(sys.argv[2])
assert [n['op'] for n in j['nodes']] == [n.op_type for n in m.graph.node]
assert j['outputs'][0]['shape'] == 'f32[32,16,16]'" "$work/demo_rt.json" "$work/demo.onnx"
  check "demo: the TensorBoard graph names nodes by module scope, with inputs and shapes" bash -c "$py '$(dirname "$0")/../export/read_tfevents.py' '$work/demo_tb'/events.* > '$work/demo_tb.json' && $py - '$work/demo_tb.json' '$work/demo.json'" <<'PY'
import json, sys
records = json.load(open(sys.argv[1]))["records"]
g = [r["graph_def"] for r in records if "graph_def" in r][0]
j = json.load(open(sys.argv[2]))
nodes = {n["name"]: n for n in g["nodes"]}
assert len(g["nodes"]) == len(j["nodes"]) + len(j["weights"]) + len(j["inputs"])
sm = nodes["blocks.0/attn/aten::softmax_0"]
assert sm["op"] == "aten::softmax" and sm["attr"]["dim"] == -1, sm
assert sm["attr"]["_output_shapes"] == [[32, 4, 16, 16]]
assert nodes[sm["input"][0]]["op"] == "aten::add", sm
assert nodes["tok/weight"]["op"] == "Parameter" and nodes["tok/weight"]["attr"]["_output_shapes"] == [[16, 32]]
emb = [n for n in g["nodes"] if n["op"] == "aten::embedding" and n["name"].startswith("tok/")][0]
assert emb["input"] == ["tok/weight", "input.0"], emb
PY
  check "demo: the projector config lists the token embedding, 16 points of 32 values, labelled" $py - "$work/demo_tb" <<'PY'
import math, os, re, sys
d = sys.argv[1]
text = open(os.path.join(d, "projector_config.pbtxt")).read()
entries = re.findall(r"embeddings \{(.*?)\}", text, re.S)
assert len(entries) == 1
e = dict(re.findall(r'(\w+): "([^"]*)"', entries[0]))
assert e["tensor_name"] == "tok.weight"
assert re.findall(r"tensor_shape: (\d+)", entries[0]) == ["16", "32"]
rows = [line.split("	") for line in open(os.path.join(d, e["tensor_path"])).read().splitlines()]
assert len(rows) == 16 and all(len(r) == 32 for r in rows)
values = [float(v) for r in rows for v in r]
assert all(math.isfinite(v) for v in values) and len(set(values)) == len(values)
labels = open(os.path.join(d, e["metadata_path"])).read().splitlines()
assert labels[0] == "0 (separator)" and labels[1:] == [str(i) for i in range(1, 16)]
PY
  check "demo: the ONNX's tok.weight holds the values the projector shows" $py - "$work/demo_tb" "$work/demo.onnx" <<'PY'
import math, os, re, sys, onnx
from onnx import numpy_helper
config = open(os.path.join(sys.argv[1], "projector_config.pbtxt")).read()
tsv = os.path.join(sys.argv[1], re.search(r'tensor_path: "([^"]*)"', config).group(1))
rows = [[float(v) for v in line.split("\t")] for line in open(tsv).read().splitlines()]
tok = [t for t in onnx.load(sys.argv[2]).graph.initializer if t.name == "tok.weight"][0]
onnx_rows = numpy_helper.to_array(tok).tolist()
assert len(rows) == len(onnx_rows) == 16
for a, b in zip(rows, onnx_rows):
    assert all(math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-12) for x, y in zip(a, b)), (a[:3], b[:3])
PY
else
  check "without LibTorch, --demo says so" grep -q "'graph' needs LibTorch" "$work/err"
fi
"$tfdebug" graph "$fx/model.safetensors" 2>"$work/err" >/dev/null
check "a file without a graph exits 2" test $? -eq 2
check "and says so" grep -q "holds weights but no graph" "$work/err"
"$tfdebug" graph "$model" -o "$work/g.png" 2>"$work/err" >/dev/null
check "an unknown output extension exits 2" test $? -eq 2
finish graph
