#!/usr/bin/python3
"""The peer: numpy computing the statistics tfdebug's kernel reports, on the same files.

Statistics: NaN count, Inf count, min, max, abs-max, mean, std, count_nonzero, L1, L2.
numpy has no bfloat16: bf16 data is widened to f32 first (part of the timed work, as it is
for anyone using numpy). Prints one JSON line per case: {"dtype", "size", "gbps"}.
Usage: numpy_stats.py DIR"""
import json
import sys
import time

import numpy as np


def stats(x):
    return (
        np.count_nonzero(np.isnan(x)),
        np.count_nonzero(np.isinf(x)),
        x.min(),
        x.max(),
        np.abs(x).max(),
        x.mean(),
        x.std(),
        np.count_nonzero(x),
        np.abs(x).sum(),
        np.linalg.norm(x),
    )


def load(path, dtype):
    if dtype == "bf16":
        raw = np.fromfile(path, dtype=np.uint16)
        return raw, lambda r: (r.astype(np.uint32) << 16).view(np.float32)
    return np.fromfile(path, dtype={"f32": np.float32, "f16": np.float16}[dtype]), lambda r: r


def main():
    # numpy's f16 sum and std overflow (f16 accumulators) on these sizes; time them anyway.
    np.seterr(all="ignore")
    folder = sys.argv[1]
    for dtype in ("f32", "bf16", "f16"):
        for size in (256 << 10, 256 << 20):
            raw, widen = load(f"{folder}/{dtype}_{size}.bin", dtype)
            repeats = 200 if size < (1 << 20) else 3
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                stats(widen(raw))
                best = min(best, time.perf_counter() - start)
            print(json.dumps({"dtype": dtype, "size": size, "gbps": size / best / 1e9}), flush=True)


if __name__ == "__main__":
    main()
