"""A training step written as a plain function over raw tensors, with no nn.Module, and a loss module
called on its own: what such a program's fixes for the model find to apply to. --model adds a small
nn.Module model for comparison."""

import sys

import torch
import torch.nn.functional as F

torch.manual_seed(0)
w1 = torch.randn(16, 32, requires_grad=True)
w2 = torch.randn(32, 4, requires_grad=True)
model = torch.nn.Linear(16, 4) if "--model" in sys.argv else None
loss_fn = torch.nn.CrossEntropyLoss()  # a module with no parameters: no model


def step(x, y):
    logits = model(x) if model is not None else F.gelu(x @ w1) @ w2
    loss = loss_fn(logits, y)
    loss.backward()
    with torch.no_grad():
        for w in (w1, w2):
            if w.grad is not None:
                w -= 0.01 * w.grad
                w.grad = None
    return loss.detach()


for _ in range(3):
    loss = step(torch.randn(8, 16), torch.randint(0, 4, (8,)))
print(f"{loss.item():.4f}")
