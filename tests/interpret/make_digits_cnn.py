#!/usr/bin/python3
# A small CNN trained on the 8x8 digits the repo ships (examples/data/digits_1797x64.f32, pixel
# values 0..16, and examples/data/digits_labels_1797.txt) with Debian's python3-torch, seeded, on
# the CPU, saved as TorchScript; and the class activation maps of one test digit computed here
# independently of tfdebug — PyTorch hooks on conv2 for the activations and the gradient,
# F.interpolate(bilinear, align_corners=False) for the resizing — for
# tests/interpret/explain_cam_test.sh and docs/interpretability.md:
#
#   make_digits_cnn.py OUT_DIR
#
# OUT_DIR/cnn.pt (input [n, 1, 8, 8], 10 logits), x.npy (one digit, [1, 8, 8]), expected.json.
import json, os, sys

import numpy as np
import torch
import torch.nn.functional as F

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
data = np.fromfile(os.path.join(root, "examples", "data", "digits_1797x64.f32"), dtype=np.float32)
images = data.reshape(1797, 1, 8, 8)
labels = np.array([int(l) for l in open(os.path.join(root, "examples", "data", "digits_labels_1797.txt"))])
assert len(labels) == 1797

torch.manual_seed(0)
torch.set_num_threads(1)


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x / 16.0)), 2)  # [n, 8, 4, 4]
        x = F.relu(self.conv2(x))  # conv2's output, the layer Grad-CAM looks at: [n, 16, 4, 4]
        return self.fc(x.flatten(1))


train, test = np.arange(0, 1500), np.arange(1500, 1797)
X, Y = torch.tensor(images), torch.tensor(labels)
model = Cnn()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
generator = torch.Generator().manual_seed(0)
for epoch in range(15):
    order = torch.tensor(train)[torch.randperm(len(train), generator=generator)]
    for i in range(0, len(order), 64):
        batch = order[i:i + 64]
        opt.zero_grad()
        F.cross_entropy(model(X[batch]), Y[batch]).backward()
        opt.step()
model.eval()
with torch.no_grad():
    accuracy = float((model(X[test]).argmax(1) == Y[test]).float().mean())
assert accuracy > 0.9, accuracy
torch.jit.script(model).save(os.path.join(out, "cnn.pt"))

index = 1500 + 3  # a held-out digit
x = X[index:index + 1]
np.save(os.path.join(out, "x.npy"), x[0].numpy())

# Grad-CAM, Grad-CAM++ at conv2 by hooks on the Python model.
seen = {}


def keep(module, inputs, output):
    seen["a"] = output.detach()
    output.register_hook(lambda g: seen.__setitem__("g", g.detach()))


hook = model.conv2.register_forward_hook(keep)
y = model(x)
target = int(y.argmax(1))
y[0, target].backward()
hook.remove()
a, g = seen["a"].double(), seen["g"].double()  # [1, 16, 4, 4]


def resize(m):  # [4, 4] -> [8, 8]
    return F.interpolate(m[None, None], size=(8, 8), mode="bilinear", align_corners=False)[0, 0]


alpha = g.mean((2, 3), keepdim=True)
grad_cam = (alpha * a).sum(1)[0].relu()
g2, g3 = g ** 2, g ** 3
aij = g2 / (2 * g2 + a.sum((2, 3), keepdim=True) * g3 + 1e-6)
aij = torch.where(g != 0, aij, torch.zeros_like(aij))
w = (aij * g.relu()).sum((2, 3), keepdim=True)
plus = (w * a).sum(1)[0].relu()

# Score-CAM: bilinear masks, min-max scaled, constant channels skipped, softmax of the scores.
scores, kept = [], []
with torch.no_grad():
    for k in range(a.shape[1]):
        up = resize(a[0, k])
        if up.max() - up.min() <= 0:
            continue
        mask = (up - up.min()) / (up.max() - up.min())
        scores.append(float(model((x.double() * mask).float())[0, target]))
        kept.append(k)
weights = torch.zeros(a.shape[1], dtype=torch.float64)
weights[kept] = torch.softmax(torch.tensor(scores, dtype=torch.float64), 0)
score = (weights[None, :, None, None] * a).sum(1)[0].relu()

json.dump({"target": target, "label": int(labels[index]), "output": float(y[0, target]),
           "accuracy": accuracy, "skipped": [k for k in range(a.shape[1]) if k not in kept],
           "grad_cam": resize(grad_cam).tolist(), "grad_cam_layer": grad_cam.tolist(),
           "grad_cam_plus_plus": resize(plus).tolist(), "score_cam": resize(score).tolist()},
          open(os.path.join(out, "expected.json"), "w"))
print(f"digits CNN: {accuracy:.3f} held-out accuracy; digit {index} (label {labels[index]}) -> {target}")
