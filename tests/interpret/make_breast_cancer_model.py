#!/usr/bin/python3
# A 30-16-2 MLP trained on the Wisconsin breast-cancer data (tests/data/breast_cancer.csv, from
# scikit-learn: 569 tumours, 30 features, class 0 malignant, 1 benign) with Debian's python3-torch,
# saved as TorchScript, for docs/interpretability.md's real-data example and
# tests/interpret/breast_cancer_test.sh:
#
#   make_breast_cancer_model.py OUT_DIR
#
# OUT_DIR/breast_cancer_mlp.pt, x.csv (one tumour, a header naming the features), x.npy,
# background.csv (every 16th tumour: 36 rows), training.csv (all 569) and expected.json (the
# model's outputs at x and their mean over the background, the training accuracy).
import json, os, sys

import numpy as np
import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
lines = open(os.path.join(here, "..", "data", "breast_cancer.csv")).read().split("\n")
rows = [l.split(",") for l in lines[1:] if l]  # line 1: "569,30,malignant,benign"
data = np.array([[float(v) for v in r[:30]] for r in rows], dtype=np.float32)
labels = np.array([int(r[30]) for r in rows])
assert data.shape == (569, 30), data.shape
names = [f"{kind}{n}" for kind in ("mean ", "", "worst ") for n in
         ("radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity", "concave points",
          "symmetry", "fractal dimension")]
names = names[:10] + [n + " error" for n in names[10:20]] + names[20:]
mean, std = data.mean(0), data.std(0)

torch.manual_seed(0)
torch.set_num_threads(1)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean))
        self.register_buffer("std", torch.tensor(std))
        self.fc1 = torch.nn.Linear(30, 16)
        self.fc2 = torch.nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1((x - self.mean) / self.std)))


model = Mlp()
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-3)
X, Y = torch.tensor(data), torch.tensor(labels)
for _ in range(300):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(X), Y)
    loss.backward()
    opt.step()
model.eval()
accuracy = float((model(X).argmax(1) == Y).float().mean())
assert accuracy > 0.97, accuracy
torch.jit.script(model).save(os.path.join(out, "breast_cancer_mlp.pt"))

x = data[13]  # a malignant tumour
np.save(os.path.join(out, "x.npy"), x)
background = data[::16]
with open(os.path.join(out, "x.csv"), "w") as f:
    f.write(",".join(names) + "\n" + ",".join(repr(float(v)) for v in x) + "\n")
for name, table in (("background.csv", background), ("training.csv", data)):
    with open(os.path.join(out, name), "w") as f:
        for r in table:
            f.write(",".join(repr(float(v)) for v in r) + "\n")
with torch.no_grad():
    fx = model(torch.tensor(x[None]))[0].double().tolist()
    fb = model(torch.tensor(background)).double().mean(0).tolist()
json.dump({"outputs": fx, "background_mean_outputs": fb, "label": int(labels[13]), "accuracy": accuracy,
           "names": names}, open(os.path.join(out, "expected.json"), "w"))
