"""Trains one of models.MODELS for a few steps from a fixed seed and saves its parameters' gradients after
the last backward, the losses, its buffers and the blocks' forward calls (models.CALLS) to OUT (torch.save), so two
runs can be compared bit for bit. The
bridge's fixes come in through the environment, as under `gpuscope apply`; --annotate installs the
module annotation; --compile runs the model through torch.compile (eager backend, one whole graph);
--accumulate N runs N forwards and backwards (micro-batches of the one input) per optimizer step;
--own-optimizer steps with a hand-written SGD (no torch.optim) that zeroes the gradients in place.

--steps N trains N steps (default 2).

Usage: gradients.py OUT --model NAME [--annotate] [--compile] [--accumulate N] [--own-optimizer] [--steps N]
"""

import argparse

import torch

import models


class OwnSGD:
    """SGD as research code writes it: a loop over the parameters, gradients zeroed in place."""

    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self):
        for p in self.params:
            p.sub_(p.grad, alpha=self.lr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--model", required=True, choices=sorted(models.MODELS))
    parser.add_argument("--annotate", action="store_true")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--own-optimizer", action="store_true")
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = models.label(models.MODELS[args.model]())
    x, target = models.example_input(args.model), torch.randn(4, 4)
    optimizer = (OwnSGD if args.own_optimizer else torch.optim.SGD)(model.parameters(), lr=0.01)
    if args.annotate:
        from gpuscope_torch import annotate

        annotate.install()
    run = torch.compile(model, backend="eager", fullgraph=True) if args.compile else model
    losses = []
    for _ in range(args.steps):
        optimizer.zero_grad()
        for _ in range(args.accumulate):
            loss = torch.nn.functional.mse_loss(run(x), target) / args.accumulate
            loss.backward()
            losses.append(loss.detach())
        optimizer.step()
    grads = {name: p.grad for name, p in model.named_parameters()}
    buffers = {name: b.clone() for name, b in model.named_buffers()}
    torch.save({"grads": grads, "losses": losses, "buffers": buffers, "calls": dict(models.CALLS),
                "enabled_with": getattr(model, "enabled_with", None)}, args.out)


if __name__ == "__main__":
    main()
