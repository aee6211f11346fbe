"""A small convolutional classifier on 32x32 images, keeping every step's loss in a list to plot the curve
after training. The list holds the loss tensors themselves, and with them their autograd graphs."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cuda")
model = nn.Sequential(
    nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(128 * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10),
).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
images = torch.randn(256, 3, 32, 32, device=device)
labels = torch.randint(0, 10, (256,), device=device)
losses = []


def step():
    logits = model(images + 0.1 * torch.randn_like(images))
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss)


for _ in range(5):
    step()
torch.cuda.synchronize()
timed = 60
start = time.perf_counter()
for _ in range(timed):
    step()
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"final loss {losses[-1].item():.4f}, {len(losses)} losses kept")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
