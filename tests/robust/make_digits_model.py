#!/usr/bin/python3
# An MLP trained on the shipped digits (examples/data/digits_1797x64.f32: 8x8 images, pixel values
# 0..16, scaled here to [0, 1]; labels in examples/data/digits_labels_1797.txt) with Debian's
# python3-torch, saved as TorchScript, and a held-out test batch, for the attack tests:
#
#   make_digits_model.py OUT_DIR
#
# OUT_DIR/digits_mlp.pt (forward: [n, 64] in [0, 1] -> [n, 10] logits), test_x.npy ([300, 64]
# f32: every 6th image, never trained on), test_y.npy ([300] int64), small_x.npy / small_y.npy (the
# first 24 of them) and expected.json (the clean test accuracy).
import json, os, sys

import numpy as np
import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "data")
x = np.fromfile(os.path.join(data, "digits_1797x64.f32"), dtype=np.float32).reshape(1797, 64) / 16.0
y = np.array([int(l) for l in open(os.path.join(data, "digits_labels_1797.txt"))], dtype=np.int64)
assert len(y) == 1797
test = np.arange(1797) % 6 == 0
torch.manual_seed(0)
torch.set_num_threads(1)

model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
X, Y = torch.tensor(x[~test]), torch.tensor(y[~test])
for _ in range(300):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(X), Y).backward()
    opt.step()
model.eval()
tx, ty = x[test].astype(np.float32), y[test]
with torch.no_grad():
    accuracy = float((model(torch.tensor(tx)).argmax(1).numpy() == ty).mean())
assert accuracy > 0.9, accuracy
torch.jit.script(model).save(os.path.join(out, "digits_mlp.pt"))
np.save(os.path.join(out, "test_x.npy"), tx)
np.save(os.path.join(out, "test_y.npy"), ty)
np.save(os.path.join(out, "small_x.npy"), tx[:24])
np.save(os.path.join(out, "small_y.npy"), ty[:24])
json.dump({"accuracy": accuracy, "test_examples": int(test.sum())}, open(os.path.join(out, "expected.json"), "w"))
