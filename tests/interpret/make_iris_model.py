#!/usr/bin/python3
# An MLP trained on iris (tests/data/iris.csv, from scikit-learn) with Debian's python3-torch,
# saved as TorchScript, and the attributions of one flower computed here independently of
# tfdebug — PyTorch's autograd and numpy's Gauss-Legendre nodes for Integrated Gradients, a
# plain enumeration of coalitions for the Shapley values — for tests/interpret/explain_test.sh:
#
#   make_iris_model.py OUT_DIR
#
# OUT_DIR/iris_mlp.pt, x.npy (one flower, [4]), x.csv, background.npy (every 8th flower: [19, 4]),
# background.csv, training.csv (all 150 flowers) and expected.json; for `tfdebug robust`, flowers.npy
# (every 5th flower: [30, 4], float32) and their classes labels.npy (int64).
import itertools, json, math, os, sys

import numpy as np
import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
rows = [l.strip().split(",") for l in open(os.path.join(here, "..", "data", "iris.csv"))][1:]
data = np.array([[float(v) for v in r[:4]] for r in rows], dtype=np.float32)
labels = np.array([int(r[4]) for r in rows])
mean, std = data.mean(0), data.std(0)

torch.manual_seed(0)
torch.set_num_threads(1)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean))
        self.register_buffer("std", torch.tensor(std))
        self.fc1 = torch.nn.Linear(4, 16)
        self.fc2 = torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1((x - self.mean) / self.std)))


model = Mlp()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
X, Y = torch.tensor(data), torch.tensor(labels)
for _ in range(300):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(X), Y)
    loss.backward()
    opt.step()
model.eval()
accuracy = float((model(X).argmax(1) == Y).float().mean())
assert accuracy > 0.95, accuracy
torch.jit.script(model).save(os.path.join(out, "iris_mlp.pt"))

x = data[77]  # a versicolor near the virginica border
background = data[::8]
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "background.npy"), background)
np.save(os.path.join(out, "flowers.npy"), data[::5])
np.save(os.path.join(out, "labels.npy"), labels[::5].astype(np.int64))
with open(os.path.join(out, "x.csv"), "w") as f:
    f.write("sepal length,sepal width,petal length,petal width\n" + ",".join(repr(float(v)) for v in x) + "\n")
with open(os.path.join(out, "training.csv"), "w") as f:  # every flower: LIME's training data
    for r in data:
        f.write(",".join(repr(float(v)) for v in r) + "\n")
with open(os.path.join(out, "background.csv"), "w") as f:
    for r in background:
        f.write(",".join(repr(float(v)) for v in r) + "\n")

def f(batch):
    with torch.no_grad():
        return model(torch.tensor(np.asarray(batch, dtype=np.float32))).double().numpy()

target = int(f([x])[0].argmax())

# Integrated Gradients, 50 Gauss-Legendre nodes from a zero baseline, by autograd.
t, w = np.polynomial.legendre.leggauss(50)
alphas, weights = (t + 1) / 2, w / 2
points = torch.tensor(np.array([a * x for a in alphas], dtype=np.float32), requires_grad=True)
model(points)[:, target].sum().backward()
ig = (x.astype(np.float64) * (weights[:, None] * points.grad.double().numpy()).sum(0)).tolist()

# Gradient x Input.
xt = torch.tensor(x[None], requires_grad=True)
model(xt)[0, target].backward()
gxi = (x * xt.grad.numpy()[0]).astype(np.float64).tolist()

# Exact Shapley values over the background: v(S) = mean_b f(x_S, b_rest).
M = 4
def v(S):
    rows = background.copy()
    for i in S:
        rows[:, i] = x[i]
    return f(rows)[:, target].mean()
phi = [0.0] * M
for i in range(M):
    others = [j for j in range(M) if j != i]
    for k in range(M):
        for S in itertools.combinations(others, k):
            weight = math.factorial(k) * math.factorial(M - k - 1) / math.factorial(M)
            phi[i] += weight * (v(S + (i,)) - v(S))

json.dump({"target": target, "outputs": f([x])[0].tolist(), "integrated_gradients": ig, "gradient_x_input": gxi,
           "shapley": phi, "f_x": float(f([x])[0, target]), "f_zero": float(f([np.zeros(4)])[0, target]),
           "background_mean_output": float(f(background)[:, target].mean()), "accuracy": accuracy},
          open(os.path.join(out, "expected.json"), "w"))
