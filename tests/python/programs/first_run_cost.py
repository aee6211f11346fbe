"""An evaluation loop (no_grad) over 24 batches whose forward, compiled, fails once at the model's sixth call,
inside the timing check's window; the call run as written after the failure pays a one-off cost first (0.3 s),
as cuDNN's benchmark mode times every convolution again at a model's first call in a new dtype. Prints the batches
scored and their sum as JSON."""

import json
import time

import torch
from torch import nn

_compiled_calls = [0]
_failed = [False, False]  # the compiled forward failed; the one-off cost is paid


@torch._dynamo.disable
def _compiled_call():
    """Runs outside the compiled graph, once per compiled call: the fifth (the model's sixth call) fails."""
    _compiled_calls[0] += 1
    if _compiled_calls[0] == 5:
        _failed[0] = True
        raise RuntimeError("a one-off failure inside the compiled forward")


def _eager_call():
    if _failed[0] and not _failed[1]:
        _failed[1] = True
        time.sleep(0.3)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))

    def forward(self, x):
        if torch.compiler.is_compiling():  # traced into the compiled forward alone
            _compiled_call()
        else:
            _eager_call()
        return self.body(x)


torch.manual_seed(0)
model = Net().eval()
batches = [torch.randn(16, 32) for _ in range(24)]
total = 0.0
with torch.no_grad():
    for x in batches:
        total += model(x).sum().item()
print(json.dumps({"batches": len(batches), "sum": total}))
