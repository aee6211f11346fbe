"""Train a deep residual MLP classifier (24 blocks of Linear + BatchNorm1d + ReLU + Dropout) on large
batches in fp32, then evaluate it (eval mode: BatchNorm's running statistics).
Each block is checkpointed (non-reentrant; dropout's RNG state is preserved), and BatchNorm's running
statistics are put back after its recomputation so that they are updated once per step."""

import contextlib
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, dim, hidden, dropout):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.bn1 = nn.BatchNorm1d(hidden)
        self.drop = nn.Dropout(dropout)
        self.fc2 = nn.Linear(hidden, dim)
        self.bn2 = nn.BatchNorm1d(dim)

    def forward(self, x):
        h = self.drop(F.relu(self.bn1(self.fc1(x))))
        return F.relu(x + self.bn2(self.fc2(h)))


@contextlib.contextmanager
def batchnorm_stats_kept(module):
    """Runs the recomputation, then puts BatchNorm's running statistics back as they were before it."""
    stats = [b for m in module.modules() if isinstance(m, nn.BatchNorm1d) for b in m.buffers()]
    saved = [b.clone() for b in stats]
    try:
        yield
    finally:
        for b, s in zip(stats, saved):
            b.copy_(s)


class DeepMLP(nn.Module):
    def __init__(self, in_features=512, dim=512, hidden=2048, depth=24, num_classes=100, dropout=0.1):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(in_features, dim), nn.BatchNorm1d(dim), nn.ReLU())
        self.blocks = nn.ModuleList([Block(dim, hidden, dropout) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            if self.training:
                x = checkpoint(
                    block,
                    x,
                    use_reentrant=False,
                    context_fn=lambda block=block: (contextlib.nullcontext(), batchnorm_stats_kept(block)),
                )
            else:
                x = block(x)
        return self.head(x)


torch.manual_seed(0)
device = torch.device("cuda")

model = DeepMLP().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

batch_size, num_batches = 4096, 4
train_data = [
    (torch.randn(batch_size, 512, device=device), torch.randint(0, 100, (batch_size,), device=device))
    for _ in range(num_batches)
]
eval_x = torch.randn(batch_size, 512, device=device)
eval_y = torch.randint(0, 100, (batch_size,), device=device)


def train_step(x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


warmup_steps, timed_steps = 5, 20

model.train()
for step in range(warmup_steps):
    train_step(*train_data[step % num_batches])
torch.cuda.synchronize()

start = time.perf_counter()
for step in range(warmup_steps, warmup_steps + timed_steps):
    loss = train_step(*train_data[step % num_batches])
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

model.eval()
with torch.no_grad():
    eval_loss = F.cross_entropy(model(eval_x), eval_y)
print(f"final train loss {loss.item():.6f}  eval loss {eval_loss.item():.6f}")
print(f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
