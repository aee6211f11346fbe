"""A tabular classifier trained on a dataset that fits on the GPU, logging as many training scripts do: the
loss and accuracy read back every step, hard examples picked with nonzero() for an extra loss term, and the
logits printed now and then."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cuda")
features, classes, n = 256, 20, 65536
x_all = torch.randn(n, features, device=device)
y_all = torch.randint(0, classes, (n,), device=device)

model = nn.Sequential(nn.Linear(features, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                      nn.Linear(1024, classes)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
batch = 512
history = []


def train_step(step):
    idx = torch.randint(0, n, (batch,), device=device)
    x, y = x_all[idx], y_all[idx]
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits, y, reduction="none")
    hard = torch.nonzero(loss > loss.mean()).squeeze(1)
    total = loss.mean() + 0.5 * loss[hard].mean()
    optimizer.zero_grad(set_to_none=True)
    total.backward()
    optimizer.step()
    acc = (logits.argmax(1) == y).float().mean().item()
    history.append((total.item(), acc))
    if step % 10 == 0:
        print(f"step {step} loss {history[-1][0]:.4f} acc {acc:.3f} logits[0] {logits[0, :4].float()}")


for step in range(10):
    train_step(step)
torch.cuda.synchronize()
timed = 100
start = time.perf_counter()
for step in range(10, 10 + timed):
    train_step(step)
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"{elapsed * 1000 / timed:.3f} ms/step")
