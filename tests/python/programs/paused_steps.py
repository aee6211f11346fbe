"""Trains models.Net for 24 steps (or --steps) with the bridge's recording annotations (annotate.install(steps=2)) and its steps
timed with the recording paused (recording_cost.install()), the NVTX spy recording; writes as JSON to OUT the spy's
events. Prints each step's loss, so that a run with the bridge can be compared with one without.

Marks in the events: ["mark", "step", N] before each training step's forward.

Usage: paused_steps.py OUT COST_STEPS [--no-bridge] [--accumulate N] [--evaluate-every N] [--steps N]
(COST_STEPS: GPUSCOPE_TORCH_COST_STEPS; the steps' least time to time each way is 0 here, so that COST_STEPS alone
decides; --accumulate: N forwards and backwards per optimizer step; --evaluate-every: after every N optimizer steps,
two forwards in eval mode without grad)
"""

import argparse
import atexit
import json
import os

import torch

import models
import nvtx_spy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("cost_steps")
    parser.add_argument("--no-bridge", action="store_true")
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--evaluate-every", type=int, default=0)
    parser.add_argument("--steps", type=int, default=24)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = models.label(models.Net())
    x, target = torch.randn(4, 8), torch.randn(4, 4)
    nvtx_spy.install()

    def write_events():
        with open(args.out, "w") as f:
            json.dump({"events": nvtx_spy.events}, f)

    atexit.register(write_events)  # before the bridge's own handlers, so after them: their marks at exit are in
    if not args.no_bridge:
        from gpuscope_torch import annotate, recording_cost

        os.environ["GPUSCOPE_TORCH_COST_STEPS"] = args.cost_steps
        recording_cost._MIN_TIMED_NS = 0
        annotate.install(steps=2)
        recording_cost.install()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)  # made after the bridge is in, as under gpuscope
    for step in range(args.steps):
        nvtx_spy.mark("step", step)
        for _ in range(args.accumulate):
            loss = torch.nn.functional.mse_loss(model(x), target) / args.accumulate
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step} loss {loss.item():.9f}")
        if args.evaluate_every and (step + 1) % args.evaluate_every == 0:
            model.eval()
            with torch.no_grad():
                print(f"eval {sum(torch.nn.functional.mse_loss(model(x), target).item() for _ in range(2)):.9f}")
            model.train()


if __name__ == "__main__":
    main()
