# A safetensors checkpoint of LAYERS GPT-2-style layers whose weights grow in scale with depth, with
# a NaN and an +inf planted in h.3.mlp.c_fc.weight: usage make_deep_model.py OUT LAYERS.
import json, struct, sys, numpy as np
layers = int(sys.argv[2]); rng = np.random.default_rng(0)
tensors = {"wte.weight": rng.normal(0, 0.02, (500, 32)).astype(np.float32)}
for i in range(layers):
    scale = 0.02 * (1 + i / 10)
    tensors[f"h.{i}.attn.c_attn.weight"] = rng.normal(0, scale, (32, 96)).astype(np.float32)
    tensors[f"h.{i}.mlp.c_fc.weight"] = rng.normal(0, scale, (32, 128)).astype(np.float32)
    tensors[f"h.{i}.ln_1.weight"] = np.ones(32, np.float32)
w = tensors["h.3.mlp.c_fc.weight"]; w[0, 0] = np.nan; w[1, 1] = np.inf
header, off, blobs = {}, 0, []
for k, v in tensors.items():
    b = v.tobytes(); header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}; off += len(b); blobs.append(b)
h = json.dumps(header).encode(); h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
