#!/usr/bin/env bash
# End-to-end tests of `tfdebug graph` on a tiny transformer exported to ONNX by torch
# (tests/io/make_torch_fixtures.py): Graphviz's dot parses the DOT, python3-onnx agrees with the
# JSON's nodes and shapes.
set -u
tfdebug="$1"
fx="$2"
source "$(dirname "$0")/harness.sh"
model="$fx/torch/tiny_transformer.onnx"

"$tfdebug" graph "$model" -o "$work/g.dot" 2>/dev/null
check "graph writes DOT" test $? -eq 0
check "Graphviz's dot parses it" dot -Tsvg "$work/g.dot" -o "$work/check.svg"
check "clusters follow the module scopes" bash -c "grep -q 'cluster_blocks.0.attn' '$work/g.dot' && grep -q 'cluster_blocks.1.mlp' '$work/g.dot'"
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
"$tfdebug" graph "$fx/model.safetensors" 2>"$work/err" >/dev/null
check "a file without a graph exits 2" test $? -eq 2
check "and says so" grep -q "holds weights but no graph" "$work/err"
"$tfdebug" graph "$model" -o "$work/g.png" 2>"$work/err" >/dev/null
check "an unknown output extension exits 2" test $? -eq 2
finish graph
