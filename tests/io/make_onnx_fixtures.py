#!/usr/bin/python3
"""Writes the ONNX fixtures the io tests read, with python3-onnx (an independent writer), and
the answers the tests compare against. Usage: make_onnx_fixtures.py OUT_DIR [TESTDATA_DIR]

OUT_DIR/*.onnx (+ external/model.data): small models covering raw_data of every dtype tfdebug
reads, typed fields, external data, Constant nodes in If branches and Loop bodies, and a STRING
tensor. OUT_DIR/expected.json: for each fixture, every tensor tfdebug should report (name,
dtype, shape, values) and how many it should skip. OUT_DIR/truncated.onnx: a damaged model. OUT_DIR/testdata.json: for every model.onnx
under TESTDATA_DIR (libonnx-testdata), what onnx.load + numpy_helper find.

Counting rule, the same as src/io/onnx.cpp's Note [ONNX tensors]: every initializer of every
graph and subgraph, plus the value of every Constant node (value, value_float(s), value_int(s));
tensors of element types tfdebug has no dtype for, string/sparse Constant values and sparse
initializers are counted as skipped."""
import glob
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
testdata = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data"
os.makedirs(os.path.join(out, "external"), exist_ok=True)
rng = np.random.default_rng(11)

DTYPES = {TensorProto.FLOAT: "f32", TensorProto.DOUBLE: "f64", TensorProto.FLOAT16: "f16",
          TensorProto.BFLOAT16: "bf16", TensorProto.INT8: "i8", TensorProto.INT16: "i16",
          TensorProto.INT32: "i32", TensorProto.INT64: "i64", TensorProto.UINT8: "u8",
          TensorProto.BOOL: "bool"}


