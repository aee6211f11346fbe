"""Distil a teacher's feed-forward stack into a student: LLaMA-style pre-norm SwiGLU blocks (RMSNorm, SwiGLU,
layer scale, residual) regressed onto cached teacher hidden states, bf16 autocast, fused AdamW."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SwiGLUBlock(nn.Module):
    def __init__(self, dim, multiple_of=256, layer_scale=0.1):
        super().__init__()
        hidden = int(8 * dim / 3)
        hidden = multiple_of * ((hidden + multiple_of - 1) // multiple_of)
        self.norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.gamma = nn.Parameter(torch.full((dim,), layer_scale))

    def forward(self, x):
        h = self.norm(x)
        return x + self.gamma * self.w2(F.silu(self.w1(h)) * self.w3(h))


class Student(nn.Module):
    def __init__(self, dim=1024, depth=8):
        super().__init__()
        self.blocks = nn.ModuleList([SwiGLUBlock(dim) for _ in range(depth)])
        self.norm = RMSNorm(dim)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


torch.manual_seed(0)
device = torch.device("cuda")

model = Student().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)

# cached (input, teacher output) hidden states: batch 32 x 512 tokens x 1024
batch_size, seq_len, dim = 32, 512, 1024
batches = [(torch.randn(batch_size, seq_len, dim, device=device), torch.randn(batch_size, seq_len, dim, device=device))
           for _ in range(4)]


def train_step(x, target):
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = F.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


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
