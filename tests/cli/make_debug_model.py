# A small TorchScript classifier and data for `tfdebug console --model` / `tfdebug dap`:
# usage make_debug_model.py OUT_DIR. model.pt: enc (Linear 6 -> 8), ReLU, head (Linear 8 -> 3),
# submodules by those names; x.npy [5, 6] f32; y.npy [5] class indices; x_nan.npy: x with a NaN
# planted at [2, 4]; tokens.pt (Embedding 10 x 4 then Linear 4 -> 3) with tokens.npy [2, 7] i64.
import os, sys
import numpy as np
import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(6, 8)
        self.head = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.head(torch.relu(self.enc(x)))


class Tokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.out = torch.nn.Linear(4, 3)

    def forward(self, ids):
        return self.out(self.emb(ids))


torch.jit.script(Classifier()).save(os.path.join(out, "model.pt"))
torch.jit.script(Tokens()).save(os.path.join(out, "tokens.pt"))
rng = np.random.default_rng(3)
x = rng.normal(0, 1, (5, 6)).astype(np.float32)
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y.npy"), np.array([0, 2, 1, 1, 0], dtype=np.int64))
x[2, 4] = np.nan
np.save(os.path.join(out, "x_nan.npy"), x)
np.save(os.path.join(out, "tokens.npy"), rng.integers(0, 10, (2, 7)).astype(np.int64))
