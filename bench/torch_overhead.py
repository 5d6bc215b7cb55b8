#!/usr/bin/env python3
"""The Python peers of bench/torch_overhead.cpp: the same transformer LM and copy task in
Debian's python3-torch, median step time with nothing, with torch.autograd.detect_anomaly(),
and with forward hooks on every module that check torch.isfinite on each output; one thread,
as ratios to plain. Run by bench/torch_overhead.sh (OPENBLAS_NUM_THREADS=1)."""
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, mask):
        b, t, d = x.shape
        dh = d // self.h
        split = lambda y: y.view(b, t, self.h, dh).transpose(1, 2)  # noqa: E731
        scores = split(self.q(x)) @ split(self.k(x)).transpose(-2, -1) / math.sqrt(dh) + mask
        mixed = torch.softmax(scores, -1) @ split(self.v(x))
        return self.o(mixed.transpose(1, 2).contiguous().view(b, t, d))


class Block(nn.Module):
    def __init__(self, d, h, ff):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(d), Attention(d, h)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, ff), nn.ReLU(), nn.Linear(ff, d))

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp(self.ln2(x))


class LM(nn.Module):
    def __init__(self, vocab, length, d, h, layers, ff):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(2 * length, d)
        self.blocks = nn.ModuleList(Block(d, h, ff) for _ in range(layers))
        self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)
        self.mask = torch.triu(torch.full((2 * length, 2 * length), -1e9), 1)

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x, self.mask)
        return self.head(self.ln_f(x))


def runner(vocab=16, length=8, batch=32, d=32, h=4, layers=2, ff=64):
    torch.manual_seed(1)
    model = LM(vocab, length, d, h, layers, ff)
    opt = torch.optim.Adam(model.parameters(), 3e-3)

    def step():
        tokens = torch.randint(1, vocab, (batch, length))
        seq = torch.cat([tokens, torch.zeros(batch, 1, dtype=torch.long), tokens], 1)
        x, y = seq[:, : 2 * length], seq[:, 1:]
        logits = model(x)[:, length:]
        loss = F.cross_entropy(logits.reshape(-1, vocab), y[:, length:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return model, step


def isfinite_hooks(model):
    def hook(module, inputs, output):
        if isinstance(output, torch.Tensor) and not torch.isfinite(output).all():
            raise RuntimeError("non-finite output")
    return [m.register_forward_hook(hook) for m in model.modules()]


def measure(label, sizes, rounds, steps):
    modes = ["off", "isfinite forward hooks", "detect_anomaly"]
    runs = {m: runner(**sizes) for m in modes}
    times = {m: [] for m in modes}
    hooks = isfinite_hooks(runs["isfinite forward hooks"][0])
    for m in modes:  # warm-up
        for _ in range(3):
            runs[m][1]()
    for _ in range(rounds):
        for m in modes:
            _, step = runs[m]
            for _ in range(steps):
                start = time.perf_counter()
                if m == "detect_anomaly":
                    with torch.autograd.detect_anomaly():
                        step()
                else:
                    step()
                times[m].append(time.perf_counter() - start)
    for h in hooks:
        h.remove()
    off = statistics.median(times["off"])
    print(f"python3-torch {torch.__version__}, {label}: {len(times['off'])} steps per mode")
    for m in modes:
        med = statistics.median(times[m])
        print(f"  {m:<26} {1e3 * med:9.3f} ms  {med / off:6.3f}x")
    sys.stdout.flush()


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.set_num_threads(1)
    import warnings
    warnings.filterwarnings("ignore")
    measure("default", {}, rounds, steps)
    measure("larger", dict(d=128, h=4, layers=4, ff=512, length=16), rounds, max(1, steps // 4))


if __name__ == "__main__":
    main()
