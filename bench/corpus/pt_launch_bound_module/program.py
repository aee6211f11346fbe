"""A residual MLP (12 blocks of Linear + LayerNorm + GELU, width 256) trained on batches of 64 feature vectors
with bf16 autocast and fused AdamW."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.act(self.norm(self.fc(x)))


class ResMLP(nn.Module):
    def __init__(self, in_features=64, dim=256, depth=12, num_classes=10):
        super().__init__()
        self.stem = nn.Linear(in_features, dim)
        self.blocks = nn.Sequential(*[ResidualBlock(dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.head(self.norm(self.blocks(self.stem(x))))


torch.manual_seed(0)
device = torch.device("cuda")

model = ResMLP().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05, fused=True)

batch_size = 64
batches = [(torch.randn(batch_size, 64, device=device), torch.randint(0, 10, (batch_size,), device=device))
           for _ in range(8)]


def train_step(x, y):
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


warmup_steps, timed_steps = 10, 100

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
