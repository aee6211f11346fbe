"""A model whose output is an object that refuses to be looked into (its __dict__ raises), and a loss whose
backward() is called on a tensor that refuses to be detached: noting them fails, and the program must not notice.
Prints the loss and exits 0."""

import torch


class Sealed:
    def __init__(self, value):
        object.__setattr__(self, "_value", value)

    @property
    def __dict__(self):
        raise RuntimeError("sealed")

    def value(self):
        return object.__getattribute__(self, "_value")


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 1)

    def forward(self, x):
        return Sealed(self.fc(x))


class Undetachable(torch.Tensor):
    def detach(self):
        raise RuntimeError("no detach")


torch.manual_seed(0)
model = Model()
for _ in range(3):
    loss = model(torch.randn(8, 4)).value().pow(2).mean()
    loss.as_subclass(Undetachable).backward()
print(f"loss {loss.item():.6f}")
