"""Fine-tune a torchvision ResNet-18 (bf16 autocast, channels_last, AdamW) on batches of 128 160x160 images on the
GPU; PyTorch's caching allocator keeps the step's blocks for the next one."""

import time

import torch
import torch.nn as nn
import torchvision

torch.manual_seed(0)
device = torch.device("cuda")
torch.backends.cudnn.benchmark = True

model = torchvision.models.resnet18(weights=None, num_classes=100).to(device, memory_format=torch.channels_last)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
criterion = nn.CrossEntropyLoss()

batch_size = 128
batches = [
    (
        torch.randn(batch_size, 3, 160, 160, device=device).to(memory_format=torch.channels_last),
        torch.randint(0, 100, (batch_size,), device=device),
    )
    for _ in range(4)
]

def train_step(images, labels):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        output = model(images)
        loss = criterion(output, labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()

model.train()
warmup_steps, timed_steps = 5, 40
for step in range(warmup_steps):
    train_step(*batches[step % len(batches)])
torch.cuda.synchronize()

start = time.perf_counter()
for step in range(timed_steps):
    loss = train_step(*batches[step % len(batches)])
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print(f"final loss {loss.item():.4f}")
print(f"reserved after the run {torch.cuda.memory_reserved() / 2**20:.0f} MiB")
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
