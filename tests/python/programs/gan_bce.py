"""A discriminator scored with nn.BCELoss after its forward, as PyTorch's DCGAN example scores it: five training
steps, printing each step's loss as JSON.

Under CUDA autocast the discriminator returns bf16, and BCELoss, which takes no mixed dtypes, raises in the script
("Found dtype Float but expected BFloat16"). Without CUDA, torch.autocast("cuda") switches itself off: there,
whenever the bridge has entered its autocast around the call, the output is cast as CUDA's autocast leaves it."""

import json
import sys

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class Discriminator(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(dim, dim), nn.LeakyReLU(0.2), nn.Linear(dim, 1), nn.Sigmoid())

    def forward(self, x):
        y = self.main(x).view(-1)
        bridge = sys.modules.get("gpuscope_torch.apply")
        if not y.is_cuda and bridge is not None and bridge._autocast:
            y = y.to(torch.bfloat16)
        return y


torch.manual_seed(0)
model = Discriminator().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCELoss()
losses = []
for step in range(5):
    x = torch.randn(32, 16, device=device)
    label = torch.full((32,), 1.0, device=device)
    model.zero_grad()
    loss = criterion(model(x), label)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print(json.dumps(losses))
