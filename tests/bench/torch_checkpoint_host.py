"""What eager activation checkpointing costs on the host: ResNet-50 (torchvision, batch 32, channels-last, bf16
autocast, SGD) stepped plain and with every bottleneck under torch.utils.checkpoint (non-reentrant), with and
without preserving the RNG state; for "ckpt", a cProfile of five steps shows where the host time goes.
Usage (on a GPU): python3 torch_checkpoint_host.py plain|ckpt|ckpt_norng"""

import cProfile
import pstats
import sys
import time

import torch
import torchvision
from torch.utils.checkpoint import checkpoint


def checkpointed(forward, preserve_rng_state):
    return lambda *args: checkpoint(forward, *args, use_reentrant=False, preserve_rng_state=preserve_rng_state)


def main():
    mode = sys.argv[1]
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(32, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (32,), device="cuda")
    if mode.startswith("ckpt"):
        for stage in (model.layer1, model.layer2, model.layer3, model.layer4):
            for block in stage:
                block.forward = checkpointed(block.forward, mode != "ckpt_norng")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    print(mode, "step ms", (time.perf_counter() - start) * 100)
    if mode == "ckpt":
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
