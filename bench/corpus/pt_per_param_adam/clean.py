"""A transformer encoder trained with torch.optim.AdamW, fused."""

import math
import time

import torch
import torch.nn as nn


torch.manual_seed(0)
device = torch.device("cuda")
layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
model = nn.Sequential(nn.Embedding(8192, 512), nn.TransformerEncoder(layer, num_layers=12),
                      nn.Linear(512, 8192)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01, fused=True)
tokens = torch.randint(0, 8192, (16, 128), device=device)
targets = torch.randint(0, 8192, (16, 128), device=device)


def step():
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(tokens)
        loss = nn.functional.cross_entropy(logits.view(-1, 8192), targets.view(-1))
    optimizer.zero_grad(set_to_none=True)
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
