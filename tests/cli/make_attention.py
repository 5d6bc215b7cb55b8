# Causal attention probabilities [batch 2, heads 4, 10, 10] (attn.npy), their tokens (tokens.txt) and
# a signed 64 x 96 matrix (signed.npy), for tfdebug heatmap: usage make_attention.py OUT_DIR.
import numpy as np, sys
rng = np.random.default_rng(1)
T = 10
scores = rng.normal(0, 1.5, (2, 4, T, T))
mask = np.triu(np.ones((T, T), bool), 1)
scores[..., mask] = -np.inf
p = np.exp(scores - scores.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
np.save(sys.argv[1] + "/attn.npy", p.astype(np.float32))
open(sys.argv[1] + "/tokens.txt", "w").write("\n".join("The quick brown fox jumps over the lazy dog .".split()) + "\n")
np.save(sys.argv[1] + "/signed.npy", rng.normal(0, 1, (64, 96)).astype(np.float32))
