"""Trains a small model as PyTorch Lightning does, the forward and backward inside the closure given to
optimizer.step, on batches a weightless module (a transform, as torchvision's are modules) prepares per sample,
with the bridge's annotation installed (or not) and the NVTX spy recording; writes the spy's events and the losses
as JSON to OUT.

Usage: closure_training.py OUT [--plain]
"""

import json
import sys

import torch

import nvtx_spy


class Jitter(torch.nn.Module):
    """A data augmentation written as a module: no parameters, no buffers."""

    def forward(self, sample):
        return sample + 0.01 * torch.randn_like(sample)


def main():
    out, plain = sys.argv[1], "--plain" in sys.argv[2:]
    nvtx_spy.install()
    if not plain:
        from gpuscope_torch import annotate

        annotate.install()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    jitter, data, target = Jitter(), torch.randn(6, 8), torch.randn(6, 1)
    losses = []
    for step in range(4):
        nvtx_spy.mark("phase", "data", step)
        batch = torch.stack([jitter(sample) for sample in data])

        def closure():
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(batch), target)
            loss.backward()
            nvtx_spy.mark("closure done")
            return loss

        nvtx_spy.mark("phase", "step", step)
        losses.append(optimizer.step(closure=closure).item() if step % 2 else optimizer.step(closure).item())
    with open(out, "w") as f:
        json.dump({"events": nvtx_spy.events, "losses": losses}, f)


if __name__ == "__main__":
    main()
