"""A small data-parallel training loop for the multi-rank record test (tests/gpu/record_samples_test.cpp):
an MLP wrapped in DistributedDataParallel, 12 steps, each rank on its own GPU; rank 0 prints the final loss.
Run with: torchrun --standalone --nproc_per_node=2 tests/gpu/ddp_two_ranks.py"""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 512)).cuda(),
                device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    generator = torch.Generator(device="cuda").manual_seed(100 + rank)
    x = torch.randn(256, 512, device="cuda", generator=generator)
    for _ in range(12):
        loss = (model(x) - x).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    dist.all_reduce(loss.detach(), op=dist.ReduceOp.AVG)
    if rank == 0:
        print(f"final loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
