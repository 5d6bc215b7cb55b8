#!/usr/bin/env python3
"""Writes files made to hurt a model-file reader (issue 17), for tests/cli/hostile_test.sh.

Usage: /usr/bin/python3 tests/io/make_hostile.py OUT_DIR

Each is small (a few hundred bytes to a few MB) and claims something expensive: JSON nested
100,000 deep, 200,000 tensors in one header, an empty tensor of 2^62 rows, a 4-byte storage
broadcast to 2^40 elements, a deflate bomb, a FIFO where a model or its data should be, a symlink
loop, external data that is a symlink out of the model's folder. Every one must end in under a
second or two, in little memory, with exit 0, 1 or 2 and a one-line error, never a crash or a hang.
OUT_DIR/expect.txt lists "FILE EXIT" for the files whose exit code is known (2: refused).
"""
import io
import json
import os
import struct
import sys
import zipfile
import zlib

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
expect = []


def path(name):
    return os.path.join(out, name)


def write(name, data, code=None):
    with open(path(name), "wb") as f:
        f.write(data)
    if code is not None:
        expect.append(f"{name} {code}")


def safetensors(header, data=b""):
    text = header if isinstance(header, (bytes, bytearray)) else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


# --- deep JSON: the error path used to serialise the attacker's value recursively (SIGSEGV).
for depth in (100_000, 20_000):
    deep = b"[" * depth + b"]" * depth
    write(f"st_deep_shape_{depth}.safetensors",
          safetensors(b'{"t":{"dtype":"F32","shape":' + deep + b',"data_offsets":[0,4]}}', b"\0" * 4), 2)
write("st_deep_offsets.safetensors",
      safetensors(b'{"t":{"dtype":"F32","shape":[1],"data_offsets":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
                  b"\0" * 4), 2)
write("st_deep_metadata.safetensors",
      safetensors(b'{"__metadata__":{"k":' + b"[" * 100_000 + b"]" * 100_000 + b"}}"), 2)
write("st_deep_extra_key.safetensors",
      safetensors(b'{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":' + b'{"a":' * 50_000 +
                  b"1" + b"}" * 50_000 + b"}}", b"\0" * 4), 2)
