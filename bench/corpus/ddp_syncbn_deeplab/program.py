"""Semantic segmentation on 2 GPUs the way torchvision's reference scripts train it: DeepLabV3 with a ResNet-50
backbone and the auxiliary head, SyncBatchNorm (the reference's --sync-bn), DistributedDataParallel, fp16 autocast
with a GradScaler (--amp), SGD with the heads at 10x the learning rate and the poly schedule, a DataLoader with a
DistributedSampler, 4 workers and pinned memory. The data is synthetic: random images and masks.
Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

CROP = 480
NUM_CLASSES = 21


class RandomSegmentation(Dataset):
    def __init__(self, length):
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        image = torch.rand(3, CROP, CROP, generator=g)
        image = (image - torch.tensor([0.485, 0.456, 0.406])[:, None, None]) / torch.tensor(
            [0.229, 0.224, 0.225])[:, None, None]
        target = torch.randint(0, NUM_CLASSES, (CROP, CROP), generator=g)
        target[:8] = 255  # the border VOC marks as ignored
        return image, target


def criterion(outputs, target):
    losses = {name: nn.functional.cross_entropy(x, target, ignore_index=255) for name, x in outputs.items()}
    return losses["out"] + 0.5 * losses["aux"]


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)

    batch_size, epochs, steps_per_epoch = 4, 3, 10
    dataset = RandomSegmentation(batch_size * steps_per_epoch * dist.get_world_size())
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=4, pin_memory=True,
                        drop_last=True)

    model = torchvision.models.segmentation.deeplabv3_resnet50(
        weights=None, weights_backbone=None, num_classes=NUM_CLASSES, aux_loss=True)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model.to(device)
    model = DDP(model, device_ids=[local_rank])
    model_without_ddp = model.module

    lr = 0.02
    params_to_optimize = [
        {"params": [p for p in model_without_ddp.backbone.parameters() if p.requires_grad]},
        {"params": [p for p in model_without_ddp.classifier.parameters() if p.requires_grad]},
        {"params": [p for p in model_without_ddp.aux_classifier.parameters() if p.requires_grad], "lr": lr * 10},
    ]
    optimizer = torch.optim.SGD(params_to_optimize, lr=lr, momentum=0.9, weight_decay=1e-4)
    total_iters = epochs * steps_per_epoch
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda x: (1 - x / total_iters) ** 0.9)
    scaler = torch.amp.GradScaler("cuda")

    warmup, step, start = 5, 0, None
    model.train()
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for image, target in loader:
            if step == warmup:
                torch.cuda.synchronize()
                start = time.perf_counter()
            image, target = image.to(device, non_blocking=True), target.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                output = model(image)
                loss = criterion(output, target)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            lr_scheduler.step()
            step += 1
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    loss = loss.detach()
    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    if rank == 0:
        print(f"final loss {loss.item():.4f}")
        print(f"{elapsed * 1000 / (step - warmup):.3f} ms/step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
