"""Per-timestep regression of a signal that sits near 100, trained in fp32 with fused AdamW.
The model returns its loss: MSE plus a Pearson-correlation term computed in one pass over time."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def pearson(a, b):
    """Correlation along the last dimension, from one pass of sums."""
    mean_a, mean_b = a.mean(dim=-1), b.mean(dim=-1)
    cov = (a * b).mean(dim=-1) - mean_a * mean_b
    var_a = (a * a).mean(dim=-1) - mean_a * mean_a
    var_b = (b * b).mean(dim=-1) - mean_b * mean_b
    return cov / torch.sqrt(var_a.clamp_min(1e-6) * var_b.clamp_min(1e-6))


class ResidualMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Regressor(nn.Module):
    def __init__(self, in_features=64, dim=512, hidden=2048, depth=4, target_mean=100.0):
        super().__init__()
        self.inp = nn.Linear(in_features, dim)
        self.blocks = nn.ModuleList([ResidualMLP(dim, hidden) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 1)
        nn.init.constant_(self.head.bias, target_mean)  # start at the targets' level

    def forward(self, x, y):
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        pred = self.head(self.norm(h)).squeeze(-1)
        loss = F.mse_loss(pred, y) + (1.0 - pearson(pred, y)).mean()
        return pred, loss


torch.manual_seed(0)
device = torch.device("cuda")

batch_size, seq_len, in_features = 16, 1024, 64
w_true = torch.randn(in_features, device=device) / in_features**0.5
num_batches = 8
data = []
for _ in range(num_batches):
    x = torch.randn(batch_size, seq_len, in_features, device=device)
    y = 100.0 + x @ w_true + 0.1 * torch.randn(batch_size, seq_len, device=device)
    data.append((x, y))

model = Regressor(in_features).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)


def train_step(x, y):
    pred, loss = model(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


warmup_steps, timed_steps = 5, 20

for step in range(warmup_steps):
    train_step(*data[step % num_batches])
torch.cuda.synchronize()

start = time.perf_counter()
for step in range(warmup_steps, warmup_steps + timed_steps):
    loss = train_step(*data[step % num_batches])
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print(f"final loss {loss.item():.6f}")
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