# A long value in an error: the message must stay short.
write("st_long_dtype.safetensors",
      safetensors({"t": {"dtype": "F" * 100_000, "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4), 2)
write("index_deep.safetensors.index.json",
      b'{"weight_map":{},"metadata":{"k":' + b"[" * 100_000 + b"]" * 100_000 + b"}}", 2)

# --- many tensors: the header parse must be linear (100,000 one-element tensors, 8 MB header).
many = 100_000
header = {f"layer.{i}.weight": {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
          for i in range(many)}
write("st_many_tensors.safetensors",
      safetensors(header, np.arange(many, dtype=np.float32).tobytes()), 0)
header = {f"t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(many)}
write("st_many_empty.safetensors", safetensors(header), 0)

# --- empty tensors with huge dimensions: no work (or memory) proportional to the claimed size.
write("st_huge_empty.safetensors",
      safetensors({"t": {"dtype": "F32", "shape": [2 ** 62, 0], "data_offsets": [0, 0]},
                   "u": {"dtype": "F32", "shape": [0, 2 ** 62], "data_offsets": [0, 0]}}), 0)
write("st_huge_empty_3d.safetensors",
      safetensors({"t": {"dtype": "BF16", "shape": [2 ** 30, 2 ** 30, 0], "data_offsets": [0, 0]}}), 0)
npy_header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 0), }"
npy_header += b" " * (63 - (len(npy_header) + 10) % 64) + b"\n"
write("npy_huge_empty.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(npy_header)) + npy_header, 0)


# GGUF v3 with one empty f32 tensor of dims [0, 2^62] (ggml order: the first is the fastest).
def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


gguf = b"GGUF" + struct.pack("<IQQ", 3, 1, 1)
gguf += gguf_string("general.alignment") + struct.pack("<I", 4) + struct.pack("<I", 32)
gguf += gguf_string("t") + struct.pack("<I", 2) + struct.pack("<QQ", 0, 2 ** 62) + struct.pack("<IQ", 0, 0)
gguf += b"\0" * ((32 - len(gguf) % 32) % 32)
write("gguf_huge_empty.gguf", gguf, 0)


# --- PyTorch: a pickle written opcode by opcode (protocol 2), so the views can lie.
def torch_zip(pkl, storages, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compress) as z:
        z.writestr("archive/data.pkl", pkl)
        for key, data in storages.items():
            z.writestr(zipfile.ZipInfo(f"archive/data/{key}"), data)
        z.writestr("archive/version", b"3\n")
    return buf.getvalue()


def pickle_int(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if -2 ** 31 <= v < 2 ** 31:
        return b"J" + struct.pack("<i", v)
    raw = v.to_bytes(9, "little", signed=True).rstrip(b"\0") or b"\0"
    if raw[-1] & 0x80 and v > 0:
        raw += b"\0"
    return b"\x8a" + bytes([len(raw)]) + raw


def pickle_str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def pickle_tuple(items):
    return b"(" + b"".join(items) + b"t"


def torch_tensor_pickle(name, sizes, strides, numel, offset=0):
    storage = (b"(" + pickle_str("storage") + b"ctorch\nFloatStorage\n" + pickle_str("0") + pickle_str("cpu") +
               pickle_int(numel) + b"tQ")
    tensor = (b"ctorch._utils\n_rebuild_tensor_v2\n" +
              pickle_tuple([storage, pickle_int(offset), pickle_tuple([pickle_int(s) for s in sizes]),
                            pickle_tuple([pickle_int(s) for s in strides]), b"\x89",
                            b"ccollections\nOrderedDict\n)R"]) + b"R")
    return b"\x80\x02ccollections\nOrderedDict\n)R(" + pickle_str(name) + tensor + b"u."


write("pt_zero_strides.pt", torch_zip(torch_tensor_pickle("t", [2 ** 20, 2 ** 20], [0, 0], 1),
                                      {"0": struct.pack("<f", 1.5)}), 0)
write("pt_zero_stride_rows.pt", torch_zip(torch_tensor_pickle("t", [2 ** 36, 4], [0, 1], 4),
                                          {"0": struct.pack("<4f", 1, -2, 0, 3)}), 0)
write("pt_huge_empty.pt", torch_zip(torch_tensor_pickle("t", [2 ** 62, 0], [0, 1], 0), {"0": b""}), 0)
# A deflated data.pkl that inflates to 300 MB (a bomb inside the ratio deflate allows), and a
# .npz of four 100 MB arrays of zeros in 400 KB.
bomb = b"\x80\x02]q\x00(" + b"N" * (300 << 20) + b"e."
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("archive/data.pkl", bomb)
    z.writestr("archive/version", b"3\n")
write("pt_deflate_bomb.pt", buf.getvalue(), 2)
buf = io.BytesIO()
zeros = np.zeros(25 << 20, dtype=np.float32)
array = io.BytesIO()
np.save(array, zeros)
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    for i in range(4):
        z.writestr(f"a{i}.npy", array.getvalue())
write("npz_deflate_bomb.npz", buf.getvalue(), 2)
# A 5 MB pickle of 5 million values (Nones in a list).
write("pt_many_values.pt", torch_zip(b"\x80\x02](" + b"N" * 5_000_000 + b"e.", {}), 2)

# --- ONNX: many nodes with long names and many attributes, many string initializers. Written
# by python3-onnx when it is there.
try:
    import onnx
    from onnx import TensorProto, helper

    nodes = []
    for i in range(20_000):
        attrs = {f"attr_{k}_" + "a" * 40: k for k in range(8)}
        nodes.append(helper.make_node("Identity", [f"x{i}"], [f"x{i + 1}"], name="node_" + "n" * 200 + str(i),
                                      **attrs))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("x20000", TensorProto.FLOAT, [1])])
    write("onnx_many_nodes.onnx", helper.make_model(graph).SerializeToString(), 0)
    strings = [helper.make_tensor(f"s{i}", TensorProto.STRING, [64], [b"x" * 16] * 64) for i in range(5_000)]
    graph = helper.make_graph([], "g", [], [], initializer=strings)
    write("onnx_string_initializers.onnx", helper.make_model(graph).SerializeToString(), None)
    # One node with a 1 MB name and 50,000 attributes; one STRING tensor with a 1 MB name and
    # 200,000 strings: the context of an error may not copy the name once per field.
    node = helper.make_node("Identity", ["x"], ["y"], name="n" * (1 << 20))
    node.attribute.extend([helper.make_attribute(f"a{k}", k) for k in range(50_000)])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                              initializer=[helper.make_tensor("s" * (1 << 20), TensorProto.STRING, [200_000],
                                                              [b"ab"] * 200_000)])
    write("onnx_long_names.onnx", helper.make_model(graph).SerializeToString(), 0)
    # A file that starts like ONNX (ir_version, opset) but has no graph.
    model = onnx.ModelProto()
    model.ir_version = 8
    model.opset_import.add().version = 17
    write("onnx_no_graph.onnx", model.SerializeToString(), 2)
    # External data that is a symlink out of the model's folder.
    folder = path("onnx_escape")
    os.makedirs(folder, exist_ok=True)
    weight = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
    weight.data_location = TensorProto.EXTERNAL
    del weight.float_data[:]
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", "16")):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph([], "g", [], [], initializer=[weight])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(helper.make_model(graph).SerializeToString())
    if not os.path.lexists(os.path.join(folder, "weights.bin")):
        os.symlink("/etc/hostname" if os.path.exists("/etc/hostname") else "/etc/passwd",
                   os.path.join(folder, "weights.bin"))
    expect.append("onnx_escape/model.onnx 2")
    # External data that is a FIFO.
    folder = path("onnx_fifo")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(helper.make_model(graph).SerializeToString())
    if not os.path.exists(os.path.join(folder, "weights.bin")):
        os.mkfifo(os.path.join(folder, "weights.bin"))
    expect.append("onnx_fifo/model.onnx 2")
except ImportError:
    pass

# --- special files and folders.
if not os.path.exists(path("fifo.safetensors")):
    os.mkfifo(path("fifo.safetensors"))
expect.append("fifo.safetensors 2")
folder = path("index_fifo")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
    json.dump({"weight_map": {"t": "model-00001.safetensors"}}, f)
if not os.path.exists(os.path.join(folder, "model-00001.safetensors")):
    os.mkfifo(os.path.join(folder, "model-00001.safetensors"))
expect.append("index_fifo 2")
expect.append("index_fifo/model.safetensors.index.json 2")
# A folder whose only entries are a symlink loop and a symlink to a model outside it.
folder = path("loop")
os.makedirs(folder, exist_ok=True)
for name, target in (("a.safetensors", "b.safetensors"), ("b.safetensors", "a.safetensors")):
    if not os.path.lexists(os.path.join(folder, name)):
        os.symlink(target, os.path.join(folder, name))
expect.append("loop 2")
folder = path("escape")
os.makedirs(folder, exist_ok=True)
write("outside.safetensors", safetensors({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4))
if not os.path.lexists(os.path.join(folder, "model.safetensors")):
    os.symlink("../outside.safetensors", os.path.join(folder, "model.safetensors"))
expect.append("escape 2")

with open(path("expect.txt"), "w") as f:
    f.write("\n".join(expect) + "\n")
