"""An evaluation loop (no_grad) over eight batches. With `kept` it appends every batch's outputs to a list and
reduces them once the loop is done, as a loop that computes its metric at the end does; with `latest` it holds
only the latest outputs and adds each to a running sum. Prints the per-batch sums as JSON."""

import json
import sys

import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
model = Head().eval()
batches = [torch.randn(16, 32) for _ in range(8)]
kept, sums = [], []
with torch.no_grad():
    for x in batches:
        out = model(x)
        if sys.argv[1] == "kept":
            kept.append(out)
        else:
            sums.append(out.sum().item())
if kept:
    sums = [k.sum().item() for k in kept]
print(json.dumps({"sums": sums}))
