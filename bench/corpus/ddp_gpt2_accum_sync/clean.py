"""Data-parallel training of a GPT-2 (6 layers, 768 wide) on 2 GPUs with DistributedDataParallel, bf16
autocast and fused AdamW. Each rank's GPU memory budget allows micro-batches of one 512-token sequence, so
the loop accumulates gradients over 8 of them per optimizer step (8 x 512 tokens per rank, as in ddp_gpt2),
and all-reduces them once per step: model.no_sync() around the first 7 backward passes.
Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import contextlib
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    config = GPT2Config(n_layer=6, n_embd=768, n_head=12)
    model = GPT2LMHeadModel(config).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)

    micro_batch, seq_len, accumulation = 1, 512, 8
    generator = torch.Generator(device=device).manual_seed(1000 + rank)  # each rank its own shard
    data = torch.randint(0, config.vocab_size, (4 * accumulation, micro_batch, seq_len), device=device,
                         generator=generator)

    def train_step(step):
        for micro in range(accumulation):
            input_ids = data[(step * accumulation + micro) % len(data)]
            last = micro == accumulation - 1
            with contextlib.nullcontext() if last else model.no_sync():  # all-reduce once, after the last one
                with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                    loss = model(input_ids=input_ids, labels=input_ids).loss / accumulation
                loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach() * accumulation

    warmup_steps, timed_steps = 5, 20
    model.train()
    for step in range(warmup_steps):
        train_step(step)
    torch.cuda.synchronize()

    start = time.perf_counter()
    for step in range(warmup_steps, warmup_steps + timed_steps):
        loss = train_step(step)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    if rank == 0:
        print(f"final loss {loss.item():.4f}")
        print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
