"""Runs a small model's forward three times and prints, after each, whether the recording's module hooks are
gone (gpuscope_torch.annotate.hook_free()): hook_free=A,B,C."""

import torch

from gpuscope_torch import annotate

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
seen = []
with torch.no_grad():
    for _ in range(3):
        model(torch.randn(8, 16))
        seen.append(str(annotate.hook_free()))
print("hook_free=" + ",".join(seen))
