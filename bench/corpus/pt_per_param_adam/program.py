"""A transformer encoder trained with a hand-written AdamW, as research code often carries one: a Python loop
over the parameters updating each tensor's moments and weights."""

import math
import time

import torch
import torch.nn as nn


class AdamW:
    def __init__(self, params, lr=3e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.eps, self.wd = lr, betas, eps, weight_decay
        self.state = [(torch.zeros_like(p), torch.zeros_like(p)) for p in self.params]
        self.t = 0

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        self.t += 1
        b1, b2 = self.betas
        for p, (m, v) in zip(self.params, self.state):
            if p.grad is None:
                continue
            p.mul_(1 - self.lr * self.wd)
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            denom = (v / (1 - b2 ** self.t)).sqrt_().add_(self.eps)
            p.addcdiv_(m, denom, value=-self.lr / (1 - b1 ** self.t))


torch.manual_seed(0)
device = torch.device("cuda")
layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
model = nn.Sequential(nn.Embedding(8192, 512), nn.TransformerEncoder(layer, num_layers=12),
                      nn.Linear(512, 8192)).to(device)
optimizer = AdamW(model.parameters())
tokens = torch.randint(0, 8192, (16, 128), device=device)
targets = torch.randint(0, 8192, (16, 128), device=device)


def step():
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(tokens)
        loss = nn.functional.cross_entropy(logits.view(-1, 8192), targets.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


for _ in range(5):
    step()
torch.cuda.synchronize()
timed = 20
start = time.perf_counter()
for _ in range(timed):
    loss = step()
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"loss {loss.item():.4f} (ln vocab {math.log(8192):.2f})")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
