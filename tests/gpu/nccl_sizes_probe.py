"""Where a collective's message size can come from, for the bus-bandwidth rule of the multi-rank issue:
PyTorch's NCCL flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE) keeps each collective's sizes and dtypes. This
runs three DDP steps and a few plain collectives, then prints what the recorder kept (its fields, one line
per entry) next to the number of collectives issued. Usage:
  TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_ENABLE_TIMING=1 torchrun --nproc_per_node 2 tests/gpu/nccl_sizes_probe.py"""

import os
import pickle

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = DDP(torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).cuda(), bucket_cap_mb=8)
    for _ in range(3):
        model(torch.randn(64, 1024, device="cuda")).sum().backward()
    x = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(x)
    dist.all_gather_into_tensor(torch.empty(2 << 20, device="cuda"), x)
    dist.reduce_scatter_tensor(torch.empty(1 << 19, device="cuda"), x)
    torch.cuda.synchronize()
    dump = pickle.loads(torch._C._distributed_c10d._dump_nccl_trace())
    if rank == 0:
        print("dump keys:", sorted(dump))
        entries = dump.get("entries", [])
        print("entries:", len(entries))
        if entries:
            print("entry keys:", sorted(entries[0]))
        for e in entries:
            print({k: e.get(k) for k in ("collective_seq_id", "profiling_name", "input_sizes", "input_dtypes",
                                         "output_sizes", "state", "duration_ms", "time_created_ns", "pg_id")})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
