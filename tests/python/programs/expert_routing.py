"""A layer that routes each sample to one of two experts and writes their outputs into one fp32 buffer by index,
as mixture-of-experts layers do; called five times, it prints each call's output (as JSON, exact floats).

Under CUDA autocast the experts' Linear layers return bf16, and index assignment into the fp32 buffer raises
("Index put requires the source and destination dtypes match"). Without CUDA, torch.autocast("cuda") switches
itself off: there, whenever the bridge has entered its autocast around the call, the experts' outputs are cast
as CUDA's autocast casts a Linear's, so the same operation raises the same error."""

import json
import sys

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class ExpertRouting(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.gate = nn.Linear(dim, 2)
        self.experts = nn.ModuleList([nn.Linear(dim, dim), nn.Linear(dim, dim)])

    def forward(self, x):
        choice = self.gate(x).argmax(dim=-1)
        out = torch.zeros_like(x)
        for index, expert in enumerate(self.experts):
            mask = choice == index
            y = expert(x[mask])
            bridge = sys.modules.get("gpuscope_torch.apply")
            if not y.is_cuda and bridge is not None and bridge._autocast:
                y = y.to(torch.bfloat16)
            out[mask] = y
        return out


torch.manual_seed(0)
model = ExpertRouting().to(device)
inputs = [torch.randn(32, 16, device=device) for _ in range(5)]
with torch.no_grad():
    print(json.dumps([model(x).double().sum().item() for x in inputs]))
