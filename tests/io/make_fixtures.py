#!/usr/bin/python3
"""Writes the model-file fixtures the io and inspect tests read, with numpy (an independent
writer): safetensors built to the format's spec, a sharded checkpoint with its index, and .npy
files in every layout numpy writes. Usage: make_fixtures.py OUT_DIR"""
import json
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)


def bf16(a):
    return (np.asarray(a, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def write_safetensors(path, tensors, metadata=None):
    """tensors: name -> (dtype string, numpy array of the raw little-endian elements)."""
    order = sorted(tensors, key=lambda n: (-tensors[n][1].dtype.itemsize, n))
    header, blobs, offset = {}, [], 0
    for name in order:
        dtype, array = tensors[name]
        raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


embed = rng.normal(0, 0.02, size=(16, 8)).astype(np.float32)
embed[[3, 11]] = 0  # dead embedding rows
q = rng.normal(0, 0.1, size=(8, 8)).astype(np.float32)
q[2, 3] = np.nan
q[5, 0] = np.inf
fc1 = rng.normal(0, 0.1, size=(12, 8)).astype(np.float32)
fc1[7] *= 100  # an outlier channel
fc2 = rng.normal(0, 0.1, size=(8, 12)).astype(np.float32)
fc2[:, [3, 7]] = 0  # dead input units
big = rng.normal(0, 3000, size=(4, 4)).astype(np.float32)
big[1, 2] = 70000.0  # beyond f16
model = {
    "embed.weight": ("F32", embed),
    "layers.0.attn.q.weight": ("F32", q),
    "layers.0.mlp.fc1.weight": ("BF16", bf16(fc1)),
    "layers.1.mlp.fc2.weight": ("F32", fc2),
    "layers.1.mlp.up.weight": ("F16", rng.normal(0, 0.05, size=(12, 8)).astype(np.float16)),
    "layers.1.norm.weight": ("F32", np.ones(8, dtype=np.float32)),
    "layers.1.scale": ("F32", big),
    "lm_head.weight": ("F32", embed.copy()),
    "step": ("I64", np.array(1234, dtype=np.int64)),
}
write_safetensors(f"{out}/model.safetensors", model, {"format": "pt", "source": "make_fixtures.py"})
np.save(f"{out}/embed.npy", embed)  # the same values, for cross-format checks

# A sharded checkpoint: two shards and the index.
os.makedirs(f"{out}/sharded", exist_ok=True)
shard_a = {"a.weight": ("F32", rng.normal(size=(4, 4)).astype(np.float32))}
shard_b = {"b.weight": ("F32", rng.normal(size=(2, 3)).astype(np.float32)),
           "b.bias": ("F32", np.zeros(3, dtype=np.float32))}
write_safetensors(f"{out}/sharded/model-00001-of-00002.safetensors", shard_a)
write_safetensors(f"{out}/sharded/model-00002-of-00002.safetensors", shard_b)
index = {"metadata": {"total_size": 100},
         "weight_map": {"a.weight": "model-00001-of-00002.safetensors",
                        "b.weight": "model-00002-of-00002.safetensors",
                        "b.bias": "model-00002-of-00002.safetensors"}}
json.dump(index, open(f"{out}/sharded/model.safetensors.index.json", "w"))

# .npy in every layout.
grid = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
np.save(f"{out}/c_f4.npy", grid)
np.save(f"{out}/fortran_f8.npy", np.asfortranarray(grid.astype(np.float64)))
np.save(f"{out}/big_endian_f4.npy", grid.astype(">f4"))
np.save(f"{out}/half.npy", grid.astype(np.float16))
np.save(f"{out}/scalar_i8.npy", np.array(-7, dtype=np.int64))
np.save(f"{out}/flags.npy", np.array([True, False, True]))
with open(f"{out}/v2_f4.npy", "wb") as f:
    np.lib.format.write_array(f, grid, version=(2, 0))
with open(f"{out}/v3_f4.npy", "wb") as f:
    np.lib.format.write_array(f, grid, version=(3, 0))
np.save(f"{out}/objects.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
np.save(f"{out}/record.npy", np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")]))
np.savez(f"{out}/archive.npz", a=grid)
np.savez_compressed(f"{out}/compressed.npz", grid.astype(np.float16), w=grid, b=grid.astype(">f8"))
raw = bytearray(open(f"{out}/compressed.npz", "rb").read())
raw[60] ^= 0xFF  # inside the first entry's deflate stream: the CRC (or inflate) must catch it
open(f"{out}/corrupt.npz", "wb").write(bytes(raw))

# A changed copy of the model, for `tfdebug diff`: one value perturbed, one tensor removed, one
# added, one reshaped, one stored as bf16 instead of f32 (same values where bf16 holds them).
changed = dict(model)
fc2_b = fc2.copy()
fc2_b[1, 2] += 0.5
changed["layers.1.mlp.fc2.weight"] = ("F32", fc2_b)
del changed["step"]
changed["layers.2.new.weight"] = ("F32", np.ones((2, 2), dtype=np.float32))
changed["layers.1.scale"] = ("F32", big.reshape(2, 8))
changed["layers.1.norm.weight"] = ("BF16", bf16(np.ones(8, dtype=np.float32)))
write_safetensors(f"{out}/model_b.safetensors", changed, {"format": "pt"})

# Initialisation scales: std * sqrt(fan_in) of 1 (fine), 16 (too large), 0.0008 (too small).
write_safetensors(f"{out}/init.safetensors", {
    "good.weight": ("F32", rng.normal(0, 1 / 8, size=(32, 64)).astype(np.float32)),
    "exploded.weight": ("F32", rng.normal(0, 2.0, size=(32, 64)).astype(np.float32)),
    "collapsed.weight": ("F32", rng.normal(0, 1e-4, size=(32, 64)).astype(np.float32)),
    "final_norm.weight": ("F32", rng.normal(1, 0.5, size=(32, 64)).astype(np.float32)),
})

# GGUF, written by an independent writer (tests/io/gguf_writer.py): every key/value type, plain
# and block-quantised tensors with the values numpy decodes from them, and the model above as
# a GGUF export (f32 tensors stored as F16) for `tfdebug diff`.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_writer  # noqa: E402

os.makedirs(f"{out}/gguf_expected", exist_ok=True)
kvs = [("general.architecture", "string", "llama"), ("general.name", "string", "tfdebug fixture"),
       ("general.quantization_version", "u32", 2), ("test.u8", "u8", 200), ("test.i8", "i8", -100),
       ("test.u16", "u16", 60000), ("test.i16", "i16", -30000), ("test.i32", "i32", -2000000000),
       ("test.f32", "f32", 0.5), ("test.bool", "bool", True), ("test.u64", "u64", 2**63 + 5),
       ("test.i64", "i64", -(2**62)), ("test.f64", "f64", 0.1),
       ("test.tokens", ("array", "string"), [f"tok{i}" for i in range(20)]),
       ("test.ids", ("array", "i32"), [1, -2, 3])]
tensors = []
for kind, quantize in gguf_writer.QUANTIZERS.items():
    x = rng.normal(0, 0.5, size=(4, 256)).astype(np.float32)
    x[0, :32] = 0  # an all-zero block: d = 0
    raw = quantize(x)
    tensors.append((f"quant.{kind.lower()}", kind, (4, 256), raw))
    np.save(f"{out}/gguf_expected/quant.{kind.lower()}.npy", gguf_writer.dequantize(kind, raw).reshape(4, 256))
for kind in ("Q4_K", "Q5_K", "Q6_K"):
    raw = gguf_writer.random_k_blocks(rng, kind, 8)
    tensors.append((f"quant.{kind.lower()}", kind, (4, 512), raw))
    np.save(f"{out}/gguf_expected/quant.{kind.lower()}.npy", gguf_writer.dequantize(kind, raw).reshape(4, 512))
plain = {"plain.f32": ("F32", rng.normal(size=(3, 5)).astype(np.float32)),
         "plain.f16": ("F16", rng.normal(size=(2, 3)).astype(np.float16)),
         "plain.bf16": ("BF16", bf16(rng.normal(size=4))),
         "plain.f64": ("F64", rng.normal(size=(2, 2))),
         "plain.i32": ("I32", np.arange(-2, 3, dtype=np.int32))}
for name, (kind, array) in plain.items():
    tensors.append((name, kind, array.shape, array.astype(array.dtype.newbyteorder("<")).tobytes()))
    if kind == "BF16":  # .npy has no bf16: the expected values as f32
        array = (array.astype(np.uint32) << 16).view(np.float32)
    np.save(f"{out}/gguf_expected/{name}.npy", array)
tensors.append(("other.iq2_xxs", "IQ2_XXS", (256,), bytes(66)))  # listed, not decoded
gguf_writer.write_gguf(f"{out}/quantized.gguf", kvs, tensors)

export = []
for name, (kind, array) in model.items():
    if kind == "F32" and array.ndim > 0:
        with np.errstate(over="ignore"):  # 70000 becomes inf in f16, on purpose
            kind, array = "F16", array.astype(np.float16)
    gguf_kind = {"F32": "F32", "F16": "F16", "BF16": "BF16", "I64": "I64"}[kind]
    export.append((name, gguf_kind, array.shape, array.astype(array.dtype.newbyteorder("<")).tobytes()))
gguf_writer.write_gguf(f"{out}/model.gguf", [("general.architecture", "string", "tfdebug-test"),
                                             ("general.alignment", "u32", 64)], export, alignment=64)

# A tiny Hugging Face llama checkpoint and its llama.cpp-style GGUF export: llama.cpp names,
# query/key rows permuted within each head (convert_hf_to_gguf's rotary layout), Q8_0 matrices,
# F32 norms, F16 embeddings. `tfdebug diff` must match the names and undo the permutation.
hidden, heads, kv_heads, ffn, vocab = 64, 4, 2, 128, 48
head_dim = hidden // heads


def rope_permute(w, n_head):
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


hf, export = {}, []
hf["model.embed_tokens.weight"] = rng.normal(0, 0.02, size=(vocab, hidden)).astype(np.float32)
export.append(("token_embd.weight", "F16", (vocab, hidden), hf["model.embed_tokens.weight"].astype(np.float16).tobytes()))
for i in range(2):
    p = f"model.layers.{i}."
    mats = {"self_attn.q_proj.weight": ("attn_q.weight", (hidden, hidden), heads),
            "self_attn.k_proj.weight": ("attn_k.weight", (kv_heads * head_dim, hidden), kv_heads),
            "self_attn.v_proj.weight": ("attn_v.weight", (kv_heads * head_dim, hidden), 0),
            "self_attn.o_proj.weight": ("attn_output.weight", (hidden, hidden), 0),
            "mlp.gate_proj.weight": ("ffn_gate.weight", (ffn, hidden), 0),
            "mlp.up_proj.weight": ("ffn_up.weight", (ffn, hidden), 0),
            "mlp.down_proj.weight": ("ffn_down.weight", (hidden, ffn), 0)}
    for name, (gguf_name, shape, permute_heads) in mats.items():
        w = rng.normal(0, 1 / np.sqrt(shape[1]), size=shape).astype(np.float32)
        hf[p + name] = w
        stored = rope_permute(w, permute_heads) if permute_heads else w
        export.append((f"blk.{i}.{gguf_name}", "Q8_0", shape, gguf_writer.quantize_q8_0(stored)))
    for name, gguf_name in (("input_layernorm.weight", "attn_norm.weight"),
                            ("post_attention_layernorm.weight", "ffn_norm.weight")):
        hf[p + name] = rng.normal(1, 0.1, size=hidden).astype(np.float32)
        export.append((f"blk.{i}.{gguf_name}", "F32", (hidden,), hf[p + name].tobytes()))
hf["model.norm.weight"] = rng.normal(1, 0.1, size=hidden).astype(np.float32)
export.append(("output_norm.weight", "F32", (hidden,), hf["model.norm.weight"].tobytes()))
hf["lm_head.weight"] = rng.normal(0, 0.02, size=(vocab, hidden)).astype(np.float32)
export.append(("output.weight", "F16", (vocab, hidden), hf["lm_head.weight"].astype(np.float16).tobytes()))
write_safetensors(f"{out}/llama_hf.safetensors", {k: ("F32", v) for k, v in hf.items()})
gguf_writer.write_gguf(f"{out}/llama_q8.gguf", [
    ("general.architecture", "string", "llama"), ("llama.block_count", "u32", 2),
    ("llama.embedding_length", "u32", hidden), ("llama.attention.head_count", "u32", heads),
    ("llama.attention.head_count_kv", "u32", kv_heads), ("general.file_type", "u32", 7)], export)
# The same export in F32 with one query value changed at Hugging Face position [5, 7] of layer 0:
# diff must report exactly that element, in Hugging Face coordinates.
exact = []
for name, kind, shape, raw in export:
    if kind == "Q8_0":
        hf_name = {"attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
                   "attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
                   "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
                   "ffn_down.weight": "mlp.down_proj.weight"}[name.split(".", 2)[2]]
        layer = name.split(".")[1]
        w = hf[f"model.layers.{layer}.{hf_name}"].copy()
        if name == "blk.0.attn_q.weight":
            w[5, 7] += 1.0
        n_head = heads if "attn_q" in name else kv_heads if "attn_k" in name else 0
        exact.append((name, "F32", shape, (rope_permute(w, n_head) if n_head else w).tobytes()))
    else:
        exact.append((name, kind, shape, raw))
gguf_writer.write_gguf(f"{out}/llama_f32.gguf", [
    ("general.architecture", "string", "llama"), ("llama.attention.head_count", "u32", heads),
    ("llama.attention.head_count_kv", "u32", kv_heads)], exact)

# GGUF version 2 (same layout as 3 for little-endian files).
gguf_writer.write_gguf(f"{out}/v2.gguf", [("general.architecture", "string", "llama")],
                       [("w", "F32", (2, 3), np.arange(6, dtype=np.float32).tobytes())], version=2)
