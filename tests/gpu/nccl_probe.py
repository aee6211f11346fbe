"""What NCCL does on one GPU, for the multi-rank issue: run under torchrun with N processes that all use
cuda:0. With one rank it records which kernels (if any) NCCL's collectives launch; with two it shows whether
NCCL accepts two ranks on one device. Usage: torchrun --nproc_per_node N tests/gpu/nccl_probe.py"""

import os

import torch
import torch.distributed as dist


def main():
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
    rank = dist.get_rank()
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(3):
        dist.all_reduce(x)
        dist.broadcast(x, src=0)
        out = [torch.empty_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)
        dist.reduce_scatter_tensor(torch.empty(x.numel() // dist.get_world_size(), device="cuda"), x)
    torch.cuda.synchronize()
    print(f"rank {rank} of {dist.get_world_size()} (pid {os.getpid()}): collectives done, x[0] = {x[0].item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
