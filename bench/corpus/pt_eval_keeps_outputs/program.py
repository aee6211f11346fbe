"""Evaluate a torchvision LR-ASPP MobileNetV3 segmentation model (21 classes) on a validation set of 48 batches of
16 512x512 images: the loop collects every batch's logits and labels, and the mean IoU is computed from them once
the loop is done."""

import time

import torch
import torchvision

torch.manual_seed(0)
device = torch.device("cuda")
torch.backends.cudnn.benchmark = True
num_classes = 21

model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                                  num_classes=num_classes).to(device).eval()
images = [torch.randn(16, 3, 512, 512, device=device) for _ in range(4)]
labels = [torch.randint(0, num_classes, (16, 512, 512), device=device) for _ in range(4)]


def mean_iou(logits, target):
    pred = logits.argmax(1)
    hist = torch.bincount(target.flatten() * num_classes + pred.flatten(), minlength=num_classes**2)
    hist = hist.reshape(num_classes, num_classes).float()
    iou = hist.diag() / (hist.sum(0) + hist.sum(1) - hist.diag()).clamp(min=1)
    return iou.mean()


warmup, batches = 3, 48
with torch.no_grad():
    for i in range(warmup):
        model(images[i % 4])
    torch.cuda.synchronize()
    start = time.perf_counter()
    all_logits, all_labels = [], []
    for i in range(batches):
        out = model(images[i % 4])["out"]
        all_logits.append(out)
        all_labels.append(labels[i % 4])
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    miou = mean_iou(torch.cat(all_logits), torch.cat(all_labels))

print(f"mean IoU {miou.item():.4f}")
print(f"peak allocated {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
print(f"{elapsed * 1000 / batches:.3f} ms/step")
