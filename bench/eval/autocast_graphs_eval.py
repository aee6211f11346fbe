"""How fast a compiled model's evaluation calls run after its training calls, with bf16 autocast entered around
the compiled forward (as gpuscope apply enters it, from a module hook) and without, under torch.compile's default
mode and under CUDA graphs (mode "reduce-overhead").

Under `gpuscope apply` a ResNet-18 trained at batch 4 with a val phase each epoch (bench/corpus/
tv_transfer_learning_tutorial, H200, 2026-12-01) ran its val calls 53.7 ms apart with autocast and CUDA graphs,
where its training calls took 3.8 ms: this times the same pattern without gpuscope, to tell whether PyTorch's
compile does it or the bridge.

Usage: python3 bench/eval/autocast_graphs_eval.py [--batch 4] [--rounds 3]; prints one JSON line per variant."""

import argparse
import contextlib
import json
import time

import torch
import torchvision


def timed_calls(model, x, y, optimizer, train, calls, autocast_outside):
    """Per-call times in ms, the device synchronised after each call."""
    model.train(train)
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        with torch.set_grad_enabled(train):
            context = torch.autocast("cuda", dtype=torch.bfloat16) if autocast_outside else contextlib.nullcontext()
            with context:
                out = model(x)
            loss = torch.nn.functional.cross_entropy(out.float(), y)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - started) * 1e3)
    return times


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def run(mode, autocast, batch, rounds):
    torch._dynamo.reset()
    model = torchvision.models.resnet18(num_classes=2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    compiled = model if mode == "eager" else torch.compile(model, mode=None if mode == "default" else mode)
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 2, (batch,), device="cuda")
    result = {"mode": mode, "autocast": autocast, "batch": batch, "train_ms": [], "eval_ms": []}
    for _ in range(rounds):  # an epoch: training calls, then the val phase's
        train = timed_calls(compiled, x, y, optimizer, True, 30, autocast)
        evaluate = timed_calls(compiled, x, y, optimizer, False, 20, autocast)
        result["train_ms"].append(round(median(train[5:]), 3))
        result["eval_ms"].append(round(median(evaluate[5:]), 3))
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for mode in ("eager", "default", "reduce-overhead"):
        for autocast in (False, True):
            print(json.dumps(run(mode, autocast, args.batch, args.rounds)), flush=True)


if __name__ == "__main__":
    main()
