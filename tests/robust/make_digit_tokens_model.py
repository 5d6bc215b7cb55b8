#!/usr/bin/python3
# A token classifier on the shipped digits read as token sequences (examples/data/digits_1797x64.f32:
# each 8x8 image is 64 tokens, its pixel values 0..16 as ids of a vocabulary of 17; 0 is a blank
# pixel), trained with Debian's python3-torch and saved as TorchScript, for the token perturbation
# test (tests/robust/token_perturbation_test.sh):
#
#   make_digit_tokens_model.py OUT_DIR
#
# OUT_DIR/digit_tokens.pt (forward: ids [n, 64] as floats -> [n, 10] logits: an embedding of each
# id, flattened, a linear layer), ids.npy ([60, 64] int64: every 30th image, never trained on) and
# labels.npy ([60] int64).
import os, sys

import numpy as np
import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "data")
ids = np.fromfile(os.path.join(data, "digits_1797x64.f32"), dtype=np.float32).reshape(1797, 64).astype(np.int64)
y = np.array([int(l) for l in open(os.path.join(data, "digits_labels_1797.txt"))], dtype=np.int64)
assert ids.min() == 0 and ids.max() == 16
held_out = np.arange(1797) % 30 == 0
torch.manual_seed(0)
torch.set_num_threads(1)


class DigitTokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(17, 4)
        self.fc = torch.nn.Linear(64 * 4, 10)

    def forward(self, x):
        return self.fc(self.tok(x.long()).flatten(1))


model = DigitTokens()
opt = torch.optim.Adam(model.parameters(), lr=0.02)
X, Y = torch.tensor(ids[~held_out]), torch.tensor(y[~held_out])
for _ in range(150):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(X.float()), Y).backward()
    opt.step()
model.eval()
with torch.no_grad():
    accuracy = float((model(torch.tensor(ids[held_out]).float()).argmax(1).numpy() == y[held_out]).mean())
assert accuracy > 0.85, accuracy
torch.jit.script(model).save(os.path.join(out, "digit_tokens.pt"))
np.save(os.path.join(out, "ids.npy"), ids[held_out])
np.save(os.path.join(out, "labels.npy"), y[held_out])
print(f"held-out accuracy {accuracy:.3f}")
