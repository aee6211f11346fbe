"""A model of many small modules called in a loop: prints how many module calls gpuscope's hooks counted and
what the bridge measured one to cost them."""

import json
import sys

import torch

model = torch.nn.Sequential(torch.nn.Linear(4, 4), *[torch.nn.ReLU() for _ in range(50)])
x = torch.randn(2, 4)
with torch.no_grad():
    for _ in range(int(sys.argv[1])):
        model(x)

from gpuscope_torch import apply  # noqa: E402 (the bridge, as `gpuscope apply` installed it)

print(json.dumps({"module_calls": apply._module_calls[0], "hook_cost_s": apply._hook_cost_s}))
