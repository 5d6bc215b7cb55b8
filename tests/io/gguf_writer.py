"""An independent GGUF v3 writer for the tests, written from the format description (ggml's
docs/gguf.md): key/values of every type, tensor infos with ne[0] innermost, data aligned. The
quantisers follow ggml's reference quantisers for q8_0/q4_0/q4_1/q5_0/q5_1; the k-quant
fixtures are random blocks. The decoders here are numpy re-statements of the block layouts and
give the values the C++ reader must reproduce exactly."""
import struct

import numpy as np

VALUE_TYPES = {"u8": 0, "i8": 1, "u16": 2, "i16": 3, "u32": 4, "i32": 5, "f32": 6, "bool": 7,
               "string": 8, "array": 9, "u64": 10, "i64": 11, "f64": 12}
SCALAR_FORMATS = {"u8": "<B", "i8": "<b", "u16": "<H", "i16": "<h", "u32": "<I", "i32": "<i", "f32": "<f",
                  "bool": "<?", "u64": "<Q", "i64": "<q", "f64": "<d"}
GGML_TYPES = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q4_K": 12,
              "Q5_K": 13, "Q6_K": 14, "I8": 24, "I16": 25, "I32": 26, "I64": 27, "F64": 28, "BF16": 30,
              "IQ2_XXS": 16}


def _string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def _value(vtype, value):
    if vtype == "string":
        return _string(value)
    return struct.pack(SCALAR_FORMATS[vtype], value)


def _kv(key, vtype, value):
    out = _string(key)
    if isinstance(vtype, tuple):  # ("array", element type)
        elem = vtype[1]
        out += struct.pack("<IIQ", VALUE_TYPES["array"], VALUE_TYPES[elem], len(value))
        return out + b"".join(_value(elem, v) for v in value)
    return out + struct.pack("<I", VALUE_TYPES[vtype]) + _value(vtype, value)


def write_gguf(path, kvs, tensors, alignment=32, version=3):
    """kvs: [(key, type or ("array", type), value)]; tensors: [(name, ggml type name, numpy
    shape, raw bytes)]. Offsets are the running sums of the sizes, each padded to the alignment."""
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    head += b"".join(_kv(k, t, v) for k, t, v in kvs)
    offset, data = 0, b""
    for name, ggml_type, shape, raw in tensors:
        ne = list(reversed(shape))
        head += _string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        head += struct.pack("<IQ", GGML_TYPES[ggml_type], offset)
        padded = raw + b"\0" * ((-len(raw)) % alignment)
        data += padded
        offset += len(padded)
    head += b"\0" * ((-len(head)) % alignment)
    with open(path, "wb") as f:
        f.write(head + data)


def f16_bits(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).view(np.uint16)


def _blocks(x, n):
    x = np.asarray(x, dtype=np.float32).reshape(-1, n)
    return x


# --- quantisers (ggml's reference rules) ------------------------------------------------------

