"""A small classifier trained for a few steps, as a user would write it: a stack of like blocks in a ModuleList,
each Linear, an optional BatchNorm1d and ReLU, then an evaluation. Prints the last loss and the evaluation's.
Arguments: [--batchnorm] [--counter] [--unseeded] [--dropout P] [--steps N] [--host-ms MS] (host work of its own in
each step, a sleep, which then sets the step's pace) [--pause-after N --pause-ms MS] (a pause of its own once, after
step N, as a DataLoader's at an epoch's start). --dropout: torch.nn.functional.dropout between the blocks, as
PyTorch Geometric's examples call it (no dropout module). With BatchNorm the evaluation depends on the running
statistics the training forwards update, which a block recomputed under checkpointing updates twice. With --counter
each block counts its calls in a Python attribute and adds a hundredth of the count to its output (a schedule kept
by the model), which a recomputation under checkpointing counts twice, and no restored buffer puts back."""

import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width, batchnorm, counter=False):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.BatchNorm1d(width) if batchnorm else nn.Identity()
        self.counter, self.seen = counter, 0

    def forward(self, x):
        if self.counter:
            self.seen += 1
            x = x + 0.01 * self.seen
        return x + F.relu(self.norm(self.fc(x)))


class Classifier(nn.Module):
    def __init__(self, batchnorm, counter=False, dropout=0.0, width=32, depth=4, classes=5):
        super().__init__()
        self.dropout = dropout
        self.blocks = nn.ModuleList([Block(width, batchnorm, counter) for _ in range(depth)])
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        for block in self.blocks:
            x = F.dropout(block(x), p=self.dropout, training=self.training)
        return self.head(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batchnorm", action="store_true")
    parser.add_argument("--counter", action="store_true")
    parser.add_argument("--unseeded", action="store_true")
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--steps", type=int, default=14)
    parser.add_argument("--host-ms", type=float, default=0)
    parser.add_argument("--pause-after", type=int, default=0)
    parser.add_argument("--pause-ms", type=float, default=0)
    args = parser.parse_args()
    if not args.unseeded:
        torch.manual_seed(0)
    model = Classifier(args.batchnorm, args.counter, args.dropout)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(64, 32), torch.randint(0, 5, (64,))
    for step in range(1, args.steps + 1):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        time.sleep(args.host_ms / 1e3 + (args.pause_ms / 1e3 if step == args.pause_after else 0))
    model.eval()
    with torch.no_grad():
        print(f"loss {loss.item():.6f} eval {F.cross_entropy(model(x), y).item():.6f}")


if __name__ == "__main__":
    main()
