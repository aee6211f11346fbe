"""Trains models.Net, then runs it for inference, with the bridge's module annotation installed for a few
steps only (annotate.install(steps=STEPS)), and the NVTX spy recording; writes as JSON to OUT the spy's
events and, after each phase, how many global module hooks PyTorch holds. Prints each step's loss and the
inference outputs' sums, so that a run with the bridge can be compared with one without.

Marks in the events: ["mark", "step", N] before each training step's forward, ["mark", "infer", N] before
each inference call.

Usage: hook_free_steps.py OUT STEPS [--no-bridge] [--inference-only] [--accumulate N] [--compiled] [--by-hand]
                          [--fsdp] [--fail-on NAME]
(--accumulate: N forwards and backwards per optimizer step, as gradient accumulation does; --compiled: the model
run through torch.compile (its eager backend: dynamo traces and guards as ever, with no code generated), and the
frames dynamo compiled written too; --by-hand: no optimizer, the weights updated by a loop written out; --fsdp:
the model wrapped in FullyShardedDataParallel with use_orig_params, as Accelerate and the Trainer wrap theirs, on
one rank over gloo; --fail-on: the NVTX spy raises at that range's push, standing for a bug in the bridge)
"""

import argparse
import json
import os

import torch
from torch.nn.modules import module as nn_module

import models
import nvtx_spy


def global_hooks():
    return len(nn_module._global_forward_pre_hooks) + len(nn_module._global_forward_hooks)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("steps")
    parser.add_argument("--no-bridge", action="store_true")
    parser.add_argument("--inference-only", action="store_true")
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--compiled", action="store_true")
    parser.add_argument("--by-hand", action="store_true", help="no optimizer: SGD written out")
    parser.add_argument("--fsdp", action="store_true", help="FSDP1, use_orig_params, one rank")
    parser.add_argument("--fail-on", default=None)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = models.label(models.Net())
    x, target = torch.randn(4, 8), torch.randn(4, 4)
    if args.compiled:
        model = torch.compile(model, backend="eager")
    if args.fsdp:
        model = sharded(model)
    nvtx_spy.install(fail_on=args.fail_on)
    if not args.no_bridge:
        from gpuscope_torch import annotate

        annotate.install(steps=args.steps)
    optimizer = None if args.by_hand else torch.optim.Adam(model.parameters(), lr=0.01)
    hooks = {"start": global_hooks()}
    if not args.inference_only:
        for step in range(8):
            nvtx_spy.mark("step", step)
            for _ in range(args.accumulate):
                loss = torch.nn.functional.mse_loss(model(x), target) / args.accumulate
                loss.backward()
            if optimizer:
                optimizer.step()
                optimizer.zero_grad()
            else:
                with torch.no_grad():
                    for p in model.parameters():
                        p -= 0.01 * p.grad
                        p.grad = None
            print(f"step {step} loss {loss.item():.9f}")
        hooks["after training"] = global_hooks()
    with torch.no_grad():
        for call in range(6):
            nvtx_spy.mark("infer", call)
            print(f"inference {call} sum {model(x).sum().item():.9f}")
    hooks["after inference"] = global_hooks()
    out = {"events": nvtx_spy.events, "hooks": hooks}
    if args.compiled:
        out["frames_compiled"] = models.compiled_frames()
    with open(args.out, "w") as f:
        json.dump(out, f)
    if args.fsdp:
        torch.distributed.destroy_process_group()


def sharded(model):
    """FSDP1 with use_orig_params: in each forward the module's parameters are views of one flat parameter."""
    from torch.distributed.fsdp import FullyShardedDataParallel

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29541")
    torch.distributed.init_process_group("gloo", rank=0, world_size=1)
    return FullyShardedDataParallel(model, use_orig_params=True, device_id=torch.device("cpu"))


if __name__ == "__main__":
    main()
