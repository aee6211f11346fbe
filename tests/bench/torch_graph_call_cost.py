"""Host time of one torch.compile(mode="reduce-overhead") call, forward and backward, against the model's size.

The launch-bound rule counts on CUDA graphs taking the host's launches away, less what each compiled call still
costs the host between replays (guards, the CUDA-graph tree's checks of its inputs, autograd). That cost was
taken as 0.86 ms a call from GPT-sized models; a small model's calls cost less. This measures it on models
outside the evaluation corpus: residual MLPs of 1 to 64 blocks of Linear + LayerNorm + GELU (4 parameter
tensors a block), width 64, batch 8, so that the GPU's work is a few microseconds and each call's wall time is
its host time. The module's forward is compiled the way `gpuscope apply` does it (module.forward =
torch.compile(module.forward, mode="reduce-overhead")).

With --ddp-caps, the model is wrapped in DistributedDataParallel (one process, NCCL) first, as torchrun jobs
wrap theirs, once per bucket cap in MB: torch.compile then compiles one graph per gradient bucket
(DDPOptimizer), so the forward and the backward each become as many calls, one CUDA-graph replay each.

With --mode default, the forward is compiled without CUDA graphs (torch.compile's default mode, as `gpuscope apply`
compiles a model whose plan has fusion and no CUDA graphs): what a compiled call costs the host then, for a model
called many times a step (a decoder run once per position). With --autocast, each forward runs under bf16
autocast entered at the call, as `gpuscope apply` installs a precision fix.

With --inference, the model is in eval mode and each call is a forward under torch.no_grad(), as an inference
loop calls it (no backward); --torchvision NAME adds that torchvision model (random weights, batch 1, 224x224),
whose GPU work is a millisecond or so: its calls' host time is still what each returns after, the queue empty at
its start.

With --sync-each, each call is also timed the way a loop that reads every result runs it: the call, then the
host waiting for its result (`.item()` of its sum, or of the loss after the backward), and the GPU's time for a
call is taken from CUDA events around 20 calls in a row. How much of a call's host time runs beside its GPU work
is then (host + GPU - synced) / host: the advisor's forecast of such a loop under CUDA graphs depends on it.

Usage (on a GPU): python3 torch_graph_call_cost.py [--steps N] [--depths 1,4,16,64] [--width W] [--ddp-caps 25,4,1]
                  [--mode reduce-overhead|default] [--autocast] [--inference] [--torchvision resnet50,...]
                  [--sync-each]
Prints one JSON line per depth (and bucket cap): parameter tensors, gradient buckets, eager and compiled host ms
of forward and backward (medians).
"""

import argparse
import json
import os
import statistics
import time

import torch
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return x + nn.functional.gelu(self.norm(self.linear(x)))


def host_times(model, x, steps, warmup, inference=False):
    """Median host ms of the forward call and of the backward call (0 for inference: a forward under no_grad);
    the GPU's queue is empty at each start."""
    times = []
    if inference:
        with torch.no_grad():
            for i in range(warmup + steps):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                model(x)
                t1 = time.perf_counter()
                if i >= warmup:
                    times.append((t1 - t0, 0.0))
        return [statistics.median(t[k] for t in times) * 1e3 for k in range(2)]
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


def call(model, x, inference):
    if inference:
        return model(x).sum()
    loss = model(x).square().mean()
    loss.backward()
    for p in model.parameters():
        p.grad = None
    return loss


def synced_times(model, x, steps, warmup, inference):
    """Median ms of a call followed by reading its result, and the GPU's mean ms a call (20 calls in a row)."""
    context = torch.no_grad() if inference else torch.enable_grad()
    with context:
        synced = []
        for i in range(warmup + steps):
            t0 = time.perf_counter()
            call(model, x, inference).item()
            if i >= warmup:
                synced.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(20):
            call(model, x, inference)
        end.record()
        torch.cuda.synchronize()
    return statistics.median(synced) * 1e3, start.elapsed_time(end) / 20


