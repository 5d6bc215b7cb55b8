#!/usr/bin/python3
"""Writes the benchmark tensors (normal(0, 1) in f32, bf16 and f16; 256 KiB and 256 MiB) so
that tfdebug and numpy read the very same bytes. Usage: make_data.py DIR"""
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(1)
for size in (256 << 10, 256 << 20):
    base = rng.standard_normal(size // 2, dtype=np.float32)  # enough values for 2-byte dtypes
    f32 = base[: size // 4]
    f32.tofile(f"{out}/f32_{size}.bin")
    base.astype(np.float16).tofile(f"{out}/f16_{size}.bin")
    (base.view(np.uint32) >> 16).astype(np.uint16).tofile(f"{out}/bf16_{size}.bin")
