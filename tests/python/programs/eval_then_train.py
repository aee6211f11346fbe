"""Evaluates a small model on a few batches before it trains it, as a script that checks its starting loss
first does; prints as JSON the evaluation's and the training's losses and how many frames torch compiled."""

import json

import torch
from torch import nn

import models

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batches = [(torch.randn(8, 16), torch.randn(8, 1)) for _ in range(4)]

model.eval()
with torch.no_grad():
    evaluated = [round(float(nn.functional.mse_loss(model(x), y)), 5) for x, y in batches[:3]]
model.train()
trained = []
for step in range(8):
    x, y = batches[step % 4]
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    trained.append(round(float(loss), 4))
print(json.dumps({"evaluated": evaluated, "trained": trained, "frames": models.compiled_frames()}))
