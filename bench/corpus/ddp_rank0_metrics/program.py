"""Data-parallel training of torchvision's ResNet-50 on 2 GPUs (DistributedDataParallel, bf16 autocast,
channels_last, SGD with momentum). Rank 0 logs the running top-1 accuracy and the macro-averaged precision
and recall over the 1000 classes after every step, from a confusion matrix it keeps in NumPy.
Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

NUM_CLASSES = 1000


class RunningMetrics:
    """Confusion-matrix metrics for the training log."""

    def __init__(self, num_classes):
        self.confusion = np.zeros((num_classes, num_classes), dtype=np.int64)

    def update(self, logits, targets):
        preds = logits.argmax(dim=1).cpu().numpy()
        for t, p in zip(targets.cpu().numpy(), preds):
            self.confusion[t, p] += 1

    def summary(self):
        total = self.confusion.sum()
        accuracy = np.trace(self.confusion) / max(total, 1)
        precisions, recalls = [], []
        for c in range(self.confusion.shape[0]):
            tp = self.confusion[c, c]
            predicted = self.confusion[:, c].sum()
            actual = self.confusion[c, :].sum()
            precisions.append(tp / predicted if predicted else 0.0)
            recalls.append(tp / actual if actual else 0.0)
        return accuracy, float(np.mean(precisions)), float(np.mean(recalls))


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
    metrics = RunningMetrics(NUM_CLASSES) if rank == 0 else None
    log_every = 1  # short run: log each step

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
        if metrics is not None and step % log_every == 0:
            metrics.update(logits.detach(), targets)
            accuracy, precision, recall = metrics.summary()
            last_log[0] = f"step {step} acc {accuracy:.4f} macro-P {precision:.4f} macro-R {recall:.4f}"
        return loss.detach()

    last_log = [""]
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
    if rank == 0:
        print(last_log[0])
        print(f"final loss {loss.item():.4f}")
        print(f"{elapsed * 1000 / timed:.3f} ms/step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
