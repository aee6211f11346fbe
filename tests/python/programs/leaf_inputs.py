"""Trains a model whose modules get leaf tensors as inputs, the same ones at every step: an input that
needs a gradient, and a parameter passed to a module (DETR's queries). Writes JSON to OUT: the NVTX spy's
events, with ["mark", "step", N] before each step, and after each backward how many hooks the two leaves
hold.

Usage: leaf_inputs.py OUT
"""

import json
import sys

import torch
from torch import nn

import nvtx_spy


class LeafInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
        self.queries = nn.Parameter(torch.randn(4, 8))
        self.decoder = nn.Linear(8, 8)

    def forward(self, x):
        return self.layers(x) + self.decoder(self.queries)


def main():
    torch.manual_seed(0)
    model = LeafInputs()
    x = torch.randn(4, 8, requires_grad=True)
    nvtx_spy.install()
    from gpuscope_torch import annotate

    annotate.install()
    hooks = []
    for step in range(4):
        nvtx_spy.mark("step", step)
        model(x).sum().backward()
        hooks.append([len(x._backward_hooks or {}), len(model.queries._backward_hooks or {})])
    with open(sys.argv[1], "w") as f:
        json.dump({"events": nvtx_spy.events, "hooks": hooks}, f)


if __name__ == "__main__":
    main()
