"""Host time of one torch.compile(mode="reduce-overhead") call, forward and backward, against the model's size.

The launch-bound rule counts on CUDA graphs taking the host's launches away, less what each compiled call still
costs the host between replays (guards, the CUDA-graph tree's checks of its inputs, autograd). That cost was
taken as 0.86 ms a call from GPT-sized models; a small model's calls cost less. This measures it on models
outside the evaluation corpus: residual MLPs of 1 to 64 blocks of Linear + LayerNorm + GELU (4 parameter
tensors a block), width 64, batch 8, so that the GPU's work is a few microseconds and each call's wall time is
its host time. The module's forward is compiled the way `gpuscope apply` does it (module.forward =
torch.compile(module.forward, mode="reduce-overhead")).

Usage (on a GPU): python3 torch_graph_call_cost.py [--steps N] [--depths 1,4,16,64]
Prints one JSON line per depth: parameter tensors, eager and compiled host ms of forward and backward (medians).
"""

import argparse
import json
import statistics
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return x + nn.functional.gelu(self.norm(self.linear(x)))


def host_times(model, x, steps, warmup):
    """Median host ms of the forward call and of the backward call; the GPU's queue is empty at each start."""
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = model(x).square().mean()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        for p in model.parameters():
            p.grad = None
        if i >= warmup:
            times.append((t1 - t0, t2 - t1))
    return [statistics.median(t[k] for t in times) * 1e3 for k in range(2)]


def measure(depth, steps, warmup):
    torch.manual_seed(0)
    model = nn.Sequential(*[Block(64) for _ in range(depth)]).cuda()
    x = torch.randn(8, 64, device="cuda")
    eager = host_times(model, x, steps, warmup)
    model.forward = torch.compile(model.forward, mode="reduce-overhead")
    compiled = host_times(model, x, steps, warmup + 5)  # the CUDA-graph tree records on the first calls
    return {"depth": depth, "parameter_tensors": sum(1 for _ in model.parameters()),
            "eager_forward_ms": eager[0], "eager_backward_ms": eager[1],
            "graph_forward_ms": compiled[0], "graph_backward_ms": compiled[1]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--depths", default="1,4,16,64")
    args = parser.parse_args()
    for depth in (int(d) for d in args.depths.split(",")):
        result = measure(depth, args.steps, args.warmup)
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}), flush=True)


if __name__ == "__main__":
    main()
