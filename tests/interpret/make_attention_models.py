# Two TorchScript language models whose attention tfdebug captures (explain --method
# attention-rollout): `explicit.pt`, two layers of a hand-written attention (q, k, v Linear and
# an explicit softmax), and `encoder.pt`, torch.nn.TransformerEncoder (2 layers, batch_first),
# whose attention PyTorch computes inside MultiheadAttention. Both take float token ids [n, tokens]
# and return the last position's logits [n, vocab]; `no_attention.pt` has none (an error to report). expected.json holds, for the tokens of
# TOKENS, each model's attention per layer and head computed here on its own: the explicit
# model returns its softmax outputs; the encoder's come from MultiheadAttention called with
# need_weights=True, average_attn_weights=False on each layer's input.
#
#   make_attention_models.py OUT_DIR
import json
import os
import sys

import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(3)
VOCAB, D, HEADS = 12, 16, 2
TOKENS = [3, 5, 1, 7, 0, 3]


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(D, D)
        self.k = torch.nn.Linear(D, D)
        self.v = torch.nn.Linear(D, D)
        self.o = torch.nn.Linear(D, D)
        self.heads = HEADS
        self.width = D // HEADS

    def forward(self, x):
        b, t, d = x.shape
        q = self.q(x).view(b, t, self.heads, self.width).transpose(1, 2)
        k = self.k(x).view(b, t, self.heads, self.width).transpose(1, 2)
        v = self.v(x).view(b, t, self.heads, self.width).transpose(1, 2)
        p = torch.softmax(q @ k.transpose(-2, -1) / self.width ** 0.5, dim=-1)
        return x + self.o((p @ v).transpose(1, 2).reshape(b, t, d)), p

    def masked(self, x, scale):
        # The same with each head's attention multiplied by scale[h] (head importance).
        b, t, d = x.shape
        q = self.q(x).view(b, t, self.heads, self.width).transpose(1, 2)
        k = self.k(x).view(b, t, self.heads, self.width).transpose(1, 2)
        v = self.v(x).view(b, t, self.heads, self.width).transpose(1, 2)
        p = torch.softmax(q @ k.transpose(-2, -1) / self.width ** 0.5, dim=-1) * scale.view(1, -1, 1, 1)
        return x + self.o((p @ v).transpose(1, 2).reshape(b, t, d))


class Explicit(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, D)
        self.blocks = torch.nn.ModuleList([Attention(), Attention()])
        self.out = torch.nn.Linear(D, VOCAB)

    def forward(self, x):
        h = self.emb(x.long())
        for block in self.blocks:
            h, _ = block(h)
        return self.out(h[:, -1])

    @torch.jit.export
    def attention(self, x):
        h = self.emb(x.long())
        maps = []
        for block in self.blocks:
            h, p = block(h)
            maps.append(p)
        return maps


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, D)
        layer = torch.nn.TransformerEncoderLayer(D, HEADS, 32, dropout=0.0, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.out = torch.nn.Linear(D, VOCAB)

    def forward(self, x):
        return self.out(self.enc(self.emb(x.long()))[:, -1])


class NoAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, D)
        self.out = torch.nn.Linear(D, VOCAB)

    def forward(self, x):
        return self.out(self.emb(x.long()).mean(1))


x = torch.tensor([TOKENS], dtype=torch.float32)
explicit = Explicit().eval()
encoder = Encoder().eval()
expected = {"tokens": TOKENS}
with torch.no_grad():
    logits = explicit(x)[0]
    target = int(logits.argmax())
    # Head importance: the target logit's drop when one head's attention is zeroed.
    importance = []
    for layer in range(2):
        for head in range(HEADS):
            h = explicit.emb(x.long())
            for i, block in enumerate(explicit.blocks):
                scale = torch.ones(HEADS)
                if i == layer:
                    scale[head] = 0
                h = block.masked(h, scale)
            importance.append(float(logits[target] - explicit.out(h[:, -1])[0, target]))
    expected["explicit"] = {"logits": logits.tolist(), "target": target, "importance": importance,
                            "attention": [p[0].tolist() for p in explicit.attention(x)]}
    h = encoder.emb(x.long())
    maps = []
    for layer in encoder.enc.layers:
        _, w = layer.self_attn(h, h, h, need_weights=True, average_attn_weights=False)
        maps.append(w[0].tolist())
        h = layer(h)
    expected["encoder"] = {"logits": encoder(x)[0].tolist(), "attention": maps}
torch.jit.script(explicit).save(os.path.join(out, "explicit.pt"))
torch.jit.script(encoder).save(os.path.join(out, "encoder.pt"))
torch.jit.script(NoAttention()).save(os.path.join(out, "no_attention.pt"))
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f)
