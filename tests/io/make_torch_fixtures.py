#!/usr/bin/env python3
"""Writes the PyTorch fixtures of the io tests with torch itself (an independent writer).

Usage: /usr/bin/python3 tests/io/make_torch_fixtures.py OUT_DIR    (Debian's python3-torch)

Each checkpoint FILE.pt gets OUT_DIR/expected/FILE/<tensor name>.npy: a contiguous copy of every
tensor as numpy saw it (bf16 as f32, which holds every bf16 value exactly), so the C++ test can
compare each view element by element with what torch wrote.
"""
import io
import json
import os
import pickle
import struct
import sys
import zipfile

import numpy as np
import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def expect(file, tensors):
    folder = os.path.join(out, "expected", file)
    os.makedirs(folder, exist_ok=True)
    for name, t in tensors.items():
        t = t.detach()
        a = t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
        np.save(os.path.join(folder, name + ".npy"), np.array(a, order="C"))  # keeps 0-d arrays 0-d


def save(obj, file, flat=None):
    torch.save(obj, os.path.join(out, file))
    expect(file, flat if flat is not None else obj)


class Small(torch.nn.Module):
    """A small model with parameters and buffers of several dtypes."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.fc = torch.nn.Linear(4, 3)
        self.norm = torch.nn.BatchNorm1d(3)  # running stats and an i64 num_batches_tracked
        self.register_buffer("mask", torch.tensor([True, False, True]))
        self.register_buffer("positions", torch.arange(6, dtype=torch.int64))


torch.manual_seed(0)
model = Small()
model.embed.half()
model.fc.to(torch.bfloat16)
sd = model.state_dict()
save(sd, "model.pt")
# A Hugging Face style file name: the format is recognised by content.
save(sd, "pytorch_model.bin")

grid = torch.arange(12, dtype=torch.float32).reshape(3, 4) - 5.5  # grid[i, j] = 4 i + j - 5.5
save({"t": grid.t()}, "transposed.pt")  # shape (4, 3), strides (1, 4)
flat = torch.arange(10, dtype=torch.float64)
save({"row": grid[1], "tail": flat[5:9], "cols": grid[:, 1:3]}, "offsets.pt")
shared = torch.arange(8, dtype=torch.float32).reshape(2, 4)
save({"embed.weight": shared, "lm_head.weight": shared, "second_col": shared[:, 1]}, "tied.pt")
dtypes = {
    "f64": torch.tensor([1.5, -2.25], dtype=torch.float64),
    "f32": torch.tensor([1.5, -2.25], dtype=torch.float32),
    "f16": torch.tensor([1.5, -2.25], dtype=torch.float16),
    "bf16": torch.tensor([1.5, -2.25], dtype=torch.bfloat16),
    "i64": torch.tensor([-3, 2**40], dtype=torch.int64),
    "i32": torch.tensor([-3, 70000], dtype=torch.int32),
    "i16": torch.tensor([-3, 300], dtype=torch.int16),
    "i8": torch.tensor([-3, 100], dtype=torch.int8),
    "u8": torch.tensor([3, 200], dtype=torch.uint8),
    "bool": torch.tensor([True, False]),
    "scalar": torch.tensor(7.0),
    "empty": torch.zeros(0, 3),
}
save(dtypes, "dtypes.pt")
save(torch.nn.Parameter(grid.clone()), "parameter.pt", {"parameter": grid})

# A training checkpoint: the model, the optimizer (after one Adam step), plain values.
torch.manual_seed(1)
net = torch.nn.Linear(3, 2)
opt = torch.optim.Adam(net.parameters(), lr=0.5)
net(torch.ones(1, 3)).sum().backward()
opt.step()
checkpoint = {"model": net.state_dict(), "optimizer": opt.state_dict(), "epoch": 3, "lr": 0.5, "run": "run1"}
nested = {"model." + k: v for k, v in net.state_dict().items()}
for i, state in opt.state_dict()["state"].items():
    for k, v in state.items():
        if torch.is_tensor(v):
            nested[f"optimizer.state.{i}.{k}"] = v
save(checkpoint, "nested.pt", nested)

# A sharded checkpoint as Hugging Face writes it: shards and pytorch_model.bin.index.json.
shards = {"pytorch_model-00001-of-00002.bin": ["embed.weight", "fc.weight", "fc.bias"],
          "pytorch_model-00002-of-00002.bin": [k for k in sd if not k.startswith(("embed.", "fc."))]}
os.makedirs(os.path.join(out, "sharded"), exist_ok=True)
weight_map = {}
for shard, names in shards.items():
    torch.save({k: sd[k] for k in names}, os.path.join(out, "sharded", shard))
    weight_map.update({k: shard for k in names})
with open(os.path.join(out, "sharded", "pytorch_model.bin.index.json"), "w") as f:
    total = sum(t.numel() * t.element_size() for t in sd.values())
    json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)

# A Hugging Face folder with the same weights as safetensors and as pytorch_model.bin.
os.makedirs(os.path.join(out, "both"), exist_ok=True)
torch.save({"w": grid}, os.path.join(out, "both", "pytorch_model.bin"))
header = json.dumps({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}}).encode()
header += b" " * (-len(header) % 8)
with open(os.path.join(out, "both", "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + grid.numpy().tobytes())

# A training checkpoint that also pickles plain Python objects: hyperparameters in an
# argparse.Namespace, a numpy scalar, a torch.device and a dtype. Their tensors are read; the
# objects are skipped (never called) and named in the metadata.
import argparse  # noqa: E402

save({"model": {"w": grid}, "args": argparse.Namespace(lr=0.1, layers=2), "best": np.float64(0.25),
      "device": torch.device("cpu"), "dtype": torch.float32, "epoch": 7},
     "training_checkpoint.pt", {"model.w": grid})

# Files tfdebug refuses.
torch.save({"a": torch.ones(2)}, os.path.join(out, "legacy.pt"), _use_new_zipfile_serialization=False)
torch.jit.save(torch.jit.trace(torch.nn.Linear(2, 2), torch.ones(1, 2)), os.path.join(out, "torchscript.pt"))


class Forbidden:
    """Pickles to a call of os.system, as a malicious checkpoint would (never unpickled here)."""

    def __reduce__(self):
        return (os.system, ("echo tfdebug must not run this",))


with zipfile.ZipFile(os.path.join(out, "forbidden.pt"), "w", zipfile.ZIP_STORED) as z:
    z.writestr("forbidden/data.pkl", pickle.dumps({"w": Forbidden()}, protocol=2))
    z.writestr("forbidden/version", b"3\n")
with zipfile.ZipFile(os.path.join(out, "quantized.pt"), "w", zipfile.ZIP_STORED) as z:
    buffer = io.BytesIO()
    torch.save({"q": torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8)}, buffer)
    buffer.seek(0)
    with zipfile.ZipFile(buffer) as src:
        for info in src.infolist():
            z.writestr(info, src.read(info.filename))

# A tiny transformer exported to ONNX by torch (opset 14) with ONNX shape inference, for
# `tfdebug graph`: node names carry the module scopes ("/blocks.0/attn/MatMul").
import onnx  # noqa: E402


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, 4, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.GELU(), torch.nn.Linear(2 * d, d))

    def forward(self, x):
        h = self.norm(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(x)


class TinyTransformer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(50, 32)
        self.blocks = torch.nn.ModuleList([Block(32), Block(32)])
        self.head = torch.nn.Linear(32, 50)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


torch.manual_seed(0)
onnx_path = os.path.join(out, "tiny_transformer.onnx")
torch.onnx.export(TinyTransformer().eval(), torch.zeros(2, 8, dtype=torch.long), onnx_path, opset_version=14,
                  input_names=["tokens"], output_names=["logits"])
shaped = onnx.shape_inference.infer_shapes(onnx.load(onnx_path))
onnx.checker.check_model(shaped)
onnx.save(shaped, onnx_path)
