"""Step time of two PyTorch workloads, for gpuscope's overhead benchmark (tests/bench/overhead.sh).

  launch  a launch-bound loop: each step runs 1,000 tiny elementwise ops (2,000 kernels) on a small tensor
  gpt2    a GPU-bound training step of a GPT-2-style model built from a transformers config (12 layers,
          1,024 wide, batch 32 x 1,024 tokens, bf16 autocast, AdamW): the GPU, not Python, sets its pace
  resnet  a training step of torchvision's ResNet-50 (batch 64 x 224 x 224, channels-last, bf16 autocast, SGD)

Each step is an NVTX range "step" holding "forward", "backward" and "optimizer" ranges, as a training script
annotated for Nsight Systems would have (the cost is four NVTX calls per step, in every configuration).

--profiler torch wraps the whole run in torch.profiler (CUDA activities) and writes its Chrome trace, so its
kernel count and size can be compared with gpuscope's. Prints one JSON line with the median step time, and
that of the last half of the steps.
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


def training_step(model, optimizer, loss_of):
    nvtx = torch.cuda.nvtx

    def step():
        with nvtx.range("forward"), torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_of(model)
        with nvtx.range("backward"):
            loss.backward()
        with nvtx.range("optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    return step


def gpt2_workload(batch):
    from transformers import GPT2Config, GPT2LMHeadModel
    config = GPT2Config(n_layer=12, n_embd=1024, n_head=16, n_positions=1024, vocab_size=50257)
    model = GPT2LMHeadModel(config).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, config.vocab_size, (batch or 32, 1024), device="cuda")
    return training_step(model, optimizer, lambda m: m(tokens, labels=tokens).loss)


def resnet_workload(batch):
    import torchvision
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images = torch.randn(batch or 64, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (batch or 64,), device="cuda")
    return training_step(model, optimizer, lambda m: torch.nn.functional.cross_entropy(m(images), labels))


def run(workload, steps, warmup, batch):
    if workload == "launch":
        step = launch_workload()
    else:
        step = {"gpt2": gpt2_workload, "resnet": resnet_workload}[workload](batch)
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.cuda.nvtx.range("step"):
            step()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("workload", choices=["launch", "gpt2", "resnet"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--profiler", choices=["none", "torch"], default="none")
    parser.add_argument("--trace", help="where torch.profiler writes its Chrome trace")
    parser.add_argument("--batch", type=int, help="batch size of gpt2 or resnet (default 32 or 64)")
    args = parser.parse_args()
    if args.profiler == "torch":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            times = run(args.workload, args.steps, args.warmup, args.batch)
        prof.export_chrome_trace(args.trace)
    else:
        times = run(args.workload, args.steps, args.warmup, args.batch)
    print(json.dumps({"workload": args.workload, "profiler": args.profiler, "steps": len(times),
                      "median_step_ms": statistics.median(times) * 1e3,
                      # a tracer that switches itself off part way: what it leaves behind
                      "last_half_median_step_ms": statistics.median(times[len(times) // 2:]) * 1e3}))


if __name__ == "__main__":
    main()
