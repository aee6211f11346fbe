"""Classify video frames as they arrive: 1080p RGB frames land in a ring of pinned host buffers (as a capture
thread or a hardware decoder would leave them), each batch of 8 is moved to the GPU, scaled to 224x224,
normalised and run through a torchvision ResNet-18 in bf16 and channels-last, and the top class of each frame
comes back to the host.

Clean twin: each batch is copied on a stream of its own, one batch ahead (non_blocking from the pinned ring), so
the next batch's copy runs while this batch's kernels do.

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


copy_stream = torch.cuda.Stream()


def upload(frames):
    """Starts the batch's copy on the copy stream; the compute stream waits for it when it needs the batch."""
    with torch.cuda.stream(copy_stream):
        return frames.to(device, non_blocking=True)


@torch.inference_mode()
def classify(x):
    x = x.permute(0, 3, 1, 2).float().div_(255)
    x = F.interpolate(x, size=(224, 224), mode="bilinear", antialias=True, align_corners=False)
    x = ((x - mean) / std).contiguous(memory_format=torch.channels_last)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x)
    return logits.argmax(dim=1).cpu()


def run(steps, first):
    labels = []
    pending = upload(ring[first % ring_size])
    for i in range(first, first + steps):
        torch.cuda.current_stream().wait_stream(copy_stream)
        x = pending
        x.record_stream(torch.cuda.current_stream())  # made on the copy stream, used on this one
        pending = upload(ring[(i + 1) % ring_size])
        labels.append(classify(x))
    return labels


warmup, timed = 5, 60
run(warmup, 0)
torch.cuda.synchronize()

start = time.perf_counter()
labels = run(timed, warmup)
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print("first labels:", labels[0].tolist())
print(f"{elapsed * 1000 / timed:.3f} ms/step")
