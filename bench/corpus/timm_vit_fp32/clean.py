"""Train a timm ViT-S/16 (from scratch, 100 classes) on batches of 64 224x224 images already on the GPU,
AdamW with its defaults, the forward and loss under bf16 autocast."""

import time

import timm
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cuda")

model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=100).to(device)
optimizer = torch.optim.AdamW(model.parameters())
criterion = nn.CrossEntropyLoss()

batch_size = 64
batches = [(torch.randn(batch_size, 3, 224, 224, device=device), torch.randint(0, 100, (batch_size,), device=device))
           for _ in range(4)]


def train_step(images, labels):
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        output = model(images)
        loss = criterion(output, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()


model.train()
warmup_steps, timed_steps = 5, 20

for step in range(warmup_steps):
    train_step(*batches[step % len(batches)])
torch.cuda.synchronize()

start = time.perf_counter()
for step in range(timed_steps):
    loss = train_step(*batches[step % len(batches)])
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print(f"final loss {loss.item():.4f}")
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
