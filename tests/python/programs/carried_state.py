"""A recurrent cell run step by step, as truncated backpropagation through time is written: each step's hidden
state is detached and handed to the next call (`carry`). With `fresh` every step starts from a new zero state
and drops the previous step's outputs first, so the new state often lands in memory an earlier output was
freed from. Prints as JSON the calls (counted from 1) handed memory at the address of the output the call
before returned, and the losses."""

import json
import sys

import torch
from torch import nn


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.input = nn.Linear(32, 64)
        self.hidden = nn.Linear(64, 64)

    def forward(self, x, h):
        h = torch.tanh(self.input(x) + self.hidden(h))
        return h.sum(dim=1).square().mean(), h


torch.manual_seed(0)
carry = sys.argv[1] == "carry"
model = Cell()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
h = torch.zeros(16, 64)
previous, reused, losses = None, [], []
for step in range(8):
    x = torch.randn(16, 32)
    if not carry:
        h = torch.zeros(16, 64)
    if h.data_ptr() == previous:
        reused.append(step + 1)
    loss, out = model(x, h)
    previous = out.data_ptr()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    h = out.detach()
    if not carry:
        del loss, out, h
print(json.dumps({"reused_at_calls": reused, "losses": losses}))
