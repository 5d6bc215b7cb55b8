"""Model files whose names are hostile to a terminal or to JSON, for hostile_names_test.sh:
control characters (newline, CR, ESC sequences, BEL, DEL, C1 code points) and bytes that are not
UTF-8. Each file is written with same-length placeholders, which are then replaced by the raw
bytes, so the writers (numpy, zipfile, onnx) never see them. Usage: make_hostile_names.py OUT"""
import io
import json
import os
import struct
import sys
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "io"))
from gguf_writer import write_gguf  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

# The names, as bytes. Terminal: a newline that forges a line, an OSC that retitles the window
# (ESC ] 0 ; ... BEL), a CSI that clears the screen (ESC [ 2 J), CR, DEL and C1 CSI (U+009B).
TITLE = b"a\nb\x1b]0;pwned\x07"
CLEAR = b"c\x1b[2J\rd\x7fe\xc2\x9b2J"
# Not UTF-8: a lone continuation byte, a truncated 3-byte sequence, an invalid lead byte.
BAD = b"w\x80x\xe2\x82y\xff"
BAD2 = b"\xc3(meta\xfe"


def patched(data, pairs):
    for placeholder, raw in pairs:
        assert len(placeholder) == len(raw) and data.count(placeholder) >= 1, placeholder
        data = data.replace(placeholder, raw)
    return data


def placeholder(raw, tag):
    """A printable string of the same byte length as raw, unique by its tag."""
    text = (tag * len(raw))[: len(raw)]
    return text.encode()


# names.safetensors: the terminal-hostile names, in tensor names and metadata (JSON escapes them).
tensors = {"ok.weight": np.ones((2, 2), np.float32), TITLE.decode(): np.zeros(3, np.float32),
           CLEAR.decode(): np.arange(4, dtype=np.float32)}
header, blobs, offset = {}, [], 0
for name, a in tensors.items():
    raw = a.tobytes()
    header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
    blobs.append(raw)
    offset += len(raw)
header["__metadata__"] = {"k\rforged": "v\x1b[2Jx"}
text = json.dumps(header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(f"{out}/names.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))

# bad_offsets.safetensors: a tensor with a hostile name whose data runs past the end: the
# reader's error quotes the name.
header = {TITLE.decode(): {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}
text = json.dumps(header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(f"{out}/bad_offsets.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"\0" * 8)

# invalid_utf8.gguf: a tensor name, a metadata key and a string value that are not UTF-8.
t_name, k_name, v_name = placeholder(BAD, "T"), placeholder(BAD2, "K"), placeholder(BAD, "V")
raw = np.arange(4, dtype=np.float32).tobytes()
write_gguf(f"{out}/g.gguf", [("general.architecture", "string", "llama"),
                             (k_name.decode(), "string", v_name.decode())],
           [(t_name.decode(), "F32", (4,), raw), ("ok.weight", "F32", (4,), raw)])
data = open(f"{out}/g.gguf", "rb").read()
open(f"{out}/invalid_utf8.gguf", "wb").write(patched(data, [(t_name, BAD), (k_name, BAD2), (v_name, BAD)]))
os.remove(f"{out}/g.gguf")

# invalid_utf8.npz: an entry name that is not UTF-8 (the local header and the central directory).
e_name = placeholder(BAD, "E")
buffer = io.BytesIO()
with zipfile.ZipFile(buffer, "w") as z:
    for entry in (e_name.decode() + ".npy", "ok.npy"):
        arr = io.BytesIO()
        np.save(arr, np.arange(3, dtype=np.float32))
        z.writestr(entry, arr.getvalue())
open(f"{out}/invalid_utf8.npz", "wb").write(patched(buffer.getvalue(), [(e_name, BAD)]))

# invalid_utf8.onnx: a node name, the producer, a metadata key and value, an initializer name
# (and so the value it feeds) that are not UTF-8, and a node name with terminal controls.
w_name, n_name, p_name = placeholder(BAD, "W"), placeholder(BAD2, "N"), placeholder(BAD, "P")
mk, mv, c_name = placeholder(BAD2, "M"), placeholder(BAD, "U"), placeholder(TITLE, "C")
w = numpy_helper.from_array(np.ones((2, 2), np.float32), name=w_name.decode())
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])
nodes = [helper.make_node("MatMul", ["x", w_name.decode()], ["h"], name=n_name.decode()),
         helper.make_node("Relu", ["h"], ["y"], name=c_name.decode())]
model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], initializer=[w]),
                          producer_name=p_name.decode(), opset_imports=[helper.make_opsetid("", 17)])
helper.set_model_props(model, {mk.decode(): mv.decode()})
data = model.SerializeToString()
open(f"{out}/invalid_utf8.onnx", "wb").write(
    patched(data, [(w_name, BAD), (n_name, BAD2), (p_name, BAD), (mk, BAD2), (mv, BAD), (c_name, TITLE)]))

# What the names read as in JSON (U+FFFD for each invalid sequence, as Python decodes them).
expected = {"bad": BAD.decode("utf-8", "replace"), "bad2": BAD2.decode("utf-8", "replace"),
            "title": TITLE.decode(), "clear": CLEAR.decode()}
json.dump(expected, open(f"{out}/expected.json", "w"))
