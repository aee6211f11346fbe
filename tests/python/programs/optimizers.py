"""Builds Adam, AdamW and SGD as a training script would, from model.parameters() (a generator, which the
bridge's fused-optimizer fix must read only once), takes one step with each, and prints as JSON how each
was built. --differentiable asks for what fused optimizers cannot do (and takes no step: a differentiable
optimizer updates only parameters that are not leaves).

Usage: optimizers.py [--differentiable]
"""

import argparse
import json

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--differentiable", action="store_true")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    built = {}
    for cls in (torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD):
        extra = {"differentiable": True} if args.differentiable else {}
        optimizer = cls(model.parameters(), lr=0.01, **extra)
        before = [p.detach().clone() for p in model.parameters()]
        if not args.differentiable:
            model(torch.randn(4, 8)).sum().backward()
            optimizer.step()
            optimizer.zero_grad()
        built[cls.__name__] = {
            "fused": optimizer.defaults.get("fused"),
            "differentiable": optimizer.defaults.get("differentiable"),
            "parameters": sum(len(group["params"]) for group in optimizer.param_groups),
            "stepped": all(not torch.equal(b, p) for b, p in zip(before, model.parameters())),
        }
    print(json.dumps(built, sort_keys=True))


if __name__ == "__main__":
    main()
