#!/usr/bin/python3
# A small ONNX model as PyTorch's exporter names it (node names "/blocks.0/fc1/MatMul": the
# modules are their scopes), with shapes for every value, written with python3-onnx for the
# model-graph section of the HTML report (tests/html/report_page_test.js):
#
#   make_graph_model.py OUT.onnx
#
# x f32[2,16] -> blocks.{0,1}: fc1 (MatMul, Add) -> Relu -> fc2 (MatMul, Add) -> Add (residual)
# -> head (MatMul) -> y f32[2,4]: 13 ops.
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
nodes, inits, infos = [], [], []


def weight(name, shape):
    inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name))
    return name


def op(kind, scope, inputs, shape, suffix=""):
    out = f"{scope}/{kind}{suffix}_output_0"
    nodes.append(helper.make_node(kind, inputs, [out], name=f"{scope}/{kind}{suffix}"))
    infos.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, shape))
    return out


h = "x"
for b in range(2):
    s = f"/blocks.{b}"
    a = op("MatMul", f"{s}/fc1", [h, weight(f"blocks.{b}.fc1.weight", (16, 32))], [2, 32])
    a = op("Add", f"{s}/fc1", [a, weight(f"blocks.{b}.fc1.bias", (32,))], [2, 32])
    a = op("Relu", f"{s}/act", [a], [2, 32])
    a = op("MatMul", f"{s}/fc2", [a, weight(f"blocks.{b}.fc2.weight", (32, 16))], [2, 16])
    a = op("Add", f"{s}/fc2", [a, weight(f"blocks.{b}.fc2.bias", (16,))], [2, 16])
    h = op("Add", s, [h, a], [2, 16], "_residual")
nodes.append(helper.make_node("MatMul", [h, weight("head.weight", (16, 4))], ["y"], name="/head/MatMul"))
graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], inits, value_info=infos)
model = helper.make_model(graph, producer_name="make_graph_model.py", opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
