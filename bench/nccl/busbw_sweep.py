"""Bus bandwidth of NCCL's all_reduce, all_gather and reduce_scatter over message sizes, measured the way
nccl-tests does (algorithm bandwidth = size / time of one operation, times (n-1)/n for the gathers and
scatters, 2(n-1)/n for all-reduce; size is the largest buffer), timed by the program itself with CUDA events.
`gpuscope stats --report collectives` on a recording of it must give the same numbers (docs/multi-rank.md).
Run with: torchrun --standalone --nproc_per_node=2 bench/nccl/busbw_sweep.py [--sizes-mib 1,16,64,256]"""

import argparse
import json
import os

import torch
import torch.distributed as dist


def bus_factor(op, n):
    return 2 * (n - 1) / n if op == "all_reduce" else (n - 1) / n


def run(op, size_bytes, n, iters):
    elements = size_bytes // 4
    if op == "all_reduce":
        x = torch.ones(elements, device="cuda")
        call = lambda: dist.all_reduce(x)
    elif op == "all_gather":
        out = torch.empty(elements, device="cuda")
        x = torch.ones(elements // n, device="cuda")
        call = lambda: dist.all_gather_into_tensor(out, x)
    else:
        x = torch.ones(elements, device="cuda")
        out = torch.empty(elements // n, device="cuda")
        call = lambda: dist.reduce_scatter_tensor(out, x)
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    dist.barrier()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        call()
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1000 / iters
    algbw = size_bytes / seconds
    return {"op": op, "bytes": size_bytes, "time_us": seconds * 1e6, "algbw_GBps": algbw / 1e9,
            "busbw_GBps": algbw * bus_factor(op, n) / 1e9}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes-mib", default="1,4,16,64,256")
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    n = dist.get_world_size()
    results = []
    for op in ("all_reduce", "all_gather", "reduce_scatter"):
        for mib in (float(s) for s in args.sizes_mib.split(",")):
            results.append(run(op, int(mib * 2**20), n, args.iters))
    if dist.get_rank() == 0:
        for r in results:
            print(json.dumps(r))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