def bf16_bits(a):
    return (np.asarray(a, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def jsonable(values):
    """JSON has no NaN or infinity: those become the strings "nan", "inf", "-inf"."""
    return [v if np.isfinite(v) else str(v) for v in values]


def values_of(t):
    """The tensor's elements as Python floats, row-major."""
    if t.data_type == TensorProto.BFLOAT16:
        if t.HasField("raw_data"):
            bits = np.frombuffer(t.raw_data, dtype="<u2")
        else:
            bits = np.array(t.int32_data, dtype=np.uint32).astype(np.uint16)
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64).ravel().tolist()
    return numpy_helper.to_array(t).astype(np.float64).ravel().tolist()


def walk(graph, visit_tensor, visit_skipped, visit_owned):
    for t in graph.initializer:
        visit_tensor(t, t.name)
    for _ in graph.sparse_initializer:
        visit_skipped("sparse")
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            name = node.output[0] if node.output else node.name
            for a in node.attribute:
                if a.name == "value":
                    visit_tensor(a.t, name)
                elif a.name == "value_float":
                    visit_owned(name, "f32", [], [float(a.f)])
                elif a.name == "value_floats":
                    visit_owned(name, "f32", [len(a.floats)], [float(v) for v in a.floats])
                elif a.name == "value_int":
                    visit_owned(name, "i64", [], [float(a.i)])
                elif a.name == "value_ints":
                    visit_owned(name, "i64", [len(a.ints)], [float(v) for v in a.ints])
                elif a.name in ("value_string", "value_strings"):
                    visit_skipped("STRING")
                elif a.name == "sparse_value":
                    visit_skipped("sparse")
        for a in node.attribute:
            if a.HasField("g"):
                walk(a.g, visit_tensor, visit_skipped, visit_owned)
            for g in a.graphs:
                walk(g, visit_tensor, visit_skipped, visit_owned)


def expected_tensors(model_path):
    """Every tensor tfdebug should report, with values, and the skipped count."""
    model = onnx.load(model_path)  # loads external data too
    tensors, skipped = [], []

    def tensor(t, name):
        if t.data_type not in DTYPES:
            skipped.append(TensorProto.DataType.Name(t.data_type))
            return
        tensors.append({"name": name, "dtype": DTYPES[t.data_type], "shape": list(t.dims),
                        "values": jsonable(values_of(t))})

    def owned(name, dtype, shape, values):
        tensors.append({"name": name, "dtype": dtype, "shape": shape, "values": jsonable(values)})

    walk(model.graph, tensor, skipped.append, owned)
    return {"tensors": tensors, "skipped": len(skipped), "nodes": len(model.graph.node),
            "ir_version": model.ir_version, "producer_name": model.producer_name,
            "metadata": {p.key: p.value for p in model.metadata_props}}


def save(model, name, **kwargs):
    path = os.path.join(out, name)
    onnx.save_model(model, path, **kwargs)
    return path


def identity_graph(name, initializers, nodes=(), extra_outputs=()):
    """A graph whose outputs are its initializers passed through Identity."""
    nodes = list(nodes)
    outputs = []
    for t in initializers:
        nodes.append(helper.make_node("Identity", [t.name], [t.name + "_out"], name="id_" + t.name))
        outputs.append(helper.make_tensor_value_info(t.name + "_out", t.data_type, list(t.dims)))
    return helper.make_graph(nodes, name, [], outputs + list(extra_outputs), initializer=initializers)


# 1. dtypes.onnx: raw_data of every dtype, typed fields, Constant values, a STRING tensor.
f32 = rng.normal(0, 1, size=(2, 3)).astype(np.float32)
f32[1, 2] = np.nan
inits = [
    numpy_helper.from_array(f32, "raw.f32"),
    numpy_helper.from_array(rng.normal(0, 1e3, size=(4,)).astype(np.float64), "raw.f64"),
    numpy_helper.from_array(rng.normal(0, 2, size=(3, 2)).astype(np.float16), "raw.f16"),
    numpy_helper.from_array(rng.integers(-128, 127, size=(5,)).astype(np.int8), "raw.i8"),
    numpy_helper.from_array(rng.integers(0, 255, size=(2, 2)).astype(np.uint8), "raw.u8"),
    numpy_helper.from_array(rng.integers(-30000, 30000, size=(3,)).astype(np.int16), "raw.i16"),
    numpy_helper.from_array(rng.integers(-2**31, 2**31 - 1, size=(2, 2)).astype(np.int32), "raw.i32"),
    numpy_helper.from_array(np.array([-2**40, 7, 2**50], dtype=np.int64), "raw.i64"),
    numpy_helper.from_array(np.array([[True, False], [False, True]]), "raw.bool"),
    helper.make_tensor("raw.bf16", TensorProto.BFLOAT16, [3],
                       bf16_bits([1.5, -2.25, 3e38]).tobytes(), raw=True),
    helper.make_tensor("raw.scalar", TensorProto.FLOAT, [], np.array([42.5], dtype=np.float32).tobytes(), raw=True),
    helper.make_tensor("raw.empty", TensorProto.FLOAT, [0, 3], b"", raw=True),
    # Typed fields (no raw_data).
    helper.make_tensor("typed.float_data", TensorProto.FLOAT, [2, 2], [0.5, -1.0, 3.25, 1e-3]),
    helper.make_tensor("typed.int64_data", TensorProto.INT64, [3], [-5, 0, 2**62]),
    helper.make_tensor("typed.int32_data", TensorProto.INT32, [2], [-7, 2**31 - 1]),
    helper.make_tensor("typed.f16", TensorProto.FLOAT16, [4], np.array([1.0, -0.5, 65504, 6e-8], dtype=np.float16)),
    helper.make_tensor("typed.bf16", TensorProto.BFLOAT16, [2], [0.75, -8.0]),  # stored as bf16 bits in int32_data
    helper.make_tensor("typed.i8", TensorProto.INT8, [3], [-128, 0, 127]),
    helper.make_tensor("typed.bool", TensorProto.BOOL, [3], [True, False, True]),
    helper.make_tensor("typed.double_data", TensorProto.DOUBLE, [2], [1e300, -2.5]),
    # Not numeric: skipped and counted.
    helper.make_tensor("text", TensorProto.STRING, [2], [b"hello", b"world"]),
]
constants = [
    helper.make_node("Constant", [], ["const.tensor"], name="c0",
                     value=numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3))),
    helper.make_node("Constant", [], ["const.float"], name="c1", value_float=2.5),
    helper.make_node("Constant", [], ["const.floats"], name="c2", value_floats=[1.0, -2.0, 0.125]),
    helper.make_node("Constant", [], ["const.int"], name="c3", value_int=-9),
    helper.make_node("Constant", [], ["const.ints"], name="c4", value_ints=[3, -4, 5]),
    helper.make_node("Constant", [], ["const.string"], name="c5", value_string="skipped"),
]
const_outputs = [helper.make_tensor_value_info(n.output[0], TensorProto.UNDEFINED, None) for n in constants]
graph = identity_graph("dtypes", inits, constants, const_outputs)
graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3]))
model = helper.make_model(graph, producer_name="make_onnx_fixtures", opset_imports=[helper.make_opsetid("", 14)])
model.producer_version = "1.0"
helper.set_model_props(model, {"author": "tfdebug tests", "purpose": "dtypes"})
dtypes_path = save(model, "dtypes.onnx")

# 2. external/model.onnx + model.data: two tensors in one external file, one small enough to stay inline.
ext = [numpy_helper.from_array(rng.normal(0, 1, size=(16, 8)).astype(np.float32), "ext.weight"),
       numpy_helper.from_array(np.arange(10, dtype=np.int64), "ext.ids"),
       numpy_helper.from_array(np.array([1.0], dtype=np.float32), "inline.bias")]
