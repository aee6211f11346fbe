"""Data-parallel training of torchvision's ResNet-50 on 2 GPUs: DistributedDataParallel, bf16 autocast,
channels_last, SGD with momentum, a synthetic shard of batches on each rank's GPU.
Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    model = torchvision.models.resnet50().to(device, memory_format=torch.channels_last)
    model = DDP(model, device_ids=[local_rank])
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    batch_size = 96
    generator = torch.Generator(device=device).manual_seed(100 + rank)
    batches = [
        (
            torch.randn(batch_size, 3, 224, 224, device=device, generator=generator).to(
                memory_format=torch.channels_last),
            torch.randint(0, 1000, (batch_size,), device=device, generator=generator),
        )
        for _ in range(4)
    ]

    def train_step(images, targets):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = criterion(model(images), targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.detach()

    model.train()
    for i in range(5):
        train_step(*batches[i % 4])
    torch.cuda.synchronize()
    timed = 25
    start = time.perf_counter()
    for i in range(timed):
        loss = train_step(*batches[i % 4])
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    if rank == 0:
        print(f"final loss {loss.item():.4f}")
        print(f"{elapsed * 1000 / timed:.3f} ms/step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
