#!/usr/bin/python3
# Two TorchScript models whose LIME explanations are known, for tests/interpret/explain_test.sh:
#
#   make_lime_models.py OUT_DIR
#
# OUT_DIR/tokens.pt: output = the sum of a weight per token id (ids 3, 5, 1, 7, 2 weigh 2, -3,
# 0.5, 1, -1; the mask 0 weighs nothing); quadrant.pt: a [1, 40, 40] image model whose output is
# the sum of the top-left 20 x 20 pixels; image.npy: quadrants of 1 and 2 (four superpixels).
import os, sys

import numpy as np
import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


class TokenSum(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.tensor([0.0, 0.5, -1.0, 2.0, 0.0, -3.0, 0.0, 1.0]))

    def forward(self, x):
        return self.w[x.long()].sum(1, keepdim=True)


class Quadrant(torch.nn.Module):
    def forward(self, x):
        return x[:, :, :20, :20].sum((1, 2, 3)).unsqueeze(1)


torch.jit.script(TokenSum()).save(os.path.join(out, "tokens.pt"))
torch.jit.script(Quadrant()).save(os.path.join(out, "quadrant.pt"))
img = np.full((1, 1, 40, 40), 2.0, dtype=np.float32)  # one example of [1, 40, 40]
img[..., :20, :20] = 1.0
img[..., 20:, 20:] = 1.0
np.save(os.path.join(out, "image.npy"), img)
