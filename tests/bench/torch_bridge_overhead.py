"""Host cost of the PyTorch bridge per module call: a stack of 200 small Linear layers, forward and backward,
timed with the GPU synchronised, so the step is all host time. Run it plain, under `gpuscope record` and
under `gpuscope record --torch`; the difference between the last two, divided by the module calls, is what
the bridge's hooks and NVTX ranges cost each module's forward plus backward. Prints one JSON line."""

import json
import time

import torch

LAYERS, STEPS = 200, 50
model = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(LAYERS)]).cuda()
x = torch.randn(8, 64, device="cuda", requires_grad=True)
times = []
for step in range(STEPS + 5):
    torch.cuda.synchronize()
    start = time.perf_counter()
    model(x).sum().backward()
    torch.cuda.synchronize()
    if step >= 5:
        times.append(time.perf_counter() - start)
times.sort()
print(json.dumps({"modules": LAYERS + 1, "median_step_ms": times[len(times) // 2] * 1e3}))