def buckets(model, cap_mb, x):
    """DDP's gradient buckets for this cap: the all-reduces of one eager step, counted by a communication hook
    on a copy of the model (a hook cannot be taken off again)."""
    counted = []

    def hook(state, bucket):
        counted.append(1)
        return allreduce_hook(state, bucket)

    probe = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=cap_mb)
    probe.register_comm_hook(None, hook)
    for _ in range(2):
        counted.clear()
        probe(x).square().mean().backward()
    torch.cuda.synchronize()
    return len(counted)


def autocast_each_call(forward):
    """The forward entered under bf16 autocast at every call, as gpuscope's precision fix wraps it."""

    def wrapped(*args, **kwargs):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return forward(*args, **kwargs)

    return wrapped


def measure(depth, width, steps, warmup, cap_mb=None, mode="reduce-overhead", autocast=False, inference=False,
            torchvision_name=None, sync_each=False):
    torch.manual_seed(0)
    if torchvision_name:
        import torchvision

        model = getattr(torchvision.models, torchvision_name)(weights=None).cuda()
        x = torch.randn(1, 3, 224, 224, device="cuda")
    else:
        model = nn.Sequential(*[Block(width) for _ in range(depth)]).cuda()
        x = torch.randn(8, width, device="cuda")
    if inference:
        model.eval()
    result = {"depth": torchvision_name or depth, "parameter_tensors": sum(1 for _ in model.parameters()),
              "inference": inference}
    if cap_mb is not None:
        result.update(bucket_cap_mb=cap_mb, buckets=buckets(model, cap_mb, x))
        model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=cap_mb)
    eager = host_times(model, x, steps, warmup, inference)
    forward = autocast_each_call(model.forward) if autocast else model.forward
    if autocast:
        model.forward = forward
        result.update(autocast_forward_ms=host_times(model, x, steps, warmup, inference)[0])
    model.forward = torch.compile(forward, mode=mode)
    compiled = host_times(model, x, steps, warmup + 5, inference)  # the CUDA-graph tree records on the first calls
    prefix = "graph" if mode == "reduce-overhead" else "compiled"
    if sync_each:
        synced_ms, gpu_ms = synced_times(model, x, steps, warmup, inference)
        host_ms = compiled[0] + compiled[1]
        beside = (host_ms + gpu_ms - synced_ms) / host_ms if host_ms > 0 else 0.0
        result.update({f"{prefix}_synced_ms": synced_ms, f"{prefix}_gpu_ms": gpu_ms, "host_beside_gpu_share": beside})
    return {**result, "mode": mode, "autocast": autocast, "eager_forward_ms": eager[0], "eager_backward_ms": eager[1],
            f"{prefix}_forward_ms": compiled[0], f"{prefix}_backward_ms": compiled[1]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--depths", default="1,4,16,64")
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--ddp-caps", default="", help="bucket caps in MB, comma-separated: DDP runs")
    parser.add_argument("--mode", default="reduce-overhead", choices=("reduce-overhead", "default"))
    parser.add_argument("--autocast", action="store_true", help="each forward under bf16 autocast")
    parser.add_argument("--inference", action="store_true", help="eval mode, each call a forward under no_grad")
    parser.add_argument("--torchvision", default="", help="torchvision models to add, comma-separated (batch 1)")
    parser.add_argument("--sync-each", action="store_true", help="also time each call with its result read")
    args = parser.parse_args()
    caps = [float(c) for c in args.ddp_caps.split(",") if c] or [None]
    if caps[0] is not None:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        torch.distributed.init_process_group("nccl", rank=0, world_size=1)
    for depth in (int(d) for d in args.depths.split(",")):
        for cap in caps:
            torch._dynamo.reset()  # each run compiles its own graphs
            result = measure(depth, args.width, args.steps, args.warmup, cap, args.mode, args.autocast, args.inference,
                             sync_each=args.sync_each)
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}), flush=True)
    for name in (n for n in args.torchvision.split(",") if n):
        torch._dynamo.reset()
        result = measure(0, 0, args.steps, args.warmup, None, args.mode, args.autocast, args.inference, name,
                         args.sync_each)
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}), flush=True)
    if caps[0] is not None:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
