"""Smooths signals with a chain of elementwise steps: calls alike at first, then, from call 15 on, a change the
program makes as it goes. Compiled, the chain fuses into one kernel and runs faster than the script's own while
the calls stay alike. Prints a checksum and how many frames torch compiled.

Usage: changes_later.py shapes|pauses [CALLS]
  shapes: a new length at every call from call 15 (a stream whose records grow); compiled by hand, each would
          compile the forward again (automatic dynamic shapes are off, as some deployments set them). 24 calls
          by default.
  pauses: 100 ms between calls from call 15 (a later phase that paces itself on something else). 40 by default.
"""

import sys
import time

import torch
import torch._dynamo

import models

torch._dynamo.config.automatic_dynamic_shapes = False


class Smoother(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.full((1,), 0.9))

    def forward(self, x):
        for _ in range(24):
            x = torch.sin(x) * self.gain + 0.1
        return x.mean()


torch.manual_seed(0)
model = Smoother()
mode = sys.argv[1]
calls = int(sys.argv[2]) if len(sys.argv) > 2 else (24 if mode == "shapes" else 40)
total = 0.0
with torch.no_grad():
    for i in range(calls):
        later = i >= 14
        if later and mode == "pauses":
            time.sleep(0.1)
        length = (1 << 20) + (64 * i if later and mode == "shapes" else 0)
        total += float(model(torch.linspace(0, 1, length)))
print(f"smoothed {calls} batches, checksum {total:.4f}, frames compiled {models.compiled_frames()}")