def quantize_q8_0(x):
    b = _blocks(x, 32)
    amax = np.abs(b).max(axis=1)
    d = amax / 127
    inv = np.where(d > 0, 1 / np.where(d > 0, d, 1), 0)
    q = np.round(b * inv[:, None]).astype(np.int8)
    out = np.zeros((len(b), 34), dtype=np.uint8)
    out[:, 0:2] = f16_bits(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def _signed_max(b):
    idx = np.abs(b).argmax(axis=1)
    return b[np.arange(len(b)), idx]


def _inverse(d):
    return np.where(d != 0, 1 / np.where(d != 0, d, 1), 0)


def _qh(q):
    bits = (q >> 4) & 1  # the fifth bit of each of the 32 values
    return (bits.astype(np.uint32) << np.arange(32, dtype=np.uint32)).sum(axis=1).astype(np.uint32)


def _quantize_32(x, fifth_bit, with_min):
    """q4_0, q4_1, q5_0 and q5_1: d (and m), then the fifth bits (qh), then 16 bytes of nibbles."""
    levels = 31 if fifth_bit else 15
    b = _blocks(x, 32)
    if with_min:
        lo, hi = b.min(axis=1), b.max(axis=1)
        d = (hi - lo) / levels
        q = ((b - lo[:, None]) * _inverse(d)[:, None] + 0.5).astype(np.int8)
    else:
        d = _signed_max(b) / -((levels + 1) // 2)  # -8 (q4_0) or -16 (q5_0)
        q = (b * _inverse(d)[:, None] + (levels + 1) // 2 + 0.5).astype(np.int8)
    q = np.minimum(levels, q).astype(np.uint8)
    fields = [f16_bits(d).view(np.uint8).reshape(-1, 2)]
    if with_min:
        fields.append(f16_bits(lo).view(np.uint8).reshape(-1, 2))
    if fifth_bit:
        fields.append(_qh(q).view(np.uint8).reshape(-1, 4))
    fields.append((q[:, :16] & 15) | ((q[:, 16:] & 15) << 4))
    return np.concatenate(fields, axis=1).astype(np.uint8).tobytes()


def quantize_q4_0(x):
    return _quantize_32(x, fifth_bit=False, with_min=False)


def quantize_q4_1(x):
    return _quantize_32(x, fifth_bit=False, with_min=True)


def quantize_q5_0(x):
    return _quantize_32(x, fifth_bit=True, with_min=False)


def quantize_q5_1(x):
    return _quantize_32(x, fifth_bit=True, with_min=True)


def random_k_blocks(rng, kind, blocks):
    """Random k-quant blocks whose f16 scales are moderate (exponent field 8..15)."""
    size = {"Q4_K": 144, "Q5_K": 176, "Q6_K": 210}[kind]
    raw = rng.integers(0, 256, size=(blocks, size), dtype=np.uint8)

    def moderate():
        return (0x2000 | rng.integers(0, 0x400, size=blocks)).astype(np.uint16).view(np.uint8).reshape(-1, 2)

    if kind == "Q6_K":
        raw[:, 208:210] = moderate()
    else:
        raw[:, 0:2] = moderate()
        raw[:, 2:4] = moderate()
    return raw.tobytes()


# --- decoders (numpy re-statements of the layouts) -------------------------------------------

def _half(raw, at):
    return raw[:, at:at + 2].copy().view(np.float16).astype(np.float32).reshape(-1)


def _nibbles(qs):
    return np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.int32)


def _fifth_bits(raw, at):
    qh = raw[:, at:at + 4].copy().view(np.uint32).reshape(-1)
    return ((qh[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(np.int32) << 4


def _k_scales(s):
    """Eight 6-bit (scale, min) pairs from 12 bytes, per block: arrays (blocks, 8)."""
    s = s.astype(np.int32)
    sc = np.zeros((len(s), 8), dtype=np.int32)
    mn = np.zeros((len(s), 8), dtype=np.int32)
    for j in range(8):
        if j < 4:
            sc[:, j] = s[:, j] & 63
            mn[:, j] = s[:, j + 4] & 63
        else:
            sc[:, j] = (s[:, j + 4] & 15) | ((s[:, j - 4] >> 6) << 4)
            mn[:, j] = (s[:, j + 4] >> 4) | ((s[:, j] >> 6) << 4)
    return sc, mn


def dequantize(kind, data):
    size = {"Q8_0": 34, "Q4_0": 18, "Q4_1": 20, "Q5_0": 22, "Q5_1": 24, "Q4_K": 144, "Q5_K": 176,
            "Q6_K": 210}[kind]
    raw = np.frombuffer(data, dtype=np.uint8).reshape(-1, size)
    f32 = np.float32
    if kind == "Q8_0":
        return (raw[:, 2:].view(np.int8).astype(f32) * _half(raw, 0)[:, None]).reshape(-1)
    if kind == "Q4_0":
        return ((_nibbles(raw[:, 2:]) - 8).astype(f32) * _half(raw, 0)[:, None]).reshape(-1)
    if kind == "Q4_1":
        return (_nibbles(raw[:, 4:]).astype(f32) * _half(raw, 0)[:, None] + _half(raw, 2)[:, None]).reshape(-1)
    if kind == "Q5_0":
        q = _nibbles(raw[:, 6:]) | _fifth_bits(raw, 2)
        return ((q - 16).astype(f32) * _half(raw, 0)[:, None]).reshape(-1)
    if kind == "Q5_1":
        q = _nibbles(raw[:, 8:]) | _fifth_bits(raw, 4)
        return (q.astype(f32) * _half(raw, 0)[:, None] + _half(raw, 2)[:, None]).reshape(-1)
    if kind in ("Q4_K", "Q5_K"):
        d, dmin = _half(raw, 0), _half(raw, 2)
        sc, mn = _k_scales(raw[:, 4:16])
        qs = raw[:, 48:] if kind == "Q5_K" else raw[:, 16:]
        out = np.zeros((len(raw), 256), dtype=f32)
        for g in range(4):
            chunk = qs[:, 32 * g:32 * g + 32].astype(np.int32)
            lo, hi = chunk & 15, chunk >> 4
            if kind == "Q5_K":
                qh = raw[:, 16:48].astype(np.int32)
                lo = lo | (((qh >> (2 * g)) & 1) << 4)
                hi = hi | (((qh >> (2 * g + 1)) & 1) << 4)
            for half, q in ((0, lo), (1, hi)):
                j = 2 * g + half
                scale = (d * sc[:, j].astype(f32))[:, None]
                minimum = (dmin * mn[:, j].astype(f32))[:, None]
                out[:, 64 * g + 32 * half:64 * g + 32 * half + 32] = scale * q.astype(f32) - minimum
        return out.reshape(-1)
    if kind == "Q6_K":
        d = _half(raw, 208)
        sc = raw[:, 192:208].view(np.int8).astype(np.int32)
        out = np.zeros((len(raw), 256), dtype=f32)
        for h in range(2):
            ql = raw[:, 128 * 0 + 64 * h:64 * h + 64].astype(np.int32)
            qh = raw[:, 128 + 32 * h:128 + 32 * h + 32].astype(np.int32)
            parts = [(ql[:, :32] & 15) | ((qh & 3) << 4), (ql[:, 32:] & 15) | (((qh >> 2) & 3) << 4),
                     (ql[:, :32] >> 4) | (((qh >> 4) & 3) << 4), (ql[:, 32:] >> 4) | (((qh >> 6) & 3) << 4)]
            for k, q in enumerate(parts):
                for l16 in range(2):
                    s = sc[:, 8 * h + 2 * k + l16]
                    cols = slice(128 * h + 32 * k + 16 * l16, 128 * h + 32 * k + 16 * l16 + 16)
                    qq = q[:, 16 * l16:16 * l16 + 16] - 32
                    out[:, cols] = d[:, None] * (s[:, None] * qq).astype(f32)
        return out.reshape(-1)
    raise ValueError(kind)


QUANTIZERS = {"Q8_0": quantize_q8_0, "Q4_0": quantize_q4_0, "Q4_1": quantize_q4_1, "Q5_0": quantize_q5_0,
              "Q5_1": quantize_q5_1}
