"""A tabular classifier trained on a dataset that fits on the GPU, its metrics kept on the GPU and read back
every 50 steps, hard examples weighted with a mask instead of picked with nonzero()."""

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
sums = torch.zeros(2, device=device)


def train_step(step):
    global sums
    idx = torch.randint(0, n, (batch,), device=device)
    x, y = x_all[idx], y_all[idx]
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits, y, reduction="none")
    hard = (loss > loss.mean()).float()
    total = loss.mean() + 0.5 * (loss * hard).sum() / hard.sum().clamp(min=1)
    optimizer.zero_grad(set_to_none=True)
    total.backward()
    optimizer.step()
    acc = (logits.argmax(1) == y).float().mean()
    sums += torch.stack([total.detach(), acc])
    if step % 50 == 49:
        loss_mean, acc_mean = (sums / 50).tolist()
        print(f"step {step} loss {loss_mean:.4f} acc {acc_mean:.3f}")
        sums = torch.zeros(2, device=device)


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
