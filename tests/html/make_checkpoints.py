#!/usr/bin/python3
"""Checkpoints for the HTML report's tests (tests/html/html_report_test.sh), written with numpy and
the safetensors layout by hand (an independent writer):

  small.safetensors   a 4-layer model: layers.2.mlp.up.weight holds 3 NaN, layers.1.attn.k.weight
                      is all zeros, layers.3.mlp.down.weight holds the largest value (7.5), and a
                      tensor named to break out of the page's <script>; small.expected.json has
                      layer 0's rms and largest |value| computed by numpy
  big.safetensors     1,000 layers x 100 tensors = 100,000 tensors (+ 2), to bound size and load time

usage: make_checkpoints.py OUT_DIR
"""
import json
import struct
import sys

import numpy as np


def write_safetensors(path, tensors, metadata=None):
    header = {}
    offset = 0
    blobs = []
    for name, array in tensors:
        data = np.ascontiguousarray(array, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def small(path):
    rng = np.random.default_rng(7)
    tensors = [("embed.weight", rng.normal(0, 0.02, (64, 32)))]
    for layer in range(4):
        p = "layers.%d." % layer
        scale = 0.05 * (layer + 1)
        tensors.append((p + "attn.q.weight", rng.normal(0, scale, (32, 32))))
        k = rng.normal(0, scale, (32, 32))
        if layer == 1:
            k[:] = 0.0
        tensors.append((p + "attn.k.weight", k))
        up = rng.normal(0, scale, (64, 32))
        if layer == 2:
            up[5, 3] = np.nan
            up[9, 1] = np.nan
            up[11, 0] = np.nan
        tensors.append((p + "mlp.up.weight", up))
        down = rng.normal(0, scale, (32, 64))
        if layer == 3:
            down[0, 0] = 7.5  # the largest |value| of the model: the table's first row by abs max
        tensors.append((p + "mlp.down.weight", down))
        tensors.append((p + "norm.weight", np.ones(32)))
    # A name that would end the page's data island and run a script if it were pasted as markup.
    tensors.append(("head.</script><script>alert(1)</script>\u2028.weight", rng.normal(0, 0.02, (8, 32))))
    write_safetensors(path, tensors, {"format": "pt", "note": "written by tests/html/make_checkpoints.py"})
    # What the page must show for layer 0, computed here independently (float64 over the f32 values).
    layer0 = np.concatenate([np.asarray(a, dtype=np.float32).astype(np.float64).ravel()
                             for n, a in tensors if n.startswith("layers.0.")])
    with open(path.replace(".safetensors", ".expected.json"), "w") as f:
        json.dump({"layer0_rms": float(np.sqrt(np.mean(layer0 ** 2))), "layer0_abs_max": float(np.max(np.abs(layer0))),
                   "tensors": len(tensors)}, f)


def big(path):
    # 100 small tensors per layer: the header and the tensor count are what is big.
    names = ["w%02d" % i for i in range(100)]
    tensors = [("model.embed.weight", np.full((4, 4), 0.01))]
    base = np.linspace(-1, 1, 16).reshape(4, 4)
    for layer in range(1000):
        for i, n in enumerate(names):
            tensors.append(("model.layers.%d.%s" % (layer, n), base * (0.01 + 0.0001 * i) + 0.001 * layer))
    tensors.append(("model.head.weight", np.full((4, 4), 0.02)))
    write_safetensors(path, tensors)


if __name__ == "__main__":
    out = sys.argv[1]
    small(out + "/small.safetensors")
    big(out + "/big.safetensors")
