"""A small training script, as a user would hand it to `gpuscope apply`: a transformer-like model, a
DataLoader, SGD; prints each step's loss and exits with status 3, so a run under gpuscope can be compared
with a plain one, exit status included."""

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

import models


def main():
    torch.manual_seed(0)
    model = models.label(models.Transformer())
    data = TensorDataset(torch.randn(32, 8), torch.randn(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step, (x, target) in enumerate(DataLoader(data, batch_size=8)):
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step} loss {loss.item():.6f}")
    print(f"block forward calls {sum(models.CALLS.values())}", file=sys.stderr)
    sys.exit(3)


if __name__ == "__main__":
    main()
