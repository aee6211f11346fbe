"""Trains one of models.MODELS for two steps from a fixed seed and saves its parameters' gradients after
the last backward, the losses and the blocks' forward calls (models.CALLS) to OUT (torch.save), so two
runs can be compared bit for bit. The
bridge's fixes come in through the environment, as under `gpuscope apply`; --annotate installs the
module annotation; --compile runs the model through torch.compile (eager backend, one whole graph);
--accumulate N runs N forwards and backwards (micro-batches of the one input) per optimizer step.

Usage: gradients.py OUT --model NAME [--annotate] [--compile] [--accumulate N]
"""

import argparse

import torch

import models


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--model", required=True, choices=sorted(models.MODELS))
    parser.add_argument("--annotate", action="store_true")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--accumulate", type=int, default=1)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = models.label(models.MODELS[args.model]())
    x, target = models.example_input(args.model), torch.randn(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if args.annotate:
        from gpuscope_torch import annotate

        annotate.install()
    run = torch.compile(model, backend="eager", fullgraph=True) if args.compile else model
    losses = []
    for _ in range(2):
        optimizer.zero_grad()
        for _ in range(args.accumulate):
            loss = torch.nn.functional.mse_loss(run(x), target) / args.accumulate
            loss.backward()
            losses.append(loss.detach())
        optimizer.step()
    grads = {name: p.grad for name, p in model.named_parameters()}
    torch.save({"grads": grads, "losses": losses, "calls": dict(models.CALLS),
                "enabled_with": getattr(model, "enabled_with", None)}, args.out)


if __name__ == "__main__":
    main()
