"""Data-parallel training of a torchvision ResNet-50 on 2 GPUs, written the way the PyTorch tutorial on
distributed applications does it: each rank runs its own forward and backward, then averages the gradients
with one all_reduce per parameter. bf16 autocast, channels_last, SGD with momentum, batch 64 per rank.
Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torchvision


def average_gradients(model):
    size = float(dist.get_world_size())
    for param in model.parameters():
        dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
        param.grad.data /= size


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)  # the same initial weights on every rank
    model = torchvision.models.resnet50(num_classes=1000).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    batch_size, num_batches = 64, 4
    generator = torch.Generator(device=device).manual_seed(1000 + rank)  # each rank its own shard
    batches = [
        (
            torch.randn(batch_size, 3, 224, 224, device=device, generator=generator).contiguous(
                memory_format=torch.channels_last
            ),
            torch.randint(0, 1000, (batch_size,), device=device, generator=generator),
        )
        for _ in range(num_batches)
    ]

    def train_step(step):
        images, labels = batches[step % num_batches]
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        average_gradients(model)
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
