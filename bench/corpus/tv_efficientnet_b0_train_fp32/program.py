"""Train a torchvision EfficientNet-B0 (from scratch, 100 classes) with SGD and momentum on batches of 64
224x224 images already on the GPU."""

import time

import torch
import torch.nn as nn
import torchvision

torch.manual_seed(0)
device = torch.device("cuda")
torch.backends.cudnn.benchmark = True

num_classes = 100
model = torchvision.models.efficientnet_b0(weights=None, num_classes=num_classes)
model = model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-5)
criterion = nn.CrossEntropyLoss()

batch_size = 64
batches = [(torch.randn(batch_size, 3, 224, 224, device=device),
            torch.randint(0, num_classes, (batch_size,), device=device)) for _ in range(4)]


def train_step(images, labels):
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
