"""An inference loop (no_grad) over eight batches of a detector-like model whose anchor module rebuilds the list
of tensors it keeps as an attribute at every call, as torchvision's AnchorGenerator does with its cell_anchors
(`rebuilt`), or fills it at its first call only and reads it afterwards (`cached`). Prints the per-batch sums
as JSON."""

import json
import sys

import torch
from torch import nn


class Anchors(nn.Module):
    def __init__(self, cached):
        super().__init__()
        self.cached = cached
        self.cell_anchors = [torch.arange(4.0), torch.arange(4.0) * 2] if not cached else None

    def forward(self, x):
        if self.cached:
            if self.cell_anchors is None:
                self.cell_anchors = [torch.arange(4.0), torch.arange(4.0) * 2]
        else:
            self.cell_anchors = [a.to(dtype=x.dtype, device=x.device) for a in self.cell_anchors]
        return x[:, :4] + self.cell_anchors[0] - self.cell_anchors[1]


class Detector(nn.Module):
    def __init__(self, cached):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
        self.anchors = Anchors(cached)

    def forward(self, x):
        return self.anchors(self.body(x))


torch.manual_seed(0)
model = Detector(sys.argv[1] == "cached").eval()
batches = [torch.randn(16, 32) for _ in range(8)]
with torch.no_grad():
    sums = [model(x).sum().item() for x in batches]
print(json.dumps({"sums": sums}))
