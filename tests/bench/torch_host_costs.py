"""What the plan's fixes do to the host's own work per training step: how long the Python thread (and the
autograd thread behind loss.backward()) takes to issue the forward, the backward and the optimizer step,
eager and under the fixes gpuscope applies (bf16 autocast, torch.compile, activation checkpointing, fused
optimizers). The inputs are small, so the GPU keeps up and each phase's wall time is host time: the queue is
empty at the start of every step (a synchronize), and no phase waits for the GPU.

The advisor's host floor (advisor/advice.cpp) scales the host time measured in a trace by these ratios. Run it
plain and under `gpuscope record --torch` (the bridge's module hooks cost host time in eager code, none in
compiled code), since the traces the advisor reads are recorded that way.

Usage (on a GPU): python3 torch_host_costs.py naive|gpt2|resnet [--steps N] [--variants eager,compile,...]
Prints one JSON line per variant: median host ms of forward, backward, optimizer, and their sum, and the
kernels, copies and memsets each phase launched (counted by torch.profiler in one more step, after the timed
ones, so the counting costs the timed steps nothing): the host's time per launch, eager against compiled.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch
from torch.utils.checkpoint import checkpoint


def naive_gpt():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "samples", "pytorch"))
    sys.argv = sys.argv[:1]  # advisor_cases reads its own argv at import
    import advisor_cases

    model = advisor_cases.Gpt(10007, fused_attention=False).cuda()
    tokens = torch.randint(0, 10007, (2, advisor_cases.SEQ), device="cuda")
    return model, lambda: checkpoint_blocks(model.blocks), lambda m: m(tokens, tokens)


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=12, n_embd=1024, n_head=16, n_positions=1024, vocab_size=50257)
    model = GPT2LMHeadModel(config).cuda()
    tokens = torch.randint(0, config.vocab_size, (1, 128), device="cuda")

    def enable_checkpointing():  # transformers' own switch: checkpointing GPT2Block by hand fills its KV cache twice
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

    return model, enable_checkpointing, lambda m: m(tokens, labels=tokens).loss


def resnet():
    import torchvision

    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    images = torch.randn(2, 3, 64, 64, device="cuda").to(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (2,), device="cuda")
    blocks = [b for stage in (model.layer1, model.layer2, model.layer3, model.layer4) for b in stage]
    return model, lambda: checkpoint_blocks(blocks), lambda m: torch.nn.functional.cross_entropy(m(images), labels)


def checkpoint_blocks(blocks):
    for block in blocks:
        forward = block.forward
        block.forward = lambda *args, f=forward, **kwargs: checkpoint(f, *args, use_reentrant=False, **kwargs)


def measure(model_of, variant, optimizer_kind, steps, warmup):
    torch.manual_seed(0)
    model, enable_checkpointing, loss_of = model_of()
    if "ckpt" in variant:
        enable_checkpointing()
    if "compile" in variant:
        model.forward = torch.compile(model.forward)
    kwargs = {"fused": True} if optimizer_kind == "fused" else {"foreach": optimizer_kind == "foreach"}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, **kwargs)
    autocast = "bf16" in variant
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            loss = loss_of(model)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append((t1 - t0, t2 - t1, t3 - t2))
    ms = [statistics.median(t[p] for t in times) * 1e3 for p in range(3)]
    launches = count_launches(model, loss_of, optimizer, autocast)
    return {"forward_ms": ms[0], "backward_ms": ms[1], "optimizer_ms": ms[2], "total_ms": sum(ms),
            "parameters": sum(1 for _ in model.parameters()), "forward_launches": launches[0],
            "backward_launches": launches[1], "optimizer_launches": launches[2],
            "model_us_per_launch": (ms[0] + ms[1]) * 1e3 / max(1, launches[0] + launches[1])}


def count_launches(model, loss_of, optimizer, autocast):
    """The GPU activities (kernels, copies, memsets) each phase of one more step launches."""
    from torch.profiler import ProfilerActivity, profile

    def on_gpu(phase):
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            result = phase()
            torch.cuda.synchronize()
        return result, sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)

    def forward():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            return loss_of(model)

    def step():
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    loss, f = on_gpu(forward)
    _, b = on_gpu(loss.backward)
    _, o = on_gpu(step)
    return f, b, o


VARIANTS = [("eager", "per_param"), ("eager", "foreach"), ("eager", "fused"), ("eager_bf16", "fused"),
            ("eager_ckpt", "fused"), ("compile", "fused"), ("compile_bf16", "fused"), ("compile_ckpt", "fused")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model", choices=["naive", "gpt2", "resnet"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--variants", help="comma-separated variant names (default: all)")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    model_of = {"naive": naive_gpt, "gpt2": gpt2, "resnet": resnet}[args.model]
    recorded = "record" in os.environ.get("GPUSCOPE_TORCH", "")
    chosen = args.variants.split(",") if args.variants else None
    for variant, optimizer_kind in VARIANTS:
        if chosen and (variant not in chosen or optimizer_kind != "fused"):  # chosen: the fused optimizer's
            continue
        result = measure(model_of, variant, optimizer_kind, args.steps, args.warmup)
        print(json.dumps({"model": args.model, "variant": variant, "optimizer": optimizer_kind,
                          "recorded": recorded, **{k: round(v, 3) for k, v in result.items()}}), flush=True)


if __name__ == "__main__":
    main()
