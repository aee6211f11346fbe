"""Data-parallel fine-tuning of a torchvision ViT-B/16 on 2 GPUs with DistributedDataParallel, bf16 autocast
and AdamW, batch 32 per rank. The script sets NCCL_P2P_DISABLE=1 at the top, as scripts written for
consumer GPUs often do (peer-to-peer hangs on some PCIe boards), and it stays set on a machine with NVLink.
Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os

os.environ["NCCL_P2P_DISABLE"] = "1"  # P2P hangs on our 4090 box

import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    model = torchvision.models.vit_b_16(num_classes=100).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)

    batch_size, num_batches = 32, 4
    generator = torch.Generator(device=device).manual_seed(1000 + rank)
    batches = [
        (
            torch.randn(batch_size, 3, 224, 224, device=device, generator=generator),
            torch.randint(0, 100, (batch_size,), device=device, generator=generator),
        )
        for _ in range(num_batches)
    ]

    def train_step(step):
        images, labels = batches[step % num_batches]
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.detach()

    warmup_steps, timed_steps = 5, 20
    model.train()
    for step in range(warmup_steps):
        train_step(step)
    torch.cuda.synchronize()

    start = time.perf_counter()
    for step in range(warmup_steps, warmup_steps + timed_steps):
        loss = train_step(step)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    if rank == 0:
        print(f"final loss {loss.item():.4f}")
        print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
