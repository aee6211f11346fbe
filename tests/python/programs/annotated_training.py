"""Trains models.Net with the bridge's module annotation installed and the NVTX spy recording; writes the
spy's events as JSON to the file OUT and prints each step's loss.

Steps 0 and 1 are whole (forward, backward, optimizer step). Steps 2 and 3 take the gradient of the head's
weight only, so the head's backward range starts and its input's gradient never comes: step 2 then runs
the optimizer step, step 3 goes straight to step 4's forward. Marks in the events: ["mark", "phase",
PHASE, STEP] before each phase, ["mark", "input grad", MODULE] when the gradient of a module's input was
computed, ["mark", "accumulated", PARAMETER] when the first layer's parameter gradients were accumulated.
The marks' hooks are registered before the bridge's, so on the same tensor they run first.

Usage: annotated_training.py OUT [--fail-on RANGE_NAME]
"""

import argparse
import json

import torch

import models
import nvtx_spy


def observe_inputs(model):
    """Marks when each module's inputs get their gradient: a global forward pre-hook, registered before
    the bridge's, puts a hook on each input that needs one."""
    names = {module: f"Net.{name}" if name else "Net" for name, module in model.named_modules()}

    def pre(module, args):
        name = names.get(module)
        for arg in args:
            if name and isinstance(arg, torch.Tensor) and arg.requires_grad:
                arg.register_hook(lambda _grad, name=name: nvtx_spy.mark("input grad", name))

    torch.nn.modules.module.register_module_forward_pre_hook(pre)
    for pname, param in model.embed.named_parameters():
        param.register_post_accumulate_grad_hook(lambda _p, n=f"Net.embed.{pname}": nvtx_spy.mark("accumulated", n))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--fail-on")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = models.label(models.Net())
    x, target = torch.randn(4, 8), torch.randn(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    observe_inputs(model)
    nvtx_spy.install(fail_on=args.fail_on)
    from gpuscope_torch import annotate

    annotate.install()
    for step in range(5):
        nvtx_spy.mark("phase", "forward", step)
        loss = torch.nn.functional.mse_loss(model(x), target)
        nvtx_spy.mark("phase", "backward", step)
        loss.backward(inputs=[model.head.weight] if step in (2, 3) else None)
        if step != 3:
            nvtx_spy.mark("phase", "step", step)
            optimizer.step()
            optimizer.zero_grad()
        print(f"step {step} loss {loss.item():.9f}")
    with open(args.out, "w") as f:
        json.dump(nvtx_spy.events, f)


if __name__ == "__main__":
    main()