model = helper.make_model(identity_graph("external", ext), producer_name="make_onnx_fixtures",
                          opset_imports=[helper.make_opsetid("", 14)])
ext_path = save(model, "external/model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                location="model.data", size_threshold=64)

# 3. control_flow.onnx: Constant nodes and initializers inside If branches and a Loop body.
then_graph = helper.make_graph(
    [helper.make_node("Constant", [], ["then.c"], value=numpy_helper.from_array(np.array([1.0, 2.0], np.float32)))],
    "then", [], [helper.make_tensor_value_info("then.c", TensorProto.FLOAT, [2])])
else_graph = helper.make_graph(
    [helper.make_node("Constant", [], ["else.c"], value_floats=[-1.0, -2.0]),
     helper.make_node("Identity", ["else.w"], ["else.out"])],
    "else", [], [helper.make_tensor_value_info("else.c", TensorProto.FLOAT, [2])],
    initializer=[numpy_helper.from_array(np.array([[4, 5]], np.int32), "else.w")])
# The Loop body itself holds an If whose branch holds a Constant: three levels deep.
inner_then = helper.make_graph(
    [helper.make_node("Constant", [], ["deep.c"], value=numpy_helper.from_array(np.array(7, np.int64)))],
    "inner_then", [], [helper.make_tensor_value_info("deep.c", TensorProto.INT64, [])])
inner_else = helper.make_graph(
    [helper.make_node("Constant", [], ["deep.e"], value_int=8)],
    "inner_else", [], [helper.make_tensor_value_info("deep.e", TensorProto.INT64, [])])
body = helper.make_graph(
    [helper.make_node("Constant", [], ["body.step"], value=numpy_helper.from_array(np.array([0.5], np.float32))),
     helper.make_node("Add", ["v_in", "body.step"], ["v_out"]),
     helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("If", ["cond_in"], ["deep"], then_branch=inner_then, else_branch=inner_else)],
    "body",
    [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])],
    initializer=[numpy_helper.from_array(np.array([3.0, 4.0], np.float64), "body.init")])
main = helper.make_graph(
    [helper.make_node("If", ["cond"], ["if_out"], name="branch", then_branch=then_graph, else_branch=else_graph),
     helper.make_node("Loop", ["trip", "cond", "v0"], ["v_final"], name="loop", body=body)],
    "control_flow",
    [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
     helper.make_tensor_value_info("trip", TensorProto.INT64, []),
     helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
    [helper.make_tensor_value_info("if_out", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("v_final", TensorProto.FLOAT, [1])])
model = helper.make_model(main, producer_name="make_onnx_fixtures", opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(model)
cf_path = save(model, "control_flow.onnx")

# 4. truncated.onnx: dtypes.onnx cut short, for the error the docs show.
with open(dtypes_path, "rb") as f:
    data = f.read()
with open(os.path.join(out, "truncated.onnx"), "wb") as f:
    f.write(data[: len(data) // 2])

expected = {os.path.relpath(p, out): expected_tensors(p) for p in (dtypes_path, ext_path, cf_path)}
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1, allow_nan=False)

# 5. Every libonnx-testdata model: counts, parameters and the sum of finite values.
summary = {}
for path in sorted(glob.glob(os.path.join(testdata, "**", "model.onnx"), recursive=True)):
    model = onnx.load(path)
    counts = {"tensors": 0, "params": 0, "skipped": 0, "sum": 0.0, "abs_sum": 0.0}

    def tensor(t, name):
        if t.data_type not in DTYPES:
            counts["skipped"] += 1
            return
        owned(name, None, list(t.dims), values_of(t))

    def owned(name, dtype, shape, values):
        v = np.asarray(values, dtype=np.float64)
        v = v[np.isfinite(v)]
        counts["tensors"] += 1
        counts["params"] += len(values)
        counts["sum"] += float(v.sum())
        counts["abs_sum"] += float(np.abs(v).sum())

    def skipped(_):
        counts["skipped"] += 1

    walk(model.graph, tensor, skipped, owned)
    counts["nodes"] = len(model.graph.node)
    counts["inputs"] = len(model.graph.input)
    counts["outputs"] = len(model.graph.output)
    counts["initializers"] = len(model.graph.initializer)
    summary[os.path.relpath(path, testdata)] = counts
with open(os.path.join(out, "testdata.json"), "w") as f:
    json.dump({"root": testdata, "models": summary}, f, indent=1, allow_nan=False)
print(f"make_onnx_fixtures: {len(expected)} fixtures, {len(summary)} libonnx-testdata models")
