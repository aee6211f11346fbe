"""Scores batches of token sequences whose length changes with every batch, as a streaming classifier
does; prints how many batches it scored and a checksum of its scores. Its compiled forward is recompiled
for each new length (automatic dynamic shapes are off, as some deployments set them), so a plan that
compiles it makes every call slower than the script's own.

Usage: varlen.py [BATCHES]
"""

import sys

import torch
import torch._dynamo

torch._dynamo.config.automatic_dynamic_shapes = False


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(100, 32)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 1))

    def forward(self, tokens):
        return self.mlp(self.embed(tokens)).mean(dim=(1, 2))


torch.manual_seed(0)
model = Scorer().eval()
batches = int(sys.argv[1]) if len(sys.argv) > 1 else 12
total = 0.0
with torch.no_grad():
    for i in range(batches):
        tokens = torch.randint(0, 100, (4, 8 + i))
        total += float(model(tokens).sum())
print(f"scored {batches} batches, checksum {total:.3f}")
