"""Trains a small model whose blocks the script checkpoints itself (torch.utils.checkpoint, non-reentrant) for
three steps, and prints as JSON, for every call of a block's forward, whether backward was running (the
recomputation) and how many autocast contexts the bridge had entered around it (0 without the bridge)."""

import json
import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        bridge = sys.modules.get("gpuscope_torch.apply")
        CALLS.append([RECOMPUTING[0], len(bridge._autocast) if bridge else 0])
        return torch.relu(self.linear(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return x


CALLS, RECOMPUTING = [], [False]
torch.manual_seed(0)
model = Model()
for _ in range(3):
    loss = model(torch.randn(4, 8)).square().mean()
    RECOMPUTING[0] = True
    loss.backward()
    RECOMPUTING[0] = False
print(json.dumps(CALLS))
