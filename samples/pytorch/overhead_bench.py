"""Step time of two PyTorch workloads, for gpuscope's overhead benchmark (tests/bench/overhead.sh).

  launch  a launch-bound loop: each step runs 1,000 tiny elementwise ops (2,000 kernels) on a small tensor
  gpt2    a GPU-bound training step of a GPT-2-style model built from a transformers config

--profiler torch wraps the whole run in torch.profiler (CUDA activities) and writes its Chrome trace, so its
kernel count and size can be compared with gpuscope's. Prints one JSON line with the median step time.
"""
import argparse
import json
import statistics
import time

import torch


def launch_workload():
    x = torch.ones(1024, device="cuda")

    def step():
        nonlocal x
        for _ in range(1000):
            x = x * 1.0001 + 0.0001
    return step


def gpt2_workload():
    from transformers import GPT2Config, GPT2LMHeadModel
    config = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=512, vocab_size=50257)
    model = GPT2LMHeadModel(config).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, config.vocab_size, (8, 512), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return step


def run(workload, steps, warmup):
    step = {"launch": launch_workload, "gpt2": gpt2_workload}[workload]()
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("workload", choices=["launch", "gpt2"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--profiler", choices=["none", "torch"], default="none")
    parser.add_argument("--trace", help="where torch.profiler writes its Chrome trace")
    args = parser.parse_args()
    if args.profiler == "torch":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            times = run(args.workload, args.steps, args.warmup)
        prof.export_chrome_trace(args.trace)
    else:
        times = run(args.workload, args.steps, args.warmup)
    print(json.dumps({"workload": args.workload, "profiler": args.profiler, "steps": len(times),
                      "median_step_ms": statistics.median(times) * 1e3}))


if __name__ == "__main__":
    main()
