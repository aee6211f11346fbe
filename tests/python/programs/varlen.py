"""Scores batches of token sequences whose length changes with every batch, as a streaming classifier
does; prints how many batches it scored, a checksum of its scores and how many frames torch compiled. Compiled
by hand, its forward would be compiled again for each new length (automatic dynamic shapes are off, as some
deployments set them), or once more, for dynamic lengths, with --automatic-dynamic (torch's default).

Usage: varlen.py [BATCHES] [--automatic-dynamic]
"""

import sys

import torch
import torch._dynamo

import models

torch._dynamo.config.automatic_dynamic_shapes = "--automatic-dynamic" in sys.argv


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(100, 32)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 1))

    def forward(self, tokens):
        return self.mlp(self.embed(tokens)).mean(dim=(1, 2))


torch.manual_seed(0)
model = Scorer().eval()
counts = [arg for arg in sys.argv[1:] if arg.isdigit()]
batches = int(counts[0]) if counts else 12
total = 0.0
with torch.no_grad():
    for i in range(batches):
        tokens = torch.randint(0, 100, (4, 8 + i))
        total += float(model(tokens).sum())
print(f"scored {batches} batches, checksum {total:.3f}, frames compiled {models.compiled_frames()}")
