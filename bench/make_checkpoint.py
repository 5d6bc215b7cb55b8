#!/usr/bin/python3
"""Writes a llama-shaped safetensors checkpoint of at least 2 GiB for bench/inspect_scale.sh.
Usage: make_checkpoint.py OUT.safetensors [f32|bf16]"""
import json
import struct
import sys

import numpy as np

path = sys.argv[1]
dtype = sys.argv[2] if len(sys.argv) > 2 else "f32"
hidden, ffn, vocab = 2048, 5632, 32000
layers = 10 if dtype == "f32" else 20  # >= 2 GiB either way
shapes = [("model.embed_tokens.weight", (vocab, hidden))]
for i in range(layers):
    p = f"model.layers.{i}."
    shapes += [(p + "self_attn.q_proj.weight", (hidden, hidden)), (p + "self_attn.k_proj.weight", (hidden, hidden)),
               (p + "self_attn.v_proj.weight", (hidden, hidden)), (p + "self_attn.o_proj.weight", (hidden, hidden)),
               (p + "mlp.gate_proj.weight", (ffn, hidden)), (p + "mlp.up_proj.weight", (ffn, hidden)),
               (p + "mlp.down_proj.weight", (hidden, ffn)), (p + "input_layernorm.weight", (hidden,)),
               (p + "post_attention_layernorm.weight", (hidden,))]
shapes.append(("lm_head.weight", (vocab, hidden)))
size = 4 if dtype == "f32" else 2
header, offset = {}, 0
for name, shape in shapes:
    n = int(np.prod(shape)) * size
    header[name] = {"dtype": "F32" if dtype == "f32" else "BF16", "shape": list(shape),
                    "data_offsets": [offset, offset + n]}
    offset += n
text = json.dumps(header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
rng = np.random.default_rng(0)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
    for name, shape in shapes:
        values = rng.standard_normal(size=shape, dtype=np.float32) * np.float32(0.02)
        if dtype == "bf16":
            values = (values.view(np.uint32) >> 16).astype(np.uint16)
        f.write(values.tobytes())
print(f"{path}: {len(shapes)} tensors, {offset / 2**30:.2f} GiB of {dtype}")
