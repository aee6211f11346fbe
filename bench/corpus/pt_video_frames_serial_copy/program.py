"""Classify video frames as they arrive: 1080p RGB frames land in a ring of pinned host buffers (as a capture
thread or a hardware decoder would leave them), each batch of 8 is moved to the GPU, scaled to 224x224,
normalised and run through a torchvision ResNet-18 in bf16 and channels-last, and the top class of each frame
comes back to the host.

The frames are synthetic (no video to download); everything else is the loop as such a pipeline is written."""

import time

import torch
import torch.nn.functional as F
import torchvision

torch.manual_seed(0)
device = torch.device("cuda")
torch.backends.cudnn.benchmark = True

model = torchvision.models.resnet18(weights=None).to(device, memory_format=torch.channels_last).eval()
mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225], device=device).view(1, 3, 1, 1)

batch, height, width, ring_size = 8, 1080, 1920, 6
ring = [torch.randint(0, 256, (batch, height, width, 3), dtype=torch.uint8).pin_memory() for _ in range(ring_size)]


@torch.inference_mode()
def classify(frames):
    x = frames.to(device)  # uint8 NHWC straight from the capture buffer
    x = x.permute(0, 3, 1, 2).float().div_(255)
    x = F.interpolate(x, size=(224, 224), mode="bilinear", antialias=True, align_corners=False)
    x = ((x - mean) / std).contiguous(memory_format=torch.channels_last)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x)
    return logits.argmax(dim=1).cpu()


warmup, timed = 5, 60
for i in range(warmup):
    classify(ring[i % ring_size])
torch.cuda.synchronize()

labels = []
start = time.perf_counter()
for i in range(timed):
    labels.append(classify(ring[i % ring_size]))
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print("first labels:", labels[0].tolist())
print(f"{elapsed * 1000 / timed:.3f} ms/step")
