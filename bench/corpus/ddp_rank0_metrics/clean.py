"""Data-parallel training of torchvision's ResNet-50 on 2 GPUs (DistributedDataParallel, bf16 autocast,
channels_last, SGD with momentum). Every rank counts its predictions in a confusion matrix on its GPU; the
running top-1 accuracy and macro-averaged precision and recall are reduced across ranks and logged at the end.
Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

NUM_CLASSES = 1000


class RunningMetrics:
    """Confusion-matrix metrics for the training log, kept on the GPU and reduced across ranks."""

    def __init__(self, num_classes, device):
        self.num_classes = num_classes
        self.confusion = torch.zeros(num_classes * num_classes, dtype=torch.int64, device=device)

    def update(self, logits, targets):
        preds = logits.argmax(dim=1)
        self.confusion.scatter_add_(0, targets * self.num_classes + preds, torch.ones_like(preds))

    def summary(self):
        confusion = self.confusion.clone()
        dist.all_reduce(confusion)
        confusion = confusion.view(self.num_classes, self.num_classes).double()
        accuracy = confusion.trace() / confusion.sum().clamp(min=1)
        tp = confusion.diag()
        precision = torch.where(confusion.sum(0) > 0, tp / confusion.sum(0).clamp(min=1), 0.0).mean()
        recall = torch.where(confusion.sum(1) > 0, tp / confusion.sum(1).clamp(min=1), 0.0).mean()
        return accuracy.item(), precision.item(), recall.item()


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    model = torchvision.models.resnet50(num_classes=NUM_CLASSES).to(device, memory_format=torch.channels_last)
    model = DDP(model, device_ids=[local_rank])
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    metrics = RunningMetrics(NUM_CLASSES, device)

    batch_size = 64
    generator = torch.Generator(device=device).manual_seed(100 + rank)
    batches = [
        (
            torch.randn(batch_size, 3, 224, 224, device=device, generator=generator).to(
                memory_format=torch.channels_last),
            torch.randint(0, NUM_CLASSES, (batch_size,), device=device, generator=generator),
        )
        for _ in range(4)
    ]

    def train_step(step, images, targets):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = model(images)
            loss = criterion(logits, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        metrics.update(logits.detach(), targets)
        return loss.detach()

    model.train()
    for i in range(5):
        train_step(i, *batches[i % 4])
    torch.cuda.synchronize()
    timed = 25
    start = time.perf_counter()
    for i in range(5, 5 + timed):
        loss = train_step(i, *batches[i % 4])
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    accuracy, precision, recall = metrics.summary()
    if rank == 0:
        print(f"step {5 + timed - 1} acc {accuracy:.4f} macro-P {precision:.4f} macro-R {recall:.4f}")
        print(f"final loss {loss.item():.4f}")
        print(f"{elapsed * 1000 / timed:.3f} ms/step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
